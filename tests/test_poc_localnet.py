"""PoC V2 on a live 4-validator localnet, every validator a host with its own ML node behind its host's program,
which keeps its answers' payloads and re-executes what the chain draws for it, and two TAs:

- host 0 forges one answer in two (test-only ``--answer-fault forge``: the node's tokens, every logprob moved);
- host 1 accuses every answer drawn for it (test-only ``--poc-fault accuse``), as validator and as voter;
- hosts 2 and 3 are honest.

The genesis raises the validation rate to 1 (every finished answer is re-executed) and makes a host INVALID at
its first invalidation, so a few rounds of requests show every outcome: each selected answer validated by the
validator the chain drew; each forged answer disputed and INVALIDATED (the requester refunded, the payment taken
back from the executor's vesting, the executor slashed ``dispute_slash_fraction`` paid to the accuser and the
voters that found it pro rata, the rest to the community pool), host 0 INVALID and skipped by both TAs; each
honest answer host 1 accused CLEARED, host 1 slashed the same to the executor and its voters; no honest answer
invalidated. Issuance is off and the epoch never ends, so the supply is the genesis total at every decision, and
a host's vesting holds exactly its payments.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction

import httpx
import pytest
from chain_reads import (
    balance,
    collateral_at,
    event_runs,
    finished,
    fund,
    gonkad,
    inferences_of,
    supply,
    vesting,
)
from nodes import restart_executors, running_localnet

from gonka import Gonka
from gonkad import genesis, localnet
from host.faults import forged
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.poc.v1 import poc_pb2
from sdk.address import module_address
from sdk.cli.flags import message_dict
from sdk.client.querier import Querier
from sdk.client.rpc import CometRPC
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, secp256k1
from sdk.dec import mul_floor
from x.poc.client.queries import host, validation
from x.poc.params import default_params
from x.pool import keys as pool_keys
from x.slashing import keys as slashing_keys

SLASH = Fraction(1, 5)
"""x/poc's default ``dispute_slash_fraction``, kept here."""
POC = {**message_dict(default_params()), "min_validation_rate": "1", "max_validation_rate": "1", "invalid_after": "1"}
OVERRIDES = {
    "poc": {"params": POC},
    "rewards": {"params": {"issuance_cap": "0"}},
    "epochs": {"params": {"epoch_length": "100000"}},
}
_base = localnet.load_settings(validators=4, chain_id="gonka-poc", with_services=True)
assert _base.services is not None and _base.services.transfer_agents == 2
SETTINGS = _base.model_copy(update={"genesis": genesis.merge_overrides(_base.genesis, OVERRIDES)})
FAULTS = {0: ["--answer-fault", "forge"], 1: ["--poc-fault", "accuse"]}
FORGER, ACCUSER = 0, 1
FUNDS = 10**12
REQUESTER = secp256k1.PrivateKey(hashlib.sha256(b"poc localnet: requester").digest())
SLASHED_POOL = bech32.encode(module_address(slashing_keys.SLASHED_POOL))
COMMUNITY_POOL = bech32.encode(module_address(pool_keys.POOL_ACCOUNT))
SETTLED = {poc_pb2.STATUS_VALIDATED, poc_pb2.STATUS_INVALIDATED, poc_pb2.STATUS_CLEARED}
"""Every way a selected answer's validation ends here: no validator misses, no dispute stays undecided."""
ROUNDS = 12
"""Rounds of 8 requests at most until host 0 is INVALID and host 1 has lost an accusation."""


@dataclass
class Net:
    querier: Querier
    rpc: CometRPC
    model: str
    operators: list[str]
    tas: list[str]
    executors: list[str]
    answered: list[str]
    """Every inference id the requester was answered, in order."""

    def ask(self, count: int) -> list[str]:
        """``count`` chat requests at once, alternately through each TA, through the OpenAI client; their inference
        ids."""
        first = len(self.answered)

        def one(i: int) -> str:
            client = Gonka(ta_urls=[self.tas[i % 2]], key=REQUESTER)
            client.chat.completions.create(
                model=self.model,
                max_tokens=6,
                messages=[{"role": "user", "content": f"question {first + i}"}],
                logprobs=True,
            )
            assert client.last_inference_id
            return client.last_inference_id

        with ThreadPoolExecutor(count) as pool:
            ids = list(pool.map(one, range(count)))
        self.answered += ids
        return ids

    def served(self, host: int) -> int:
        return int(httpx.get(f"{self.executors[host]}/v1/executor/status", timeout=10).json()["served"])


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Net]:
    for root in running_localnet(tmp_path_factory.mktemp("poc"), SETTINGS):
        spec = localnet.load(root)
        assert spec.services is not None
        node = spec.nodes[0]
        querier = Querier(node.rpc)
        fund(querier, localnet.load_key(root, "faucet"), spec.chain_id, [address_of(REQUESTER)], FUNDS)
        restart_executors(root, FAULTS)
        yield Net(
            querier,
            CometRPC(node.rpc),
            spec.services.model,
            [address_of(localnet.load_key(root, f"val{i}")) for i in range(4)],
            [ta.url for ta in spec.services.of("agent")],
            [e.url for e in spec.services.of("executor")],
            [],
        )


def settle(net: Net, ids: list[str], timeout_s: float = 120) -> dict[str, poc_pb2.Validation]:
    """The validation records of ``ids`` once each has ended (a verdict that matched, or a decided dispute)."""
    deadline = time.monotonic() + timeout_s
    records: dict[str, poc_pb2.Validation] = {}
    for the_id in ids:
        finished(net.querier, the_id, 60)
        while (record := validation(net.querier, bytes.fromhex(the_id))).status not in SETTLED:
            assert record.status in (poc_pb2.STATUS_PENDING, poc_pb2.STATUS_SELECTED, poc_pb2.STATUS_DISPUTED), record
            assert time.monotonic() < deadline, f"inference {the_id} not settled: {record}"
            time.sleep(0.3)
        records[the_id] = record
    return records


def expected_status(net: Net, record: poc_pb2.Validation) -> poc_pb2.Status:
    """What the rules decide: a forged answer is invalidated whoever validates it (any validator, and any two
    voters, find it wrong); an honest one is cleared when host 1 accused it, else validated."""
    if record.executor == net.operators[FORGER] and forged("forge", record.inference_id):
        return poc_pb2.STATUS_INVALIDATED
    if record.validator == net.operators[ACCUSER]:
        return poc_pb2.STATUS_CLEARED
    return poc_pb2.STATUS_VALIDATED


@dataclass
class Slash:
    operator: str
    amount: int
    expected: int
    """The operator's collateral as the block found it, less its earlier slashes in the block, × ``SLASH``."""
    paid: list[tuple[str, int]]
    """The transfers out of the slashed pool that paid it out, in order, but the community pool's."""
    pool: int
    to_pool: int
    """What the transfers paid the community pool (``pool`` says what should have)."""


def slashes_decided(net: Net, height: int) -> dict[str, Slash]:
    """The PoC slashes of block ``height`` by the inference whose dispute each settled (its ``poc_decided`` event
    follows the slash in the same transaction, or in the block's own events)."""
    collateral: dict[str, int] = {}
    found: dict[str, Slash] = {}
    for run in event_runs(net.rpc, height):
        paid: list[tuple[str, int]] = []
        last: Slash | None = None
        for kind, attributes in run:
            if kind == "transfer" and attributes.get("sender") == SLASHED_POOL:
                paid.append((attributes["recipient"], int(attributes["amount"].removesuffix("ngonka"))))
            elif kind == "slash":
                operator = attributes["operator"]
                if operator not in collateral:
                    collateral[operator] = collateral_at(net.querier, operator, height - 1)
                amount, pool = (int(attributes[k].removesuffix("ngonka")) for k in ("amount", "pool"))
                to_others = [(r, a) for r, a in paid if r != COMMUNITY_POOL]
                to_pool = sum(a for r, a in paid if r == COMMUNITY_POOL)
                last = Slash(operator, amount, mul_floor(collateral[operator], SLASH), to_others, pool, to_pool)
                collateral[operator] -= amount
                paid = []
            elif kind == "poc_decided" and attributes["slashed"]:
                assert last is not None, attributes
                found[attributes["id"]] = last
    return found


def check_slash(record: poc_pb2.Validation, slash: Slash) -> None:
    """The loser slashed exactly ``SLASH`` of its collateral, paid to the winning side (the accuser or the executor,
    with the voters that voted its way) pro rata to the power recorded at the voters' draw, rounded down, the rest
    to the community pool."""
    invalidated = record.status == poc_pb2.STATUS_INVALIDATED
    loser = record.executor if invalidated else record.validator
    winner = (record.validator, record.accuser_power) if invalidated else (record.executor, record.executor_power)
    side = poc_pb2.VERDICT_MISMATCH if invalidated else poc_pb2.VERDICT_MATCH
    honest = [winner, *((v.voter, v.power) for v in record.votes if v.verdict == side)]
    assert slash.operator == loser and slash.amount == slash.expected == int(record.slashed) > 0, (record, slash)
    total = sum(power for _, power in honest)
    shares = [(address, slash.amount * power // total) for address, power in honest]
    assert slash.paid == [(address, amount) for address, amount in shares if amount], (record, slash)
    assert slash.pool == slash.to_pool == slash.amount - sum(amount for _, amount in shares), slash


def test_forged_answers_are_invalidated_and_false_accusations_cleared_with_exact_slashes(net: Net) -> None:
    """Rounds of 8 requests until host 0 is INVALID and host 1 has lost an accusation; then every answer's
    validation is checked against the rules, every dispute's slash and pay-out, the refunds, the hosts'
    vesting and records, and the supply at every decision."""
    q, ops = net.querier, net.operators
    records: dict[str, poc_pb2.Validation] = {}
    for _ in range(ROUNDS):
        records |= settle(net, net.ask(8))
        cleared = [r for r in records.values() if r.status == poc_pb2.STATUS_CLEARED]
        if host(q, ops[FORGER]).host.status == poc_pb2.HOST_STATUS_INVALID and cleared:
            break
    else:
        pytest.fail(f"no invalidation and lost accusation in {ROUNDS} rounds: {list(records.values())}")
    genesis_supply = SETTINGS.total_supply_ngonka
    invalidated = [r for r in records.values() if r.status == poc_pb2.STATUS_INVALIDATED]
    assert invalidated and all(r.executor == ops[FORGER] for r in invalidated)
    for the_id, record in records.items():
        # the validator the chain drew (never the executor) re-executed it and its verdict settled it
        assert record.validator in ops and record.validator != record.executor, record
        assert record.status == expected_status(net, record), (the_id, record)
        if record.status == poc_pb2.STATUS_VALIDATED:
            assert record.verdict == poc_pb2.VERDICT_MATCH and not record.votes and not record.slashed
            continue
        assert record.verdict == poc_pb2.VERDICT_MISMATCH
        voters = [v.voter for v in record.votes]
        assert len(voters) == 2 and not {record.executor, record.validator} & set(voters), record
        side = poc_pb2.VERDICT_MISMATCH if record.status == poc_pb2.STATUS_INVALIDATED else poc_pb2.VERDICT_MATCH
        assert all(v.verdict == side for v in record.votes), record
        check_slash(record, slashes_decided(net, record.decided_height)[the_id])
        assert supply(q, record.decided_height) == genesis_supply
    paid = {i.id.hex(): i for i in inferences_of(q, requester=address_of(REQUESTER))}
    assert sorted(paid) == sorted(net.answered)
    for record in invalidated:
        inference = paid[record.inference_id.hex()]
        assert inference.status == inference_pb2.STATUS_INVALIDATED
        assert record.refunded == record.payment == inference.payment > 0
    spent = sum(i.payment for i in paid.values()) - sum(r.refunded for r in invalidated)
    assert balance(q, address_of(REQUESTER)) == FUNDS - spent
    for i, operator in enumerate(ops):  # payments vest over an epoch that never ends: all still locked
        kept = [p for p in inferences_of(q, executor=operator) if p.status == inference_pb2.STATUS_FINISHED]
        assert vesting(q, operator) == sum(p.payment for p in kept), i
        standing = host(q, operator).host
        assert standing.invalidated == (len(invalidated) if i == FORGER else 0), (i, standing)
        assert standing.status == (poc_pb2.HOST_STATUS_INVALID if i == FORGER else poc_pb2.HOST_STATUS_ACTIVE)
    lost = [r for r in records.values() if r.status == poc_pb2.STATUS_CLEARED]
    assert host(q, ops[ACCUSER]).host.accusations_lost == len(lost)
    assert supply(q) == genesis_supply
    shown = gonkad("query", "poc", "validation", invalidated[0].inference_id.hex(), "--node", net.rpc.url)
    assert shown.returncode == 0 and "STATUS_INVALIDATED" in shown.stdout, shown


def test_both_tas_route_around_the_invalid_host(net: Net) -> None:
    """Once the TAs read host 0's INVALID status from the chain, neither sends it anything: every answer comes
    from the other hosts, and host 0's executor serves nothing more."""
    forger = net.operators[FORGER]
    assert host(net.querier, forger).host.status == poc_pb2.HOST_STATUS_INVALID
    deadline = time.monotonic() + 30
    for ta in net.tas:
        while any(n["operator"] == forger for n in httpx.get(f"{ta}/v1/status", timeout=10).json()["nodes"]):
            assert time.monotonic() < deadline, f"{ta} still routes to the INVALID host"
            time.sleep(0.2)
    before = net.served(FORGER)
    ids = net.ask(8)
    assert all(finished(net.querier, the_id, 60).executor != forger for the_id in ids)
    assert net.served(FORGER) == before
