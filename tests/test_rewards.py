"""x/rewards: the issuance R(e) = R0·exp(−λ(e − 1)) against 80-digit arithmetic (mpmath), and in process over
twenty short epochs (length 6: epoch n ≥ 1 starts at height 6n + 1, where epoch n − 1's rewards are paid):
minted amounts equal ``epoch_issuance`` exactly and stop at the cap; the pool share, the split by reported
work (reported with ``block(during=…)``), the fallback to x/stake's epoch weights when no work was reported,
and the rounding dust are exact to the ngonka; fees collected in an epoch are paid at its end; the queries
(NextIssuance, HostRewards, Minted, x/vesting's Locked, x/pool's Totals) answer the amounts the test computes on
its own, epoch by epoch; every invariant holds after every block (the in-process chain checks them).

Hosts' shares vest through x/vesting (here over 4 epochs): the coins land in the host's balance, locked;
one part of ⌊share / 4⌋ (the remainder in the first) is released at each of the next 4 epoch starts, the
first in the very block that pays (epoch e's end is epoch e + 1's first block), and the locked amounts are
checked exactly against that schedule.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest
from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from test_stake import DENOM, GNK, KEYS, events, host_chain

from protogen.gonka.pool.v1 import query_pb2 as pool_query
from protogen.gonka.rewards.v1 import query_pb2, tx_pb2
from protogen.gonka.vesting.v1 import query_pb2 as vesting_query
from sdk.address import module_address
from sdk.cli.flags import message_dict
from sdk.client.txbuilder import address_of, sign_tx
from sdk.coins import Coins
from sdk.crypto import bech32, secp256k1
from sdk.services import gonka
from x.pool import keys as pool_keys
from x.rewards.issuance import epoch_issuance
from x.rewards.module import RewardsModule
from x.rewards.params import default_params

QUERY = gonka("rewards").query
POOL = module_address(pool_keys.POOL_ACCOUNT)
FEE_COLLECTOR = module_address("fee_collector")
WORKERS = [bech32.decode(address_of(secp256k1.PrivateKey(bytes([0xA0 + i]) * 32))) for i in range(5)]
"""Addresses that report work and do nothing else, so their balances move only by rewards."""
COLLATERAL = [100 * GNK, 250 * GNK + 17, 300 * GNK, 333 * GNK]


def exact_issuance(initial: int, decay: str, epoch: int) -> int:
    with mpmath.workdps(80):
        return int(mpmath.floor(mpmath.mpf(initial) * mpmath.exp(-mpmath.mpf(decay) * (epoch - 1))))


@pytest.mark.parametrize("epoch", [*range(1, 21), 100, 1_000, 4_321, 10_000, 50_000, 123_457, 800_000])
def test_issuance_against_80_digits(epoch: int) -> None:
    for initial, decay in ((323_000 * GNK, "0.000475"), (10**30, "0.000475"), (1_000_003_337, "0.05"), (7, "0.3")):
        assert epoch_issuance(initial, Fraction(decay), epoch) == exact_issuance(initial, decay, epoch), (
            initial,
            decay,
            epoch,
        )


def rewards_section(**changes: str) -> dict[str, Any]:
    params = message_dict(default_params())
    params.update(changes)
    return {"rewards": {"params": params, "minted": "0"}}


def expected_split(
    total: dict[str, int], share: Fraction, weights: dict[bytes, int]
) -> tuple[dict[str, int], dict[bytes, dict[str, int]]]:
    """The rule written out again: pool ⌊t·share⌋ plus dust; host i ⌊(t − ⌊t·share⌋)·w_i/W⌋."""
    pool: dict[str, int] = {}
    hosts: dict[bytes, dict[str, int]] = {}
    weight = sum(weights.values())
    for denom, t in total.items():
        rest = t - t * share.numerator // share.denominator
        paid = 0
        for host, w in weights.items():
            part = rest * w // weight if weight else 0
            if part:
                hosts.setdefault(host, {})[denom] = part
                paid += part
        pool[denom] = t - paid
    return pool, hosts


def coins_text(amounts: dict[str, int]) -> str:
    return str(Coins(sorted((d, a) for d, a in amounts.items() if a)))


def amount_of(coins: Any) -> int:
    """The ngonka in a repeated Coin field of a query's answer (0 when absent)."""
    return sum(int(c.amount) for c in coins if c.denom == DENOM)


def host_rewards(chain: InProcessChain, host: bytes) -> tuple[int, int, int]:
    """x/rewards' HostRewards query: (rewarded, pending, vested) in ngonka."""
    reply = chain.query(
        QUERY + "HostRewards",
        query_pb2.QueryHostRewardsRequest(host=bech32.encode(host)),
        query_pb2.QueryHostRewardsResponse,
    )
    return amount_of(reply.rewarded), amount_of(reply.pending), amount_of(reply.vested)


def still_vesting(chain: InProcessChain, address: bytes) -> int:
    """x/vesting's Locked query: the coins still vesting at the last block."""
    reply = chain.query(
        "/gonka.vesting.v1.Query/Locked",
        vesting_query.QueryLockedRequest(address=bech32.encode(address)),
        vesting_query.QueryLockedResponse,
    )
    return amount_of(reply.vesting)


def pool_inflow(chain: InProcessChain, source: str) -> int:
    """x/pool's Totals query: what came in from ``source``."""
    reply = chain.query("/gonka.pool.v1.Query/Totals", pool_query.QueryTotalsRequest(), pool_query.QueryTotalsResponse)
    return sum(amount_of(entry.amount) for entry in reply.inflows if entry.source == source)


def test_twenty_epochs_mint_exactly_and_split_by_work_fees_and_weights(tmp_path: Path) -> None:
    initial, decay, share = 1_000_003_337, "0.05", Fraction(1, 10)
    hosts = [bech32.decode(address_of(k)) for k in KEYS[:4]]
    payer = KEYS[6]
    vest_epochs = 4
    extra = {
        **rewards_section(initial_epoch_reward=str(initial), decay_rate=decay, community_pool_share="0.1"),
        "vesting": {"params": {"reward_vesting_epochs": vest_epochs}},
    }
    with host_chain(tmp_path / "db", COLLATERAL, extra=extra) as chain:
        app = chain.app
        watched = hosts + WORKERS
        parts: dict[bytes, list[tuple[int, int]]] = {}  # host -> (release epoch, amount) of each share's parts
        rewarded = {a: 0 for a in watched}  # what each address was paid in all, summed from expected_split
        to_pool = 0  # the pool's shares (with the dust), summed from expected_split
        minted_total = 0
        for epoch in range(0, 21):
            work: dict[bytes, int] = {}
            fees_paid = 0
            while chain.height < 6 * (epoch + 1):  # the rest of epoch `epoch`
                height = chain.height + 1
                txs = []
                if epoch % 3 != 2 and height % 6 == 4:  # most epochs: work reported by some workers
                    report = {WORKERS[i]: (epoch * 7 + i * 13) % 11 + i for i in range(5)}
                    report = {w: u for w, u in report.items() if u}
                    for w, u in report.items():
                        work[w] = work.get(w, 0) + u

                    def during(ctx: Any, r: dict[bytes, int] = report, e: int = epoch) -> None:
                        for w, u in r.items():
                            app.rewards_keeper.report_work(ctx, e, w, u)
                else:
                    during = None
                if epoch % 2 == 1 and height % 6 == 5:  # some epochs: a tx with fees
                    fee = 1_000 + epoch * 37
                    account = chain.account(address_of(payer))
                    txs.append(
                        sign_tx(
                            payer,
                            [
                                bank_tx.MsgSend(
                                    from_address=address_of(payer),
                                    to_address=address_of(KEYS[7]),
                                    amount=[{"denom": DENOM, "amount": "1"}],
                                )
                            ],
                            chain.chain_id,
                            account.account_number,
                            account.sequence,
                            fee=Coins(((DENOM, fee),)),
                            gas_limit=200_000,
                        )
                    )
                    fees_paid += fee
                response = chain.block(txs, during=during) if during else chain.block(txs)
                assert all(r.code == 0 for r in response.tx_results), [r.log for r in response.tx_results]
            assert chain.balance(FEE_COLLECTOR) == fees_paid
            if epoch >= 1:  # what the query says this epoch's end mints, against 80-digit arithmetic
                reply = chain.query(
                    QUERY + "NextIssuance", query_pb2.QueryNextIssuanceRequest(), query_pb2.QueryNextIssuanceResponse
                )
                exact = exact_issuance(initial, decay, epoch)
                assert (reply.epoch, int(reply.amount), int(reply.uncapped), reply.denom) == (
                    epoch,
                    exact,
                    exact,
                    DENOM,
                )
            # the first block of epoch + 1 pays epoch `epoch`
            before = {a: chain.balance(a) for a in watched}
            pool_before, supply_before = chain.balance(POOL), chain.supply()
            response = chain.block()
            assert chain.height == 6 * (epoch + 1) + 1
            if epoch == 0:  # epoch 0 pays nothing
                assert events(response, "rewards") == []
                assert chain.balance(POOL) == pool_before and chain.supply() == supply_before
                continue
            minted = epoch_issuance(initial, Fraction(decay), epoch)
            assert minted == exact_issuance(initial, decay, epoch)
            minted_total += minted
            total = {DENOM: minted + fees_paid}
            weights = work or {h: c // GNK for h, c in zip(hosts, COLLATERAL)}
            pool, shares = expected_split(total, share, weights)
            [event] = events(response, "rewards")
            assert event == {
                "epoch": str(epoch),
                "minted": f"{minted}{DENOM}",
                "fees": coins_text({DENOM: fees_paid}),
                "pool": coins_text(pool),
                "hosts": str(len(shares)),
                "withheld": "",  # no host is INVALID (x/poc)
            }
            assert chain.supply() == supply_before + minted
            assert chain.balance(POOL) == pool_before + pool[DENOM]
            assert chain.balance(FEE_COLLECTOR) == 0
            assert chain.balance(module_address("rewards")) == 0
            to_pool += pool[DENOM]
            assert pool_inflow(chain, pool_keys.SOURCE_REWARDS) == to_pool
            for a in watched:
                assert chain.balance(a) == before[a] + shares.get(a, {}).get(DENOM, 0), (epoch, a)
                rewarded[a] += shares.get(a, {}).get(DENOM, 0)
            if epoch % 3 == 2:
                assert not work and set(shares) <= set(hosts)  # stake weights stood in
            else:
                assert work and set(shares) <= set(WORKERS)
            for a, amounts in shares.items():  # each share on its schedule, from epoch + 1 (now) on
                amount = amounts[DENOM]
                part = amount // vest_epochs
                parts.setdefault(a, []).extend(
                    [(epoch + 1, part + amount % vest_epochs)] + [(epoch + 1 + i, part) for i in range(1, vest_epochs)]
                )
            for a in watched:  # x/vesting's and x/rewards' queries against the schedule written out above
                locked = sum(amount for release, amount in parts.get(a, []) if release > epoch + 1)
                assert still_vesting(chain, a) == locked, (epoch, a)
                assert host_rewards(chain, a) == (rewarded[a], locked, rewarded[a] - locked), (epoch, a)
        reply = chain.query(QUERY + "Minted", query_pb2.QueryMintedRequest(), query_pb2.QueryMintedResponse)
        assert (int(reply.minted), reply.denom) == (minted_total, DENOM)
        # work was dropped once paid
        assert app.rewards_keeper.all_work(chain.context()) == []
        # every watched address was paid (stake weights and work both stood in), the workers hold nothing else
        assert all(rewarded.values()), rewarded
        for w in WORKERS:
            assert chain.balance(w) == rewarded[w]


def test_issuance_stops_at_the_cap(tmp_path: Path) -> None:
    initial, decay = 1_000 * GNK, "0.1"
    r1, r2 = (epoch_issuance(initial, Fraction(decay), e) for e in (1, 2))
    cap = r1 + r2 + 123
    with host_chain(
        tmp_path / "db",
        COLLATERAL,
        extra=rewards_section(initial_epoch_reward=str(initial), decay_rate=decay, issuance_cap=str(cap)),
    ) as chain:
        minted = []
        supply = chain.supply()
        while chain.height < 6 * 6 + 1:
            if chain.height == 6 * 2 + 3:  # epoch 2: the query says what its end mints
                reply = chain.query(
                    QUERY + "NextIssuance", query_pb2.QueryNextIssuanceRequest(), query_pb2.QueryNextIssuanceResponse
                )
                assert (reply.epoch, int(reply.amount), int(reply.uncapped)) == (2, r2, r2)
            if chain.height == 6 * 3 + 3:
                reply = chain.query(
                    QUERY + "NextIssuance", query_pb2.QueryNextIssuanceRequest(), query_pb2.QueryNextIssuanceResponse
                )
                assert (reply.epoch, int(reply.amount)) == (3, 123)
                assert int(reply.uncapped) == epoch_issuance(initial, Fraction(decay), 3)
            for event in events(chain.block(), "rewards"):
                minted.append(int(event["minted"][: -len(DENOM)]))
        assert minted == [r1, r2, 123, 0, 0]
        assert chain.supply() == supply + cap
        reply = chain.query(QUERY + "Minted", query_pb2.QueryMintedRequest(), query_pb2.QueryMintedResponse)
        assert (int(reply.minted), int(reply.cap), int(reply.remaining)) == (cap, cap, 0)


def test_no_hosts_sends_everything_to_the_pool(tmp_path: Path) -> None:
    """No work and no weights for the epoch (x/stake's are for another): issuance and fees all to the pool."""
    with host_chain(tmp_path / "db", COLLATERAL, extra=rewards_section(initial_epoch_reward="777")) as chain:
        app = chain.app
        while chain.height < 6:
            chain.block()
        pool = chain.balance(POOL)
        # epoch 1 (7..12): its weights are recorded at 9; at 10 they are replaced by an empty record of epoch 0
        while chain.height < 9:
            chain.block()
        chain.block(during=lambda ctx: app.stake_keeper.set_epoch_weights(ctx, 0, {}))
        while chain.height < 12:
            chain.block()
        response = chain.block()
        [event] = events(response, "rewards")
        assert event["hosts"] == "0" and event["pool"] == f"777{DENOM}"
        assert chain.balance(POOL) == pool + 777


def test_params_authority_and_cap_below_minted(tmp_path: Path) -> None:
    authority = KEYS[7]
    with host_chain(
        tmp_path / "db",
        COLLATERAL,
        extra=rewards_section(initial_epoch_reward="1000"),
        authority=bech32.decode(address_of(authority)),
    ) as chain:
        while chain.height < 13:
            chain.block()
        assert chain.app.rewards_keeper.minted(chain.context()) == 1000  # epoch 1's, paid at 13

        def update(key: secp256k1.PrivateKey, **changes: str) -> Any:
            params = default_params()
            for field, value in changes.items():
                setattr(params, field, value)
            msg = tx_pb2.MsgUpdateParams(authority=address_of(key), params=params)
            account = chain.account(address_of(key))
            return chain.block(
                [sign_tx(key, [msg], chain.chain_id, account.account_number, account.sequence, gas_limit=2_000_000)]
            ).tx_results[0]

        result = update(KEYS[6], community_pool_share="0.5")
        assert (result.codespace, result.code) == ("gov", 13), result.log
        result = update(authority, community_pool_share="1.5")
        assert (result.codespace, result.code) == ("sdk", 18), result.log
        minted = chain.app.rewards_keeper.minted(chain.context())
        result = update(authority, issuance_cap=str(minted - 1))
        assert (result.codespace, result.code) == ("sdk", 18) and "below" in result.log, result.log
        result = update(authority, community_pool_share="0.5", issuance_cap=str(minted))
        assert result.code == 0, result.log
        reply = chain.query(QUERY + "Params", query_pb2.QueryParamsRequest(), query_pb2.QueryParamsResponse)
        assert (reply.params.community_pool_share, reply.params.issuance_cap) == ("0.5", str(minted))


def test_genesis_round_trip(tmp_path: Path) -> None:
    with host_chain(tmp_path / "a", COLLATERAL, extra=rewards_section(initial_epoch_reward="1000")) as chain:
        app = chain.app
        while chain.height < 14:  # epoch 1 paid at 13, by stake weights
            chain.block()
        chain.block(during=lambda ctx: app.rewards_keeper.report_work(ctx, 2, WORKERS[0], 5))
        chain.block(during=lambda ctx: app.rewards_keeper.report_work(ctx, 2, WORKERS[0], 6))
        with pytest.raises(ValueError, match="has ended"):
            chain.block(during=lambda ctx: app.rewards_keeper.report_work(ctx, 1, WORKERS[1], 1))
        exported = RewardsModule(app.rewards_keeper).export_genesis(chain.context())
        assert exported["work"] == [{"epoch": "2", "host": bech32.encode(WORKERS[0]), "units": "11"}]
        assert exported["minted"] == "1000" and len(exported["hosts"]) == 4
    from gonkad import genesis

    state = genesis.default_app_state()
    state["rewards"] = exported
    with InProcessChain(tmp_path / "b", {}, app_state=state) as chain:
        assert RewardsModule(chain.app.rewards_keeper).export_genesis(chain.context()) == exported
    state["rewards"] = {**exported, "minted": str(10**30)}
    with pytest.raises(ValueError, match="exceeds the issuance cap"):
        InProcessChain(tmp_path / "c", {}, app_state=state)
