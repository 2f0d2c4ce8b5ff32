"""Downloading a registered model from its ``source_url`` into the store, every byte checked.

The manifest must name the model the chain registered; each file must have the manifest's size and SHA-256; the
whole directory must load as the registered identity (``name@sha256:weights_sha256``, as the ML node computes it).
Any mismatch refuses the source (``Refused``) and nothing of it is kept; a source that does not answer is
``Unreachable``, to be tried again later.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import httpx
from pydantic import ValidationError

from host.models.manifest import MANIFEST, Manifest
from host.models.store import ModelStore

Identify = Callable[[Path], str]
"""A model directory's identity as the ML node loads it (``host.models.nodes.identify``)."""


class Refused(Exception):
    """The source's bytes are not the registered model's: not tried again from the same source."""


class Unreachable(Exception):
    """The source did not answer (or not with 200): tried again later."""


def fetch_model(
    client: httpx.Client,
    source_url: str,
    model_id: str,
    store: ModelStore,
    identify: Identify,
    max_bytes: int,
) -> Manifest:
    """Download ``model_id`` (``name@sha256:HEX``) from ``source_url`` into ``store``; its manifest."""
    base = source_url.rstrip("/")
    manifest = _manifest(client, f"{base}/{MANIFEST}")
    if manifest.identity != model_id:
        raise Refused(f"the manifest is of {manifest.identity}, not {model_id}")
    total = sum(entry.size for entry in manifest.files)
    if total > max_bytes:
        raise Refused(f"the model's {total} bytes exceed the {max_bytes} this host takes")
    with store.writing(manifest.weights_sha256) as target:
        for entry in manifest.files:
            got_size, got_sha = _download(client, f"{base}/{entry.path}", target / entry.path, entry.size)
            if (got_size, got_sha) != (entry.size, entry.sha256):
                raise Refused(
                    f"{entry.path}: {got_size} bytes with sha256 {got_sha}, "
                    f"the manifest says {entry.size} bytes with sha256 {entry.sha256}"
                )
        (target / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n")
        identity = identify(target)
        if identity != model_id:
            raise Refused(f"the files load as {identity}, not {model_id}")
    return manifest


def _manifest(client: httpx.Client, url: str) -> Manifest:
    try:
        response = client.get(url)
    except httpx.HTTPError as error:
        raise Unreachable(f"GET {url}: {error!r}") from None
    if response.status_code != 200:
        raise Unreachable(f"GET {url}: {response.status_code}")
    try:
        return Manifest.model_validate_json(response.content)
    except ValidationError as error:
        raise Refused(f"{url} is no manifest: {error.errors()[0]['msg']}") from None


def _download(client: httpx.Client, url: str, path: Path, expected_size: int) -> tuple[int, str]:
    """Stream ``url`` to ``path``: the bytes' count and SHA-256, stopping one byte past ``expected_size``."""
    digest, size = hashlib.sha256(), 0
    try:
        with client.stream("GET", url) as response, path.open("wb") as out:
            if response.status_code != 200:
                raise Unreachable(f"GET {url}: {response.status_code}")
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > expected_size:
                    return size, "(more bytes than the manifest lists)"
                digest.update(chunk)
                out.write(chunk)
    except httpx.HTTPError as error:
        raise Unreachable(f"GET {url}: {error!r}") from None
    return size, digest.hexdigest()
