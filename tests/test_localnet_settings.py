"""The localnet is built from ``localnet/settings.toml``: validators, chain id, allocation, consensus
timeouts, mempool bounds and genesis overrides all reach the files its nodes start from."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from gonkad import localnet
from gonkad.paths import LOCALNET_SETTINGS_FILE


def test_committed_settings_load() -> None:
    settings = localnet.load_settings()
    assert settings.validators >= 1 and settings.chain_id
    assert (
        settings.faucet_ngonka + settings.validators * settings.validator_balance_ngonka == settings.total_supply_ngonka
    )
    assert localnet.load_settings(validators=1, chain_id="other").validators == 1


def test_build_follows_the_settings(tmp_path: Path) -> None:
    text = LOCALNET_SETTINGS_FILE.read_text().replace('timeout_commit = "300ms"', 'timeout_commit = "150ms"')
    text += '\n[genesis.auth.params]\nmax_memo_characters = "512"\n'
    path = tmp_path / "settings.toml"
    path.write_text(text)
    settings = localnet.load_settings(path, validators=2, chain_id="gonka-settings")
    spec = localnet.build(tmp_path / "net", settings=settings)
    assert [n.name for n in spec.nodes] == ["node0", "node1"] and spec.chain_id == "gonka-settings"
    for node in spec.nodes:
        home = Path(node.home)
        doc = json.loads((home / "config" / "genesis.json").read_text())
        assert doc["chain_id"] == "gonka-settings"
        params = doc["app_state"]["auth"]["params"]
        assert params["max_memo_characters"] == "512" and params["tx_sig_limit"]  # merged, not replaced
        consensus = doc["consensus_params"]  # settings' [consensus_params] merged into CometBFT's defaults
        assert consensus["abci"]["vote_extensions_enable_height"] == "1" and consensus["block"]["max_gas"] == "-1"
        balances = {b["address"]: int(b["coins"][0]["amount"]) for b in doc["app_state"]["bank"]["balances"]}
        assert sorted(balances.values()) == sorted([settings.faucet_ngonka] + 2 * [settings.validator_balance_ngonka])
        config = tomllib.loads((home / "config" / "config.toml").read_text())
        assert config["consensus"]["timeout_commit"] == "150ms"
        assert {key: config["mempool"][key] for key in settings.mempool} == settings.mempool
        assert config["mempool"]["size"] >= 10_000  # a 10,000-tx flood fits: CometBFT drops what does not
        app = tomllib.loads((home / "config" / "app.toml").read_text())
        assert app["index_events"] == settings.index_events


def test_invalid_settings_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        LOCALNET_SETTINGS_FILE.read_text().replace(
            "validator_stake_ngonka = 100_000_000_000_000", "validator_stake_ngonka = 2_000_000_000_000_000"
        )
    )
    with pytest.raises(ValueError, match="validator_stake_ngonka exceeds validator_balance_ngonka") as refused:
        localnet.load_settings(path)
    assert "\n" not in str(refused.value)


def test_services_are_settings_too(tmp_path: Path) -> None:
    """``[services]`` comes only when asked for; every validator is a host with an ML node unless ``ml_nodes``
    says fewer; the TAs' funds come out of the faucet's share, so the supply stays the total; a bad setting is
    one line naming it."""
    assert localnet.load_settings().services is None
    settings = localnet.load_settings(with_services=True)
    services = settings.services
    assert services is not None and services.ml_nodes is None and services.transfer_agents >= 1
    assert settings.hosts == settings.validators
    assert all(localnet.load_settings(validators=n, with_services=True).hosts == n for n in range(1, 9))
    assert (
        settings.faucet_ngonka
        + settings.validators * settings.validator_balance_ngonka
        + services.transfer_agents * services.ta_balance_ngonka
        == settings.total_supply_ngonka
    )
    path = tmp_path / "settings.toml"
    text = LOCALNET_SETTINGS_FILE.read_text()
    for old, new, words in (
        ("transfer_agents = 2", "transfer_agents = 2\nml_nodes = 3", "services.ml_nodes 3 is more than the 1 valid"),
        ('race_preset = "tiny"', 'race_preset = "huge"', "services.race_preset: unknown race preset 'huge'"),
        ("max_concurrency = 4", "max_concurrency = 0", "services.max_concurrency: Input should be greater than"),
        ('race_preset = "tiny"', 'race_preset = "tiny"\nrace = 1', "services.race: Extra inputs are not permitted"),
    ):
        path.write_text(text.replace(old, new))
        with pytest.raises(ValueError, match=words) as refused:
            localnet.load_settings(path, validators=1, with_services=True)
        assert "\n" not in str(refused.value)
