"""What a person watching a run sees: a progress bar, ``metrics.jsonl`` and ``loss.png``.

Workers send their events to the coordinator through the store, so one process writes the metrics file
and the terminal, wherever the workers run.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

BAR_WIDTH = 24
Event = dict[str, Any]
"""One line of ``metrics.jsonl``: a JSON object whose ``event`` names its kind."""


class MetricsLog:
    """Appends each event, stamped with the seconds since the session began; round events also get the
    run's cumulative bytes (``bytes_total``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.began = time.monotonic()
        self.bytes_total = 0
        if path.exists():
            rounds = [e for e in read_events(path) if e["event"] == "round"]
            self.bytes_total = rounds[-1]["bytes_total"] if rounds else 0

    def write(self, event: Event) -> Event:
        stamped = {**event, "time_s": round(time.monotonic() - self.began, 3)}
        if event["event"] == "round":
            self.bytes_total += event["bytes_sent"]
            stamped["bytes_total"] = self.bytes_total
        with self.path.open("a") as handle:
            handle.write(json.dumps(stamped, sort_keys=True) + "\n")
        return stamped


def read_events(path: Path) -> list[Event]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Progress:
    """One redrawn line on a terminal; otherwise one plain line per round (once its checkpoint is evaluated)."""

    def __init__(self, total_rounds: int, first_round: int, stream: TextIO = sys.stderr) -> None:
        self.total, self.done, self.stream = total_rounds, first_round, stream
        self.tty = stream.isatty()
        self.fields = {"train": "-", "val": "-", "tok/s": "-", "sent": "-", "workers": "-"}

    def update(self, event: Event) -> None:
        kind = event["event"]
        if kind == "round":
            self.done = event["round"] + 1
            self.fields.update(
                {
                    "train": f"{event['train_loss']:.3f}",
                    "workers": str(len(event["workers"])),
                    "tok/s": f"{event['tokens'] / max(event['seconds'], 1e-9):,.0f}",
                    "sent": human_bytes(event["bytes_total"]),
                }
            )
            if self.tty:
                self._draw()
        elif kind == "checkpoint":
            self.fields["val"] = f"{event['val_loss']:.3f}"
            self._draw()
        elif kind in ("dropped", "joined", "retry", "exited"):
            self._say(f"{kind}: " + ", ".join(f"{k}={v}" for k, v in event.items() if k not in ("event", "time_s")))

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self) -> None:
        filled = BAR_WIDTH * self.done // max(self.total, 1)
        line = f"round {self.done}/{self.total} |{'█' * filled}{'·' * (BAR_WIDTH - filled)}| " + " ".join(
            f"{k} {v}" for k, v in self.fields.items()
        )
        self.stream.write(f"\r{line}\x1b[K" if self.tty else line + "\n")
        self.stream.flush()

    def _say(self, text: str) -> None:
        self.stream.write(("\r\x1b[K" if self.tty else "") + text + "\n")
        self.stream.flush()


def human_bytes(count: float) -> str:
    units = ("B", "kB", "MB", "GB")
    power = 0
    while count >= 1000 and power < len(units) - 1:
        count, power = count / 1000, power + 1
    return f"{count:.0f} B" if power == 0 else f"{count:.1f} {units[power]}"


def plot(metrics: Path, png: Path) -> None:
    """Loss against inner steps and against bytes communicated."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    events = read_events(metrics)
    rounds = [e for e in events if e["event"] == "round"]
    checkpoints = [e for e in events if e["event"] == "checkpoint"]
    bytes_after = {0: 0, **{e["round"] + 1: e["bytes_total"] for e in rounds}}
    figure, (by_step, by_bytes) = pyplot.subplots(1, 2, figsize=(11, 4))
    by_step.plot([e["step"] for e in rounds], [e["train_loss"] for e in rounds], "o-", label="train (round mean)")
    by_step.plot([e["step"] for e in checkpoints], [e["val_loss"] for e in checkpoints], "s-", label="validation")
    by_step.set(xlabel="inner steps per worker", ylabel="loss (nats/byte)", title="loss against steps")
    known = [e for e in checkpoints if e["checkpoint"] in bytes_after]
    by_bytes.plot(
        [bytes_after[e["checkpoint"]] / 1e6 for e in known], [e["val_loss"] for e in known], "s-", label="validation"
    )
    by_bytes.set(xlabel="MB sent by all workers", ylabel="loss (nats/byte)", title="loss against communication")
    for axes in (by_step, by_bytes):
        axes.grid(alpha=0.3)
        axes.legend()
    figure.tight_layout()
    figure.savefig(png, dpi=100)
    pyplot.close(figure)
