"""The host's model store: one directory per model, named by its weights SHA-256, each with its manifest.

What it holds it publishes (``GET /models/…``) and its fetched models' ML nodes load from it. A directory appears
only whole: it is written under ``.partial-<sha>`` and renamed once every check passed, so a crash or a refused
download leaves nothing that looks like a model.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from host.models.manifest import MANIFEST, SHA256_RE, Manifest, build_manifest

PARTIAL = ".partial-"


class ModelStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def directory(self, weights_sha256: str) -> Path:
        return self.root / weights_sha256

    def manifest(self, weights_sha256: str) -> Manifest | None:
        """The manifest of a model held whole; None for any other name."""
        if not SHA256_RE.match(weights_sha256):
            return None
        try:
            return Manifest.model_validate_json((self.directory(weights_sha256) / MANIFEST).read_bytes())
        except (OSError, ValueError):
            return None

    def file(self, weights_sha256: str, name: str) -> Path | None:
        """A published file's path: the manifest itself, or a file the manifest lists; None otherwise."""
        manifest = self.manifest(weights_sha256)
        if manifest is None or (name != MANIFEST and name not in {entry.path for entry in manifest.files}):
            return None
        return self.directory(weights_sha256) / name

    @contextmanager
    def writing(self, weights_sha256: str) -> Iterator[Path]:
        """A fresh directory to fill; renamed into place when the block ends normally, removed when it raises."""
        if not SHA256_RE.match(weights_sha256):
            raise ValueError(f"weights_sha256 {weights_sha256!r} must be 64 lowercase hex characters")
        partial = self.root / f"{PARTIAL}{weights_sha256}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            yield partial
            shutil.rmtree(self.directory(weights_sha256), ignore_errors=True)
            partial.rename(self.directory(weights_sha256))
        finally:
            shutil.rmtree(partial, ignore_errors=True)

    def add(self, source: Path, name: str, weights_sha256: str) -> Manifest:
        """Publish a model directory the caller has identified (``name``, ``weights_sha256``): its plain files
        copied and its manifest written."""
        with self.writing(weights_sha256) as target:
            for path in sorted(source.iterdir()):
                if path.is_file() and path.name != MANIFEST:
                    shutil.copyfile(path, target / path.name)
            manifest = build_manifest(target, name, weights_sha256)
            (target / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n")
        return manifest
