"""BLS block certificates (issue #14): what they cost in verification, in ProcessProposal, and in block time.

1. FastAggregateVerify with N signers over one 32-byte message: ``sdk.crypto.bls.fast_aggregate_verify``
   (bytes in; parsed keys cached by its lru_cache, warmed by one call first) against blspy's
   ``PopSchemeMPL.fast_aggregate_verify`` on pre-parsed points (the floor), and py_ecc's
   ``G2ProofOfPossession.FastAggregateVerify`` (the pure-Python reference) at 4 signers only.
2. ProcessProposal and PrepareProposal in process: a GonkaApp whose genesis has V validators, each with a BLS
   key registered by its gentx, block 1 committed; height 2's proposal is prepared from a last commit where every
   validator voted with its BLS share, then ProcessProposal is timed on it. The same calls on the same genesis
   with vote extensions disabled (no certificate) give the baseline; the difference is the certificate's cost.
   Also timed with extensions on: height 2's ExtendVote (this node's share) and VerifyVoteExtension (one other
   validator's share; every node checks V - 1 of them per height), and "VerifyVoteExtension CPU per height":
   the V - 1 other validators' shares of height 2 through the app's VerifyVoteExtension, as CometBFT calls it,
   then the batch the height leaves to verify (``ShareChecks.settle_pending``: the proposer's PrepareProposal
   of height 3 runs it, other nodes their first VerifyVoteExtension of height 3), with this node's share checks
   ``eager`` and ``deferred`` (x/bls/shares.py) alternated; each round starts with no share verdict or parsed
   share cached, as a new height does (parsed keys stay cached, as validators' keys recur).
3. Block interval of the 4-validator localnet (localnet/settings.toml) with vote extensions on from height 1
   (certificates in every block) and off, alternated: mean interval over N blocks after height 5, from the
   blocks' header times, and blocks per wall-clock second.

    .venv/bin/python bench/bench_bls.py                         # all three, defaults below
    .venv/bin/python bench/bench_bls.py --parts verify proposal --repeats 50
    .venv/bin/python bench/bench_bls.py --parts localnet --localnet-rounds 3 --blocks 40
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from blspy import G1Element, G2Element, PopSchemeMPL  # noqa: E402
from cosmpy.protos.tendermint.abci import types_pb2 as abci  # noqa: E402
from cosmpy.protos.tendermint.types import params_pb2, validator_pb2  # noqa: E402

from app import GonkaApp  # noqa: E402
from bench.common import log  # noqa: E402
from gonkad import genesis, localnet  # noqa: E402
from sdk.abci.blocks import INJECTED_ENTRY_MAGIC, encode_vote_extension  # noqa: E402
from sdk.address import consensus_address  # noqa: E402
from sdk.client.rpc import CometRPC  # noqa: E402
from sdk.client.txbuilder import address_of  # noqa: E402
from sdk.crypto import bls, certificate, secp256k1  # noqa: E402
from sdk.store.commitstore import CommitStore  # noqa: E402
from x.bls.certificates import NodeKey  # noqa: E402
from x.bls.shares import MODES, ShareChecks  # noqa: E402
from x.genutil.gentx import build_gentx  # noqa: E402

CHAIN = "gonka-bench-bls"
DENOM = "ngonka"
GNK = 10**9
MAX_TX_BYTES = 22_020_096  # CometBFT's default block max_bytes
COMMIT = validator_pb2.BLOCK_ID_FLAG_COMMIT


def timed(call: Callable[[], Any]) -> tuple[float, float]:
    """(wall ms, this thread's CPU ms) of one call. On a shared 2-core VM the wall time includes time the thread
    waited for a core; its CPU time does not (single-threaded work: blspy and the app do not spawn threads)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    call()
    return (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000


def medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """(median wall ms, median CPU ms)."""
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


# --- 1. FastAggregateVerify ---------------------------------------------------------------------------


def secrets(n: int, tag: int = 0) -> list[bytes]:
    return [bls.keygen(hashlib.sha256(b"bench-bls %d %d" % (tag, i)).digest()) for i in range(n)]


def bench_verify(signers: list[int], repeats: int, py_ecc_runs: int) -> list[dict[str, Any]]:
    message = hashlib.sha256(b"bench-bls message").digest()
    rows = []
    for n in signers:
        keys = secrets(n)
        pks = [bls.public_key(sk) for sk in keys]
        sig = bls.aggregate([bls.sign(sk, message) for sk in keys])
        points = [G1Element.from_bytes(pk) for pk in pks]
        sig_point = G2Element.from_bytes(sig)
        assert bls.fast_aggregate_verify(pks, message, sig)  # warm-up: parses and caches the keys
        assert PopSchemeMPL.fast_aggregate_verify(points, message, sig_point)
        # alternate the two, so a noisy minute hits both alike
        wrapper, floor = [], []
        for _ in range(repeats):
            wrapper.append(timed(lambda: bls.fast_aggregate_verify(pks, message, sig)))
            floor.append(timed(lambda: PopSchemeMPL.fast_aggregate_verify(points, message, sig_point)))
        row: dict[str, Any] = {"signers": n, "py_ecc_ms": None}
        row["sdk_ms"], row["sdk_cpu_ms"] = medians(wrapper)
        row["blspy_ms"], row["blspy_cpu_ms"] = medians(floor)
        if n <= 4 and py_ecc_runs > 0:
            from py_ecc.bls import G2ProofOfPossession  # noqa: PLC0415 - slow import, only here

            assert G2ProofOfPossession.FastAggregateVerify(pks, message, sig)
            ecc = [
                timed(lambda: G2ProofOfPossession.FastAggregateVerify(pks, message, sig)) for _ in range(py_ecc_runs)
            ]
            row["py_ecc_ms"], row["py_ecc_cpu_ms"] = medians(ecc)
            row["py_ecc_runs_ms"] = [w for w, _ in ecc]
        log(
            f"verify {n} signers: sdk {row['sdk_ms']:.3f} ms, blspy {row['blspy_ms']:.3f} ms"
            + (f", py_ecc {row['py_ecc_ms']:.0f} ms" if row["py_ecc_ms"] else "")
        )
        rows.append(row)
    return rows


# --- 2. PrepareProposal and ProcessProposal in process ------------------------------------------------


class Chain:
    """A GonkaApp at height 1 over V validators with BLS keys; builds height 2's proposal and times its hooks."""

    def __init__(self, path: str, validators: int, extensions: bool) -> None:
        self.validators = validators
        self.extensions = extensions
        accounts = [
            secp256k1.PrivateKey(hashlib.sha256(b"bench-bls account %d" % i).digest()) for i in range(validators)
        ]
        self.bls_secrets = secrets(validators, tag=1)
        state = genesis.default_app_state()
        gentxs = []
        for i, key in enumerate(accounts):
            state = genesis.add_genesis_account(state, address_of(key), [(DENOM, 10_000 * GNK)])
            consensus_key = hashlib.sha256(b"bench-bls ed25519 %d" % i).digest()
            gentxs.append(
                build_gentx(
                    key, f"v{i}", consensus_key, (DENOM, (1000 + i) * GNK), CHAIN, bls_secret=self.bls_secrets[i]
                )
            )
        state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gentxs]}
        params = params_pb2.ConsensusParams()
        params.abci.vote_extensions_enable_height = 1 if extensions else 0
        self.app = GonkaApp(CommitStore(path))  # invariants off, as on a production node
        reply = self.app.init_chain(
            abci.RequestInitChain(
                chain_id=CHAIN, initial_height=1, app_state_bytes=json.dumps(state).encode(), consensus_params=params
            )
        )
        # CometBFT's validators, as InitChain set them (by power, then address, as CometBFT orders its set)
        self.set = sorted(
            ((consensus_address(u.pub_key.ed25519), u.power) for u in reply.validators), key=lambda v: (-v[1], v[0])
        )
        assert len(self.set) == validators, f"{len(reply.validators)} validators out of {validators}"
        by_address = {
            consensus_address(hashlib.sha256(b"bench-bls ed25519 %d" % i).digest()): self.bls_secrets[i]
            for i in range(validators)
        }
        header_app_hash = self.app.genesis_app_hash  # block 1's header carries InitChain's app hash
        self.app.finalize_block(abci.RequestFinalizeBlock(height=1, proposer_address=self.set[0][0]))
        self.app.commit(abci.RequestCommit())
        self.last_message = certificate.signing_message(CHAIN, 1, header_app_hash)
        self.last_shares = [
            (bls.public_key(by_address[address]), bls.sign(by_address[address], self.last_message))
            for address, _ in self.set
        ]
        local = abci.ExtendedCommitInfo(round=0)
        proposed = abci.CommitInfo(round=0)
        for (address, power), (_, share) in zip(self.set, self.last_shares):
            vote = local.votes.add(validator=abci.Validator(address=address, power=power), block_id_flag=COMMIT)
            if extensions:
                vote.vote_extension = encode_vote_extension({"bls": share})
            proposed.votes.add(validator=abci.Validator(address=address, power=power), block_id_flag=COMMIT)
        self.bls_module = self.app.module_named("bls")
        self.as_after_votes()
        self.prepare_request = abci.RequestPrepareProposal(
            height=2, max_tx_bytes=MAX_TX_BYTES, local_last_commit=local, proposer_address=self.set[0][0]
        )
        self.prepare_request.time.seconds = 1
        txs = list(self.prepare())
        has_certificate = bool(txs) and txs[0].startswith(INJECTED_ENTRY_MAGIC)
        assert has_certificate == extensions, f"certificate in the proposal: {has_certificate}"
        self.process_request = abci.RequestProcessProposal(
            height=2,
            txs=txs,
            proposed_last_commit=proposed,
            proposer_address=self.set[0][0],
            hash=hashlib.sha256(b"block 2").digest(),
        )
        self.process_request.time.seconds = 1
        assert self.process().status == abci.ResponseProcessProposal.ACCEPT
        if extensions:  # CometBFT calls ExtendVote and VerifyVoteExtension only where extensions are enabled
            self.vote_hooks(by_address)

    def vote_hooks(self, secrets_by_address: dict[bytes, bytes]) -> None:
        """Height 2's own votes, as every node sees them while height 2 is decided: ExtendVote signs (this node
        is the first validator), VerifyVoteExtension checks another validator's share (the first's, here), and
        the V - 1 others' shares of the height."""
        address = self.set[0][0]
        secret = secrets_by_address[address]
        self.bls_module.node_key = NodeKey(secret, bls.public_key(secret))  # type: ignore[attr-defined]
        block_hash = hashlib.sha256(b"block 2").digest()
        self.extend_request = abci.RequestExtendVote(height=2, hash=block_hash, proposer_address=address)
        message = certificate.signing_message(CHAIN, 2, self.app.header_app_hash())

        def request(validator: bytes) -> abci.RequestVerifyVoteExtension:
            share = bls.sign(secrets_by_address[validator], message)
            extension = encode_vote_extension({"bls": share})
            return abci.RequestVerifyVoteExtension(
                hash=block_hash, validator_address=validator, height=2, vote_extension=extension
            )

        self.verify_request = request(address)
        self.height_requests = [request(validator) for validator, _ in self.set[1:]]
        assert self.extend().vote_extension == self.verify_request.vote_extension
        assert self.verify().status == abci.ResponseVerifyVoteExtension.ACCEPT
        for mode in MODES:
            self.new_height(mode)
            assert all(self.verify_height()), mode
            self.settle_height()
            assert not self.bls_module.shares.suspects  # type: ignore[attr-defined]

    def as_after_votes(self) -> None:
        """This node's share checks as the proposer of height 2 has them: height 1's shares verified (by its
        VerifyVoteExtension, eager checks) and parsed. Not timed."""
        self.bls_module.shares = checks = ShareChecks("eager")  # type: ignore[attr-defined]
        for key, share in self.last_shares:
            checks.vouch(key, self.last_message, share)
            bls.is_signature(share)

    def prepare(self) -> Any:
        return self.app.prepare_proposal(self.prepare_request).txs

    def process(self) -> abci.ResponseProcessProposal:
        return self.app.process_proposal(self.process_request)

    def extend(self) -> abci.ResponseExtendVote:
        return self.app.extend_vote(self.extend_request)

    def verify(self) -> abci.ResponseVerifyVoteExtension:
        """One share, verified (eager checks, none cached: verdicts would answer a repeat)."""
        self.bls_module.shares = ShareChecks("eager")  # type: ignore[attr-defined]
        return self.app.verify_vote_extension(self.verify_request)

    def new_height(self, mode: str) -> None:
        """This node's share checks as a new height finds them: no verdicts, no share parsed yet."""
        self.bls_module.shares = ShareChecks(mode)  # type: ignore[attr-defined]
        bls._parse_signature.cache_clear()

    def verify_height(self) -> list[bool]:
        """The V - 1 other validators' shares of height 2 through VerifyVoteExtension."""
        accept = abci.ResponseVerifyVoteExtension.ACCEPT
        return [self.app.verify_vote_extension(r).status == accept for r in self.height_requests]

    def settle_height(self) -> None:
        """The batch the height leaves behind (none with eager checks)."""
        self.bls_module.shares.settle_pending()  # type: ignore[attr-defined]

    def close(self) -> None:
        self.app.store.close()


def bench_proposal(validator_counts: list[int], repeats: int) -> list[dict[str, Any]]:
    rows = []
    for v in validator_counts:
        with tempfile.TemporaryDirectory() as tmp:
            log(f"proposal: building two chains of {v} validators")
            chains = {ext: Chain(str(Path(tmp) / f"db{int(ext)}"), v, ext) for ext in (True, False)}
            try:
                hooks = {
                    "process": Chain.process,
                    "prepare": Chain.prepare,
                    "extend": Chain.extend,
                    "verify": Chain.verify,
                }
                times: dict[tuple[str, bool], list[tuple[float, float]]] = {
                    (h, e): [] for h in hooks for e in (True, False) if e or h in ("process", "prepare")
                }
                per_height: dict[tuple[str, str], list[tuple[float, float]]] = {
                    (part, mode): [] for part in ("hooks", "batch", "total") for mode in MODES
                }
                for r in range(repeats):  # alternate with and without, so noise hits both alike
                    for ext, chain in chains.items():
                        for name, hook in hooks.items():
                            if ext or name in ("process", "prepare"):
                                chain.as_after_votes()
                                times[(name, ext)].append(timed(lambda: hook(chain)))
                    for mode in MODES if r % 2 == 0 else MODES[::-1]:  # eager and deferred checks, ABBA
                        chain = chains[True]
                        chain.new_height(mode)
                        hooks_time = timed(chain.verify_height)
                        batch_time = timed(chain.settle_height)
                        per_height[("hooks", mode)].append(hooks_time)
                        per_height[("batch", mode)].append(batch_time)
                        per_height[("total", mode)].append(
                            (hooks_time[0] + batch_time[0], hooks_time[1] + batch_time[1])
                        )
            finally:
                for chain in chains.values():
                    chain.close()
        med = {key: medians(runs) for key, runs in times.items()}
        row: dict[str, Any] = {"validators": v}
        for name, with_, without in (("process", True, False), ("prepare", True, False)):
            for unit, i in (("ms", 0), ("cpu_ms", 1)):
                row[f"{name}_with_{unit}"] = med[(name, with_)][i]
                row[f"{name}_without_{unit}"] = med[(name, without)][i]
                row[f"{name}_added_{unit}"] = med[(name, with_)][i] - med[(name, without)][i]
        row["extend_ms"], row["extend_cpu_ms"] = med[("extend", True)]
        row["verify_ms"], row["verify_cpu_ms"] = med[("verify", True)]
        for (part, mode), runs in per_height.items():
            row[f"height_{part}_{mode}_ms"], row[f"height_{part}_{mode}_cpu_ms"] = medians(runs)
        log(f"proposal {v} validators: {json.dumps({k: round(x, 3) for k, x in row.items()})}")
        rows.append(row)
    return rows


# --- 3. block interval on the localnet ----------------------------------------------------------------


def header_time_s(block: dict[str, Any]) -> float:
    """A block header's RFC 3339 time with nanoseconds, as seconds."""
    stamp = block["block"]["header"]["time"]
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    return datetime.fromisoformat(whole + "+00:00").timestamp() + float("0." + (fraction or "0"))


def wait_height(rpc: CometRPC, height: int, timeout_s: float) -> float:
    """Poll until ``height`` is committed; the wall-clock time it was first seen."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if rpc.height() >= height:
                return time.monotonic()
        except Exception:  # noqa: BLE001 - the node may not answer yet
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"height {height} not reached in {timeout_s} s")
        time.sleep(0.01)


def localnet_run(enable_height: str, blocks: int, start_height: int) -> dict[str, Any]:
    settings = localnet.load_settings()
    settings = settings.model_copy(
        update={
            "consensus_params": {**settings.consensus_params, "abci": {"vote_extensions_enable_height": enable_height}}
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "net"
        try:
            spec = localnet.build(root, settings=settings)
            localnet.start(root, settings=settings)
            rpc = CometRPC(spec.nodes[0].rpc, timeout=5.0)
            wait_height(rpc, start_height, 180)
            first = rpc.height()
            wall0 = wait_height(rpc, first + 1, 60)
            first += 1
            last = first + blocks
            wall1 = wait_height(rpc, last, 30 + 10 * blocks)
            times = [header_time_s(rpc.block(h)) for h in (first, last)]
            certified = sum(
                any(
                    base64.b64decode(tx).startswith(INJECTED_ENTRY_MAGIC)
                    for tx in rpc.block(h)["block"]["data"]["txs"] or []
                )
                for h in range(first + 1, last + 1)
            )
        finally:
            localnet.stop(root)
    return {
        "enable_height": enable_height,
        "from": first,
        "to": last,
        "interval_ms": (times[1] - times[0]) / blocks * 1000,
        "wall_blocks_per_s": blocks / (wall1 - wall0),
        "blocks_with_certificate": certified,
    }


def bench_localnet(rounds: int, blocks: int, start_height: int) -> list[dict[str, Any]]:
    runs = []
    for r in range(rounds):
        for enable in ("1", "0") if r % 2 == 0 else ("0", "1"):  # ABBA: neither always goes first
            run = localnet_run(enable, blocks, start_height)
            log(f"localnet round {r + 1}: {json.dumps(run)}")
            runs.append(run)
    return runs


# --- report -------------------------------------------------------------------------------------------


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that `finally` stops the localnet
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--parts", nargs="+", choices=["verify", "proposal", "localnet"], default=["verify", "proposal", "localnet"]
    )
    parser.add_argument("--signers", type=int, nargs="+", default=[4, 100, 1000])
    parser.add_argument("--repeats", type=int, default=30, help="timed runs per in-process figure (median)")
    parser.add_argument("--py-ecc-runs", type=int, default=2, help="py_ecc runs at 4 signers (each ~1 s); 0: skip")
    parser.add_argument("--validators", type=int, nargs="+", default=[4, 100])
    parser.add_argument("--localnet-rounds", type=int, default=3, help="runs of each localnet configuration")
    parser.add_argument("--blocks", type=int, default=40, help="blocks measured per localnet run")
    parser.add_argument("--start-height", type=int, default=5, help="localnet blocks before the measurement")
    args = parser.parse_args()
    med = statistics.median
    if "verify" in args.parts:
        rows = bench_verify(args.signers, args.repeats, args.py_ecc_runs)
        print(f"\nFastAggregateVerify, one message, median of {args.repeats}: wall ms (CPU ms)\n")
        print("| signers | sdk.crypto.bls | blspy on parsed points | py_ecc (runs) | py_ecc / sdk (CPU) |")
        print("|---:|---:|---:|---:|---:|")
        for r in rows:
            ecc = ratio = ""
            if r["py_ecc_ms"]:
                runs = ", ".join(f"{x:.0f}" for x in r["py_ecc_runs_ms"])
                ecc = f"{r['py_ecc_ms']:.0f} ({r['py_ecc_cpu_ms']:.0f}); {runs}"
                ratio = f"{r['py_ecc_ms'] / r['sdk_ms']:.0f}× ({r['py_ecc_cpu_ms'] / r['sdk_cpu_ms']:.0f}×)"
            print(
                f"| {r['signers']:,} | {r['sdk_ms']:.3f} ({r['sdk_cpu_ms']:.3f}) | "
                f"{r['blspy_ms']:.3f} ({r['blspy_cpu_ms']:.3f}) | {ecc} | {ratio} |"
            )
    if "proposal" in args.parts:
        rows = bench_proposal(args.validators, args.repeats)
        print(
            f"\nHeight 2's proposal in process, every validator's share in the last commit, median of {args.repeats}: "
            "wall ms (CPU ms)\n"
        )
        print(
            "| validators | ProcessProposal with certificate | without | added | "
            "PrepareProposal with | without | added |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            cells = [
                f"{r[f'{hook}_{kind}_ms']:.3f} ({r[f'{hook}_{kind}_cpu_ms']:.3f})"
                for hook in ("process", "prepare")
                for kind in ("with", "without", "added")
            ]
            print(f"| {r['validators']} | {' | '.join(cells)} |")
        print(
            "\nHeight 2's votes with extensions on (CometBFT calls neither hook when they are off): ExtendVote "
            "(this node signs) and VerifyVoteExtension (one other validator's share; each node verifies the V - 1 "
            "others' shares per height), median wall ms (CPU ms)\n"
        )
        print("| validators | ExtendVote | VerifyVoteExtension | (V - 1) × VerifyVoteExtension per height |")
        print("|---:|---:|---:|---:|")
        for r in rows:
            print(
                f"| {r['validators']} | {r['extend_ms']:.3f} ({r['extend_cpu_ms']:.3f}) | "
                f"{r['verify_ms']:.3f} ({r['verify_cpu_ms']:.3f}) | {(r['validators'] - 1) * r['verify_ms']:.1f} "
                f"({(r['validators'] - 1) * r['verify_cpu_ms']:.1f}) |"
            )
        print(
            "\nVerifyVoteExtension CPU per height at V validators: the V - 1 other validators' shares of height 2 "
            "through VerifyVoteExtension, plus the batch the height leaves (PrepareProposal of height 3 at the "
            f"proposer, the first VerifyVoteExtension of height 3 elsewhere), alternated, median of {args.repeats}: "
            "CPU ms (wall ms)\n"
        )
        print(
            "| validators | eager: hooks | eager: batch | eager: total | deferred: hooks | deferred: batch | "
            "deferred: total | eager / deferred |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            cells = [
                f"{r[f'height_{part}_{mode}_cpu_ms']:.1f} ({r[f'height_{part}_{mode}_ms']:.1f})"
                for mode in MODES
                for part in ("hooks", "batch", "total")
            ]
            ratio = r["height_total_eager_cpu_ms"] / r["height_total_deferred_cpu_ms"]
            print(f"| {r['validators']} | {' | '.join(cells)} | {ratio:.1f}× |")
    if "localnet" in args.parts:
        runs = bench_localnet(args.localnet_rounds, args.blocks, args.start_height)
        print(f"\n4-validator localnet, {args.blocks} blocks after height {args.start_height}, alternated\n")
        print(
            "| vote extensions | median block interval ms | runs (ms) | median blocks/s (wall) | "
            "blocks with a certificate |"
        )
        print("|---|---:|---|---:|---|")
        summary = {}
        for enable, label in (("1", "on from height 1 (certificates)"), ("0", "off")):
            mine = [r for r in runs if r["enable_height"] == enable]
            intervals = [r["interval_ms"] for r in mine]
            certified = [r["blocks_with_certificate"] for r in mine]
            summary[enable] = med(intervals)
            print(
                f"| {label} | {summary[enable]:.1f} | {', '.join(f'{x:.1f}' for x in intervals)} | "
                f"{med(r['wall_blocks_per_s'] for r in mine):.2f} | "
                f"{', '.join(f'{x}/{args.blocks}' for x in certified)} |"
            )
        print(f"\nwith / without certificates (median intervals): {summary['1'] / summary['0']:.3f}")


if __name__ == "__main__":
    main()
