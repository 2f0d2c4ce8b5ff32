"""The ML node processes a host runs for its fetched models, and the identity check they share the loader of.

The host's program never imports the model runtime (``host/README.md``): a directory's identity comes from
``gonkad mlnode identity``, and a fetched model is served by ``gonkad mlnode start --model DIR`` as a child
process, whose ready line names its URL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from host.models.config import ModelsConfig

GONKAD = (sys.executable, "-m", "gonkad")


def identify(directory: Path) -> str:
    """The identity the ML node loads ``directory`` as (``name@sha256:HEX``); ``ValueError`` when it does not load."""
    done = subprocess.run(
        [*GONKAD, "mlnode", "identity", "--model", str(directory)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ValueError(f"the directory does not load as a model: {last}")
    return str(json.loads(done.stdout)["identity"])


class NodeProcess:
    """One ML node serving one model directory, logging to ``log``; ``url`` once it serves."""

    def __init__(self, directory: Path, log: Path, config: ModelsConfig) -> None:
        command = [
            *GONKAD,
            "mlnode",
            "start",
            "--model",
            str(directory),
            "--port",
            "0",
            "--threads",
            str(config.threads),
            "--max-concurrency",
            str(config.max_concurrency),
            "--max-tokens-limit",
            str(config.max_tokens_limit),
        ]
        with log.open("ab") as logfile:
            self.process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=logfile, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.url = self._ready(config.start_timeout_s, log)

    def _ready(self, timeout_s: float, log: Path) -> str:
        """The URL of the node's ready line; ``RuntimeError`` (the node stopped) when it exits or is late."""
        timer = threading.Timer(timeout_s, self.process.kill)
        timer.start()
        try:
            assert self.process.stdout is not None
            line = self.process.stdout.readline()
        finally:
            timer.cancel()
        if not line:
            self.stop()
            raise RuntimeError(f"the ML node did not start within {timeout_s}s (see {log})")
        return str(json.loads(line)["url"])

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
