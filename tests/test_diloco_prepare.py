"""The training corpus's prepare step (diloco/prepare.py) and the loader that reads its shards, on a small
documentation tree written here: shards and meta are deterministic, a second run changes nothing, the tokens
decode back to the cleaned source files, validation is every VAL_EVERY-th file, and training batches come
from the shards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from diloco import prepare
from diloco.config import TrainConfig
from diloco.data import data_order, load_corpus, shard, validation_batches
from mlnode.tokenizer import decode

PAGE = """.. _tut-intro:

.. index:: single: interpreter

An Informal Introduction {number}
=================================

The :func:`print` function writes values, and :class:`~collections.deque` is a
:ref:`double-ended queue <tut-deque>` that page {number} describes at length.



Numbers add up as you would expect.
"""


def write_docs(root: Path, files: int = 45) -> Path:
    """A ``_sources`` tree: a glossary, prose pages in two sections and an API page that is left out."""
    source = root / "_sources"
    (source / "tutorial").mkdir(parents=True)
    (source / "howto").mkdir()
    (source / "library").mkdir()
    (source / "glossary.rst.txt").write_text(PAGE.format(number="glossary"))
    for number in range(files):
        section = "tutorial" if number % 2 else "howto"
        (source / section / f"page{number:03d}.rst.txt").write_text(PAGE.format(number=number))
    (source / "library" / "os.rst.txt").write_text("API reference, not prose\n")
    return source


def test_clean_keeps_the_words_and_drops_markup() -> None:
    cleaned = prepare.clean(PAGE.format(number=7))
    assert cleaned == (
        "An Informal Introduction 7\n\n"
        "The print function writes values, and collections.deque is a\n"
        "double-ended queue that page 7 describes at length.\n\n"
        "Numbers add up as you would expect.\n\n"
    )


def test_prepare_writes_deterministic_shards_that_decode_to_the_sources(tmp_path: Path) -> None:
    source = write_docs(tmp_path)
    meta = prepare.prepare(source, tmp_path / "a")
    again = prepare.prepare(source, tmp_path / "b")
    assert meta == again
    for name in ("train.bin", "val.bin", "meta.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    files = prepare.source_files(source)
    assert len(files) == meta["files"] == 46 and all("library" not in path.parts for path in files)
    texts = [prepare.clean(path.read_text()) for path in files]
    validation = "".join(text for number, text in enumerate(texts) if number % prepare.VAL_EVERY == 0)
    train = "".join(text for number, text in enumerate(texts) if number % prepare.VAL_EVERY)
    assert decode((tmp_path / "a" / "val.bin").read_bytes()) == validation
    assert decode((tmp_path / "a" / "train.bin").read_bytes()) == train
    assert [path.name for path in files[:: prepare.VAL_EVERY]] == [
        "glossary.rst.txt",
        "page039.rst.txt",
        "page034.rst.txt",
    ]
    assert meta["train_tokens"] == len(train.encode()) and meta["val_tokens"] == len(validation.encode())
    assert meta["corpus"] == "python-docs" and meta["license"].startswith("PSF-2.0")
    assert json.loads((tmp_path / "a" / "meta.json").read_text()) == meta


def test_prepare_is_idempotent_and_follows_the_source(tmp_path: Path) -> None:
    source, out = write_docs(tmp_path), tmp_path / "data"
    meta = prepare.prepare(source, out)
    stamps = [(out / name).stat().st_mtime_ns for name in ("train.bin", "val.bin", "meta.json")]
    assert prepare.prepare(source, out) == meta
    assert [(out / name).stat().st_mtime_ns for name in ("train.bin", "val.bin", "meta.json")] == stamps
    (source / "tutorial" / "page001.rst.txt").write_text("A changed page.\n")
    changed = prepare.prepare(source, out)
    assert changed["source_sha256"] != meta["source_sha256"]
    assert "A changed page.\n\n" in decode((out / "train.bin").read_bytes())


def test_prepare_without_sources_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prepare, "DOC_ROOT", tmp_path)
    with pytest.raises(FileNotFoundError, match="python3-doc"):
        prepare.find_source()
    for version in ("3.9", "3.11"):
        write_docs(tmp_path / f"python{version}" / "html", files=1)
    assert prepare.find_source() == tmp_path / "python3.11" / "html" / "_sources"


def test_training_reads_the_prepared_shards(tmp_path: Path) -> None:
    source, out = write_docs(tmp_path), tmp_path / "data"
    config = TrainConfig(workers=2, inner_steps=3, rounds=1, batch_size=2, seq_len=16, eval_batches=2)
    assert config.corpus == "python-docs"
    corpus = load_corpus(config, out, source)
    meta = prepare.read_meta(out)
    assert meta is not None and corpus.files == meta["files"]
    assert bytes(corpus.train.tolist()) == (out / "train.bin").read_bytes()
    assert bytes(corpus.validation.tolist()) == (out / "val.bin").read_bytes()
    assert corpus.sha256 == meta["tokens_sha256"] == load_corpus(config, out, source).sha256
    data = shard(corpus, 1, 2)
    order = data_order(config, 1, 0, data.numel())
    assert torch.equal(order, data_order(config, 1, 0, data.numel()))
    assert decode(data[order[0, 0] : order[0, 0] + 17].tolist()) in decode(corpus.train.tolist())
    assert len(validation_batches(corpus, config)) == 2
    cut = load_corpus(config.model_copy(update={"corpus_bytes": 4096}), out, source)
    assert cut.train.numel() + cut.validation.numel() == 4096
    assert cut.validation.numel() == 4096 // prepare.VAL_EVERY and cut.sha256 != corpus.sha256
