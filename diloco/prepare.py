"""Prepare a text corpus once into token shards (nanoGPT's ``data/<dataset>/prepare.py``), so training reads
language rather than code.

The corpus is the prose of the Python documentation: the reStructuredText sources Debian's ``python3-doc``
installs under ``/usr/share/doc/python3.X/html/_sources`` (PSF License). The prose sections are read in
sorted order, cleaned of reST markup that is not language (labels, index entries, heading underlines,
role prefixes), tokenized with the training's byte tokenizer, and split by file: every ``VAL_EVERY``-th
file is validation. ``DIR/train.bin`` and ``DIR/val.bin`` hold uint8 tokens (the byte tokenizer's text ids
are all below 256); ``DIR/meta.json`` names the corpus, its source, license and sizes, and the SHA-256 of the
source files and of the tokens. A second run with an unchanged source does nothing.

    PYTHONPATH=$PWD .venv/bin/python -m diloco.prepare [--source DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from pathlib import Path

import numpy

CORPUS = "python-docs"
LICENSE = "PSF-2.0 (Python Software Foundation License; documentation examples 0BSD)"
DOC_ROOT = Path("/usr/share/doc")
PROSE_SECTIONS = ("tutorial", "reference", "howto", "faq", "whatsnew", "using", "extending", "install")
"""Sub-trees of ``_sources`` read in full; the API references (``library``, ``c-api``) are mostly
signatures and tables, so they are left out, as are top-level files other than the glossary."""
TOP_LEVEL = ("glossary.rst.txt",)
VAL_EVERY = 20
DEFAULT_DATA_DIR = Path(__file__).resolve().parent.parent / "data" / CORPUS

_LABEL = re.compile(r"^\s*\.\. (_[^:]*:|index::|highlight::|sectionauthor::|moduleauthor::|module::|currentmodule::)")
_ADORNMENT = re.compile(r"^([=\-~^*+#\"'`])\1{3,}\s*$")
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?!?([^`<]*?)\s*(?:<[^`>]*>)?`")
_BLANK_RUN = re.compile(r"\n{3,}")


def find_source() -> Path:
    """The newest installed Python documentation's ``_sources`` folder."""
    found = sorted(DOC_ROOT.glob("python3.*/html/_sources"), key=lambda path: _version(path.parent.parent.name))
    if not found:
        raise FileNotFoundError(f"no {DOC_ROOT}/python3.X/html/_sources: install the python3-doc package")
    return found[-1]


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", name))


def source_files(source: Path) -> list[Path]:
    files = [source / name for name in TOP_LEVEL if (source / name).is_file()]
    for section in PROSE_SECTIONS:
        files.extend(sorted((source / section).rglob("*.rst.txt")))
    return files


def clean(text: str) -> str:
    """The text a reader sees: markup-only lines dropped, roles reduced to their text, blank runs collapsed."""
    lines = [line.rstrip() for line in text.splitlines() if not _LABEL.match(line) and not _ADORNMENT.match(line)]
    body = _ROLE.sub(r"\1", "\n".join(lines))
    return _BLANK_RUN.sub("\n\n", body).strip() + "\n\n"


def source_sha256(source: Path, files: list[Path]) -> str:
    """Binds the shards to the exact bytes and names they were made from."""
    digest = hashlib.sha256()
    for path in files:
        raw = path.read_bytes()
        digest.update(f"{path.relative_to(source).as_posix()}\0{len(raw)}\0".encode())
        digest.update(raw)
    return digest.hexdigest()


def prepare(source: Path, out: Path) -> dict[str, object]:
    """Write ``train.bin``, ``val.bin`` and ``meta.json`` under ``out`` unless they already match ``source``."""
    files = source_files(source)
    if not files:
        raise FileNotFoundError(f"no documentation sources under {source}")
    source_hash = source_sha256(source, files)
    existing = read_meta(out)
    if existing is not None and existing["source_sha256"] == source_hash and _shards_present(out):
        return existing
    train, validation = bytearray(), bytearray()
    for number, path in enumerate(files):
        (validation if number % VAL_EVERY == 0 else train).extend(clean(path.read_text("utf-8")).encode("utf-8"))
    meta: dict[str, object] = {
        "corpus": CORPUS,
        "source": str(source),
        "license": LICENSE,
        "files": len(files),
        "val_every": VAL_EVERY,
        "dtype": "uint8",
        "source_bytes": sum(path.stat().st_size for path in files),
        "train_tokens": len(train),
        "val_tokens": len(validation),
        "source_sha256": source_hash,
        "tokens_sha256": hashlib.sha256(bytes(train) + bytes(validation)).hexdigest(),
    }
    out.mkdir(parents=True, exist_ok=True)
    _write_atomic(out / "train.bin", bytes(train))
    _write_atomic(out / "val.bin", bytes(validation))
    _write_atomic(out / "meta.json", (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode())
    return meta


def read_meta(out: Path) -> dict[str, object] | None:
    path = out / "meta.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _shards_present(out: Path) -> bool:
    return (out / "train.bin").is_file() and (out / "val.bin").is_file()


def _write_atomic(path: Path, body: bytes) -> None:
    """Concurrent workers preparing on first use never see half a shard."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_bytes(body)
    partial.replace(path)


def load_shards(out: Path) -> tuple[numpy.ndarray, numpy.ndarray, dict[str, object]]:
    """Train and validation tokens (read-only memmaps) and the meta of the prepared corpus."""
    meta = read_meta(out)
    if meta is None:
        raise FileNotFoundError(f"no prepared corpus in {out}: run python -m diloco.prepare")
    train = numpy.memmap(out / "train.bin", dtype=numpy.uint8, mode="r")
    validation = numpy.memmap(out / "val.bin", dtype=numpy.uint8, mode="r")
    return train, validation, meta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a python3.X/html/_sources folder (default: the newest installed)")
    parser.add_argument("--out", type=Path, default=DEFAULT_DATA_DIR)
    args = parser.parse_args()
    meta = prepare(args.source or find_source(), args.out)
    print(json.dumps(meta, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
