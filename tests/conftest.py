"""Shared fixtures: a real N-validator localnet (gonkad + cometbft processes) in a temp folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import headless_chromium
from nodes import running_localnet
from selenium import webdriver

from gonkad import genesis, localnet
from mlnode.threads import torch_threads

pytest.register_assert_rewrite("chain")  # the in-process chain's own checks fail with their values, as tests do


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "localnet: starts real gonkad and cometbft processes (tests/*_localnet.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The file name says which group a test is in: every test of a ``*_localnet.py`` file starts a real network
    and is marked ``localnet`` (``make test-localnet``); every other file is a unit test (``make test-unit``),
    on the in-process chain or none, and may not start one."""
    for item in items:
        if item.path.name.endswith("_localnet.py"):
            item.add_marker(pytest.mark.localnet)
        elif item.get_closest_marker("localnet") is not None:
            raise pytest.UsageError(f"{item.nodeid} is marked localnet: move it to a *_localnet.py file")


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Torch in the test process on one thread: on a small machine shared with the nodes a test starts,
    a second thread only makes them all wait on each other's spinning threads."""
    with torch_threads(1):
        yield


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    """Headless Chromium for one test (the network page's), quit when the test ends, failed or not."""
    with headless_chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def net4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A 4-validator localnet, stopped at the end of the module whatever happened. Tests on it kill and
    restart validators, so downtime is never jailed here (its own tests use their own networks). A training
    checkpoint's verdicts are taken for 100,000 blocks: a replay on CPU outlasts the default window."""
    settings = localnet.load_settings(validators=4, chain_id="gonka-test")
    overrides = {
        "slashing": {"params": {"signed_blocks_window": "1000000"}},
        "learning": {"params": {"verdict_window": 100_000}},
    }
    settings = settings.model_copy(update={"genesis": genesis.merge_overrides(settings.genesis, overrides)})
    yield from running_localnet(tmp_path_factory.mktemp("localnet"), settings)
