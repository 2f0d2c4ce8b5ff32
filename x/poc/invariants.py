"""What must hold of x/poc's state after every block (registered as ``poc/…``)."""

from __future__ import annotations

from protogen.gonka.poc.v1 import poc_pb2
from sdk.context import Context
from sdk.crypto import bech32
from x.poc import keys
from x.poc.keeper import SETTLED, PocKeeper
from x.poc.types import DECIDED, awaited

VALIDATED_OR_AFTER = (
    poc_pb2.STATUS_SELECTED,
    poc_pb2.STATUS_VALIDATED,
    poc_pb2.STATUS_DISPUTED,
    poc_pb2.STATUS_MISSED,
    *DECIDED,
)
WITH_VERDICT = (poc_pb2.STATUS_VALIDATED, poc_pb2.STATUS_DISPUTED, *DECIDED)


def queues_consistent(poc: PocKeeper, ctx: Context) -> str | None:
    """Each pending record is in the draw queue at its draw height, each selected one in the deadline queue at its
    deadline and in its validator's index, each dispute in the vote-draw queue until its voters are drawn, then
    in the deadline queue at its vote deadline and in the index of each voter yet to vote, each settled one in
    the prune queue at its prune height; and every queue and index entry is such a record."""
    expected: set[bytes] = set()
    for record in poc.validations(ctx):
        if record.status == poc_pb2.STATUS_PENDING:
            expected.add(keys.draw_key(record.draw_height, record.inference_id))
        elif record.status == poc_pb2.STATUS_SELECTED:
            expected.add(keys.deadline_key(record.deadline_height, record.inference_id))
            validator = bech32.decode(record.validator)
            expected.add(keys.assigned_key(validator, record.deadline_height, record.inference_id))
        elif record.status == poc_pb2.STATUS_DISPUTED and not record.vote_deadline_height:
            expected.add(keys.vote_draw_key(record.vote_draw_height, record.inference_id))
        elif record.status == poc_pb2.STATUS_DISPUTED:
            expected.add(keys.deadline_key(record.vote_deadline_height, record.inference_id))
            for voter in awaited(record):
                expected.add(keys.assigned_key(voter, record.vote_deadline_height, record.inference_id))
        elif record.status in SETTLED:
            expected.add(keys.prune_key(record.prune_height, record.inference_id))
    store = ctx.kv(keys.STORE_PREFIX)
    prefixes = (keys.DRAW_PREFIX, keys.DEADLINE_PREFIX, keys.PRUNE_PREFIX, keys.ASSIGNED_PREFIX, keys.VOTE_DRAW_PREFIX)
    found = {key for prefix in prefixes for key, _ in store.iterate(prefix)}
    for key in sorted(expected ^ found):
        where = "an entry without its record" if key in found else "a record missing from its queue"
        return f"{where}: key {key.hex()}"
    return None


def validators_drawn(poc: PocKeeper, ctx: Context) -> str | None:
    """A drawn validator is never the executor, a record past its draw has one exactly when selected, a verdict
    only once validated or disputed, a dispute's voters neither the executor nor the accuser nor drawn twice,
    and a host's reputation never exceeds its validated count."""
    for record in poc.validations(ctx):
        the_id = record.inference_id.hex()
        if len(record.inference_id) != keys.ID_BYTES:
            return f"inference id {the_id} is not {keys.ID_BYTES} bytes"
        if record.draw_height <= record.finish_height:
            return f"inference {the_id} is drawn at height {record.draw_height}, not after its finish"
        if record.validator and record.validator == record.executor:
            return f"inference {the_id} is validated by its executor {record.executor}"
        if bool(record.validator) != (record.status in VALIDATED_OR_AFTER):
            return f"inference {the_id} is {poc_pb2.Status.Name(record.status)} with validator {record.validator!r}"
        has_verdict = record.verdict != poc_pb2.VERDICT_UNSPECIFIED
        if has_verdict != (record.status in WITH_VERDICT):
            return f"inference {the_id} is {poc_pb2.Status.Name(record.status)} with verdict {record.verdict}"
        voters = [vote.voter for vote in record.votes]
        if len(set(voters)) != len(voters) or {record.executor, record.validator} & set(voters):
            return f"inference {the_id}'s voters {voters} repeat or include its executor or accuser"
    for host in poc.hosts(ctx):
        if host.reputation > host.validated:
            return f"{host.host}'s reputation {host.reputation} exceeds its validated count {host.validated}"
    return None
