"""The module interface around a block: BlockInfo in begin/end block, hooks in branches, the ABCI 2.0 hooks
(vote extensions, injected proposal entries) and x/stake's validator-set diff.

Two apps on separate stores stand in for two nodes; the test drives them as CometBFT would (PrepareProposal
on the proposer, ProcessProposal on the other, ExtendVote/VerifyVoteExtension, FinalizeBlock, Commit).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.crypto.ed25519 import keys_pb2 as ed25519
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import tx_pb2 as staking_tx
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.types import validator_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from app import GonkaApp
from gonkad import genesis
from gonkad.config import AppConfig, load_app_config, save_app_config
from sdk.abci.blocks import (
    INJECTED_ENTRY_MAGIC,
    BlockInfo,
    Misbehavior,
    VoteExtension,
    VoteInfo,
    decode_vote_extension,
    encode_injected_entry,
    encode_vote_extension,
)
from sdk.baseapp import BaseApp
from sdk.client.txbuilder import address_of, sign_tx
from sdk.context import Context
from sdk.crypto import bech32, secp256k1
from sdk.module import BaseModule, Module
from sdk.store.commitstore import CommitStore
from x.genutil.gentx import build_gentx

CHAIN = "gonka-hooks"
NODE_A, NODE_B = b"\xaa" * 20, b"\xbb" * 20  # consensus addresses of the two validators
COMMIT = validator_pb2.BLOCK_ID_FLAG_COMMIT


class ProbeModule(BaseModule):
    """A test-only module that uses every hook: it extends votes with its node's name (node-local config),
    injects an entry naming the extensions it saw, checks the entry, and records what its hooks were given."""

    name = "probe"
    store_prefix = b"probe/"

    def __init__(self) -> None:
        self.node = b""
        self.fail: set[str] = set()
        self.blocks: list[tuple[str, BlockInfo]] = []
        self.seen_extensions: list[VoteExtension] = []

    def configure(self, config: Mapping[str, Any]) -> None:
        self.node = str(config["node"]).encode()
        self.fail = set(config.get("fail", ()))

    def init_genesis(self, ctx: Context, state: dict[str, Any]) -> None:
        return None

    def export_genesis(self, ctx: Context) -> dict[str, Any]:
        return {}

    def begin_block(self, ctx: Context, block: BlockInfo) -> None:
        self.hook(ctx, "begin_block", block)

    def end_block(self, ctx: Context, block: BlockInfo) -> None:
        self.hook(ctx, "end_block", block)

    def hook(self, ctx: Context, name: str, block: BlockInfo) -> None:
        self.blocks.append((name, block))
        ctx.kv(self.store_prefix).set(name.encode(), str(block.height).encode())
        if name in self.fail:
            raise RuntimeError(f"{name} fails on purpose")

    def extend_vote(self, ctx: Context, block: BlockInfo) -> bytes:
        return b"ext:" + self.node + b"@" + str(block.height).encode()

    def verify_vote_extension(self, ctx: Context, block: BlockInfo, validator: bytes, extension: bytes) -> bool:
        return extension.startswith(b"ext:") and extension.endswith(b"@" + str(block.height).encode())

    def prepare_proposal(self, ctx: Context, block: BlockInfo, extensions: Sequence[VoteExtension]) -> bytes | None:
        self.seen_extensions = list(extensions)
        return self.expected_entry(block.height, [e.data for e in extensions])

    @staticmethod
    def expected_entry(height: int, extensions: Sequence[bytes]) -> bytes:
        return json.dumps({"height": height, "extensions": sorted(e.decode() for e in extensions)}).encode()

    def process_proposal(self, ctx: Context, block: BlockInfo, entry: bytes | None) -> bool:
        if entry is None:
            return False
        content = json.loads(entry)
        return bool(content["height"] == block.height and all(e.startswith("ext:") for e in content["extensions"]))

    def deliver_entry(self, ctx: Context, block: BlockInfo, entry: bytes) -> None:
        ctx.kv(self.store_prefix).set(b"entry", entry)
        if "deliver_entry" in self.fail:
            raise RuntimeError("deliver_entry fails on purpose")


class WithProbe(BaseApp):
    """Between GonkaApp and BaseApp in the MRO: the real modules as GonkaApp wires them, plus the probe."""

    probe: ProbeModule

    def __init__(self, store: CommitStore, modules: Sequence[Module], *args: Any, **kwargs: Any) -> None:
        super().__init__(store, [*modules, self.probe], *args, **kwargs)


class ProbeApp(GonkaApp, WithProbe):
    def __init__(self, path: Path, node: str, fail: Sequence[str] = ()) -> None:
        self.probe = ProbeModule()
        super().__init__(CommitStore(str(path)), module_config={"probe": {"node": node, "fail": list(fail)}})
        self.init_chain(
            abci.RequestInitChain(chain_id=CHAIN, app_state_bytes=json.dumps(genesis.default_app_state()).encode())
        )


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[tuple[ProbeApp, ProbeApp]]:
    a, b = ProbeApp(tmp_path / "a", "A"), ProbeApp(tmp_path / "b", "B")
    yield a, b
    a.store.close()
    b.store.close()


def at(seconds: int) -> Timestamp:
    return Timestamp(seconds=seconds)


def prepare(
    app: ProbeApp,
    height: int,
    proposer: bytes,
    txs: Sequence[bytes] = (),
    last: abci.ExtendedCommitInfo | None = None,
    max_tx_bytes: int = 1 << 20,
) -> list[bytes]:
    return list(
        app.prepare_proposal(
            abci.RequestPrepareProposal(
                height=height,
                time=at(height),
                proposer_address=proposer,
                txs=txs,
                max_tx_bytes=max_tx_bytes,
                local_last_commit=last or abci.ExtendedCommitInfo(),
            )
        ).txs
    )


def process(app: ProbeApp, height: int, proposer: bytes, txs: Sequence[bytes]) -> int:
    return app.process_proposal(
        abci.RequestProcessProposal(
            height=height,
            time=at(height),
            proposer_address=proposer,
            txs=txs,
            hash=bytes([height]) * 32,
        )
    ).status


def finalize(
    app: ProbeApp,
    height: int,
    proposer: bytes,
    txs: Sequence[bytes],
    last: abci.CommitInfo | None = None,
    misbehavior: Sequence[abci.Misbehavior] = (),
) -> abci.ResponseFinalizeBlock:
    response = app.finalize_block(
        abci.RequestFinalizeBlock(
            height=height,
            time=at(height),
            proposer_address=proposer,
            txs=txs,
            hash=bytes([height]) * 32,
            decided_last_commit=last or abci.CommitInfo(),
            misbehavior=misbehavior,
        )
    )
    app.commit(abci.RequestCommit())
    return response


def extend(app: ProbeApp, height: int) -> bytes:
    return app.extend_vote(abci.RequestExtendVote(height=height, hash=bytes([height]) * 32)).vote_extension


def verify(app: ProbeApp, height: int, validator: bytes, extension: bytes) -> int:
    return app.verify_vote_extension(
        abci.RequestVerifyVoteExtension(
            height=height,
            hash=bytes([height]) * 32,
            validator_address=validator,
            vote_extension=extension,
        )
    ).status


def test_injected_entry_is_checked_and_vote_extensions_reach_the_next_proposer(
    nodes: tuple[ProbeApp, ProbeApp],
) -> None:
    a, b = nodes
    ACCEPT, REJECT = abci.ResponseProcessProposal.ACCEPT, abci.ResponseProcessProposal.REJECT
    # Height 1, A proposes: the probe's entry first, then the mempool's txs in order.
    proposal = prepare(a, 1, NODE_A, txs=[b"mempool-1", b"mempool-2"])
    entry = encode_injected_entry("probe", ProbeModule.expected_entry(1, []))
    assert proposal == [entry, b"mempool-1", b"mempool-2"]
    assert proposal[0].startswith(INJECTED_ENTRY_MAGIC)
    assert prepare(a, 1, NODE_A, txs=[b"mempool-1", b"mempool-2"], max_tx_bytes=len(entry) + 2 + 11) == [
        entry,
        b"mempool-1",
    ]  # max_tx_bytes counts protobuf sizes; the mempool's order is kept
    forged = encode_injected_entry("probe", b"from the mempool")
    assert prepare(a, 1, NODE_A, txs=[forged, b"mempool-1"]) == [entry, b"mempool-1"]  # only modules inject
    # B accepts it as proposed, and rejects tampered, misplaced, duplicated or unknown entries.
    assert process(b, 1, NODE_A, proposal) == ACCEPT
    tampered = encode_injected_entry("probe", json.dumps({"height": 7, "extensions": []}).encode())
    assert process(b, 1, NODE_A, [tampered, *proposal[1:]]) == REJECT
    assert process(b, 1, NODE_A, proposal[1:]) == REJECT  # the probe requires its entry
    assert process(b, 1, NODE_A, [proposal[1], entry]) == REJECT  # entries only at the head
    assert process(b, 1, NODE_A, [entry, entry]) == REJECT
    assert process(b, 1, NODE_A, [encode_injected_entry("nobody", b"x"), entry]) == REJECT
    # Both vote and extend their votes; each verifies the other's, and malformed extensions are refused.
    ext_a, ext_b = extend(a, 1), extend(b, 1)
    assert decode_vote_extension(ext_a, ["probe"]) == {"probe": b"ext:A@1"}
    VE_ACCEPT, VE_REJECT = abci.ResponseVerifyVoteExtension.ACCEPT, abci.ResponseVerifyVoteExtension.REJECT
    assert verify(a, 1, NODE_B, ext_b) == VE_ACCEPT and verify(b, 1, NODE_A, ext_a) == VE_ACCEPT
    for bad in [
        b"",
        b"\xff",
        ext_a + b"\x00",
        encode_vote_extension({"probe": b"junk"}),
        encode_vote_extension({"probe": b"ext:A@1", "bank": b"x"}),
        encode_vote_extension({"nobody": b"x"}),
    ]:
        assert verify(b, 1, NODE_A, bad) == VE_REJECT, bad
    # Both finalize the accepted block to the same app hash; the entry went to the probe, not the tx decoder.
    results = [finalize(app, 1, NODE_A, proposal) for app in (a, b)]
    assert results[0].app_hash == results[1].app_hash
    assert results[0].tx_results[0].code == 0 and len(results[0].tx_results) > 1
    assert [(r.codespace, r.code) for r in results[0].tx_results[1:]] == [("sdk", 2)] * (len(results[0].tx_results) - 1)
    assert [app.store.get(b"probe/entry") for app in (a, b)] == [ProbeModule.expected_entry(1, [])] * 2
    # Height 2, B proposes: the extensions of height 1 reach the probe on the proposer, and the chain goes on.
    last = abci.ExtendedCommitInfo(
        votes=[
            abci.ExtendedVoteInfo(
                validator=abci.Validator(address=addr, power=10), vote_extension=ext, block_id_flag=COMMIT
            )
            for addr, ext in ((NODE_A, ext_a), (NODE_B, ext_b))
        ]
    )
    proposal = prepare(b, 2, NODE_B, last=last)
    assert b.probe.seen_extensions == [VoteExtension(NODE_A, 10, b"ext:A@1"), VoteExtension(NODE_B, 10, b"ext:B@1")]
    assert proposal == [encode_injected_entry("probe", ProbeModule.expected_entry(2, [b"ext:A@1", b"ext:B@1"]))]
    assert process(a, 2, NODE_B, proposal) == ACCEPT
    decided = abci.CommitInfo(
        votes=[
            abci.VoteInfo(validator=abci.Validator(address=addr, power=10), block_id_flag=COMMIT)
            for addr in (NODE_A, NODE_B)
        ]
    )
    hashes = {finalize(app, 2, NODE_B, proposal, decided).app_hash for app in (a, b)}
    assert len(hashes) == 1 and a.store.version == b.store.version == 2


def test_block_hooks_see_the_last_commit_and_misbehavior(nodes: tuple[ProbeApp, ProbeApp]) -> None:
    a, _ = nodes
    last = abci.CommitInfo(
        votes=[
            abci.VoteInfo(validator=abci.Validator(address=NODE_A, power=10), block_id_flag=COMMIT),
            abci.VoteInfo(
                validator=abci.Validator(address=NODE_B, power=5), block_id_flag=validator_pb2.BLOCK_ID_FLAG_ABSENT
            ),
        ]
    )
    evidence = abci.Misbehavior(
        type=abci.DUPLICATE_VOTE,
        validator=abci.Validator(address=NODE_B, power=5),
        height=1,
        time=at(1),
        total_voting_power=15,
    )
    finalize(a, 1, NODE_A, [], last, [evidence])
    expected = BlockInfo(
        height=1,
        time_ns=10**9,
        hash=b"\x01" * 32,
        proposer=NODE_A,
        decided_last_commit=(VoteInfo(NODE_A, 10, True), VoteInfo(NODE_B, 5, False)),
        misbehavior=(Misbehavior("duplicate_vote", NODE_B, 5, 1, 10**9, 15),),
        app_hash=a.genesis_app_hash,  # block 1's header carries InitChain's app hash
    )
    assert len(a.genesis_app_hash) == 32
    assert a.probe.blocks == [("begin_block", expected), ("end_block", expected)]
    finalize(a, 2, NODE_A, [])
    assert a.probe.blocks[-1][1].app_hash == a.store.root_at(1)  # then the last block's


def test_a_failing_hook_is_logged_and_its_writes_discarded(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    app = ProbeApp(tmp_path / "db", "A", fail=["begin_block", "deliver_entry"])
    try:
        with caplog.at_level(logging.ERROR, logger="gonkad.app"):
            response = finalize(app, 1, NODE_A, [encode_injected_entry("probe", b"{}")])
        assert "begin_block of module probe failed at height 1" in caplog.text
        assert "deliver_entry of module probe failed at height 1" in caplog.text
        assert app.store.version == 1 and response.app_hash == app.store.root_hash
        assert app.store.get(b"probe/begin_block") is None  # the failing hook's write is gone
        assert app.store.get(b"probe/entry") is None  # and the failing entry's
        [failed] = response.tx_results
        assert (failed.codespace, failed.code, failed.log) == (
            "sdk",
            1,
            "injected entry of module probe failed: RuntimeError",
        )
        assert app.store.get(b"probe/end_block") == b"1"  # the block went on
    finally:
        app.store.close()


def test_unknown_module_config_is_refused(tmp_path: Path) -> None:
    store = CommitStore(str(tmp_path / "db"))
    try:
        with pytest.raises(ValueError, match="unknown modules: nobody"):
            GonkaApp(store, module_config={"nobody": {}})
        with pytest.raises(ValueError, match="module bank takes no node-local config"):
            GonkaApp(store, module_config={"bank": {"key": "x"}})
    finally:
        store.close()


# --- x/stake: validator updates as a diff at end block ----------------------------------------------------

OPERATORS = [secp256k1.PrivateKey(bytes([0x60 + i]) * 32) for i in range(3)]
FUNDS, STAKE = 5_000 * 10**9, 1_000 * 10**9


def create_validator(chain: InProcessChain, key: secp256k1.PrivateKey, pubkey: bytes, amount: int) -> bytes:
    operator = secp256k1.address_bytes(key.public_key)
    msg = staking_tx.MsgCreateValidator(
        description=staking_pb2.Description(moniker="v"),
        validator_address=bech32.encode(operator, bech32.VALOPER_PREFIX),
        value={"denom": "ngonka", "amount": str(amount)},
    )
    msg.pubkey.Pack(ed25519.PubKey(key=pubkey), type_url_prefix="/")
    account = chain.account(operator)
    assert account is not None
    return sign_tx(key, [msg], chain.chain_id, account.account_number, account.sequence, gas_limit=400_000)


def updates(response: abci.ResponseFinalizeBlock | abci.ResponseInitChain) -> list[tuple[bytes, int]]:
    listed = response.validator_updates if isinstance(response, abci.ResponseFinalizeBlock) else response.validators
    return [(u.pub_key.ed25519, u.power) for u in listed]


def test_validator_updates_are_a_diff_sent_once(tmp_path: Path) -> None:
    state = genesis.default_app_state()
    state["epochs"] = {
        "params": {
            "epoch_length": "6",
            "race_validation_offset": "1",
            "set_validators_offset": "2",
            "inference_offset": "3",
        }
    }  # epoch 1 starts at height 7, sets validators at 9
    gentx = build_gentx(OPERATORS[0], "v0", b"\x01" * 32, ("ngonka", STAKE), CHAIN)
    state["genutil"] = {"gen_txs": [base64.b64encode(gentx).decode()]}
    with InProcessChain(
        tmp_path / "db",
        {address_of(k): [("ngonka", FUNDS)] for k in OPERATORS},
        chain_id=CHAIN,
        app_state=state,
        first_block=False,
    ) as chain:
        assert updates(chain.init_chain_response) == [(b"\x01" * 32, 1000)]
        assert updates(chain.block()) == []  # InitChain's set was recorded as sent
        response = chain.block([create_validator(chain, OPERATORS[1], b"\x02" * 32, STAKE)])
        assert response.tx_results[0].code == 0, response.tx_results[0].log
        assert updates(response) == []  # a new host waits for the set-validators stage
        assert [updates(chain.block()) for _ in range(3, 9)] == [[]] * 6
        assert updates(chain.block()) == [(b"\x02" * 32, 1000)]  # height 9: exactly one, that block
        assert updates(chain.block()) == []  # nothing the next block
        # Two changes to one validator within a block reach CometBFT as one update with the final power.
        stake = next(m for m in chain.app.modules if m.name == "stake")
        ctx = chain.context()
        keeper = chain.app.stake_keeper
        first, second = (secp256k1.address_bytes(k.public_key) for k in OPERATORS[:2])
        keeper.set_validator_powers(ctx, {first: 400, second: 1000})
        keeper.set_validator_powers(ctx, {first: 300, second: 1000})
        stake.end_block(ctx, BlockInfo(height=chain.height + 1, time_ns=0))
        assert [(u.pub_key.ed25519, u.power) for u in ctx.validator_updates] == [(b"\x01" * 32, 300)]
        ctx.validator_updates.clear()
        stake.end_block(ctx, BlockInfo(height=chain.height + 1, time_ns=0))
        assert ctx.validator_updates == []


def test_module_config_comes_from_app_toml(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    save_app_config(tmp_path, AppConfig(modules={"probe": {"node": "A", "key_file": "config/probe_key.json"}}))
    assert load_app_config(tmp_path).modules == {"probe": {"key_file": "config/probe_key.json", "node": "A"}}
