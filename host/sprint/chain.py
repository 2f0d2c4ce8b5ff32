"""``SprintChain``: what the race duties read from the chain and send to it. Reads go through the client library
(x/sprint's queries, x/epochs' current epoch, x/stake's validator powers, x/inference's registered nodes);
transactions through the ONE ``TxSigner`` of the process (the finisher's), whose lock and locally counted sequence
keep the host key's finishes, commits and validations in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf.message import Message

from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.epochs.v1 import query_pb2 as epochs_query
from protogen.gonka.sprint.v1 import sprint_pb2
from protogen.gonka.stake.v1 import query_pb2 as stake_query
from sdk.client.querier import Querier
from sdk.client.signer import Submit
from sdk.services import gonka
from x.inference.client import node_urls
from x.sprint.client import queries

STAGE_RACE = epochs_pb2.STAGE_RACE
STAGE_RACE_VALIDATION = epochs_pb2.STAGE_RACE_VALIDATION


@dataclass(frozen=True)
class EpochNow:
    """Where the last committed block stands: its epoch, its stage, and the height the next stage starts at."""

    epoch: int
    stage: int
    height: int
    next_stage_height: int


class SprintChain:
    """The chain as the duties see it; ``querier`` any ``Querier`` (a test's scripted chain)."""

    def __init__(self, querier: Querier, submit: Submit, address: str) -> None:
        self.querier = querier
        self.submit = submit
        self.address = address

    def now(self) -> EpochNow:
        got = self.querier.query(
            gonka("epochs").query + "CurrentEpoch",
            epochs_query.QueryCurrentEpochRequest(),
            epochs_query.QueryCurrentEpochResponse,
        )
        return EpochNow(got.epoch.number, got.stage, got.height, got.next_stage_height)

    def params(self) -> sprint_pb2.Params:
        return queries.params(self.querier)

    def race(self, epoch: int) -> sprint_pb2.Race:
        return queries.race(self.querier, epoch)

    def commitments(self, epoch: int) -> list[sprint_pb2.Commitment]:
        return queries.commitments(self.querier, epoch)

    def own_commitment(self, epoch: int) -> sprint_pb2.Commitment | None:
        return next((c for c in self.commitments(epoch) if c.host == self.address), None)

    def validated(self, epoch: int) -> set[str]:
        """The hosts this host's validations of ``epoch`` are on chain for."""
        return {v.host for v in queries.validations(self.querier, epoch) if v.validator == self.address}

    def power(self) -> int:
        """This host's power in the validator set in force."""
        got = self.querier.query(
            gonka("stake").query + "ValidatorPowers",
            stake_query.QueryValidatorPowersRequest(),
            stake_query.QueryValidatorPowersResponse,
        )
        return sum(p.weight for p in got.powers if p.operator == self.address)

    def urls(self, operator: str) -> list[str]:
        """The URLs ``operator`` registered for its nodes (its executor proxies)."""
        return node_urls(self.querier, operator)

    def send(self, messages: Sequence[Message], gas: int) -> str:
        """The transaction's hash once CheckTx took it."""
        return self.submit(messages, gas).hash
