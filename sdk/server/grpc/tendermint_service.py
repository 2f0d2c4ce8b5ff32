"""cosmos.base.tendermint.v1beta1.Service: node info and blocks, converted from CometBFT's RPC JSON.

CometBFT's JSON writes hashes and addresses as hex and other bytes as base64; after turning the hex
fields into base64 (and one renamed field) the JSON parses straight into the tendermint protobuf types.
"""

from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING, Any, TypeVar

from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2, types_pb2 as sdk_types
from cosmpy.protos.tendermint.abci import types_pb2 as abci
from cosmpy.protos.tendermint.p2p import types_pb2 as p2p
from cosmpy.protos.tendermint.types import block_pb2, types_pb2 as tm_types
from google.protobuf import json_format

from sdk.baseapp import BaseApp
from sdk.crypto import bech32
from sdk.errors import ErrInvalidRequest
from sdk.client.rpc import CometRPC

if TYPE_CHECKING:
    from sdk.server.grpc.server import Methods

APP_NAME = "gonkad"
VALCONS_PREFIX = bech32.ACCOUNT_PREFIX + "valcons"
_HEX_FIELDS = frozenset({
    "hash", "last_commit_hash", "data_hash", "validators_hash", "next_validators_hash", "consensus_hash",
    "app_hash", "last_results_hash", "evidence_hash", "proposer_address", "validator_address",
})
_RENAMED = {"parts": "part_set_header"}

BlockResponse = TypeVar("BlockResponse", query_pb2.GetLatestBlockResponse, query_pb2.GetBlockByHeightResponse)


def _proto_json(value: Any) -> Any:
    """CometBFT's JSON as protobuf JSON: hex fields to base64, ``parts`` to ``part_set_header``."""
    if isinstance(value, dict):
        return {
            _RENAMED.get(k, k): base64.b64encode(bytes.fromhex(v)).decode() if k in _HEX_FIELDS and isinstance(v, str)
            else _proto_json(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_proto_json(v) for v in value]
    return value


def sdk_block_of(block: block_pb2.Block) -> sdk_types.Block:
    """The SDK's block type differs only in the proposer, which it shows as a bech32 consensus address."""
    header = tm_types.Header()
    header.CopyFrom(block.header)
    header.ClearField("proposer_address")
    sdk_header = sdk_types.Header.FromString(header.SerializeToString())  # same field numbers
    sdk_header.proposer_address = bech32.encode(block.header.proposer_address, VALCONS_PREFIX)
    return sdk_types.Block(header=sdk_header, data=block.data, evidence=block.evidence, last_commit=block.last_commit)


def block_response(response_type: type[BlockResponse], result: dict[str, Any]) -> BlockResponse:
    """From CometBFT's ``/block`` result. Evidence is left out: CometBFT writes it as amino JSON."""
    block_json = {k: v for k, v in result["block"].items() if k != "evidence"}
    block = json_format.ParseDict(_proto_json(block_json), block_pb2.Block())
    block_id = json_format.ParseDict(_proto_json(result["block_id"]), tm_types.BlockID())
    return response_type(block_id=block_id, block=block, sdk_block=sdk_block_of(block))


class TendermintService:
    NAME = "cosmos.base.tendermint.v1beta1.Service"

    def __init__(self, app: BaseApp, rpc: CometRPC) -> None:
        self.app = app
        self.rpc = rpc

    def methods(self) -> Methods:
        return {
            "GetNodeInfo": (query_pb2.GetNodeInfoRequest, self.get_node_info),
            "GetLatestBlock": (query_pb2.GetLatestBlockRequest, self.get_latest_block),
            "GetBlockByHeight": (query_pb2.GetBlockByHeightRequest, self.get_block_by_height),
        }

    async def get_node_info(self, req: query_pb2.GetNodeInfoRequest) -> query_pb2.GetNodeInfoResponse:
        info = (await asyncio.to_thread(self.rpc.status))["node_info"]
        protocol = info["protocol_version"]
        node_info = p2p.DefaultNodeInfo(
            protocol_version=p2p.ProtocolVersion(
                p2p=int(protocol["p2p"]), block=int(protocol["block"]), app=int(protocol["app"])
            ),
            default_node_id=info["id"],
            listen_addr=info["listen_addr"],
            network=info["network"],
            version=info["version"],
            channels=bytes.fromhex(info["channels"]),
            moniker=info["moniker"],
            other=p2p.DefaultNodeInfoOther(
                tx_index=info["other"]["tx_index"], rpc_address=info["other"]["rpc_address"]
            ),
        )
        version = query_pb2.VersionInfo(
            name=self.app.name, app_name=APP_NAME, version=self.app.info(abci.RequestInfo()).version
        )
        return query_pb2.GetNodeInfoResponse(default_node_info=node_info, application_version=version)

    async def get_latest_block(self, req: query_pb2.GetLatestBlockRequest) -> query_pb2.GetLatestBlockResponse:
        return block_response(query_pb2.GetLatestBlockResponse, await asyncio.to_thread(self.rpc.call, "block"))

    async def get_block_by_height(
        self, req: query_pb2.GetBlockByHeightRequest
    ) -> query_pb2.GetBlockByHeightResponse:
        latest = self.app.store.version
        if not 1 <= req.height <= latest:
            raise ErrInvalidRequest.wrap(f"height {req.height} is not a committed block; latest is {latest}")
        result = await asyncio.to_thread(self.rpc.block, req.height)
        return block_response(query_pb2.GetBlockByHeightResponse, result)
