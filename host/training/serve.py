"""Serving this host's replay data: ``GET /v1/training/<run>/<round>/<worker>/<file>``, one file of a round's
bundle (``bundle.FILES``) of a worker that is this host, from the run directory under ``[training] runs`` whose
``chain.json`` registered it as chain run ``run``. Open to anyone: it is what the worker committed to, and the
drawn verifiers (``host.training.duty``) need it to replay the round."""

from __future__ import annotations

import json
import re
from pathlib import Path

from host.training.bundle import CHAIN_FILE, FILES, bundle_paths
from sdk.http.asgi import Send, send_file
from sdk.http.errors import ApiError

TRAINING_FILE = re.compile(r"^/v1/training/(\d{1,20})/(\d{1,10})/([0-9a-z]{1,90})/([a-z_]{1,40}\.[a-z]{1,12})\Z")


class ReplayData:
    """The replay data of ``address``'s own rounds in the run directories under ``root``."""

    def __init__(self, root: Path, address: str) -> None:
        self.root, self.address = root, address

    def find(self, run_id: int, round_number: int, worker: str, name: str) -> Path | None:
        """The file, when this host is ``worker``, keeps run ``run_id`` and has that round's file."""
        if worker != self.address or name not in FILES:
            return None
        for chain_file in sorted(self.root.glob(f"*/{CHAIN_FILE}")):
            registered = json.loads(chain_file.read_text())
            if registered.get("run_id") != run_id:
                continue
            names = [n for n, address in registered.get("workers", {}).items() if address == worker]
            if not names:
                return None
            path = bundle_paths(chain_file.parent, round_number, names[0])[name]
            return path if path.is_file() else None
        return None


async def send_replay_file(send: Send, data: ReplayData, found: re.Match[str]) -> None:
    run_id, round_number, worker, name = int(found.group(1)), int(found.group(2)), found.group(3), found.group(4)
    path = data.find(run_id, round_number, worker, name)
    if path is None:
        raise ApiError(
            404, f"No replay data {name} of run {run_id} round {round_number} worker {worker}", code="no_replay_data"
        )
    await send_file(send, path)
