// The network page: polls the REST API of the node that served it (same origin) about once a second and shows
// the chain, its hosts, models, inferences, last BLS certificate, community pool and open proposals. Every
// figure sits in an element with a stable id or data- attribute; amounts stay strings (BigInt where summed or
// grouped) so no ngonka is lost to floating point.
"use strict";

const POLL_MS = 1000;
const RECENT = 10;
const DENOM = "ngonka";
const OPEN = ["PROPOSAL_STATUS_DEPOSIT_PERIOD", "PROPOSAL_STATUS_VOTING_PERIOD"];

async function get(path) {
  const reply = await fetch(path, { cache: "no-store" });
  const body = await reply.json();
  if (!reply.ok) throw new Error(`${path}: ${reply.status} ${body.message || ""}`);
  return body;
}

/** A decimal integer string grouped by thousands; the text as it is when it is not one. */
function grouped(text) {
  return /^\d+$/.test(text) ? BigInt(text).toLocaleString("en-US") : text;
}

/** An element's exact value in data-value, and as text (grouped by thousands unless given). */
function show(id, value, text) {
  const el = document.getElementById(id);
  el.dataset.value = String(value);
  el.textContent = text === undefined ? grouped(String(value)) : text;
}

function cell(row, field, value, exact = true) {
  const td = row.insertCell();
  const text = String(value);
  td.dataset.field = field;
  td.dataset.value = text;
  td.textContent = exact ? grouped(text) : text;
  td.title = text;
  return td;
}

function fill(bodyId, items, build) {
  const body = document.getElementById(bodyId);
  const rows = items.map((item) => {
    const row = document.createElement("tr");
    build(row, item);
    return row;
  });
  body.replaceChildren(...rows);
}

function hex(b64) {
  return Array.from(atob(b64 || ""), (c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
}

function short(text, keep = 10) {
  return text.length > 2 * keep + 1 ? `${text.slice(0, keep)}…${text.slice(-keep)}` : text;
}

function stageName(stage) {
  return String(stage || "").replace(/^STAGE_/, "").toLowerCase().replace(/_/g, " ");
}

/** The pool's ngonka: x/pool's totals, or the distribution module's DecCoins (integer part) where those fail. */
async function poolAmount() {
  let coins;
  try {
    coins = (await get("/gonka/pool/v1/totals")).balance;
  } catch (err) {
    coins = (await get("/cosmos/distribution/v1beta1/community_pool")).pool;
  }
  const coin = coins.find((c) => c.denom === DENOM);
  return coin ? coin.amount.split(".")[0] : "0";
}

async function showChain() {
  const [block, current, pool] = await Promise.all([
    get("/cosmos/base/tendermint/v1beta1/blocks/latest"),
    get("/gonka/epochs/v1/current_epoch"),
    poolAmount(),
  ]);
  document.getElementById("chain-id").textContent = block.block.header.chain_id;
  show("height", block.block.header.height);
  show("epoch", current.epoch.number);
  show("stage", current.stage, stageName(current.stage));
  show("next-stage", current.next_stage, stageName(current.next_stage));
  show("next-stage-height", current.next_stage_height);
  show("next-epoch-height", current.next_epoch_height);
  show("pool", pool);
  return current.epoch.number;
}

async function showHosts(epoch) {
  const [hosts, powers, weights] = await Promise.all([
    get("/gonka/stake/v1/hosts?pagination.limit=1000"),
    get("/gonka/stake/v1/validator_powers"),
    get(`/gonka/stake/v1/epoch_weights/${epoch}`).catch(() => ({ weights: [] })),
  ]);
  const power = new Map(powers.powers.map((p) => [p.operator, p.weight]));
  const weight = new Map(weights.weights.map((w) => [w.operator, w.weight]));
  show("host-count", hosts.hosts.length);
  show("total-power", powers.total);
  fill("host-rows", hosts.hosts, (row, host) => {
    row.dataset.operator = host.operator;
    cell(row, "moniker", host.description ? host.description.moniker : "", false);
    cell(row, "operator", host.operator, false).classList.add("hash");
    cell(row, "weight", weight.get(host.operator) || "0");
    cell(row, "power", power.get(host.operator) || "0");
    cell(row, "collateral", host.collateral);
    cell(row, "status", host.jailed ? "jailed" : power.has(host.operator) ? "validating" : "bonded", false);
  });
  return hosts.hosts.map((h) => h.operator);
}

async function showModels() {
  const models = (await get("/gonka/inference/v1/models?pagination.limit=1000")).models;
  show("model-count", models.length);
  fill("model-rows", models, (row, model) => {
    row.dataset.model = model.id;
    cell(row, "id", short(model.id, 20), false).classList.add("hash");
    cell(row, "price", model.price_per_token);
    cell(row, "context", model.context_length);
  });
}

/** Every host's inferences as executor: their total count and the latest RECENT of all. */
async function showInferences(operators) {
  const pages = await Promise.all(
    operators.map((op) =>
      get(`/gonka/inference/v1/inferences?executor=${op}&pagination.reverse=true` +
        `&pagination.count_total=true&pagination.limit=${RECENT}`),
    ),
  );
  const total = pages.reduce((sum, page) => sum + BigInt(page.pagination.total || "0"), 0n);
  const latest = pages
    .flatMap((page) => page.inferences)
    .sort((a, b) => Number(BigInt(b.start_height) - BigInt(a.start_height)))
    .slice(0, RECENT);
  show("inference-count", total.toString());
  fill("inference-rows", latest, (row, inf) => {
    row.dataset.inference = hex(inf.id);
    cell(row, "id", short(row.dataset.inference, 6), false).classList.add("hash");
    cell(row, "model", inf.model.split("@")[0], false).title = inf.model;
    cell(row, "executor", short(inf.executor), false).classList.add("hash");
    cell(row, "status", String(inf.status).replace(/^STATUS_/, "").toLowerCase(), false);
    cell(row, "prompt-tokens", inf.prompt_tokens || "0");
    cell(row, "completion-tokens", inf.completion_tokens || "0");
    cell(row, "fee-per-token", inf.fee_per_token || "0");
    cell(row, "escrow", inf.escrow || "0");
    cell(row, "payment", inf.payment || "0");
    cell(row, "start-height", inf.start_height);
  });
}

function showCertificate(answer) {
  const signers = Array.from(atob(answer.certificate.signers || ""), (c) => c.charCodeAt(0))
    .reduce((n, byte) => n + byte.toString(2).split("1").length - 1, 0);
  show("bls-height", answer.certificate.height);
  show("bls-signed-power", answer.signed_power);
  show("bls-total-power", answer.total_power);
  show("bls-signers", signers);
  document.getElementById("bls-beacon").textContent = short(hex(answer.beacon), 16);
}

async function showProposals() {
  const lists = await Promise.all(OPEN.map((s) => get(`/cosmos/gov/v1/proposals?proposal_status=${s}`)));
  const proposals = lists.flatMap((l) => l.proposals);
  show("proposal-count", proposals.length);
  fill("proposal-rows", proposals, (row, p) => {
    row.dataset.proposal = p.id;
    cell(row, "id", p.id, false);
    cell(row, "title", p.title || "", false);
    cell(row, "status", String(p.status).replace(/^PROPOSAL_STATUS_/, "").toLowerCase(), false);
    cell(row, "voting-end", p.voting_end_time || "", false);
  });
}

async function poll() {
  const status = document.getElementById("status");
  try {
    // The certificate is read before the block and shown after it, so the page never shows a certified height
    // above the chain's.
    const certificate = await get("/gonka/bls/v1/certificates/0");
    const epoch = await showChain();
    showCertificate(certificate);
    const [operators] = await Promise.all([showHosts(epoch), showModels(), showProposals()]);
    await showInferences(operators);
    status.dataset.state = "live";
    status.textContent = `live, updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    status.dataset.state = "error";
    status.textContent = `error: ${err.message}`;
  }
  setTimeout(poll, POLL_MS);
}

poll();
