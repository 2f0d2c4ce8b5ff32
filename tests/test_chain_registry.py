"""``gonkad chain-info`` and ``localnet status``'s chain files (gonkad/chain_registry.py): cosmos/chain-registry's
chain.json and assetlist.json, and Keplr's chain suggestion, validated against JSON schemas written from the
registry's and Keplr's documented fields (tests/schemas/, each naming its source), from node homes laid out on
disk: with and without app.toml's ``[api]`` (the REST API), no node started."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gonkad import chain_registry, cli, genesis, localnet
from gonkad.config import ApiConfig, AppConfig, save_app_config
from sdk.crypto import bech32

SCHEMAS = Path(__file__).parent / "schemas"
CHAIN_ID = "gonka-test"


def validate(document: dict[str, Any], schema_file: str) -> None:
    schema = json.loads((SCHEMAS / schema_file).read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft7Validator(schema).validate(document)


def make_home(
    home: Path, name: str, rpc_port: int, grpc_port: int, api: ApiConfig | None, min_gas_prices: str = "0.025ngonka"
) -> Path:
    """A node home as ``gonkad init`` and the localnet leave it, as far as chain-info reads it: genesis.json,
    CometBFT's config.toml (moniker, ``[rpc]``) and app.toml, with ``api`` as its ``[api]`` (the default: none)."""
    (home / "config").mkdir(parents=True)
    (home / "config" / "genesis.json").write_text(
        json.dumps({"chain_id": CHAIN_ID, "app_state": genesis.default_app_state()})
    )
    (home / "config" / "config.toml").write_text(f'moniker = "{name}"\n[rpc]\nladdr = "tcp://127.0.0.1:{rpc_port}"\n')
    config = AppConfig(grpc_address=f"127.0.0.1:{grpc_port}", min_gas_prices=min_gas_prices, api=api or ApiConfig())
    save_app_config(home, config)
    return home


def rest_api(port: int, enable: bool = True) -> ApiConfig:
    """app.toml's ``[api]``."""
    return ApiConfig(enable=enable, address=f"tcp://127.0.0.1:{port}")


def test_the_files_validate_and_say_what_the_chain_is(tmp_path: Path) -> None:
    home = make_home(tmp_path / "node0", "node0", 26657, 9090, rest_api(1317))
    files = chain_registry.chain_info([home])
    assert set(files) == {"chain.json", "assetlist.json", "keplr.json"}
    chain, assets, keplr = files["chain.json"], files["assetlist.json"], files["keplr.json"]
    validate(chain, "chain.schema.json")
    validate(assets, "assetlist.schema.json")
    validate(keplr, "keplr-chain-info.schema.json")

    assert (chain["chain_id"], chain["chain_name"], chain["network_type"]) == (CHAIN_ID, "gonkatest", "testnet")
    assert (chain["bech32_prefix"], chain["slip44"], chain["key_algos"]) == (bech32.ACCOUNT_PREFIX, 118, ["secp256k1"])
    assert chain["daemon_name"] == "gonkad"
    assert chain["fees"]["fee_tokens"] == [
        {
            "denom": "ngonka",
            "fixed_min_gas_price": 0.025,
            "low_gas_price": 0.025,
            "average_gas_price": 0.0625,
            "high_gas_price": 0.1,
        }
    ]
    assert chain["staking"] == {"staking_tokens": [{"denom": "ngonka"}]}
    assert chain["apis"] == {
        "rpc": [{"address": "http://127.0.0.1:26657", "provider": "node0"}],
        "grpc": [{"address": "127.0.0.1:9090", "provider": "node0"}],
        "rest": [{"address": "http://127.0.0.1:1317", "provider": "node0"}],
    }

    # GNK as the project's genesis defines it: 1 GNK (gonka) = 10^9 ngonka.
    (gnk,) = assets["assets"]
    (metadata,) = genesis.default_app_state()["bank"]["denom_metadata"]
    assert [(u["denom"], u["exponent"]) for u in gnk["denom_units"]] == [
        (u["denom"], u.get("exponent", 0)) for u in metadata["denom_units"]
    ]
    assert [(u["denom"], u["exponent"]) for u in gnk["denom_units"]] == [("ngonka", 0), ("gonka", 9)]
    assert (gnk["base"], gnk["display"], gnk["name"], gnk["symbol"], gnk["type_asset"]) == (
        "ngonka",
        "gonka",
        "Gonka",
        "GNK",
        "sdk.coin",
    )

    gnk_currency = {"coinDenom": "GNK", "coinMinimalDenom": "ngonka", "coinDecimals": 9}
    assert (keplr["chainId"], keplr["rpc"], keplr["rest"]) == (
        CHAIN_ID,
        "http://127.0.0.1:26657",
        "http://127.0.0.1:1317",
    )
    assert keplr["bip44"] == {"coinType": 118}
    assert keplr["bech32Config"] == {
        "bech32PrefixAccAddr": "gonka",
        "bech32PrefixAccPub": "gonkapub",
        "bech32PrefixValAddr": "gonkavaloper",
        "bech32PrefixValPub": "gonkavaloperpub",
        "bech32PrefixConsAddr": "gonkavalcons",
        "bech32PrefixConsPub": "gonkavalconspub",
    }
    assert keplr["currencies"] == [gnk_currency]
    assert keplr["stakeCurrency"] == gnk_currency
    assert keplr["feeCurrencies"] == [{**gnk_currency, "gasPriceStep": {"low": 0.025, "average": 0.0625, "high": 0.1}}]


@pytest.mark.parametrize("api", [None, rest_api(1317, enable=False)], ids=["no-api-section", "api-disabled"])
def test_without_a_rest_api_there_is_no_rest_endpoint_and_no_keplr_file(tmp_path: Path, api: str | None) -> None:
    home = make_home(tmp_path / "node0", "node0", 26657, 9090, api, min_gas_prices="")
    files = chain_registry.chain_info([home])
    assert set(files) == {"chain.json", "assetlist.json"}
    validate(files["chain.json"], "chain.schema.json")
    validate(files["assetlist.json"], "assetlist.schema.json")
    assert set(files["chain.json"]["apis"]) == {"rpc", "grpc"}
    # No price set: the bond denom, free.
    assert files["chain.json"]["fees"]["fee_tokens"][0]["average_gas_price"] == 0
    with pytest.raises(ValueError, match="serves no REST API"):
        chain_registry.keplr_json(chain_registry.chain_facts(home), chain_registry.node_endpoints(home))


def test_the_schemas_refuse_what_the_registry_and_keplr_refuse(tmp_path: Path) -> None:
    """The schemas are live: a cosmos chain without its bech32 prefix, an asset without a type, a Keplr
    suggestion without its REST endpoint or with a fractional decimals count are refused."""
    files = chain_registry.chain_info([make_home(tmp_path / "n", "n", 26657, 9090, rest_api(1317))])
    broken: list[tuple[dict[str, Any], str]] = [
        ({k: v for k, v in files["chain.json"].items() if k != "bech32_prefix"}, "chain.schema.json"),
        ({**files["chain.json"], "network_type": "localnet"}, "chain.schema.json"),
        (
            {"chain_name": "gonkatest", "assets": [{**files["assetlist.json"]["assets"][0], "type_asset": "coin"}]},
            "assetlist.schema.json",
        ),
        ({k: v for k, v in files["keplr.json"].items() if k != "rest"}, "keplr-chain-info.schema.json"),
        (
            {
                **files["keplr.json"],
                "currencies": [{"coinDenom": "GNK", "coinMinimalDenom": "ngonka", "coinDecimals": 9.5}],
            },
            "keplr-chain-info.schema.json",
        ),
    ]
    for document, schema in broken:
        with pytest.raises(jsonschema.ValidationError):
            validate(document, schema)


def test_chain_info_prints_the_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = make_home(tmp_path / "node0", "node0", 26657, 9090, rest_api(1317))
    cli.main(["chain-info", "--home", str(home)])
    assert json.loads(capsys.readouterr().out) == chain_registry.chain_info([home])
    cli.main(["chain-info", "assetlist", "--home", str(home)])
    assert json.loads(capsys.readouterr().out)["assets"][0]["symbol"] == "GNK"
    cli.main(["chain-info", "keplr", "--home", str(home)])
    assert json.loads(capsys.readouterr().out)["rest"] == "http://127.0.0.1:1317"


def test_chain_info_keplr_without_rest_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = make_home(tmp_path / "node0", "node0", 26657, 9090, None)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["chain-info", "keplr", "--home", str(home)])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == "Error: node0 serves no REST API (app.toml [api]): Keplr needs one\n"


def test_the_localnet_writes_every_nodes_endpoints(tmp_path: Path) -> None:
    """``localnet status``'s files, from a localnet folder's layout (localnet.json and the nodes' homes): every
    node's endpoints; Keplr's file while a node serves REST, removed once none does."""
    nodes = []
    for i in range(2):
        home = make_home(tmp_path / f"node{i}", f"node{i}", 26657 + 10 * i, 9090 + 10 * i, rest_api(1317 + 10 * i))
        nodes.append(
            localnet.NodeSpec(
                name=f"node{i}",
                home=str(home),
                p2p_port=26656 + 10 * i,
                rpc_port=26657 + 10 * i,
                abci_port=26658 + 10 * i,
                grpc_port=9090 + 10 * i,
                node_id="00" * 20,
            )
        )
    (tmp_path / localnet.SPEC_FILE).write_text(localnet.LocalnetSpec(chain_id=CHAIN_ID, nodes=nodes).model_dump_json())

    written = localnet.write_chain_info(tmp_path)
    assert written == {name: str(tmp_path / name) for name in ("chain.json", "assetlist.json", "keplr.json")}
    chain = json.loads((tmp_path / "chain.json").read_text())
    validate(chain, "chain.schema.json")
    assert [e["address"] for e in chain["apis"]["rpc"]] == [f"http://127.0.0.1:{n.rpc_port}" for n in nodes]
    assert [e["address"] for e in chain["apis"]["rest"]] == ["http://127.0.0.1:1317", "http://127.0.0.1:1327"]
    assert json.loads((tmp_path / "keplr.json").read_text())["rpc"] == "http://127.0.0.1:26657"

    for node in nodes:  # the REST API switched off: the next status writes no Keplr file
        save_app_config(Path(node.home), AppConfig(grpc_address=f"127.0.0.1:{node.grpc_port}"))
    assert set(localnet.write_chain_info(tmp_path)) == {"chain.json", "assetlist.json"}
    assert not (tmp_path / "keplr.json").exists()
