"""x/slashing in process: downtime (votes of the last commit) and double signs (misbehavior in FinalizeBlock)
turned into exact slashes, jail and tombstones; MsgUnjail's rules; ``slash`` with beneficiaries; and a seeded
random run of deposits, withdrawals, sends and slashes over ten epochs in which slashes burn nothing: the
supply stays the genesis supply and the community pool receives exactly what beneficiaries do not (every
invariant is checked after every block by the in-process chain).

Blocks carry explicit times (``height × 5 s`` unless a test moves the clock) so jail times are exact.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.slashing.v1beta1 import query_pb2 as slashing_query
from cosmpy.protos.cosmos.slashing.v1beta1 import tx_pb2 as slashing_tx
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.types import params_pb2, validator_pb2
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp
from test_stake import (
    DENOM,
    FUNDS,
    GNK,
    KEYS,
    collateral,
    consensus_key,
    deliver,
    deposit,
    events,
    host,
    host_chain,
    operator,
    pool,
    powers,
    signed,
    unbonding,
    updates,
    valoper,
    withdraw,
)

from sdk.address import consensus_address, module_address
from sdk.cli.flags import message_dict
from sdk.client.txbuilder import address_of
from sdk.crypto import bech32, secp256k1
from x.pool import keys as pool_keys
from x.slashing import keys as slashing_keys
from x.slashing.params import default_params as slashing_defaults
from x.stake import keys as stake_keys

S = 10**9  # one second in nanoseconds
SIGNING_INFO = "/cosmos.slashing.v1beta1.Query/SigningInfo"
TOMBSTONE = Timestamp(seconds=253402300799)
FAST_SLASHING = {"signed_blocks_window": "10", "min_signed_per_window": "0.5", "downtime_jail_seconds": "60"}


def slashing_section(**changes: str) -> dict[str, Any]:
    params = message_dict(slashing_defaults())
    params.update(changes)
    return {"slashing": {"params": params}}


def commit(signing: Iterable[int], absent: Iterable[int] = ()) -> abci.CommitInfo:
    """A last commit in which hosts ``signing`` signed (COMMIT) and hosts ``absent`` did not (ABSENT)."""
    votes = [
        abci.VoteInfo(
            validator=abci.Validator(address=consensus_address(consensus_key(i)), power=100),
            block_id_flag=validator_pb2.BLOCK_ID_FLAG_COMMIT,
        )
        for i in signing
    ]
    votes += [
        abci.VoteInfo(
            validator=abci.Validator(address=consensus_address(consensus_key(i)), power=100),
            block_id_flag=validator_pb2.BLOCK_ID_FLAG_ABSENT,
        )
        for i in absent
    ]
    return abci.CommitInfo(round=0, votes=votes)


def double_sign(i: int, height: int, time_ns: int) -> abci.Misbehavior:
    return abci.Misbehavior(
        type=abci.DUPLICATE_VOTE,
        validator=abci.Validator(address=consensus_address(consensus_key(i)), power=100),
        height=height,
        time=Timestamp(seconds=time_ns // S, nanos=time_ns % S),
        total_voting_power=500,
    )


def signing_info(chain: InProcessChain, i: int) -> Any:
    address = bech32.encode(consensus_address(consensus_key(i)), bech32.VALCONS_PREFIX)
    return chain.query(
        SIGNING_INFO,
        slashing_query.QuerySigningInfoRequest(cons_address=address),
        slashing_query.QuerySigningInfoResponse,
    ).val_signing_info


def unjail(key: secp256k1.PrivateKey) -> slashing_tx.MsgUnjail:
    return slashing_tx.MsgUnjail(validator_addr=valoper(key))


def module_state(chain: InProcessChain) -> dict[bytes, bytes]:
    """Everything stake and slashing hold."""
    return {
        **dict(chain.app.store.iterate(stake_keys.STORE_PREFIX)),
        **dict(chain.app.store.iterate(slashing_keys.STORE_PREFIX)),
    }


def community_pool(chain: InProcessChain) -> int:
    """The community pool's balance (x/pool), where what a slash pays no beneficiary goes."""
    return chain.balance(module_address(pool_keys.POOL_ACCOUNT))


def slashed_to_pool(response: abci.ResponseFinalizeBlock) -> int:
    """What the block's slashes paid into the community pool, by its ``fund_community_pool`` events."""
    total = 0
    for attributes in events(response, "fund_community_pool"):
        if attributes["source"] == "slash":
            assert attributes["amount"].endswith(DENOM), attributes
            total += int(attributes["amount"][: -len(DENOM)])
    return total


def burned(response: abci.ResponseFinalizeBlock) -> int:
    total = 0
    for attributes in events(response, "burn"):
        amount = attributes["amount"]
        assert amount.endswith(DENOM), amount
        total += int(amount[: -len(DENOM)])
    return total


# --- downtime ---------------------------------------------------------------------------------------------


def test_downtime_jails_slashes_and_unjail_waits_for_the_jail_time(tmp_path: Path) -> None:
    """Window 10, min signed 0.5: at most 10 − 5 = 5 missed blocks. Hosts sign from height 2 (their records
    start there); host 3 stops signing at height 12, so it has missed 6 > 5 of its last 10 at height 17 (and
    17 > 2 + 10): jailed then, not at 16 with 5 missed. It loses floor(1%) of its collateral and leaves the
    set in that block; it may unjail only at 17·5 s + 60 s of block time, and rejoins only at the next
    set-validators stage (21)."""
    odd = 100 * GNK + 123
    with host_chain(tmp_path / "db", [100 * GNK] * 3 + [odd], extra=slashing_section(**FAST_SLASHING)) as chain:
        assert chain.height == 1
        for height in range(2, 17):
            response = chain.block(
                time_ns=height * 5 * S,
                last_commit=commit(range(4) if height < 12 else range(3), [] if height < 12 else [3]),
            )
            assert events(response, "liveness") == [] and updates(response) == [], height
        info = signing_info(chain, 3)
        assert (info.start_height, info.index_offset, info.missed_blocks_counter, info.jailed_until.seconds) == (
            2,
            15,
            5,
            0,
        )
        supply, in_pool = chain.supply(), community_pool(chain)
        response = chain.block(time_ns=17 * 5 * S, last_commit=commit(range(3), [3]))
        assert chain.height == 17
        cut = odd // 100  # 1_000_000_001 (of ...001.23)
        assert cut == 1_000_000_001
        assert events(response, "liveness") == [
            {
                "address": bech32.encode(consensus_address(consensus_key(3)), bech32.VALCONS_PREFIX),
                "missed_blocks": "6",
                "height": "17",
            }
        ]
        assert events(response, "slash") == [
            {
                "operator": address_of(KEYS[3]),
                "amount": f"{cut}{DENOM}",
                "reason": "missing_signature",
                "pool": f"{cut}{DENOM}",
            }
        ]
        assert burned(response) == 0 and chain.supply() == supply
        assert slashed_to_pool(response) == cut and community_pool(chain) == in_pool + cut
        assert updates(response) == [(consensus_key(3), 0)]
        assert host(chain, KEYS[3]).jailed and collateral(chain, KEYS[3]) == (odd - cut, 0)
        assert address_of(KEYS[3]) not in powers(chain)
        info = signing_info(chain, 3)
        assert info.jailed_until == Timestamp(seconds=17 * 5 + 60)
        assert (info.missed_blocks_counter, info.index_offset, info.tombstoned) == (0, 0, False)
        assert chain.app.slashing_keeper.missed_indices(chain.context(), consensus_address(consensus_key(3))) == []

        # Before jailed_until (1 s short): refused, and nothing changes (no votes in this block either).
        before = module_state(chain)
        result, response = deliver(chain, KEYS[3], unjail(KEYS[3]), time_ns=(17 * 5 + 59) * S)
        assert (result.codespace, result.code) == ("slashing", 4), result.log
        assert f"is jailed until {Timestamp(seconds=145).ToJsonString()}" in result.log
        assert module_state(chain) == before and updates(response) == []
        # Not jailed: slashing/5.
        result, _ = deliver(chain, KEYS[0], unjail(KEYS[0]), time_ns=146 * S)
        assert (result.codespace, result.code) == ("slashing", 5), result.log
        assert f"{address_of(KEYS[0])} is not jailed" in result.log
        # At jailed_until: unjailed, but back in the set only at epoch 3's set-validators stage (21).
        assert chain.height == 19
        result, response = deliver(chain, KEYS[3], unjail(KEYS[3]), time_ns=150 * S, last_commit=commit(range(3)))
        assert chain.height == 20 and result.code == 0, result.log
        assert not host(chain, KEYS[3]).jailed and updates(response) == []
        assert address_of(KEYS[3]) not in powers(chain)
        response = chain.block(time_ns=155 * S, last_commit=commit(range(3)))
        assert chain.height == 21
        # 99 GNK of weight; four hosts may hold 1/3 each, so nobody is capped
        assert updates(response) == [(consensus_key(3), (odd - cut) // GNK)] == [(consensus_key(3), 99)]
        assert powers(chain)[address_of(KEYS[3])] == 99


# --- double signs -----------------------------------------------------------------------------------------

EVIDENCE = params_pb2.ConsensusParams(
    block=params_pb2.BlockParams(max_bytes=22020096, max_gas=-1),
    evidence=params_pb2.EvidenceParams(max_age_num_blocks=5, max_age_duration=Duration(seconds=30), max_bytes=1048576),
    validator=params_pb2.ValidatorParams(pub_key_types=["ed25519"]),
)


def test_double_sign_slashes_jails_and_tombstones_once(tmp_path: Path) -> None:
    """Host 1 double-signed at height 8; the evidence arrives at 10. It loses floor(5%) of its bonded
    collateral and of what it withdrew at 8 (at stake in the offence), but nothing of what it withdrew at 7,
    all paid into the community pool (nothing burned); it is jailed, tombstoned and out of the set in that block;
    the same evidence again does nothing; MsgUnjail is refused forever."""
    bonded, early, amount = 100 * GNK + 33, 3 * GNK, 10 * GNK + 17
    with host_chain(
        tmp_path / "db", [100 * GNK, bonded, 100 * GNK, 100 * GNK, 100 * GNK], consensus_params=EVIDENCE
    ) as chain:
        for height in range(2, 7):
            chain.block(time_ns=height * 5 * S)
        assert deliver(chain, KEYS[1], withdraw(KEYS[1], early), time_ns=7 * 5 * S)[0].code == 0
        assert deliver(chain, KEYS[1], withdraw(KEYS[1], amount), time_ns=8 * 5 * S)[0].code == 0
        chain.block(time_ns=9 * 5 * S)
        supply, in_pool = chain.supply(), community_pool(chain)
        response = chain.block(time_ns=10 * 5 * S, misbehavior=[double_sign(1, 8, 8 * 5 * S)])
        bonded_cut, entry_cut = (bonded - early - amount) * 5 // 100, amount * 5 // 100
        assert (bonded_cut, entry_cut) == (4_350_000_000, 500_000_000)  # of ...000.8 and ...000.85
        assert events(response, "slash") == [
            {
                "operator": address_of(KEYS[1]),
                "amount": f"{bonded_cut + entry_cut}{DENOM}",
                "reason": "double_sign:duplicate_vote",
                "pool": f"{bonded_cut + entry_cut}{DENOM}",
            }
        ]
        assert burned(response) == 0 and chain.supply() == supply
        assert slashed_to_pool(response) == bonded_cut + entry_cut
        assert community_pool(chain) == in_pool + bonded_cut + entry_cut
        assert collateral(chain, KEYS[1]) == (bonded - early - amount - bonded_cut, early + amount - entry_cut)
        assert unbonding(chain, KEYS[1]) == [(early, early, 2), (amount - entry_cut, amount, 2)]
        assert updates(response) == [(consensus_key(1), 0)]
        assert host(chain, KEYS[1]).jailed and address_of(KEYS[1]) not in powers(chain)
        info = signing_info(chain, 1)
        assert info.tombstoned and info.jailed_until == TOMBSTONE
        # The same evidence again (still within the evidence age): nothing more.
        before, supply = module_state(chain), chain.supply()
        response = chain.block(time_ns=11 * 5 * S, misbehavior=[double_sign(1, 8, 8 * 5 * S)])
        assert events(response, "slash") == [] and updates(response) == []
        assert module_state(chain) == before and chain.supply() == supply
        # Never unjailed, even a year of block time later, and still not after its unbonding is paid.
        result, _ = deliver(chain, KEYS[1], unjail(KEYS[1]), time_ns=365 * 86400 * S)
        assert (result.codespace, result.code) == ("slashing", 4), result.log
        assert "tombstoned" in result.log
        assert chain.height == 12
        for height in (13, 14):
            assert events(chain.block(time_ns=365 * 86400 * S + height * S), "complete_unbonding") == []
        response = chain.block(time_ns=365 * 86400 * S + 15 * S)  # 15: epoch 2's set-validators block pays
        assert events(response, "complete_unbonding") == [
            {"operator": address_of(KEYS[1]), "amount": f"{early}{DENOM}"},
            {"operator": address_of(KEYS[1]), "amount": f"{amount - entry_cut}{DENOM}"},
        ]
        assert host(chain, KEYS[1]).jailed


def test_evidence_is_too_old_only_past_both_limits(tmp_path: Path) -> None:
    """Evidence max age 5 blocks and 30 s. At height 20 (time 100 s): host 2's of height 14 at 69 s (6 blocks
    and 31 s old) is ignored; host 3's of height 14 at 70 s (6 blocks, exactly 30 s) and host 4's of height 15
    at 60 s (exactly 5 blocks, 40 s) are punished."""
    with host_chain(tmp_path / "db", [100 * GNK] * 5, consensus_params=EVIDENCE) as chain:
        for height in range(2, 20):
            chain.block(time_ns=height * 5 * S)
        before = {i: collateral(chain, KEYS[i])[0] for i in range(5)}
        response = chain.block(
            time_ns=100 * S,
            misbehavior=[double_sign(2, 14, 69 * S), double_sign(3, 14, 70 * S), double_sign(4, 15, 60 * S)],
        )
        assert chain.height == 20
        assert sorted(e["operator"] for e in events(response, "slash")) == sorted(address_of(KEYS[i]) for i in (3, 4))
        assert sorted(updates(response)) == [(consensus_key(3), 0), (consensus_key(4), 0)]
        assert collateral(chain, KEYS[2])[0] == before[2] and not host(chain, KEYS[2]).jailed
        assert (
            chain.app.slashing_keeper.signing_info(chain.context(), consensus_address(consensus_key(2))) is None
        )  # no record was made for it
        for i in (3, 4):
            assert collateral(chain, KEYS[i])[0] == before[i] - before[i] * 5 // 100
            assert signing_info(chain, i).tombstoned


def test_evidence_without_consensus_params_is_never_too_old(tmp_path: Path) -> None:
    """A chain whose InitChain sent no consensus params has no evidence age limit: old evidence counts."""
    with host_chain(tmp_path / "db", [100 * GNK] * 5) as chain:
        for height in range(2, 20):
            chain.block(time_ns=height * 5 * S)
        response = chain.block(time_ns=10**6 * S, misbehavior=[double_sign(2, 1, 0)])
        assert [e["operator"] for e in events(response, "slash")] == [address_of(KEYS[2])]


# --- slash with beneficiaries -----------------------------------------------------------------------------


def test_slash_pays_beneficiaries_pro_rata_and_the_rest_to_the_pool(tmp_path: Path) -> None:
    """Each beneficiary gets floor(taken × weight / total weight); what rounding leaves goes to the community
    pool (the supply is unchanged), and the ``slash`` event says how much was taken and went to the pool."""
    with host_chain(tmp_path / "db", [100 * GNK + 7, 100 * GNK]) as chain:
        x, y = operator(KEYS[5]), operator(KEYS[6])
        app = chain.app

        def slash(
            key_index: int, share: Fraction, beneficiaries: Sequence[tuple[bytes, int]]
        ) -> tuple[int, int, int, dict[str, str]]:
            """(paid to x, paid to y, paid to the pool) by balances, and the slash event; the supply unchanged."""
            bx, by, supply, in_pool = chain.balance(x), chain.balance(y), chain.supply(), community_pool(chain)
            response = chain.block(
                during=lambda ctx: app.slashing_keeper.slash(
                    ctx, operator(KEYS[key_index]), share, "poc_dispute", beneficiaries
                )
            )
            [event] = events(response, "slash")
            assert burned(response) == 0 and chain.supply() == supply
            assert slashed_to_pool(response) == community_pool(chain) - in_pool
            return chain.balance(x) - bx, chain.balance(y) - by, community_pool(chain) - in_pool, event

        # 20% of 100 GNK + 7 = 20_000_000_001 to weights 1 : 2 -> 6_666_666_667 and 13_333_333_334, none left
        assert slash(0, Fraction(1, 5), [(x, 1), (y, 2)]) == (
            6_666_666_667,
            13_333_333_334,
            0,
            {
                "operator": address_of(KEYS[0]),
                "amount": f"20000000001{DENOM}",
                "reason": "poc_dispute",
                "pool": f"0{DENOM}",
            },
        )
        # 1/7 of 100 GNK = 14_285_714_285 to weights 2 : 5 -> 4_081_632_652 and 10_204_081_632; 1 to the pool
        assert slash(1, Fraction(1, 7), [(x, 2), (y, 5)]) == (
            4_081_632_652,
            10_204_081_632,
            1,
            {
                "operator": address_of(KEYS[1]),
                "amount": f"14285714285{DENOM}",
                "reason": "poc_dispute",
                "pool": f"1{DENOM}",
            },
        )
        # a zero-weight beneficiary gets nothing; y named twice is paid twice
        left = 100 * GNK - 14_285_714_285  # 85_714_285_715; 1/10 -> 8_571_428_571, thirds 2_857_142_857
        assert slash(1, Fraction(1, 10), [(x, 1), (y, 1), (y, 1), (operator(KEYS[2]), 0)]) == (
            2_857_142_857,
            5_714_285_714,
            0,
            {
                "operator": address_of(KEYS[1]),
                "amount": f"8571428571{DENOM}",
                "reason": "poc_dispute",
                "pool": f"0{DENOM}",
            },
        )
        # no beneficiaries: all to the pool
        assert slash(1, Fraction(1, 2), ())[:3] == (0, 0, (left - 8_571_428_571) // 2)
        assert collateral(chain, KEYS[1])[0] == left - 8_571_428_571 - (left - 8_571_428_571) // 2
        assert pool(chain)[0] == collateral(chain, KEYS[0])[0] + collateral(chain, KEYS[1])[0]


# --- the randomized run -----------------------------------------------------------------------------------


def test_random_run_keeps_every_invariant_and_pays_the_pool_exactly(tmp_path: Path) -> None:
    """Ten epochs of length 6 with four hosts (KEYS[0-3]) and two plain accounts (KEYS[4-5]). Each block, a
    seeded mix: deposits, withdrawals (some above the bonded collateral, which must fail with stake/5 and
    change nothing), bank sends, unjail attempts, a double sign now and then, and host 3 often absent from the
    last commit (so downtime jails it). The chain checks every invariant after every block; at the end the
    supply is still the genesis supply (slashes burn nothing; rewards issuance is off in these chains) and the
    community pool holds exactly what every slash's event says it paid in."""
    rng = random.Random(12)
    hosts = [0, 1, 2, 3]
    with host_chain(
        tmp_path / "db",
        [300 * GNK, 200 * GNK, 150 * GNK, 100 * GNK],
        extra=slashing_section(**FAST_SLASHING),
        first_block=False,
    ) as chain:
        genesis_supply = len(KEYS) * FUNDS  # every key funded at genesis; nothing else is minted
        total_to_pool = 0
        counts = {"deposit": 0, "withdraw": 0, "too_large": 0, "send": 0, "double_sign": 0, "downtime": 0, "unjail": 0}
        time_ns = 0
        while chain.height < 61 + 6:  # epoch 10 starts at 61: run into it
            height = chain.height + 1
            time_ns += 5 * S
            txs: list[bytes] = []
            checks: list[tuple[int, str, int]] = []  # (tx index, kind, expected code)
            signers = rng.sample(range(6), rng.randint(0, 4)) if height > 1 else []  # block 1 commits genesis
            for who in signers:
                key = KEYS[who]
                roll = rng.random()
                if who in hosts and roll < 0.3:
                    msg: Any = deposit(key, rng.randint(1, 5 * GNK))
                    kind, code = "deposit", 0
                elif who in hosts and roll < 0.6:
                    bonded = collateral(chain, key)[0]
                    if rng.random() < 0.3:
                        msg, kind, code = withdraw(key, bonded + rng.randint(1, GNK)), "too_large", 5
                    else:
                        msg, kind, code = withdraw(key, rng.randint(1, max(1, bonded // 20))), "withdraw", 0
                elif who in hosts and roll < 0.7:
                    msg, kind, code = unjail(key), "unjail", -1  # any outcome; state judged by the invariants
                else:
                    to = KEYS[rng.choice([i for i in range(6) if i != who])]
                    msg = bank_tx.MsgSend(
                        from_address=address_of(key),
                        to_address=address_of(to),
                        amount=[{"denom": DENOM, "amount": str(rng.randint(1, 10**6))}],
                    )
                    kind, code = "send", 0
                checks.append((len(txs), kind, code))
                txs.append(signed(chain, key, msg))
            last = None
            if height > 1:
                in_set = [i for i in hosts if address_of(KEYS[i]) in powers(chain)]
                absent = [i for i in in_set if i == 3 and rng.random() < 0.8]
                last = commit([i for i in in_set if i not in absent], absent)
            misbehavior: list[abci.Misbehavior] = []
            if height > 10 and rng.random() < 0.04:
                victim = rng.choice(hosts[:3])
                misbehavior.append(double_sign(victim, height - 1, time_ns - 5 * S))
            before = {
                who: (collateral(chain, KEYS[who]), unbonding(chain, KEYS[who]))
                for who, (_, kind, _) in zip(signers, checks)
                if kind == "too_large"
            }
            response = chain.block(txs, time_ns=time_ns, last_commit=last, misbehavior=misbehavior)
            if height == 1:
                assert chain.supply() == genesis_supply
            for index, kind, code in checks:
                result = response.tx_results[index]
                if code >= 0:
                    expected = ("stake", 5) if code == 5 else ("", 0)
                    assert (result.codespace, result.code) == expected, (height, kind, result.log)
                    counts[kind] += 1
                elif result.code == 0:
                    counts[kind] += 1
            touched = {e["operator"] for e in events(response, "slash") + events(response, "complete_unbonding")}
            for who, (held, entries) in before.items():
                if address_of(KEYS[who]) not in touched:  # a refused withdrawal moved nothing
                    assert (collateral(chain, KEYS[who]), unbonding(chain, KEYS[who])) == (held, entries)
            slashes = events(response, "slash")
            counts["double_sign"] += sum(e["reason"].startswith("double_sign") for e in slashes)
            counts["downtime"] += sum(e["reason"] == "missing_signature" for e in slashes)
            assert burned(response) == 0
            total_to_pool += slashed_to_pool(response)
            assert slashed_to_pool(response) == sum(int(e["pool"][: -len(DENOM)]) for e in slashes)
        assert chain.height == 67
        assert chain.supply() == genesis_supply
        assert community_pool(chain) == total_to_pool > 0
        assert counts["double_sign"] >= 1 and counts["downtime"] >= 1, counts
        assert counts["too_large"] >= 3 and counts["withdraw"] >= 3 and counts["deposit"] >= 3, counts
        assert counts["send"] >= 3, counts
        # every host's records add up: bonded + unbonding as the pools hold them
        bonded = sum(collateral(chain, KEYS[i])[0] for i in hosts)
        unbonding_total = sum(collateral(chain, KEYS[i])[1] for i in hosts)
        assert pool(chain) == (bonded, unbonding_total)
