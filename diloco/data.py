"""The training corpus as bytes, nothing downloaded: by default the Python documentation's prose, prepared
once into token shards by ``diloco.prepare`` (on first use when they are missing); ``corpus="stdlib"`` is
the Python standard library's own ``.py`` sources, files read in sorted order with test suites left out and
every ``val_every_file``-th file going to validation.

The training bytes are cut into one contiguous shard per data index. A batch is
``batch_size`` windows of ``seq_len + 1`` bytes whose start offsets come from a generator seeded by
(run seed, worker index, round), so a worker's data order for a round is a small tensor anyone can
recompute, store and hash.
"""

from __future__ import annotations

import hashlib
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy
import torch

from diloco import prepare
from diloco.config import TrainConfig

EXCLUDED_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"}
VALIDATION_SEED_SALT = 0x5EED_0BA1


@dataclass(frozen=True)
class Corpus:
    train: torch.Tensor
    """uint8 bytes of the training files."""
    validation: torch.Tensor
    sha256: str
    """Of the bytes actually used (train then validation): binds a run to one corpus."""
    files: int


def corpus_files(root: Path) -> list[Path]:
    return sorted(
        path for path in root.rglob("*.py") if not EXCLUDED_DIRS.intersection(path.relative_to(root).parts[:-1])
    )


def load_corpus(config: TrainConfig, data_dir: Path = prepare.DEFAULT_DATA_DIR, source: Path | None = None) -> Corpus:
    """The run's corpus; python-docs is prepared from ``source`` (default: the installed documentation) into
    ``data_dir`` first, which does nothing when the shards there match it."""
    if config.corpus == "stdlib":
        return _stdlib_corpus(config)
    prepare.prepare(source or prepare.find_source(), data_dir)
    return _prepared_corpus(config, data_dir)


def _prepared_corpus(config: TrainConfig, data_dir: Path) -> Corpus:
    """The prepared shards; ``corpus_bytes`` keeps the first 1/``VAL_EVERY`` of it from validation, the
    rest from training."""
    train, validation, meta = prepare.load_shards(data_dir)
    if config.corpus_bytes is not None:
        val_bytes = config.corpus_bytes // int(str(meta["val_every"]))
        train, validation = train[: config.corpus_bytes - val_bytes], validation[:val_bytes]
    digest = hashlib.sha256(train.tobytes() + validation.tobytes()).hexdigest()
    return Corpus(_as_tensor(train), _as_tensor(validation), digest, int(str(meta["files"])))


def _stdlib_corpus(config: TrainConfig) -> Corpus:
    files = corpus_files(Path(sysconfig.get_paths()["stdlib"]))
    train, validation, used = bytearray(), bytearray(), 0
    for number, path in enumerate(files):
        text = path.read_bytes()
        if config.corpus_bytes is not None:
            text = text[: config.corpus_bytes - used]
        (validation if number % config.val_every_file == 0 else train).extend(text)
        used += len(text)
        if config.corpus_bytes is not None and used >= config.corpus_bytes:
            files = files[: number + 1]
            break
    digest = hashlib.sha256(bytes(train) + bytes(validation)).hexdigest()
    return Corpus(_as_tensor(train), _as_tensor(validation), digest, len(files))


def _as_tensor(raw: bytearray | numpy.ndarray) -> torch.Tensor:
    return torch.from_numpy(numpy.frombuffer(raw, dtype=numpy.uint8).copy())


def shard(corpus: Corpus, index: int, shards: int) -> torch.Tensor:
    """The contiguous slice of the training bytes that data index ``index`` trains on."""
    size = corpus.train.numel() // shards
    part = index % shards
    return corpus.train[part * size : (part + 1) * size]


def round_seed(seed: int, index: int, round_number: int) -> int:
    digest = hashlib.sha256(f"diloco-data|{seed}|{index}|{round_number}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def window_starts(length: int, config: TrainConfig, steps: int, seed: int) -> torch.Tensor:
    """[steps, batch_size] int64 window start offsets into a stream of ``length`` bytes."""
    if length <= config.seq_len + 1:
        raise ValueError(f"a data shard of {length} bytes is too small for seq_len {config.seq_len}")
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, length - config.seq_len - 1, (steps, config.batch_size), generator=generator)


def data_order(config: TrainConfig, index: int, round_number: int, shard_length: int) -> torch.Tensor:
    """The window starts a worker with data index ``index`` must use in round ``round_number``."""
    return window_starts(shard_length, config, config.inner_steps, round_seed(config.seed, index, round_number))


def batches(data: torch.Tensor, starts: torch.Tensor, seq_len: int) -> Iterator[torch.Tensor]:
    """One [batch, seq_len + 1] int64 token tensor per row of ``starts``."""
    offsets = torch.arange(seq_len + 1)
    for row in starts:
        yield data[row[:, None] + offsets].long()


def validation_batches(corpus: Corpus, config: TrainConfig) -> list[torch.Tensor]:
    """A fixed validation set, the same for every evaluation of the run."""
    starts = window_starts(corpus.validation.numel(), config, config.eval_batches, config.seed ^ VALIDATION_SEED_SALT)
    return list(batches(corpus.validation, starts, config.seq_len))
