"""x/upgrade in process: software upgrades by governance, on the gov test chain (four gentx validators,
tests/test_gov.py).

A plan passed by a vote halts a binary without its handler at the plan's height before the block runs
(UpgradeNeeded, the SDK's log line, ``upgrade-info.json`` as Cosmovisor reads it, nothing of the block
committed), and that binary refuses to start again (as a binary carrying the plan does before its height);
the same node restarted with the handler (the test binary's, x/upgrade/rehearsal.py) migrates x/upgrade
1 → 2 and goes on, two such nodes agreeing on every app hash; ``gonkad start`` does all of it over ABCI. A
cancelled plan never halts; refusals change nothing; a failing migration halts with the block unapplied;
module versions travel through export and import; the CLI proposes a plan and its cancel.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.upgrade.v1beta1 import query_pb2 as upgrade_query
from cosmpy.protos.cosmos.upgrade.v1beta1 import tx_pb2 as upgrade_tx
from cosmpy.protos.cosmos.upgrade.v1beta1 import upgrade_pb2
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.timestamp_pb2 import Timestamp
from test_abci_server import FLUSH, Client, abci_only_home
from test_gov import AUTHORITY, CHAIN, OUTSIDER, VALIDATORS, YES, GovChain, addr

from gonkad.cli import build_parser
from gonkad.paths import app_db
from sdk.client.process import stop_child
from sdk.client.txbuilder import send_msg, sign_tx
from sdk.coins import parse_coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.migrations import MigrationError, run_migrations
from sdk.module import BaseModule
from x.upgrade.errors import BinaryTooNew, UpgradeFailed, UpgradeNeeded
from x.upgrade.keys import UPGRADE_INFO_FILE
from x.upgrade.rehearsal import rehearsal_marker

NAME = "v2"
INFO = '{"binaries":{"linux/amd64":"https://example.invalid/gonkad-v2"}}'
QUERY = "/cosmos.upgrade.v1beta1.Query/"
LEAD = 10
"""Blocks from the proposal's submission to the plan's height: room for three votes and the voting period."""


def software_upgrade(name: str = NAME, height: int = 0, authority: str = AUTHORITY) -> upgrade_tx.MsgSoftwareUpgrade:
    return upgrade_tx.MsgSoftwareUpgrade(
        authority=authority, plan=upgrade_pb2.Plan(name=name, height=height, info=INFO)
    )


def info_file(home: Path) -> Path:
    return home / "data" / UPGRADE_INFO_FILE


def new_chain(home: Path, **options: Any) -> GovChain:
    """The gov chain with its node-local upgrade-info path under ``home``."""
    home.mkdir(parents=True, exist_ok=True)
    return GovChain(home / "db", module_config={"upgrade": {"info_file": str(info_file(home))}}, **options)


def pass_proposal(chain: GovChain, *msgs: Any) -> None:
    """``msgs`` proposed, voted yes by three of four validators and passed (executed in the last block)."""
    pid = chain.submit(VALIDATORS[0], list(msgs))
    for key in VALIDATORS[:3]:
        assert chain.vote(key, pid, YES).code == 0
    chain.end_voting()
    proposal = chain.proposal(pid)
    assert proposal.status == 3, proposal.failed_reason  # PASSED


def schedule_by_vote(chain: GovChain) -> int:
    """A plan for ``LEAD`` blocks after the submission, passed by a vote; the chain stops one block before
    it. The plan's height."""
    height = chain.height + LEAD
    pass_proposal(chain, software_upgrade(height=height))
    while chain.height < height - 1:
        chain.tick()
    return height


def current_plan(chain: InProcessChain) -> upgrade_pb2.Plan | None:
    reply = chain.query(
        QUERY + "CurrentPlan", upgrade_query.QueryCurrentPlanRequest(), upgrade_query.QueryCurrentPlanResponse
    )
    return reply.plan if reply.HasField("plan") else None


def applied_height(chain: InProcessChain, name: str) -> int:
    return chain.query(
        QUERY + "AppliedPlan", upgrade_query.QueryAppliedPlanRequest(name=name), upgrade_query.QueryAppliedPlanResponse
    ).height


def module_versions(chain: InProcessChain) -> dict[str, int]:
    reply = chain.query(
        QUERY + "ModuleVersions", upgrade_query.QueryModuleVersionsRequest(), upgrade_query.QueryModuleVersionsResponse
    )
    return {v.name: v.version for v in reply.module_versions}


def restart(chain: GovChain, test_upgrade: str | None) -> None:
    """The node restarted on the same home with another binary: with or without the test upgrade."""
    chain.options.pop("test_upgrade", None)
    if test_upgrade is not None:
        chain.options["test_upgrade"] = test_upgrade
    chain.reopen()


def halt_and_upgrade(home: Path) -> tuple[GovChain, int, list[bytes]]:
    """A node through the whole upgrade: scheduled by vote, halted at the height without the handler,
    restarted with it, the plan's block and two more run. The chain, the plan's height and the app hashes
    from the plan's block on."""
    chain = new_chain(home)
    height = schedule_by_vote(chain)
    with pytest.raises(UpgradeNeeded):
        chain.tick()
    restart(chain, NAME)
    hashes = []
    for _ in range(3):
        reply = chain.tick()
        hashes.append(reply.app_hash)
    return chain, height, hashes


def test_genesis_records_every_module_version(tmp_path: Path) -> None:
    with new_chain(tmp_path) as chain:
        versions = module_versions(chain)
        assert versions == {module.name: 1 for module in chain.app.modules}
        assert current_plan(chain) is None
        reply = chain.app.query(
            abci.RequestQuery(
                path=QUERY + "ModuleVersions",
                data=upgrade_query.QueryModuleVersionsRequest(module_name="nosuch").SerializeToString(),
            )
        )
        assert (reply.codespace, reply.code) == ("upgrade", 4), reply.log
        one = chain.query(
            QUERY + "ModuleVersions",
            upgrade_query.QueryModuleVersionsRequest(module_name="bank"),
            upgrade_query.QueryModuleVersionsResponse,
        )
        assert [(v.name, v.version) for v in one.module_versions] == [("bank", 1)]
        authority = chain.query(
            QUERY + "Authority", upgrade_query.QueryAuthorityRequest(), upgrade_query.QueryAuthorityResponse
        )
        assert authority.address == AUTHORITY


def test_binary_without_handler_halts_before_the_block(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with new_chain(tmp_path) as chain:
        height = schedule_by_vote(chain)
        plan = current_plan(chain)
        assert plan is not None and (plan.name, plan.height, plan.info) == (NAME, height, INFO)
        assert not info_file(tmp_path).exists()
        root, before = chain.app.store.root_hash, chain.balance(addr(OUTSIDER))
        account = chain.account(addr(VALIDATORS[0]))
        assert account is not None
        send = sign_tx(
            VALIDATORS[0],
            [send_msg(addr(VALIDATORS[0]), addr(OUTSIDER), parse_coins("5ngonka"))],
            chain.chain_id,
            account.account_number,
            account.sequence,
            gas_limit=200_000,
        )
        with caplog.at_level(logging.CRITICAL, logger="gonkad.upgrade"), pytest.raises(UpgradeNeeded) as halt:
            chain.tick(txs=[send])
        assert str(halt.value) == f'UPGRADE "{NAME}" NEEDED at height {height}: {INFO}'
        assert f'UPGRADE "{NAME}" NEEDED at height {height}: {INFO}' in caplog.messages
        written = info_file(tmp_path).read_text()
        assert json.loads(written) == {"name": NAME, "height": height, "info": INFO}
        assert written == json.dumps({"name": NAME, "height": height, "info": INFO}, separators=(",", ":"))
        # nothing of the block: not its tx, not the height
        assert (chain.height, chain.app.store.root_hash) == (height - 1, root)
        assert chain.balance(addr(OUTSIDER)) == before
        # the same binary refuses to start there again
        restart(chain, None)
        with pytest.raises(UpgradeNeeded) as refused:
            chain.app.refuse_unknown_upgrade()
        assert str(refused.value) == f'UPGRADE "{NAME}" NEEDED at height {height}: this binary has no handler for it'
        # a binary with another upgrade is just as old
        restart(chain, "v3")
        with pytest.raises(UpgradeNeeded):
            chain.app.refuse_unknown_upgrade()


def test_binary_with_handler_migrates_and_nodes_agree(tmp_path: Path) -> None:
    first, height, hashes = halt_and_upgrade(tmp_path / "a")
    second, _, other_hashes = halt_and_upgrade(tmp_path / "b")
    with first, second:
        assert hashes == other_hashes
        assert first.app.store.root_hash == second.app.store.root_hash
        assert module_versions(first)["upgrade"] == 2
        assert {v for name, v in module_versions(first).items() if name != "upgrade"} == {1}
        assert applied_height(first, NAME) == height
        assert applied_height(first, rehearsal_marker(NAME)) == height  # the 1 -> 2 migration's own write
        assert current_plan(first) is None
        first.app.refuse_unknown_upgrade()  # past the plan: the new binary starts


def test_upgrade_event_and_applied_block(tmp_path: Path) -> None:
    with new_chain(tmp_path) as chain:
        height = schedule_by_vote(chain)
        restart(chain, NAME)  # the new binary installed ahead of the height
        chain.app.refuse_unknown_upgrade()
        reply = chain.tick()
        assert chain.height == height
        applied = [e for e in reply.events if e.type == "upgrade_applied"]
        assert [(a.key, a.value) for a in applied[0].attributes][:2] == [("name", NAME), ("height", str(height))]
        assert applied_height(chain, NAME) == height


def test_binary_with_the_handler_refuses_to_start_before_the_height(tmp_path: Path) -> None:
    with new_chain(tmp_path) as chain:
        height = chain.height + LEAD
        pass_proposal(chain, software_upgrade(height=height))
        assert chain.height < height - 1
        restart(chain, NAME)
        with pytest.raises(BinaryTooNew) as refused:
            chain.app.refuse_unknown_upgrade()
        assert str(refused.value).startswith(
            f'UPGRADE "{NAME}" is scheduled at height {height} but the chain is at {chain.height}: this binary already'
        )
        restart(chain, None)
        chain.app.refuse_unknown_upgrade()  # the old binary runs on until the height


def test_cancelled_plan_never_halts(tmp_path: Path) -> None:
    with new_chain(tmp_path) as chain:
        height = chain.height + 2 * LEAD
        pass_proposal(chain, software_upgrade(height=height))
        assert current_plan(chain) is not None
        pass_proposal(chain, upgrade_tx.MsgCancelUpgrade(authority=AUTHORITY))
        assert current_plan(chain) is None
        while chain.height <= height:
            chain.tick()
        assert applied_height(chain, NAME) == 0
        assert not info_file(tmp_path).exists()


def outsider_raw() -> bytes:
    """The outsider as the authority: upgrade messages sent without a vote."""
    return bech32.decode(addr(OUTSIDER))


def test_refusals_change_nothing(tmp_path: Path) -> None:
    with new_chain(tmp_path, authority=outsider_raw()) as chain:
        authority = addr(OUTSIDER)
        # the authority schedules; a new plan replaces the scheduled one
        assert chain.deliver(OUTSIDER, software_upgrade("a", chain.height + 50, authority)).code == 0
        b_height = chain.height + 60
        assert chain.deliver(OUTSIDER, software_upgrade("b", b_height, authority)).code == 0
        plan = current_plan(chain)
        assert plan is not None and plan.name == "b"
        cases: list[tuple[Any, str, int]] = [
            (software_upgrade("c", chain.height + 50, addr(VALIDATORS[0])), "gov", 13),  # not the authority
            (software_upgrade("c", chain.height + 1, authority), "upgrade", 2),  # the height of its own block
            (software_upgrade("c", 1, authority), "upgrade", 2),  # in the past
            (software_upgrade("", chain.height + 50, authority), "upgrade", 100),  # no name
            (software_upgrade("c", 0, authority), "upgrade", 100),  # no height
        ]
        timed = software_upgrade("c", chain.height + 50, authority)
        timed.plan.time.CopyFrom(Timestamp(seconds=1_000))
        cases.append((timed, "upgrade", 100))
        for msg, codespace, code in cases:
            signer = VALIDATORS[0] if msg.authority != authority else OUTSIDER
            result = chain.deliver(signer, msg)
            assert (result.codespace, result.code) == (codespace, code), result.log
        plan = current_plan(chain)
        assert plan is not None and (plan.name, plan.height) == ("b", b_height)
        assert chain.deliver(OUTSIDER, upgrade_tx.MsgCancelUpgrade(authority=authority)).code == 0
        assert current_plan(chain) is None


def test_applied_name_is_refused(tmp_path: Path) -> None:
    with new_chain(tmp_path, authority=outsider_raw(), test_upgrade="a") as chain:
        authority = addr(OUTSIDER)
        height = chain.height + 2
        assert chain.deliver(OUTSIDER, software_upgrade("a", height, authority)).code == 0
        chain.tick()
        assert applied_height(chain, "a") == height
        result = chain.deliver(OUTSIDER, software_upgrade("a", chain.height + 10, authority))
        assert (result.codespace, result.code) == ("upgrade", 3), result.log
        assert current_plan(chain) is None


def test_failing_migration_halts_with_the_block_unapplied(tmp_path: Path) -> None:
    with new_chain(tmp_path) as chain:
        height = schedule_by_vote(chain)
        restart(chain, NAME)
        chain.app.module_named("upgrade").consensus_version = 3  # type: ignore[misc]  # no 2 -> 3 migration
        root = chain.app.store.root_hash
        with pytest.raises(UpgradeFailed) as failed:
            chain.tick()
        assert f'UPGRADE "{NAME}" FAILED at height {height}: MigrationError' in str(failed.value)
        assert (chain.height, chain.app.store.root_hash) == (height - 1, root)
        assert applied_height(chain, rehearsal_marker(NAME)) == 0  # the 1 -> 2 step ran, but not for the chain
        assert module_versions(chain)["upgrade"] == 1
        plan = current_plan(chain)
        assert plan is not None and plan.name == NAME


class Versioned(BaseModule):
    """A module at version 3 whose migrations log their steps."""

    store_prefix = b"versioned/"

    def __init__(self, name: str, steps: dict[int, str], log: list[str], version: int = 3) -> None:
        self.name = name
        self.consensus_version = version
        self.steps = steps
        self.log = log

    def migrations(self) -> dict[int, Any]:
        return {k: (lambda ctx, what=what: self.log.append(what)) for k, what in self.steps.items()}

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        self.log.append(f"genesis {self.name}")


def test_run_migrations_in_order() -> None:
    log: list[str] = []
    modules = [Versioned("a", {1: "a1", 2: "a2"}, log), Versioned("b", {2: "b2"}, log), Versioned("c", {}, log)]
    ctx = Context(None, None)  # type: ignore[arg-type]  # the test modules read nothing
    assert run_migrations(ctx, modules, {"a": 1, "b": 2}) == {"a": 3, "b": 3, "c": 3}
    assert log == ["a1", "a2", "b2", "genesis c"]  # app order; a new module gets its default genesis
    with pytest.raises(MigrationError, match="module b has no migration from version 1 to 2"):
        run_migrations(ctx, modules, {"a": 3, "b": 1, "c": 3})
    with pytest.raises(MigrationError, match="above this binary's"):
        run_migrations(ctx, modules, {"a": 4, "b": 3, "c": 3})


def test_module_versions_travel_through_export(tmp_path: Path) -> None:
    chain, height, _ = halt_and_upgrade(tmp_path / "node")
    with chain:
        exported = chain.app.export_app_state()
        upgrade = exported["upgrade"]
        assert {v["name"]: v["version"] for v in upgrade["module_versions"]}["upgrade"] == "2"
        assert {"name": NAME, "height": str(height)} in upgrade["applied"]
        assert "plan" not in upgrade
    # the test binary (x/upgrade at 2) imports it; a binary at other versions refuses it
    start = {"chain_id": CHAIN, "app_state": json.loads(json.dumps(exported)), "initial_height": chain.height + 1}
    with InProcessChain(tmp_path / "new", {}, test_upgrade=NAME, **start) as new:
        assert module_versions(new)["upgrade"] == 2
        assert applied_height(new, NAME) == height
    with pytest.raises(ValueError, match="are not this binary's"):
        InProcessChain(tmp_path / "old", {}, **start)


def test_cli_proposes_the_plan_and_its_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tx upgrade software-upgrade`` and ``cancel-software-upgrade`` broadcast one gov proposal each, its one
    message signed by the gov authority."""
    sent: list[Any] = []
    monkeypatch.setattr(
        "sdk.cli.proposal.broadcast_messages", lambda args, build: sent.extend(build(addr(VALIDATORS[0])))
    )
    for argv in (
        ["tx", "upgrade", "software-upgrade", NAME, "--upgrade-height", "120", "--upgrade-info", INFO],
        ["tx", "upgrade", "cancel-software-upgrade"],
    ):
        argv += ["--deposit", "5ngonka", "--from", "k"]
        args = build_parser(argv).parse_args(argv)
        args.func(args)
    upgrade, cancel = sent
    assert (upgrade.proposer, upgrade.initial_deposit[0].amount, upgrade.title) == (
        addr(VALIDATORS[0]),
        "5",
        "Software upgrade",
    )
    plan_msg, cancel_msg = upgrade_tx.MsgSoftwareUpgrade(), upgrade_tx.MsgCancelUpgrade()
    assert upgrade.messages[0].Unpack(plan_msg) and cancel.messages[0].Unpack(cancel_msg)
    assert plan_msg == upgrade_tx.MsgSoftwareUpgrade(
        authority=AUTHORITY, plan=upgrade_pb2.Plan(name=NAME, height=120, info=INFO)
    )
    assert cancel_msg.authority == AUTHORITY


def start_node(home: Path, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gonkad", "start", "--abci-only", "--home", str(home), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def finalize_over_abci(port: int, last: int, height: int, fails: bool = False) -> abci.Response:
    """Info (the node at ``last``), then as CometBFT would: every block up to ``height`` finalized (and all
    but that one committed); the answer to the last FinalizeBlock (``fails``: an exception, after which the
    server closes the connection)."""

    async def drive() -> abci.Response:
        client = await Client.connect_when_up(port, 600)  # the node's start-up, on a busy machine
        info = (await client.call(abci.Request(info=abci.RequestInfo()), FLUSH))[0].info
        assert info.last_block_height == last
        for h in range(last + 1, height):
            await client.call(abci.Request(finalize_block=abci.RequestFinalizeBlock(height=h)), FLUSH)
            await client.call(abci.Request(commit=abci.RequestCommit()), FLUSH)
        request = abci.Request(finalize_block=abci.RequestFinalizeBlock(height=height))
        if fails:
            await client.send(request, FLUSH)
            return (await client.read_until_eof())[0]
        return (await client.call(request, FLUSH))[0]

    return asyncio.run(drive())


def test_gonkad_start_halts_refuses_and_upgrades(tmp_path: Path) -> None:
    """``gonkad start`` at a plan's height: without the handler the node answers FinalizeBlock with an exception,
    writes ``data/upgrade-info.json`` and exits 2; started again it refuses before serving (exit 1, one line);
    with ``--test-upgrade`` it runs the block."""
    home, abci_port = abci_only_home(tmp_path)
    with GovChain(app_db(home), authority=outsider_raw()) as chain:
        height = chain.height + 3
        assert chain.deliver(OUTSIDER, software_upgrade(height=height, authority=addr(OUTSIDER))).code == 0
    node = start_node(home)  # two blocks before the plan's: it starts
    try:
        answer = finalize_over_abci(abci_port, height - 2, height, fails=True)
        assert f'UpgradeNeeded: UPGRADE "{NAME}" NEEDED at height {height}: {INFO}' == answer.exception.error
        output, _ = node.communicate(timeout=30)
        assert node.returncode == 2, output
        assert f'UPGRADE "{NAME}" NEEDED at height {height}: {INFO}' in output
    finally:
        stop_child(node, grace_s=5)
    assert json.loads(info_file(home).read_text()) == {"name": NAME, "height": height, "info": INFO}
    refused = subprocess.run(
        [sys.executable, "-m", "gonkad", "start", "--abci-only", "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1
    last_line = refused.stderr.splitlines()[-1]  # after the node's own warnings (no BLS key here)
    assert last_line == f'Error: UPGRADE "{NAME}" NEEDED at height {height}: this binary has no handler for it'
    node = start_node(home, "--test-upgrade", NAME)
    try:
        answer = finalize_over_abci(abci_port, height - 1, height)
        assert answer.WhichOneof("value") == "finalize_block", answer
        assert any(e.type == "upgrade_applied" for e in answer.finalize_block.events)
    finally:
        stop_child(node, grace_s=5)
