"""Serving the store over the executor proxy's HTTP: ``GET /models/<sha256>/<file>``, the manifest or a file it
lists, streamed in chunks (a model is larger than any body the proxy holds in memory)."""

from __future__ import annotations

import re

from host.models.store import ModelStore
from sdk.http.asgi import Send, send_file
from sdk.http.errors import ApiError

MODEL_FILE = re.compile(r"^/models/([0-9a-f]{64})/([A-Za-z0-9._-]{1,128})\Z")


async def send_model_file(send: Send, store: ModelStore, weights_sha256: str, name: str) -> None:
    path = store.file(weights_sha256, name)
    if path is None:
        raise ApiError(404, f"No published model file {weights_sha256}/{name}", code="model_file_not_found")
    await send_file(send, path)
