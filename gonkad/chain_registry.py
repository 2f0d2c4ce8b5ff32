"""The chain as wallets and explorers look it up: cosmos/chain-registry's ``chain.json`` and ``assetlist.json``,
and Keplr's chain suggestion (``window.keplr.experimentalSuggestChain``'s argument), built from node homes.

Everything comes from what the nodes are: the chain id and the token's units from the genesis (x/bank's denom
metadata, the stake denom), the gas prices from app.toml's ``min_gas_prices``, the endpoints from config.toml's
``[rpc]``, app.toml's ``grpc_address`` and, where app.toml's ``[api]`` is enabled (the REST API), its address.
Keplr needs a REST endpoint: without one there is no suggestion. The prefixes, coin type and key algorithm are
the code's own (``sdk.crypto.bech32``, ``sdk.keyring``).
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from gonkad.config import config_dir, load_app_config, read_cometbft_config, split_address
from gonkad.genesis import default_app_state
from sdk.cli.flags import DEFAULT_HOME
from sdk.cli.jsonfile import read_json_object
from sdk.coins import parse_dec_coins
from sdk.crypto import bech32
from sdk.keyring.hd import COSMOS_COIN_TYPE
from x.stake.params import default_params as stake_default_params

CHAIN_FILE = "chain.json"
ASSETLIST_FILE = "assetlist.json"
KEPLR_FILE = "keplr.json"

GAS_PRICE_STEPS = (Fraction(1), Fraction(5, 2), Fraction(4))
"""low, average and high as multiples of the node's minimum gas price: Keplr's own defaults (0.01, 0.025, 0.04)
are in these ratios. The low price is the minimum, so every step is one the node accepts."""

COMETBFT_VERSION = "v0.38"
"""The CometBFT line the ABCI server speaks (``sdk/abci``)."""

LISTEN_EVERYWHERE = {"", "0.0.0.0", "[::]"}


@dataclass(frozen=True)
class NodeEndpoints:
    """Where one node answers: CometBFT RPC and gRPC always, the REST API when its app.toml enables one."""

    moniker: str
    rpc: str
    grpc: str
    rest: str | None


def _url(address: str) -> str:
    """``tcp://0.0.0.0:26657`` → ``http://127.0.0.1:26657``: a listener on every interface is reached on
    loopback from this machine."""
    host, port = split_address(address)
    return f"http://{'127.0.0.1' if host in LISTEN_EVERYWHERE else host}:{port}"


def node_endpoints(home: Path) -> NodeEndpoints:
    app = load_app_config(home)
    comet = read_cometbft_config(home)
    rest = _url(app.api.address) if app.api.enable else None
    grpc_host, grpc_port = split_address(app.grpc_address)
    return NodeEndpoints(
        moniker=str(comet.get("moniker", home.name)),
        rpc=_url(comet["rpc"]["laddr"]),
        grpc=f"{'127.0.0.1' if grpc_host in LISTEN_EVERYWHERE else grpc_host}:{grpc_port}",
        rest=rest,
    )


@dataclass(frozen=True)
class ChainFacts:
    """What a node's genesis and app.toml say of the chain."""

    chain_id: str
    denom_metadata: list[dict[str, Any]]
    bond_denom: str
    gas_prices: tuple[tuple[str, Fraction], ...]


def chain_facts(home: Path) -> ChainFacts:
    """From ``home``'s genesis.json: the chain id, x/bank's denom metadata (the project's default genesis' where
    the chain has none) and x/stake's bond denom; from its app.toml, the minimum gas prices (none priced: the
    bond denom at zero)."""
    genesis = read_json_object(config_dir(home) / "genesis.json")
    app_state = genesis.get("app_state") or {}
    metadata = app_state.get("bank", {}).get("denom_metadata") or default_app_state()["bank"]["denom_metadata"]
    bond_denom = app_state.get("stake", {}).get("params", {}).get("bond_denom") or stake_default_params().bond_denom
    prices = parse_dec_coins(load_app_config(home).min_gas_prices)
    return ChainFacts(
        chain_id=str(genesis["chain_id"]),
        denom_metadata=list(metadata),
        bond_denom=bond_denom,
        gas_prices=prices or ((bond_denom, Fraction(0)),),
    )


def chain_name(chain_id: str) -> str:
    """The registry's name of a chain (``[a-z0-9]+``): its id without the revision number, in lower-case letters
    and digits (``gonka-1`` → ``gonka``, ``gonka-localnet`` → ``gonkalocalnet``)."""
    return re.sub(r"[^a-z0-9]", "", re.sub(r"-[0-9]+$", "", chain_id.lower())) or "gonka"


def network_type(chain_id: str) -> str:
    lowered = chain_id.lower()
    if "localnet" in lowered or "devnet" in lowered:
        return "devnet"
    return "testnet" if "test" in lowered else "mainnet"


def _number(value: Fraction) -> int | float:
    """A price as a JSON number (the registry's and Keplr's type); output only, never state."""
    return int(value) if value.denominator == 1 else float(value)


def _price_steps(price: Fraction) -> tuple[int | float, ...]:
    return tuple(_number(price * step) for step in GAS_PRICE_STEPS)


def _display_exponent(metadata: dict[str, Any]) -> int:
    return int(next(u.get("exponent", 0) for u in metadata["denom_units"] if u["denom"] == metadata["display"]))


def _metadata(facts: ChainFacts, denom: str) -> dict[str, Any]:
    found = next((m for m in facts.denom_metadata if m["base"] == denom), None)
    if found is None:
        raise ValueError(f"the genesis describes no denom {denom!r} (x/bank denom_metadata)")
    return found


def _pretty_name(facts: ChainFacts) -> str:
    name = str(_metadata(facts, facts.bond_denom).get("name") or "Gonka")
    return name if network_type(facts.chain_id) == "mainnet" else f"{name} {facts.chain_id}"


def chain_json(facts: ChainFacts, nodes: list[NodeEndpoints]) -> dict[str, Any]:
    """cosmos/chain-registry's ``chain.json``."""
    version = "v" + importlib.metadata.version("gonka")
    apis: dict[str, list[dict[str, str]]] = {
        "rpc": [{"address": n.rpc, "provider": n.moniker} for n in nodes],
        "grpc": [{"address": n.grpc, "provider": n.moniker} for n in nodes],
    }
    rest = [{"address": n.rest, "provider": n.moniker} for n in nodes if n.rest]
    if rest:
        apis["rest"] = rest
    fee_tokens = []
    for denom, price in facts.gas_prices:
        low, average, high = _price_steps(price)
        fee_tokens.append(
            {
                "denom": denom,
                "fixed_min_gas_price": _number(price),
                "low_gas_price": low,
                "average_gas_price": average,
                "high_gas_price": high,
            }
        )
    return {
        "chain_name": chain_name(facts.chain_id),
        "chain_type": "cosmos",
        "chain_id": facts.chain_id,
        "pretty_name": _pretty_name(facts),
        "status": "live",
        "network_type": network_type(facts.chain_id),
        "bech32_prefix": bech32.ACCOUNT_PREFIX,
        "daemon_name": "gonkad",
        "node_home": "$HOME/" + DEFAULT_HOME.name,
        "key_algos": ["secp256k1"],
        "slip44": COSMOS_COIN_TYPE,
        "fees": {"fee_tokens": fee_tokens},
        "staking": {"staking_tokens": [{"denom": facts.bond_denom}]},
        "codebase": {
            "recommended_version": version,
            "compatible_versions": [version],
            "language": {"type": "other"},
            "sdk": {"type": "other"},
            "consensus": {"type": "cometbft", "version": COMETBFT_VERSION},
        },
        "apis": apis,
    }


def _denom_unit(unit: dict[str, Any]) -> dict[str, Any]:
    """x/bank's ``DenomUnit`` (proto3 JSON leaves a zero exponent out) as the registry's."""
    aliases = {"aliases": list(unit["aliases"])} if unit.get("aliases") else {}
    return {"denom": unit["denom"], "exponent": int(unit.get("exponent", 0)), **aliases}


def assetlist_json(facts: ChainFacts) -> dict[str, Any]:
    """cosmos/chain-registry's ``assetlist.json``: each denom the genesis describes, as x/bank describes it."""
    assets = []
    for metadata in facts.denom_metadata:
        asset: dict[str, Any] = {}
        if metadata.get("description"):
            asset["description"] = metadata["description"]
        asset["denom_units"] = [_denom_unit(u) for u in metadata["denom_units"]]
        asset.update(
            type_asset="sdk.coin",
            base=metadata["base"],
            name=metadata.get("name") or metadata["base"],
            display=metadata["display"],
            symbol=metadata.get("symbol") or metadata["display"].upper(),
        )
        assets.append(asset)
    return {"chain_name": chain_name(facts.chain_id), "assets": assets}


def _currency(metadata: dict[str, Any]) -> dict[str, Any]:
    return {
        "coinDenom": metadata.get("symbol") or metadata["display"].upper(),
        "coinMinimalDenom": metadata["base"],
        "coinDecimals": _display_exponent(metadata),
    }


def keplr_json(facts: ChainFacts, node: NodeEndpoints) -> dict[str, Any]:
    """Keplr's chain suggestion for ``node``'s endpoints; ValueError when the node serves no REST API."""
    if node.rest is None:
        raise ValueError(f"{node.moniker} serves no REST API (app.toml [api]): Keplr needs one")
    prefix = bech32.ACCOUNT_PREFIX
    fee_currencies = []
    for denom, price in facts.gas_prices:
        low, average, high = _price_steps(price)
        fee_currencies.append(
            {**_currency(_metadata(facts, denom)), "gasPriceStep": {"low": low, "average": average, "high": high}}
        )
    return {
        "chainId": facts.chain_id,
        "chainName": _pretty_name(facts),
        "rpc": node.rpc,
        "rest": node.rest,
        "bip44": {"coinType": COSMOS_COIN_TYPE},
        "bech32Config": {
            "bech32PrefixAccAddr": prefix,
            "bech32PrefixAccPub": prefix + "pub",
            "bech32PrefixValAddr": bech32.VALOPER_PREFIX,
            "bech32PrefixValPub": bech32.VALOPER_PREFIX + "pub",
            "bech32PrefixConsAddr": bech32.VALCONS_PREFIX,
            "bech32PrefixConsPub": bech32.VALCONS_PREFIX + "pub",
        },
        "currencies": [_currency(m) for m in facts.denom_metadata],
        "feeCurrencies": fee_currencies,
        "stakeCurrency": _currency(_metadata(facts, facts.bond_denom)),
    }


def chain_info(homes: list[Path]) -> dict[str, dict[str, Any]]:
    """The files for a network whose nodes live in ``homes`` (the first one's genesis and gas prices; every
    node's endpoints), by file name; Keplr's only where the first node serves a REST API."""
    facts = chain_facts(homes[0])
    nodes = [node_endpoints(home) for home in homes]
    files = {CHAIN_FILE: chain_json(facts, nodes), ASSETLIST_FILE: assetlist_json(facts)}
    if nodes[0].rest is not None:
        files[KEPLR_FILE] = keplr_json(facts, nodes[0])
    return files


def write_chain_info(folder: Path, files: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Each file under ``folder``; their paths by file name."""
    written = {}
    for name, content in files.items():
        path = folder / name
        path.write_text(json.dumps(content, indent=2) + "\n")
        written[name] = str(path)
    return written
