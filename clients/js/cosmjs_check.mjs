// CosmJS, unchanged, against a gonkad node over CometBFT RPC: what a Cosmos wallet or script reads and does.
//
//   node cosmjs_check.mjs '{"rpc": "http://127.0.0.1:26657", "key": "<secp256k1 private key hex>",
//                          "recipient": "gonka1...", "amount": "1234", "denom": "ngonka", "prefix": "gonka",
//                          "gasPrice": "1ngonka", "proposal": "1"}'
//
// Reads balances, accounts, blocks, validators, proposals and the community pool, sends `amount` to
// `recipient` with "auto" gas (a simulate first) twice (a new account, then an existing one), finds the first
// tx by hash and by an indexed event, and prints
// one JSON object of what it saw (tests/test_cosmjs_localnet.py compares it with the chain's own figures).
// Any error CosmJS raises (a reply it cannot decode, a query it cannot route) ends it with a non-zero status.

import { fromHex } from "@cosmjs/encoding";
import { decodeTxRaw, DirectSecp256k1Wallet } from "@cosmjs/proto-signing";
import {
  GasPrice,
  QueryClient,
  SigningStargateClient,
  StargateClient,
  setupDistributionExtension,
  setupGovExtension,
  setupStakingExtension,
} from "@cosmjs/stargate";
import { connectComet } from "@cosmjs/tendermint-rpc";

const args = JSON.parse(process.argv[2]);

/** A bigint-safe JSON of what CosmJS returned (Long and bigint as decimal strings, bytes as hex). */
function plain(value) {
  return JSON.parse(
    JSON.stringify(value, (_key, v) => {
      if (typeof v === "bigint") return v.toString();
      if (v instanceof Uint8Array) return Buffer.from(v).toString("hex");
      if (v && typeof v === "object" && v.constructor?.name === "Long") return v.toString();
      return v;
    }),
  );
}

function account(a) {
  return a && { address: a.address, accountNumber: a.accountNumber, sequence: a.sequence, pubkey: a.pubkey };
}

async function main() {
  const wallet = await DirectSecp256k1Wallet.fromKey(fromHex(args.key), args.prefix);
  const [{ address: sender }] = await wallet.getAccounts();
  const client = await StargateClient.connect(args.rpc);
  const signer = await SigningStargateClient.connectWithSigner(args.rpc, wallet, {
    gasPrice: GasPrice.fromString(args.gasPrice),
  });
  const comet = await connectComet(args.rpc);
  const query = QueryClient.withExtensions(
    comet,
    setupStakingExtension,
    setupGovExtension,
    setupDistributionExtension,
  );

  const seen = { sender, chainId: await client.getChainId() };
  seen.height = await client.getHeight();
  const block = await client.getBlock(seen.height);
  seen.block = { height: block.header.height, chainId: block.header.chainId, txs: block.txs.length, id: block.id };
  seen.before = {
    balance: await client.getBalance(sender, args.denom),
    allBalances: await client.getAllBalances(sender),
    recipient: await client.getBalance(args.recipient, args.denom),
    account: account(await client.getAccount(sender)),
    sequence: await client.getSequence(sender),
    missingAccount: await client.getAccount(args.recipient),
  };

  const validators = await query.staking.validators("BOND_STATUS_BONDED");
  seen.validators = validators.validators.map((v) => ({
    operatorAddress: v.operatorAddress,
    tokens: v.tokens,
    status: v.status,
    jailed: v.jailed,
    moniker: v.description?.moniker,
  }));
  const first = seen.validators[0].operatorAddress;
  seen.validator = (await query.staking.validator(first)).validator.operatorAddress;
  const proposals = await query.gov.proposals(0, "", "");
  seen.proposals = proposals.proposals.map((p) => ({ id: p.proposalId, status: p.status }));
  if (args.proposal) {
    const one = (await query.gov.proposal(args.proposal)).proposal;
    seen.proposal = { id: one.proposalId, status: one.status, totalDeposit: one.totalDeposit };
  }
  seen.communityPool = (await query.distribution.communityPool()).pool;

  const sent = await signer.sendTokens(
    sender,
    args.recipient,
    [{ denom: args.denom, amount: args.amount }],
    "auto",
    "sent by CosmJS",
  );
  seen.send = {
    code: sent.code,
    hash: sent.transactionHash,
    height: sent.height,
    gasUsed: sent.gasUsed,
    gasWanted: sent.gasWanted,
  };

  const byHash = await client.getTx(sent.transactionHash);
  seen.byHash = byHash && {
    hash: byHash.hash,
    height: byHash.height,
    code: byHash.code,
    gasUsed: byHash.gasUsed,
    fee: decodeTxRaw(byHash.tx).authInfo.fee,
    memo: decodeTxRaw(byHash.tx).body.memo,
  };
  const byEvent = await client.searchTx([{ key: "transfer.recipient", value: args.recipient }]);
  seen.byEvent = byEvent.map((t) => ({ hash: t.hash, height: t.height, code: t.code }));
  const bySender = await client.searchTx(`message.sender='${sender}' AND tx.height=${sent.height}`);
  seen.bySender = bySender.map((t) => ({ hash: t.hash, height: t.height }));

  // Again to the same recipient, an account now: the smallest send, where the estimate's margin is thinnest.
  const again = await signer.sendTokens(sender, args.recipient, [{ denom: args.denom, amount: args.amount }], "auto");
  seen.again = { code: again.code, hash: again.transactionHash, gasUsed: again.gasUsed, gasWanted: again.gasWanted };
  const againTx = await client.getTx(again.transactionHash);
  seen.again.fee = decodeTxRaw(againTx.tx).authInfo.fee;

  seen.after = {
    balance: await client.getBalance(sender, args.denom),
    recipient: await client.getBalance(args.recipient, args.denom),
    account: account(await client.getAccount(sender)),
    sequence: await client.getSequence(sender),
    recipientAccount: account(await client.getAccount(args.recipient)),
  };
  client.disconnect();
  signer.disconnect();
  comet.disconnect();
  process.stdout.write(JSON.stringify(plain(seen)) + "\n");
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
