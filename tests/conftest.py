"""Shared fixtures: a real N-validator localnet (gonkad + cometbft processes) in a temp folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gonkad import localnet
from mlnode.threads import torch_threads

pytest.register_assert_rewrite("chain")  # the in-process chain's own checks fail with their values, as tests do


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "localnet: starts real gonkad and cometbft processes")


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Torch in the test process on one thread: on a small machine shared with the nodes a test starts,
    a second thread only makes them all wait on each other's spinning threads."""
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def net4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A 4-validator localnet, stopped at the end of the module whatever happened."""
    root = tmp_path_factory.mktemp("localnet")
    try:
        localnet.start(root, validators=4, chain_id="gonka-test")
        localnet.wait_for_height(root, 2, timeout_s=120)
        yield root
    finally:
        if (root / localnet.SPEC_FILE).exists():
            localnet.stop(root)
