"""Every invariant holds after every block over 20 epochs of random activity.

One seeded in-process run (``random.Random(20261201)``) of 20 short epochs (length 6, tests/test_stake.py's
SHORT_EPOCHS) with five hosts (KEYS[0-4], by gentx) and three plain accounts (KEYS[5-7]); reward issuance on
(500 GNK in epoch 1, decay 0.05, pool share 0.1), rewards vesting over 3 epochs, fast downtime slashing and
short governance periods (the default authority: gov's module account). Hosts hold little besides their
collateral, so most of what they hold soon is locked (vesting rewards). Each block carries a random mix of:

- bank sends, some of locked coins (more than the spendable balance, at most the balance): ``sdk/5`` and
  nothing moves;
- collateral deposits, some using locked coins (allowed); withdrawals, some above the bonded collateral
  (``stake/5``, nothing moves); unjail attempts;
- work reports (``rewards_keeper.report_work`` through ``block(during=…)``); pool funding
  (MsgFundCommunityPool), some with fees;
- double signs (misbehavior) and downtime (host 4 often absent from the last commit);
- proposals: community pool spends and param changes (rewards' pool share, vesting's epochs, pool's
  burned_deposits_to_pool), with deposits and votes from hosts in the validator set, voting periods ending
  as block time passes (some pass, some fail at execution, some are rejected, vetoed, miss quorum or are
  dropped in their deposit period).

After every block: each watched account's balance moved by exactly its ``transfer`` events (plus
``coinbase`` / minus ``burn`` for the minter and burner), and the chain's invariant check ran (counted).
At the end: supply = genesis supply + Σ coinbase − Σ burn (and = the rewards' Minted, bank's records); the
community pool = Σ inflows − spends by events, by source, as the Totals query says; each host's rewarded
total = vested + pending, rewarded = Σ its ``vest`` events and pending = what its vest events' schedules
still hold.
"""

from __future__ import annotations

import base64
import random
import time
from pathlib import Path
from typing import Any

from chain import InProcessChain
from cosmpy.protos.cosmos.bank.v1beta1 import tx_pb2 as bank_tx
from cosmpy.protos.cosmos.base.v1beta1 import coin_pb2
from cosmpy.protos.cosmos.distribution.v1beta1 import tx_pb2 as distribution_tx
from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from cosmpy.protos.cosmos.gov.v1 import tx_pb2 as gov_tx
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.message import Message
from test_slashing import FAST_SLASHING, commit, double_sign, unjail
from test_stake import (
    DENOM,
    FUNDS,
    GNK,
    KEYS,
    SHORT_EPOCHS,
    collateral,
    consensus_key,
    deposit,
    powers,
    unbonding,
    withdraw,
)

from gonkad import genesis
from protogen.gonka.pool.v1 import query_pb2 as pool_query
from protogen.gonka.pool.v1 import tx_pb2 as pool_tx
from protogen.gonka.rewards.v1 import query_pb2 as rewards_query
from protogen.gonka.rewards.v1 import tx_pb2 as rewards_tx
from protogen.gonka.vesting.v1 import tx_pb2 as vesting_tx
from sdk.address import module_address
from sdk.client.txbuilder import address_of, sign_tx
from sdk.coins import Coins, parse_coins
from sdk.crypto import bech32
from sdk.params import GOV_AUTHORITY
from x.bank import keys as bank_keys
from x.genutil.gentx import build_gentx
from x.pool import keys as pool_keys

CHAIN = "gonka-economy"
S = 10**9
SEED = 20261201
HOSTS = [0, 1, 2, 3, 4]
PLAIN = [5, 6, 7]
COLLATERAL = [300 * GNK, 250 * GNK, 200 * GNK, 150 * GNK, 120 * GNK]
FREE = 30 * GNK  # what a host holds besides its collateral at genesis
EPOCHS = 20
LAST_HEIGHT = 6 * EPOCHS + 1  # epoch 20's first block: pays epoch 19
INITIAL_REWARD, DECAY, VEST_EPOCHS = 500 * GNK, "0.05", 3
MIN_DEPOSIT = 10 * GNK
DEPOSIT_PERIOD_S, VOTING_PERIOD_S = 40, 45
AUTHORITY = bech32.encode(GOV_AUTHORITY)
POOL = module_address(pool_keys.POOL_ACCOUNT)
GOV_ACCOUNT = module_address("gov")
MODULES = {
    name: module_address(name)
    for name in ("fee_collector", "bonded_tokens_pool", "not_bonded_tokens_pool", "slashed", "gov", "pool", "rewards")
}
PROPOSAL_KINDS = ["spend", "rewards", "spend", "vesting", "spend", "pool"]
YES, NO, ABSTAIN, VETO = (
    gov_pb2.VOTE_OPTION_YES,
    gov_pb2.VOTE_OPTION_NO,
    gov_pb2.VOTE_OPTION_ABSTAIN,
    gov_pb2.VOTE_OPTION_NO_WITH_VETO,
)


# --- helpers ---------------------------------------------------------------------------------------------


def raw(i: int) -> bytes:
    return bech32.decode(address_of(KEYS[i]))


def economy_chain(path: Path) -> InProcessChain:
    state = genesis.default_app_state()
    state["epochs"] = {"params": dict(SHORT_EPOCHS)}
    state["rewards"] = {
        "params": {
            **state["rewards"]["params"],
            "initial_epoch_reward": str(INITIAL_REWARD),
            "decay_rate": DECAY,
            "community_pool_share": "0.1",
        },
        "minted": "0",
    }
    state["vesting"] = {"params": {"reward_vesting_epochs": VEST_EPOCHS}}
    state["slashing"] = {"params": {**state["slashing"]["params"], **FAST_SLASHING}}
    state["gov"]["params"].update(
        min_deposit=[{"denom": DENOM, "amount": str(MIN_DEPOSIT)}],
        max_deposit_period=f"{DEPOSIT_PERIOD_S}s",
        voting_period=f"{VOTING_PERIOD_S}s",
        expedited_voting_period=f"{VOTING_PERIOD_S // 2}s",
    )
    state["pool"] = {"params": {"burned_deposits_to_pool": False}}  # some deposits are burned (a gov vote flips it)
    gentxs = [build_gentx(KEYS[i], f"host{i}", consensus_key(i), (DENOM, COLLATERAL[i]), CHAIN) for i in HOSTS]
    state["genutil"] = {"gen_txs": [base64.b64encode(tx).decode() for tx in gentxs]}
    accounts = {address_of(KEYS[i]): [(DENOM, COLLATERAL[i] + FREE)] for i in HOSTS}
    accounts.update({address_of(KEYS[i]): [(DENOM, FUNDS)] for i in PLAIN})
    return InProcessChain(path, accounts, chain_id=CHAIN, app_state=state, first_block=False)


def amount_of(text: str) -> int:
    return dict(parse_coins(text)).get(DENOM, 0) if text else 0


def attrs(event: abci.Event) -> dict[str, str]:
    return {a.key: a.value for a in event.attributes}


def all_events(response: abci.ResponseFinalizeBlock) -> list[abci.Event]:
    return [*response.events, *(e for r in response.tx_results for e in r.events)]


def of_kind(response: abci.ResponseFinalizeBlock, kind: str) -> list[dict[str, str]]:
    return [attrs(e) for e in all_events(response) if e.type == kind]


def ledger(response: abci.ResponseFinalizeBlock) -> dict[bytes, int]:
    """Net ngonka movement per address by the block's events: transfers, coinbase (to the minter), burn."""
    net: dict[bytes, int] = {}
    for e in all_events(response):
        a = attrs(e)
        if e.type == "transfer":
            amount = amount_of(a["amount"])
            net[bech32.decode(a["sender"])] = net.get(bech32.decode(a["sender"]), 0) - amount
            net[bech32.decode(a["recipient"])] = net.get(bech32.decode(a["recipient"]), 0) + amount
        elif e.type == "coinbase":
            net[bech32.decode(a["minter"])] = net.get(bech32.decode(a["minter"]), 0) + amount_of(a["amount"])
        elif e.type == "burn":
            net[bech32.decode(a["burner"])] = net.get(bech32.decode(a["burner"]), 0) - amount_of(a["amount"])
    return net


def split(amount: int, epochs: int) -> list[int]:
    """x/vesting's rule (README): ``epochs`` parts of amount // epochs, the remainder added to the first."""
    part = amount // epochs
    return [part + amount % epochs] + [part] * (epochs - 1)


def packed(*msgs: Message) -> list[AnyPb]:
    out = []
    for m in msgs:
        a = AnyPb()
        a.Pack(m, type_url_prefix="/")
        out.append(a)
    return out


def gnk(amount: int) -> list[coin_pb2.Coin]:
    return [coin_pb2.Coin(denom=DENOM, amount=str(amount))]


class Signer:
    """Signs one tx per account per block (sequences read from the committed state)."""

    def __init__(self, chain: InProcessChain) -> None:
        self.chain = chain

    def __call__(self, i: int, msg: Message, fee: int = 0) -> bytes:
        account = self.chain.account(address_of(KEYS[i]))
        assert account is not None
        return sign_tx(
            KEYS[i],
            [msg],
            CHAIN,
            account.account_number,
            account.sequence,
            gas_limit=5_000_000,
            fee=Coins(((DENOM, fee),)) if fee else Coins(),
        )


# --- the run ---------------------------------------------------------------------------------------------


def test_every_invariant_holds_over_twenty_epochs_of_random_activity(tmp_path: Path) -> None:
    started = time.monotonic()
    rng = random.Random(SEED)
    faults = random.Random(SEED + 1)  # its own stream: the evidence schedule does not move with the txs
    with economy_chain(tmp_path / "db") as chain:
        app = chain.app
        checked: list[int] = []
        original_assert = app.assert_invariants

        def counting_assert(ctx: Any) -> None:
            original_assert(ctx)  # raises InvariantBroken, naming the broken ones
            checked.append(ctx.header.height)

        app.assert_invariants = counting_assert  # type: ignore[method-assign]
        assert len(app.invariants) >= 8, sorted(app.invariants)
        sign = Signer(chain)
        genesis_supply = sum(COLLATERAL) + len(HOSTS) * FREE + len(PLAIN) * FUNDS  # InitChain commits at block 1

        watched = [raw(i) for i in range(8)] + list(MODULES.values())
        minted = burned = 0
        inflows: dict[str, int] = {}
        spent = 0
        vests: dict[bytes, list[tuple[int, int, int]]] = {}  # host -> (amount, epochs, first release epoch)
        counts = {
            k: 0
            for k in (
                "send",
                "send_locked",
                "deposit",
                "deposit_locked",
                "withdraw",
                "too_large",
                "unjail",
                "fund",
                "fee_txs",
                "work_reports",
                "double_sign",
                "downtime",
                "proposals",
                "gov_deposits",
                "votes",
                "outsider_votes",
                "passed",
                "rejected",
                "failed",
                "dropped",
                "pool_spends",
                "burned_ngonka",
                "deposits_to_pool_ngonka",
                "proposals_tried",
            )
        }
        double_signed: set[int] = set()
        time_ns = 1_000 * S

        while chain.height < LAST_HEIGHT:
            height = chain.height + 1
            time_ns += 5 * S
            ctx = chain.context()
            bank, vesting, gov = app.bank_keeper, app.vesting_keeper, app.gov_keeper
            in_set = [i for i in HOSTS if address_of(KEYS[i]) in powers(chain)] if height > 1 else []
            open_props = {
                p.id: p.status
                for p in gov.proposals(ctx)
                if p.status in (gov_pb2.PROPOSAL_STATUS_DEPOSIT_PERIOD, gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD)
            }
            voting = [
                p.id
                for p in gov.proposals(ctx)
                if p.status == gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD and p.voting_end_time.ToNanoseconds() > time_ns
            ]  # at its end time a vote is gov/20
            pool_balance = bank.get_balance(ctx, POOL, DENOM)
            # epoch starts release vesting parts and pay rewards, set-validators blocks pay unbondings: a send
            # of locked coins is tried only where nothing can raise a spendable balance before the tx
            quiet = height % 6 not in (1, 3)

            plans: list[tuple[int, str]] = []  # (signer, action)
            signers = rng.sample(range(8), rng.randint(0, 5)) if height > 1 else []
            for i in in_set:  # hosts of the set turn up to vote on what is open
                if (
                    i not in signers
                    and any(gov.get_vote(ctx, pid, raw(i)) is None for pid in voting)
                    and rng.random() < 0.4
                ):
                    signers.append(i)
            for who in signers:
                balance = bank.get_balance(ctx, raw(who), DENOM)
                locked = dict(vesting.locked_coins(ctx, raw(who))).get(DENOM, 0)
                roll = rng.random()
                unvoted = [pid for pid in voting if gov.get_vote(ctx, pid, raw(who)) is None]
                if who in HOSTS:
                    if unvoted and who in in_set and rng.random() < 0.7:
                        action = "vote"
                    elif locked and quiet and roll < 0.15:
                        action = "send_locked"
                    elif locked and roll < 0.30:
                        action = "deposit_locked"
                    elif roll < 0.42:
                        action = "deposit"
                    elif roll < 0.58:
                        action = "withdraw"
                    elif roll < 0.64:
                        action = "unjail"
                    elif roll < 0.72:
                        action = "fund"
                    elif roll < 0.9 and voting and who in in_set:
                        action = "vote"
                    elif roll < 0.95 and open_props:
                        action = "gov_deposit"
                    else:
                        action = "send"
                else:
                    if roll < 0.15 and len(open_props) < 4:
                        action = "propose"
                    elif roll < 0.25 and open_props:
                        action = "gov_deposit"
                    elif roll < 0.30 and voting:
                        action = "outsider_vote"
                    elif roll < 0.55:
                        action = "fund"
                    else:
                        action = "send"
                plans.append((who, action))
            # no one pays a host trying to send locked coins in this block (its spendable balance must not grow)
            guarded = {who for who, action in plans if action == "send_locked"}
            recipients = [i for i in range(8) if i not in guarded]

            txs: list[bytes] = []
            checks: list[tuple[int, int, str, tuple[str, int] | None]] = []  # (tx, signer, kind, expected)
            for who, action in plans:
                key_address = address_of(KEYS[who])
                balance = bank.get_balance(ctx, raw(who), DENOM)
                spendable = dict(bank.spendable_coins(ctx, raw(who))).get(DENOM, 0)
                locked = dict(vesting.locked_coins(ctx, raw(who))).get(DENOM, 0)
                fee = 0
                expected: tuple[str, int] | None = ("", 0)
                if action == "send_locked":
                    assert balance - spendable == locked > 0
                    amount = spendable + rng.randint(1, locked)
                    to = rng.choice([i for i in range(8) if i != who])
                    msg: Message = bank_tx.MsgSend(
                        from_address=key_address, to_address=address_of(KEYS[to]), amount=gnk(amount)
                    )
                    expected = ("sdk", 5)
                elif action == "deposit_locked":
                    amount = spendable + rng.randint(1, locked)
                    assert amount <= balance
                    msg = deposit(KEYS[who], amount)
                elif action == "deposit":
                    if spendable < 1:
                        continue
                    msg = deposit(KEYS[who], rng.randint(1, min(spendable, 5 * GNK)))
                elif action == "withdraw":
                    bonded = collateral(chain, KEYS[who])[0]
                    if rng.random() < 0.3 or bonded < 2:
                        msg, action, expected = (
                            withdraw(KEYS[who], bonded + rng.randint(1, GNK)),
                            "too_large",
                            ("stake", 5),
                        )
                    else:
                        msg = withdraw(KEYS[who], rng.randint(1, max(1, bonded // 20)))
                elif action == "unjail":
                    msg, expected = unjail(KEYS[who]), None  # any outcome; the invariants judge the state
                elif action == "fund":
                    if spendable < 2:
                        continue
                    msg = distribution_tx.MsgFundCommunityPool(
                        depositor=key_address, amount=gnk(rng.randint(1, min(spendable // 2, 3 * GNK)))
                    )
                    if who in PLAIN and rng.random() < 0.5:
                        fee = rng.randint(1, 50_000)
                elif action == "vote":
                    unvoted = [pid for pid in voting if gov.get_vote(ctx, pid, raw(who)) is None]
                    pid = rng.choice(unvoted or voting)
                    option = rng.choices([YES, NO, ABSTAIN, VETO], weights=[70, 12, 10, 8])[0]
                    msg, expected = gov_tx.MsgVote(proposal_id=pid, voter=key_address, option=option), None
                elif action == "outsider_vote":
                    msg = gov_tx.MsgVote(proposal_id=rng.choice(voting), voter=key_address, option=YES)
                    expected = ("gov", 100)
                elif action == "gov_deposit":
                    if spendable < MIN_DEPOSIT:
                        continue
                    pid = rng.choice(sorted(open_props))
                    msg = gov_tx.MsgDeposit(
                        proposal_id=pid,
                        depositor=key_address,
                        amount=gnk(rng.randint(MIN_DEPOSIT // 20, MIN_DEPOSIT // 2)),
                    )
                    expected = None  # the proposal may end in this block's end block... or have ended before
                elif action == "propose":
                    kinds = (
                        PROPOSAL_KINDS if height > LAST_HEIGHT // 2 else PROPOSAL_KINDS[:-1]
                    )  # deposits burn at first
                    kind = kinds[counts["proposals_tried"] % len(kinds)]
                    counts["proposals_tried"] += 1
                    if kind == "spend":  # two in five ask more than the pool will hold: FAILED if it passes
                        ask = rng.randint(1, max(1, pool_balance // 3)) if rng.random() < 0.6 else 10 * pool_balance + 1
                        inner: Message = distribution_tx.MsgCommunityPoolSpend(
                            authority=AUTHORITY, recipient=address_of(KEYS[rng.choice(range(8))]), amount=gnk(ask)
                        )
                    elif kind == "rewards":
                        params = app.rewards_keeper.get_params(ctx)
                        params.community_pool_share = rng.choice(["0.1", "0.2", "0.05"])
                        inner = rewards_tx.MsgUpdateParams(authority=AUTHORITY, params=params)
                    elif kind == "vesting":
                        params_v = vesting.get_params(ctx)
                        params_v.reward_vesting_epochs = rng.choice([2, 3, 4])
                        inner = vesting_tx.MsgUpdateParams(authority=AUTHORITY, params=params_v)
                    else:
                        params_p = app.pool_keeper.get_params(ctx)
                        params_p.burned_deposits_to_pool = not params_p.burned_deposits_to_pool
                        inner = pool_tx.MsgUpdateParams(authority=AUTHORITY, params=params_p)
                    initial = MIN_DEPOSIT if rng.random() < 0.75 else MIN_DEPOSIT // 2
                    msg = gov_tx.MsgSubmitProposal(
                        messages=packed(inner),
                        proposer=key_address,
                        title=kind,
                        summary="economy",
                        initial_deposit=gnk(initial),
                    )
                    if rng.random() < 0.3:
                        fee = rng.randint(1, 50_000)
                else:  # send
                    if spendable < 1:
                        continue
                    to = rng.choice([i for i in recipients if i != who])
                    msg = bank_tx.MsgSend(
                        from_address=key_address,
                        to_address=address_of(KEYS[to]),
                        amount=gnk(rng.randint(1, min(spendable, 2 * GNK))),
                    )
                    if who in PLAIN and rng.random() < 0.3:
                        fee = rng.randint(1, 50_000)
                    action = "send"
                checks.append((len(txs), who, action, expected))
                txs.append(sign(who, msg, fee))
                counts["fee_txs"] += fee > 0

            # work reports, in the block's own context
            during: Any = None
            if height > 1 and rng.random() < 0.5:
                report = {raw(i): rng.randint(1, 20) for i in rng.sample(HOSTS, rng.randint(1, 5))}

                def report_work(c: Any, report: dict[bytes, int] = report) -> None:
                    epoch = app.epochs_keeper.current_epoch(c).number
                    for host, units in report.items():
                        app.rewards_keeper.report_work(c, epoch, host, units)

                during = report_work

                counts["work_reports"] += len(report)
            # the last commit: host 4 often absent; now and then a double sign by a host still in the set
            last = None
            if height > 1:
                absent = [i for i in in_set if i == 4 and faults.random() < 0.7]
                last = commit([i for i in in_set if i not in absent], absent)
            misbehavior = []
            candidates = [i for i in in_set if i not in double_signed and i != 4]
            if height > 12 and len(double_signed) < 2 and candidates and faults.random() < 0.04:
                victim = faults.choice(candidates)
                double_signed.add(victim)
                misbehavior.append(double_sign(victim, height - 1, time_ns - 5 * S))
                print("DS", height, victim)

            before_balances = {a: chain.balance(a) for a in watched}
            before_stake = {
                who: (collateral(chain, KEYS[who]), unbonding(chain, KEYS[who]))
                for _, who, kind, _ in checks
                if kind == "too_large"
            }
            response = chain.block(txs, time_ns=time_ns, last_commit=last, misbehavior=misbehavior, during=during)
            assert chain.height == height
            assert checked and checked[-1] == height, (height, checked[-3:])

            # every tx's outcome as expected
            for index, _who, kind, expected in checks:
                result = response.tx_results[index]
                if expected is not None:
                    assert (result.codespace, result.code) == expected, (height, kind, result.log)
                if kind == "send_locked":
                    assert "spendable balance" in result.log, result.log
                    assert not [e for e in result.events if e.type == "transfer"], (height, result.events)
                if kind in ("too_large", "send_locked", "outsider_vote") or result.code == 0:
                    counts[
                        {
                            "outsider_vote": "outsider_votes",
                            "vote": "votes",
                            "gov_deposit": "gov_deposits",
                            "propose": "proposals",
                        }.get(kind, kind)
                    ] += 1
            # a refused withdrawal moved nothing (unless a slash or payout touched the host in this block)
            touched = {e["operator"] for e in of_kind(response, "slash") + of_kind(response, "complete_unbonding")}
            for who, (held, entries) in before_stake.items():
                if address_of(KEYS[who]) not in touched:
                    assert (collateral(chain, KEYS[who]), unbonding(chain, KEYS[who])) == (held, entries)
            # every watched balance moved by exactly what the block's events say (so a refused tx moved nothing)
            net = ledger(response)
            for a in watched if height > 1 else ():  # block 1 commits the genesis balances
                assert chain.balance(a) == before_balances[a] + net.get(a, 0), (height, bech32.encode(a))

            # the totals, by events
            minted += sum(amount_of(e["amount"]) for e in of_kind(response, "coinbase"))
            burned += sum(amount_of(e["amount"]) for e in of_kind(response, "burn"))
            for e in of_kind(response, "fund_community_pool"):
                inflows[e["source"]] = inflows.get(e["source"], 0) + amount_of(e["amount"])
            for e in of_kind(response, "community_pool_spend"):
                spent += amount_of(e["amount"])
                counts["pool_spends"] += 1
            for e in of_kind(response, "vest"):
                assert e["sender"] == bech32.encode(MODULES["rewards"]), e
                vests.setdefault(bech32.decode(e["recipient"]), []).append(
                    (amount_of(e["amount"]), int(e["epochs"]), int(e["first_release_epoch"]))
                )
            rewards = of_kind(response, "rewards")
            assert sum(amount_of(e["minted"]) for e in rewards) == sum(
                amount_of(e["amount"]) for e in of_kind(response, "coinbase")
            )
            for e in of_kind(response, "slash"):
                counts["double_sign" if e["reason"].startswith("double_sign") else "downtime"] += 1
            # supply: exact after every block
            assert chain.supply() == genesis_supply + minted - burned, height

        # --- the end: exact totals ------------------------------------------------------------------------
        ctx = chain.context()
        assert chain.height == LAST_HEIGHT
        assert checked == list(range(1, LAST_HEIGHT + 1))  # the invariant check ran after every block
        assert chain.supply() == genesis_supply + minted - burned
        assert app.bank_keeper.counted(ctx, bank_keys.GENESIS_SUPPLY_PREFIX, DENOM) == genesis_supply
        assert app.bank_keeper.counted(ctx, bank_keys.MINTED_PREFIX, DENOM) == minted
        assert app.bank_keeper.counted(ctx, bank_keys.BURNED_PREFIX, DENOM) == burned
        reply = chain.query(
            "/gonka.rewards.v1.Query/Minted", rewards_query.QueryMintedRequest(), rewards_query.QueryMintedResponse
        )
        assert int(reply.minted) == minted > 0
        # the community pool: inflows − spends, by source, as the Totals query says
        totals = chain.query(
            "/gonka.pool.v1.Query/Totals", pool_query.QueryTotalsRequest(), pool_query.QueryTotalsResponse
        )
        by_source = {t.source: sum(int(c.amount) for c in t.amount if c.denom == DENOM) for t in totals.inflows}
        assert by_source == {s: a for s, a in inflows.items() if a}
        assert sum(int(c.amount) for c in totals.spent if c.denom == DENOM) == spent
        pool_balance = chain.balance(POOL)
        assert pool_balance == sum(inflows.values()) - spent
        assert sum(int(c.amount) for c in totals.balance if c.denom == DENOM) == pool_balance
        # each host: rewarded = vested + pending; rewarded = its vest events; pending = what they still lock
        epoch_now = app.epochs_keeper.current_epoch(ctx).number
        assert epoch_now == EPOCHS
        for i in HOSTS:
            reply = chain.query(
                "/gonka.rewards.v1.Query/HostRewards",
                rewards_query.QueryHostRewardsRequest(host=address_of(KEYS[i])),
                rewards_query.QueryHostRewardsResponse,
            )
            rewarded, pending, vested = (
                sum(int(c.amount) for c in coins if c.denom == DENOM)
                for coins in (reply.rewarded, reply.pending, reply.vested)
            )
            assert rewarded == vested + pending, (i, rewarded, vested, pending)
            mine = vests.get(raw(i), [])
            assert rewarded == sum(a for a, _, _ in mine) > 0, i
            expected_pending = sum(
                part for a, n, first in mine for k, part in enumerate(split(a, n)) if first + k > epoch_now
            )
            assert pending == expected_pending, (i, pending, expected_pending)
            assert vesting.schedule_locked(ctx, raw(i)).get(DENOM, 0) == pending
        # every proposal ended one way or another; tally the outcomes
        for p in app.gov_keeper.proposals(ctx):
            name = {
                gov_pb2.PROPOSAL_STATUS_PASSED: "passed",
                gov_pb2.PROPOSAL_STATUS_REJECTED: "rejected",
                gov_pb2.PROPOSAL_STATUS_FAILED: "failed",
            }.get(p.status)
            if name:
                counts[name] += 1
        outcomes = sorted(
            (p.id, p.title, gov_pb2.ProposalStatus.Name(p.status)[16:].lower()) for p in app.gov_keeper.proposals(ctx)
        )
        counts["dropped"] = (
            counts["proposals"]
            - counts["passed"]
            - counts["rejected"]
            - counts["failed"]
            - len(
                [
                    p
                    for p in app.gov_keeper.proposals(ctx)
                    if p.status in (gov_pb2.PROPOSAL_STATUS_DEPOSIT_PERIOD, gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD)
                ]
            )
        )
        counts["burned_ngonka"] = burned
        counts["deposits_to_pool_ngonka"] = inflows.get("deposit", 0)
        elapsed = time.monotonic() - started
        print(
            f"\neconomy run: {chain.height} blocks in {elapsed:.1f}s; minted {minted}, burned {burned}, "
            f"pool inflows {inflows}, spent {spent}; counts {counts}; proposals {outcomes}"
        )
        for kind in (
            "send",
            "send_locked",
            "deposit",
            "deposit_locked",
            "withdraw",
            "too_large",
            "fund",
            "work_reports",
            "proposals",
            "votes",
            "gov_deposits",
        ):
            assert counts[kind] >= 3, (kind, counts)
        assert counts["double_sign"] >= 1 and counts["downtime"] >= 1, counts
        assert counts["passed"] >= 1 and counts["rejected"] + counts["failed"] >= 1, counts
        assert counts["pool_spends"] >= 1, counts
