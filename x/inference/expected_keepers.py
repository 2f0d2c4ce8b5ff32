"""What x/inference needs from x/auth, x/bank, x/vesting, x/stake, x/rewards, x/epochs and x/learning, and what
it tells the modules that follow finished inferences (x/poc)."""

from __future__ import annotations

from typing import Any, Protocol

from protogen.gonka.epochs.v1 import epochs_pb2
from protogen.gonka.inference.v1 import inference_pb2
from protogen.gonka.learning.v1 import learning_pb2
from sdk.coins import Coins
from sdk.context import Context


class AccountKeeper(Protocol):
    def ensure_module_account(self, ctx: Context, name: str) -> bytes: ...


class BankKeeper(Protocol):
    def send_coins(self, ctx: Context, sender: bytes, recipient: bytes, coins: Coins) -> None: ...
    def get_all_balances(self, ctx: Context, address: bytes) -> Coins: ...
    def spendable_coins(self, ctx: Context, address: bytes) -> Coins: ...


class VestingKeeper(Protocol):
    def vest(self, ctx: Context, from_module: str, to: bytes, coins: Coins, epochs: int) -> None:
        """Move ``coins`` from module account ``from_module`` to ``to``, locked and released over ``epochs``."""

    def clawback(self, ctx: Context, owner: bytes, to_module: str, denom: str, amount: int) -> int:
        """Take back up to ``amount`` still locked on ``owner``'s schedule into ``to_module``; the amount taken."""


class StakeKeeper(Protocol):
    def get_host(self, ctx: Context, operator: bytes) -> Any:
        """The host registered by ``operator`` (``gonka.stake.v1.Host``), or None."""


class RewardsKeeper(Protocol):
    def report_work(self, ctx: Context, epoch: int, host: bytes, units: int) -> None: ...


class EpochsKeeper(Protocol):
    def current_epoch(self, ctx: Context) -> epochs_pb2.Epoch: ...


class LearningKeeper(Protocol):
    """The training run a model's weights come from (``Model.training_run_id``)."""

    def get_run(self, ctx: Context, run_id: int) -> learning_pb2.TrainingRun | None: ...
    def round_checkpoints(self, ctx: Context, run_id: int, round_: int) -> list[learning_pb2.Checkpoint]: ...


class FinishHooks(Protocol):
    def on_inference_finished(self, ctx: Context, inference: inference_pb2.Inference) -> None:
        """``inference`` has just finished (FINISHED, paid, its finish height set); app.py wires x/poc."""
