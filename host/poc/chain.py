"""``PocChain``: what the validation duty reads from the chain and sends to it. Reads go through the client
library (x/poc's ``Assigned``, x/inference's record, the executor's node URLs and the model's verification
threshold); transactions through the ONE ``TxSigner`` of the process (the finisher's), so the host key's
finishes, race commits and verdicts share one locally counted sequence."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from google.protobuf.message import Message

from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.poc.v1 import poc_pb2
from sdk.client.querier import Querier
from sdk.client.signer import Submit
from x.inference.client import inference, node_urls, verify_threshold
from x.poc.client.queries import assigned


class PocChain:
    """The chain as the duty sees it; ``querier`` any ``Querier`` (a test's scripted chain), ``height`` the last
    committed height (``ChainClient.latest_height``)."""

    def __init__(self, querier: Querier, submit: Submit, address: str, height: Callable[[], int]) -> None:
        self.querier, self.submit, self.address, self.height = querier, submit, address, height

    def assigned(self) -> list[poc_pb2.Validation]:
        """The inferences awaiting this host's verdict, earliest deadline first."""
        return assigned(self.querier, self.address)

    def inference(self, inference_id: bytes) -> inference_pb2.Inference | None:
        return inference(self.querier, inference_id)

    def urls(self, operator: str) -> list[str]:
        return node_urls(self.querier, operator)

    def threshold(self, model: str) -> int:
        """``model``'s verification threshold in parts per million, as x/poc checks a MATCH against it."""
        return verify_threshold(self.querier, model)

    def send(self, messages: Sequence[Message], gas: int) -> str:
        """The transaction's hash once CheckTx took it."""
        return self.submit(messages, gas).hash
