"""A published model directory's manifest: every file with its size and SHA-256, and the model's identity.

``GET /models/<weights_sha256>/manifest.json`` serves it; a fetching host checks each file it downloads against
its entry, and the directory as a whole against ``weights_sha256`` (the identity the chain registered: the ML
node's hash of the weights, ``mlnode/weights.py``), so a source can neither swap a file nor a model.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

MANIFEST = "manifest.json"
FILE_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}\Z")
"""A published file's name: flat (no directories), not hidden, nothing a path could escape with."""
SHA256_RE = re.compile(r"^[0-9a-f]{64}\Z")
CHUNK = 1 << 20
MAX_FILES = 64


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    size: int = Field(ge=0)
    sha256: str

    @field_validator("path")
    @classmethod
    def _flat(cls, path: str) -> str:
        if not FILE_RE.match(path) or path == MANIFEST:
            raise ValueError(f"file name {path!r} must be 1-128 characters of [A-Za-z0-9._-], not hidden")
        return path

    @field_validator("sha256")
    @classmethod
    def _hex(cls, sha256: str) -> str:
        if not SHA256_RE.match(sha256):
            raise ValueError(f"sha256 {sha256!r} must be 64 lowercase hex characters")
        return sha256


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    weights_sha256: str
    files: list[FileEntry] = Field(min_length=1, max_length=MAX_FILES)

    @field_validator("files")
    @classmethod
    def _unique(cls, files: list[FileEntry]) -> list[FileEntry]:
        names = [entry.path for entry in files]
        if len(set(names)) != len(names):
            raise ValueError("file names must not repeat")
        return files

    @property
    def identity(self) -> str:
        return f"{self.name}@sha256:{self.weights_sha256}"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def build_manifest(directory: Path, name: str, weights_sha256: str) -> Manifest:
    """The manifest of every plain file in ``directory`` (sorted; the manifest itself left out)."""
    files = [
        FileEntry(path=path.name, size=path.stat().st_size, sha256=file_sha256(path))
        for path in sorted(directory.iterdir())
        if path.is_file() and path.name != MANIFEST
    ]
    return Manifest(name=name, weights_sha256=weights_sha256, files=files)
