"""Fetching a round's replay data (``bundle.FILES``) from the worker's host into a copy of its run directory:
``meta.json`` first (it names the worker as the run directory does), then every other file to its place."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import httpx

from host.training.bundle import FILES, WORKER_NAME, bundle_paths

log = logging.getLogger("gonka.host.training")


class NotServed(Exception):
    """None of the worker's URLs served the whole bundle."""


class BundleFetcher:
    def __init__(self, timeout_s: float) -> None:
        self.client = httpx.Client(timeout=timeout_s)

    def close(self) -> None:
        self.client.close()

    def fetch(self, urls: list[str], run_id: int, round_number: int, worker: str, target: Path) -> str:
        """The bundle from the first of ``urls`` that serves all of it, placed in the run directory ``target``
        (emptied first); the worker's name there."""
        for url in urls:
            base = f"{url.rstrip('/')}/v1/training/{run_id}/{round_number}/{worker}"
            shutil.rmtree(target, ignore_errors=True)
            try:
                meta = json.loads(self._get(f"{base}/meta.json"))
                name = str(meta.get("worker_name", "")) if isinstance(meta, dict) else ""
                if not WORKER_NAME.match(name) or meta.get("round") != round_number:
                    raise ValueError(f"meta.json is not of round {round_number} of a worker: {str(meta)[:200]}")
                places = bundle_paths(target, round_number, name)
                for file in FILES:
                    places[file].parent.mkdir(parents=True, exist_ok=True)
                    places[file].write_bytes(self._get(f"{base}/{file}"))
                return name
            except (httpx.HTTPError, ValueError, NotServed) as error:  # json's errors are ValueErrors
                log.info("run %d round %d of %s: no replay data from %s: %r", run_id, round_number, worker, url, error)
        raise NotServed(f"none of {len(urls)} URL(s) of {worker} served run {run_id} round {round_number}")

    def _get(self, url: str) -> bytes:
        response = self.client.get(url)
        if response.status_code != 200:
            raise NotServed(f"GET {url}: {response.status_code}")
        return response.content
