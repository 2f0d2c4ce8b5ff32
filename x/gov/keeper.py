"""Proposals, deposits and votes; the deposit and voting periods run out in end block (``end_block``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from fractions import Fraction

from cosmpy.protos.cosmos.gov.v1 import gov_pb2
from google.protobuf.any_pb2 import Any as AnyPb
from google.protobuf.timestamp_pb2 import Timestamp

from sdk.address import module_address
from sdk.coins import Coins, coins_from_proto, make_coins
from sdk.context import Context
from sdk.crypto import bech32
from sdk.dec import legacy_dec_text, mul_floor, parse_share
from sdk.errors import ABCIError
from sdk.params import GOV_AUTHORITY
from sdk.store import PRESENT, CacheKV
from x.gov import keys, tally
from x.gov.errors import (
    ErrInactiveProposal,
    ErrInvalidDepositDenom,
    ErrInvalidProposal,
    ErrInvalidProposer,
    ErrInvalidVote,
    ErrMinDepositTooSmall,
    ErrNotValidator,
    ErrUnknownProposal,
    ErrVotingPeriodEnded,
)
from x.gov.expected_keepers import AccountKeeper, BankKeeper, ExecutePacked, PoolKeeper, StakeKeeper
from x.gov.params import default_params, duration_ns, min_deposit, share, voting_period_ns

DEPOSIT_PERIOD = gov_pb2.PROPOSAL_STATUS_DEPOSIT_PERIOD
VOTING_PERIOD = gov_pb2.PROPOSAL_STATUS_VOTING_PERIOD
PASSED, REJECTED, FAILED = (
    gov_pb2.PROPOSAL_STATUS_PASSED,
    gov_pb2.PROPOSAL_STATUS_REJECTED,
    gov_pb2.PROPOSAL_STATUS_FAILED,
)
ACTIVE = (DEPOSIT_PERIOD, VOTING_PERIOD)
POOL_SOURCE = "deposit"
"""x/pool's inflow source for governance deposits it takes instead of a burn."""
END_BLOCK_FAILURE = "end block: "
"""``failed_reason``'s prefix for a proposal whose end-block step failed (its deposits left unsettled)."""

log = logging.getLogger("gonkad.gov")


def timestamp(ns: int) -> Timestamp:
    return Timestamp(seconds=ns // 10**9, nanos=ns % 10**9)


def ns_of(stamp: Timestamp) -> int:
    return stamp.seconds * 10**9 + stamp.nanos


def add_coins(a: Coins, b: Coins) -> Coins:
    total = dict(a)
    for denom, amount in b:
        total[denom] = total.get(denom, 0) + amount
    return make_coins(list(total.items()))


def covers(have: Coins, need: Coins) -> bool:
    """Whether ``have`` holds at least ``need`` of every denom (the SDK's ``IsAllGTE``)."""
    held = dict(have)
    return all(held.get(denom, 0) >= amount for denom, amount in need)


class GovKeeper:
    """Owns the ``gov/`` prefix; holds deposits in the ``gov_deposits`` module account (apart from the
    authority's, so a passed proposal can never spend them) and runs passed proposals' messages through the
    app's router as the authority."""

    def __init__(
        self,
        accounts: AccountKeeper,
        bank: BankKeeper,
        stake: StakeKeeper,
        execute_packed: ExecutePacked,
        pool: PoolKeeper,
        authority: bytes = GOV_AUTHORITY,
    ) -> None:
        """``execute_packed``: the router's (sdk/baseapp/transactions.py), bound at wiring; ``authority``: the signer a
        passed proposal's messages run as (every module's MsgUpdateParams authority); ``pool``: x/pool:
        "burned" deposits go to the community pool when its ``deposits_to_pool`` says so."""
        self.accounts = accounts
        self.bank = bank
        self.stake = stake
        self.execute_packed = execute_packed
        self.authority = authority
        self.pool = pool
        self.deposits_account = module_address(keys.DEPOSITS_ACCOUNT)

    # --- params and counters -----------------------------------------------------------------------

    def get_params(self, ctx: Context) -> gov_pb2.Params:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.PARAMS_KEY)
        return gov_pb2.Params.FromString(raw) if raw else default_params()

    def set_params(self, ctx: Context, params: gov_pb2.Params) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.PARAMS_KEY, params.SerializeToString())

    def next_proposal_id(self, ctx: Context) -> int:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.NEXT_PROPOSAL_ID_KEY)
        return int.from_bytes(raw, "big") if raw else 1

    def set_next_proposal_id(self, ctx: Context, proposal_id: int) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.NEXT_PROPOSAL_ID_KEY, keys.u64(proposal_id))

    # --- proposals ---------------------------------------------------------------------------------------

    def get_proposal(self, ctx: Context, proposal_id: int) -> gov_pb2.Proposal | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.proposal_key(proposal_id))
        return gov_pb2.Proposal.FromString(raw) if raw else None

    def must_get_proposal(self, ctx: Context, proposal_id: int) -> gov_pb2.Proposal:
        proposal = self.get_proposal(ctx, proposal_id)
        if proposal is None:
            raise ErrUnknownProposal.wrap(f"proposal {proposal_id} does not exist")
        return proposal

    def set_proposal(self, ctx: Context, proposal: gov_pb2.Proposal) -> None:
        ctx.kv(keys.STORE_PREFIX).set(keys.proposal_key(proposal.id), proposal.SerializeToString())

    def proposals(self, ctx: Context) -> list[gov_pb2.Proposal]:
        return [gov_pb2.Proposal.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(keys.PROPOSAL_PREFIX)]

    def queue(self, ctx: Context, proposal: gov_pb2.Proposal) -> None:
        """Put an active proposal in the queue of its period (by the time the period ends)."""
        store = ctx.kv(keys.STORE_PREFIX)
        if proposal.status == DEPOSIT_PERIOD:
            store.set(
                keys.queue_key(keys.INACTIVE_QUEUE_PREFIX, ns_of(proposal.deposit_end_time), proposal.id), PRESENT
            )
        elif proposal.status == VOTING_PERIOD:
            store.set(keys.queue_key(keys.ACTIVE_QUEUE_PREFIX, ns_of(proposal.voting_end_time), proposal.id), PRESENT)

    def submit_proposal(
        self,
        ctx: Context,
        messages: Sequence[AnyPb],
        initial_deposit: Coins,
        proposer: bytes,
        metadata: str,
        title: str,
        summary: str,
        expedited: bool = False,
    ) -> int:
        """A new proposal in its deposit period, with the proposer's initial deposit (which may open voting
        at once). The messages (none for a text proposal) were checked without state
        (``msg_server.validate_submit``). An expedited one needs ``expedited_min_deposit``."""
        params = self.get_params(ctx)
        self.check_deposit_denoms(params, initial_deposit)
        needed = min_deposit(params, expedited)
        ratio = share(params, "min_initial_deposit_ratio")
        floor = make_coins(
            [(d, -(-a * ratio.numerator // ratio.denominator)) for d, a in needed if a * ratio.numerator > 0]
        )
        if not covers(initial_deposit, floor):
            raise ErrMinDepositTooSmall.wrap(
                f"initial deposit {initial_deposit or '0'} is below {floor}, {ratio} of the min deposit {needed}"
            )
        proposal_id = self.next_proposal_id(ctx)
        self.set_next_proposal_id(ctx, proposal_id + 1)
        now = ctx.header.time_ns
        proposal = gov_pb2.Proposal(
            id=proposal_id,
            messages=list(messages),
            status=DEPOSIT_PERIOD,
            submit_time=timestamp(now),
            deposit_end_time=timestamp(now + duration_ns(params.max_deposit_period)),
            metadata=metadata,
            title=title,
            summary=summary,
            proposer=bech32.encode(proposer),
            expedited=expedited,
            final_tally_result=gov_pb2.TallyResult(
                yes_count="0", abstain_count="0", no_count="0", no_with_veto_count="0"
            ),
        )
        self.set_proposal(ctx, proposal)
        self.queue(ctx, proposal)
        ctx.emit(
            "submit_proposal", proposal_id=str(proposal_id), proposal_messages=",".join(m.type_url for m in messages)
        )
        if initial_deposit:
            self.add_deposit(ctx, proposal_id, proposer, initial_deposit)
        return proposal_id

    # --- deposits --------------------------------------------------------------------------------------

    def check_deposit_denoms(self, params: gov_pb2.Params, amount: Coins) -> None:
        allowed = {c.denom for c in params.min_deposit}
        wrong = [denom for denom, _ in amount if denom not in allowed]
        if wrong:
            raise ErrInvalidDepositDenom.wrap(
                f"deposited {', '.join(wrong)}, but the min deposit is in {', '.join(sorted(allowed))}"
            )

    def get_deposit(self, ctx: Context, proposal_id: int, depositor: bytes) -> gov_pb2.Deposit | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.deposit_key(proposal_id, depositor))
        return gov_pb2.Deposit.FromString(raw) if raw else None

    def deposits(self, ctx: Context, proposal_id: int | None = None) -> list[gov_pb2.Deposit]:
        prefix = keys.DEPOSIT_PREFIX if proposal_id is None else keys.deposits_prefix(proposal_id)
        return [gov_pb2.Deposit.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

    def deposit(self, ctx: Context, proposal_id: int, depositor: bytes, amount: Coins) -> bool:
        """MsgDeposit: each coin at least ``min_deposit_ratio`` of the min deposit of its denom."""
        params = self.get_params(ctx)
        self.check_deposit_denoms(params, amount)
        ratio = share(params, "min_deposit_ratio")
        needed = dict(min_deposit(params))
        for denom, value in amount:
            if value * ratio.denominator < needed[denom] * ratio.numerator:
                raise ErrMinDepositTooSmall.wrap(
                    f"deposit {value}{denom} is below {ratio} of the min deposit {needed[denom]}{denom}"
                )
        return self.add_deposit(ctx, proposal_id, depositor, amount)

    def add_deposit(self, ctx: Context, proposal_id: int, depositor: bytes, amount: Coins) -> bool:
        """Move ``amount`` from the depositor into the deposits account for an active proposal; True if this
        deposit opened the voting period."""
        proposal = self.must_get_proposal(ctx, proposal_id)
        if proposal.status not in ACTIVE:
            raise ErrInactiveProposal.wrap(
                f"proposal {proposal_id} is {gov_pb2.ProposalStatus.Name(proposal.status)}, it takes no deposits"
            )
        params = self.get_params(ctx)
        self.check_deposit_denoms(params, amount)
        # the module account comes into being with the first deposit (as other modules' accounts do)
        self.bank.send_coins(ctx, depositor, self.accounts.ensure_module_account(ctx, keys.DEPOSITS_ACCOUNT), amount)
        total = add_coins(coins_from_proto(proposal.total_deposit), amount)
        del proposal.total_deposit[:]
        proposal.total_deposit.extend(total.to_proto())
        record = self.get_deposit(ctx, proposal_id, depositor)
        held = add_coins(coins_from_proto(record.amount), amount) if record else amount
        ctx.kv(keys.STORE_PREFIX).set(
            keys.deposit_key(proposal_id, depositor),
            gov_pb2.Deposit(
                proposal_id=proposal_id, depositor=bech32.encode(depositor), amount=held.to_proto()
            ).SerializeToString(),
        )
        ctx.emit(
            "proposal_deposit", proposal_id=str(proposal_id), depositor=bech32.encode(depositor), amount=str(amount)
        )
        activated = proposal.status == DEPOSIT_PERIOD and covers(total, min_deposit(params, proposal.expedited))
        if activated:
            ctx.kv(keys.STORE_PREFIX).delete(
                keys.queue_key(keys.INACTIVE_QUEUE_PREFIX, ns_of(proposal.deposit_end_time), proposal_id)
            )
            now = ctx.header.time_ns
            proposal.status = VOTING_PERIOD
            proposal.voting_start_time.CopyFrom(timestamp(now))
            proposal.voting_end_time.CopyFrom(timestamp(now + voting_period_ns(params, proposal.expedited)))
            self.queue(ctx, proposal)
            ctx.emit("proposal_deposit", proposal_id=str(proposal_id), voting_period_start=str(proposal_id))
        self.set_proposal(ctx, proposal)
        return activated

    def _settle_deposits(self, ctx: Context, proposal_id: int, burn: bool) -> str:
        """Refund every deposit of a finished proposal, or "burn" them all (to the community pool when x/pool
        says so); the deposit records go. Returns what happened, for the event."""
        store = ctx.kv(keys.STORE_PREFIX)
        entries = list(store.iterate(keys.deposits_prefix(proposal_id)))
        total = Coins()
        for key, raw in entries:
            deposit = gov_pb2.Deposit.FromString(raw)
            amount = coins_from_proto(deposit.amount)
            if burn:
                total = add_coins(total, amount)
            elif amount:
                self.bank.send_coins(ctx, self.deposits_account, bech32.decode(deposit.depositor), amount)
            store.delete(key)
        return self._burn(ctx, total) if burn else "refunded"

    def _burn(self, ctx: Context, total: Coins) -> str:
        """Burn deposits from the deposits account, or give them to the community pool when x/pool says so;
        what happened, for the event."""
        if not total:
            return "burned"
        if self.pool.deposits_to_pool(ctx):
            self.pool.fund_from_module(ctx, keys.DEPOSITS_ACCOUNT, total, POOL_SOURCE)
            return "to_community_pool"
        self.bank.burn_coins(ctx, keys.DEPOSITS_ACCOUNT, total)
        return "burned"

    # --- cancellation ------------------------------------------------------------------------------------

    def cancel_proposal(self, ctx: Context, proposal_id: int, proposer: bytes) -> None:
        """MsgCancelProposal, as the SDK's ``CancelProposal`` (v0.50): by the proposer only (``gov/18``), while
        the proposal is in its deposit or voting period (``gov/21``) and its voting has not ended (``gov/20``).
        Of each deposit coin, ``proposal_cancel_ratio`` (rounded down) is charged and the rest refunded; the
        charges are burned (as other burned deposits: to the community pool when x/pool says so) or, with
        ``proposal_cancel_dest`` set, paid there. The votes and the proposal are deleted."""
        proposal = self.must_get_proposal(ctx, proposal_id)
        if proposal.proposer != bech32.encode(proposer):
            raise ErrInvalidProposer.wrap(f"{bech32.encode(proposer)} did not submit proposal {proposal_id}")
        if proposal.status not in ACTIVE:
            raise ErrInvalidProposal.wrap(
                f"proposal {proposal_id} is {gov_pb2.ProposalStatus.Name(proposal.status)}: "
                "only one in its deposit or voting period can be canceled"
            )
        if proposal.status == VOTING_PERIOD and ctx.header.time_ns >= ns_of(proposal.voting_end_time):
            raise ErrVotingPeriodEnded.wrap(
                f"the voting period of proposal {proposal_id} ended at {proposal.voting_end_time.ToJsonString()}"
            )
        params = self.get_params(ctx)
        charged = self._charge_deposits(ctx, proposal_id, share(params, "proposal_cancel_ratio"))
        if params.proposal_cancel_dest:
            charges = self._pay_charges(ctx, charged, bech32.decode(params.proposal_cancel_dest))
        else:
            charges = self._burn(ctx, charged)
        store = ctx.kv(keys.STORE_PREFIX)
        for key, _ in list(store.iterate(keys.votes_prefix(proposal_id))):
            store.delete(key)
        end = proposal.voting_end_time if proposal.status == VOTING_PERIOD else proposal.deposit_end_time
        queue = keys.ACTIVE_QUEUE_PREFIX if proposal.status == VOTING_PERIOD else keys.INACTIVE_QUEUE_PREFIX
        store.delete(keys.queue_key(queue, ns_of(end), proposal_id))
        store.delete(keys.proposal_key(proposal_id))
        ctx.emit(
            "cancel_proposal",
            proposal_id=str(proposal_id),
            proposer=proposal.proposer,
            charged=str(charged),
            charges=charges,
        )

    def _charge_deposits(self, ctx: Context, proposal_id: int, ratio: Fraction) -> Coins:
        """Refund each deposit less ``ratio`` of each of its coins (rounded down, per deposit and coin, as the
        SDK's ``ChargeDeposit``); the records go. Returns the charges, still in the deposits account."""
        store = ctx.kv(keys.STORE_PREFIX)
        charged = Coins()
        for key, raw in list(store.iterate(keys.deposits_prefix(proposal_id))):
            deposit = gov_pb2.Deposit.FromString(raw)
            amounts = coins_from_proto(deposit.amount)
            parts = [(denom, mul_floor(amount, ratio), amount) for denom, amount in amounts]
            charge = make_coins([(denom, cut) for denom, cut, _ in parts if cut])
            refund = make_coins([(denom, amount - cut) for denom, cut, amount in parts if amount > cut])
            if refund:
                self.bank.send_coins(ctx, self.deposits_account, bech32.decode(deposit.depositor), refund)
            charged = add_coins(charged, charge)
            store.delete(key)
        return charged

    def _pay_charges(self, ctx: Context, charged: Coins, dest: bytes) -> str:
        """Cancellation charges to ``proposal_cancel_dest``: the community pool's account means the pool
        (counted as a deposit inflow); any other account must be one that may receive (``sdk/4``)."""
        if not charged:
            return "paid"
        if dest == self.pool.address:
            self.pool.fund_from_module(ctx, keys.DEPOSITS_ACCOUNT, charged, POOL_SOURCE)
            return "to_community_pool"
        self.bank.check_can_receive(dest)
        self.bank.send_coins(ctx, self.deposits_account, dest, charged)
        return "paid"

    # --- votes -------------------------------------------------------------------------------------------

    def vote(
        self,
        ctx: Context,
        proposal_id: int,
        voter: bytes,
        options: Sequence[gov_pb2.WeightedVoteOption],
        metadata: str = "",
    ) -> None:
        """A validator's vote (replacing its earlier one) on a proposal in its voting period. Only accounts
        with power in the validator set (x/stake) vote: anyone else gets ``gov/100``."""
        proposal = self.must_get_proposal(ctx, proposal_id)
        if proposal.status in (PASSED, REJECTED, FAILED) or (
            proposal.status == VOTING_PERIOD and ctx.header.time_ns >= ns_of(proposal.voting_end_time)
        ):
            raise ErrVotingPeriodEnded.wrap(
                f"the voting period of proposal {proposal_id} ended at {proposal.voting_end_time.ToJsonString()}"
            )
        if proposal.status != VOTING_PERIOD:
            raise ErrInactiveProposal.wrap(f"proposal {proposal_id} is in its deposit period, not voting")
        if not self.stake.validator_powers(ctx).get(voter, 0):
            raise ErrNotValidator.wrap(f"{bech32.encode(voter)} holds no power in the validator set")
        vote = gov_pb2.Vote(
            proposal_id=proposal_id, voter=bech32.encode(voter), options=list(options), metadata=metadata
        )
        ctx.kv(keys.STORE_PREFIX).set(keys.vote_key(proposal_id, voter), vote.SerializeToString())
        ctx.emit(
            "proposal_vote",
            proposal_id=str(proposal_id),
            voter=bech32.encode(voter),
            option=",".join(f"{gov_pb2.VoteOption.Name(o.option)}:{o.weight}" for o in options),
        )

    def get_vote(self, ctx: Context, proposal_id: int, voter: bytes) -> gov_pb2.Vote | None:
        raw = ctx.kv(keys.STORE_PREFIX).get(keys.vote_key(proposal_id, voter))
        return gov_pb2.Vote.FromString(raw) if raw else None

    def votes(self, ctx: Context, proposal_id: int | None = None) -> list[gov_pb2.Vote]:
        prefix = keys.VOTE_PREFIX if proposal_id is None else keys.votes_prefix(proposal_id)
        return [gov_pb2.Vote.FromString(v) for _, v in ctx.kv(keys.STORE_PREFIX).iterate(prefix)]

    # --- tally and the end of the periods -------------------------------------------------------------

    def tally(self, ctx: Context, proposal: gov_pb2.Proposal) -> tally.Outcome:
        """The proposal's votes weighed by the validator set in force now (read only); an expedited one
        passes only above ``expedited_threshold``."""
        params = self.get_params(ctx)
        powers = self.stake.validator_powers(ctx)
        totals, cast = tally.count(self.votes(ctx, proposal.id), powers)
        return tally.decide(
            totals,
            cast,
            sum(powers.values()),
            share(params, "quorum"),
            share(params, "expedited_threshold" if proposal.expedited else "threshold"),
            share(params, "veto_threshold"),
            params.burn_vote_quorum,
            params.burn_vote_veto,
        )

    def end_block(self, ctx: Context) -> None:
        """Proposals whose deposit period ended without the min deposit are dropped (deposits refunded, or
        burned with ``burn_proposal_deposit_prevote``); those whose voting period ended are tallied and, if
        passed, executed. Each leaves its queue first and runs in a branch of its own (``_isolated``), so
        one that fails is recorded on that proposal and can neither stall nor undo the others."""
        now = ctx.header.time_ns
        store = ctx.kv(keys.STORE_PREFIX)
        steps = (
            (keys.INACTIVE_QUEUE_PREFIX, self._drop, "inactive_proposal"),
            (keys.ACTIVE_QUEUE_PREFIX, self._finish, "active_proposal"),
        )
        for prefix, step, event in steps:
            due = [key for key, _ in store.iterate(prefix, end=prefix + keys.u64(now + 1))]
            for key in due:
                store.delete(key)
                self._isolated(ctx, int.from_bytes(key[-8:], "big"), step, event)

    def _isolated(self, ctx: Context, proposal_id: int, step: Callable[[Context, int], None], event: str) -> None:
        """One proposal's end-block step in a branch written (with its events and validator updates) only if
        it returns; if it raises, the branch is dropped and the failure recorded on the proposal instead."""
        branch = CacheKV(ctx.store)
        sub = ctx.with_store(branch)
        try:
            step(sub, proposal_id)
        except ABCIError as err:
            self._record_failure(ctx, proposal_id, err.log, event)
            return
        except Exception as exc:  # noqa: BLE001 - a bug in one proposal's step must not stop the others
            log.exception("gov: the end-block step of proposal %d failed; its writes are discarded", proposal_id)
            self._record_failure(ctx, proposal_id, f"internal error: {type(exc).__name__}", event)
            return
        branch.write()
        ctx.events.extend(sub.events)
        ctx.validator_updates.extend(sub.validator_updates)

    def _record_failure(self, ctx: Context, proposal_id: int, reason: str, event: str) -> None:
        """A proposal whose end-block step failed: ``FAILED`` with the reason, its votes deleted, its deposits
        left recorded (nothing was paid out, so they are still owed). It is out of its queue, never retried."""
        reason = END_BLOCK_FAILURE + reason
        proposal = self.get_proposal(ctx, proposal_id)
        if proposal is not None:
            store = ctx.kv(keys.STORE_PREFIX)
            for key, _ in list(store.iterate(keys.votes_prefix(proposal_id))):
                store.delete(key)
            proposal.status = FAILED
            proposal.failed_reason = reason
            self.set_proposal(ctx, proposal)
        ctx.emit(
            event, proposal_id=str(proposal_id), proposal_result="proposal_failed", deposits="unsettled", error=reason
        )

    def _drop(self, ctx: Context, proposal_id: int) -> None:
        burn = self.get_params(ctx).burn_proposal_deposit_prevote
        deposits = self._settle_deposits(ctx, proposal_id, burn)
        ctx.kv(keys.STORE_PREFIX).delete(keys.proposal_key(proposal_id))
        ctx.emit(
            "inactive_proposal", proposal_id=str(proposal_id), proposal_result="proposal_dropped", deposits=deposits
        )

    def _finish(self, ctx: Context, proposal_id: int) -> None:
        """Tally, settle the deposits, delete the votes and run a passed proposal's messages (none for a text
        proposal). An expedited proposal that does not pass is not rejected: as in the SDK (v0.50) it becomes
        a regular one, its deposits kept and its votes cleared, voting again until ``voting_start_time +
        voting_period``, then tallied by the regular rules."""
        proposal = self.must_get_proposal(ctx, proposal_id)
        outcome = self.tally(ctx, proposal)
        converts = proposal.expedited and not outcome.passes
        deposits = "kept" if converts else self._settle_deposits(ctx, proposal_id, outcome.burn)
        store = ctx.kv(keys.STORE_PREFIX)
        for key, _ in list(store.iterate(keys.votes_prefix(proposal_id))):
            store.delete(key)
        result = "proposal_rejected"
        if outcome.passes:
            try:
                self.execute_packed(ctx, self.authority, proposal.messages)
                proposal.status, result = PASSED, "proposal_passed"
            except ABCIError as err:
                proposal.status, result = FAILED, "proposal_failed"
                proposal.failed_reason = err.log
            except Exception as exc:  # noqa: BLE001 - a bug in a handler fails the proposal, not the block
                proposal.status, result = FAILED, "proposal_failed"
                proposal.failed_reason = f"internal error: {type(exc).__name__}"
        elif converts:
            proposal.expedited, result = False, "expedited_proposal_rejected"
            end = ns_of(proposal.voting_start_time) + voting_period_ns(self.get_params(ctx), False)
            proposal.voting_end_time.CopyFrom(timestamp(end))
            self.queue(ctx, proposal)
        else:
            proposal.status = REJECTED
        proposal.final_tally_result.CopyFrom(outcome.result)
        self.set_proposal(ctx, proposal)
        ctx.emit(
            "active_proposal",
            proposal_id=str(proposal_id),
            proposal_result=result,
            tally=outcome.reason,
            deposits=deposits,
        )

    # --- what must hold -----------------------------------------------------------------------------------

    def deposits_held(self, ctx: Context) -> str | None:
        """Every deposit record is owed to its depositor, so the deposits account holds at least their sum
        (more harms no one: only a settlement takes coins out). Each active proposal's total is the sum of its
        records; a finished proposal has none, except a ``FAILED`` one whose end-block step failed before
        settling them, which keeps them all."""
        by_proposal: dict[int, Coins] = {}
        for deposit in self.deposits(ctx):
            by_proposal[deposit.proposal_id] = add_coins(
                by_proposal.get(deposit.proposal_id, Coins()), coins_from_proto(deposit.amount)
            )
        total = Coins()
        for proposal in self.proposals(ctx):
            recorded = by_proposal.pop(proposal.id, Coins())
            if proposal.status in ACTIVE or (proposal.status == FAILED and recorded):
                totals = coins_from_proto(proposal.total_deposit)
                if totals != recorded:
                    return f"proposal {proposal.id} totals {totals} but its deposits sum to {recorded}"
                total = add_coins(total, recorded)
            elif recorded:
                return f"finished proposal {proposal.id} still has deposits {recorded}"
        if by_proposal:
            return f"deposits for proposals that do not exist: {sorted(by_proposal)}"
        held = self.bank.get_all_balances(ctx, self.deposits_account)
        if not covers(held, total):
            return f"the deposits account holds {held or '0'} but the deposits recorded are {total or '0'}"
        return None


def parse_options(options: Sequence[gov_pb2.WeightedVoteOption]) -> None:
    """Stateless: known options, each once, weights in (0, 1] that sum to exactly 1."""
    if not options:
        raise ErrInvalidVote.wrap("no vote options")
    seen: set[int] = set()
    total = 0
    for option in options:
        if option.option not in (tally.YES, tally.ABSTAIN, tally.NO, tally.VETO):
            raise ErrInvalidVote.wrap(f"unknown vote option {option.option}")
        if option.option in seen:
            raise ErrInvalidVote.wrap(f"option {gov_pb2.VoteOption.Name(option.option)} given twice")
        seen.add(option.option)
        try:
            weight = parse_share(option.weight, "weight", allow_zero=False)
        except ValueError as exc:
            raise ErrInvalidVote.wrap(str(exc)) from None
        total += weight
    if total != 1:
        raise ErrInvalidVote.wrap(f"vote weights sum to {legacy_dec_text(total)}, not 1")
