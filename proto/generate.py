"""Compile ``proto/gonka/**/*.proto`` into the git-ignored ``protogen/gonka/`` (run by ``make install``).

The Cosmos protos ours import (and googleapis' ``google/api/annotations.proto``, the query services' REST
routes) are handed to protoc as the descriptors registered at run time (``--descriptor_set_in``), so the
generated code is compiled against exactly the types it will meet, with no vendored copies. protoc names each
dependency by its proto path (``gonka.…``, ``cosmos.…``); those imports are rewritten to where the modules live
here (``protogen.gonka.…``, ``cosmpy.protos.cosmos.…``).
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

from cosmpy.protos.cosmos.base.query.v1beta1 import pagination_pb2
from cosmpy.protos.cosmos.msg.v1 import msg_pb2
from cosmpy.protos.cosmos.slashing.v1beta1 import genesis_pb2 as slashing_genesis_pb2
from cosmpy.protos.cosmos.staking.v1beta1 import staking_pb2
from cosmpy.protos.cosmos.vesting.v1beta1 import vesting_pb2
from google.api import annotations_pb2
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FileDescriptor
from grpc_tools import protoc

PROTO_ROOT = Path(__file__).resolve().parent
OUTPUT = PROTO_ROOT.parent / "protogen"
PACKAGE = "protogen"
COSMOS_DEPENDENCIES = (
    pagination_pb2.DESCRIPTOR,
    msg_pb2.DESCRIPTOR,
    staking_pb2.DESCRIPTOR,
    slashing_genesis_pb2.DESCRIPTOR,
    vesting_pb2.DESCRIPTOR,
    annotations_pb2.DESCRIPTOR,  # the query services' google.api.http routes (the REST API, sdk/rest)
)
IMPORT = re.compile(r"^(from|import) (gonka|cosmos)\.", re.MULTILINE)
IMPORT_HOME = {"gonka": f"{PACKAGE}.gonka", "cosmos": "cosmpy.protos.cosmos"}


def descriptor_set(files: tuple[FileDescriptor, ...]) -> bytes:
    """The files and everything they import, dependencies first, as one FileDescriptorSet."""
    out = descriptor_pb2.FileDescriptorSet()
    seen: set[str] = set()

    def add(file: FileDescriptor) -> None:
        if file.name in seen:
            return
        seen.add(file.name)
        for dependency in file.dependencies:
            add(dependency)
        out.file.append(descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb))

    for file in files:
        add(file)
    return out.SerializeToString()


def rewrite_imports(text: str) -> str:
    text = IMPORT.sub(lambda m: f"{m[1]} {IMPORT_HOME[m[2]]}.", text)
    return text.replace("(DESCRIPTOR, 'gonka.", f"(DESCRIPTOR, '{PACKAGE}.gonka.")


def generate(output: Path) -> list[Path]:
    """Compile every proto into ``output/gonka`` (replaced whole), with an ``__init__.py`` in each package."""
    sources = sorted(PROTO_ROOT.glob("gonka/**/*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        staging = Path(tmp) / "out"
        staging.mkdir()
        dependencies = Path(tmp) / "cosmos.pb"
        dependencies.write_bytes(descriptor_set(COSMOS_DEPENDENCIES))
        code = protoc.main(
            [
                "grpc_tools.protoc",
                f"--proto_path={PROTO_ROOT}",
                f"--descriptor_set_in={dependencies}",
                f"--python_out={staging}",
                f"--pyi_out={staging}",
                *map(str, sources),
            ]
        )
        if code != 0:
            raise SystemExit(f"protoc failed with exit code {code}")
        generated = sorted(p for p in staging.rglob("*") if p.suffix in (".py", ".pyi"))
        for path in generated:
            path.write_text(rewrite_imports(path.read_text()))
        for folder in [staging, *(p for p in staging.rglob("*") if p.is_dir())]:
            (folder / "__init__.py").touch()
        shutil.rmtree(output / "gonka", ignore_errors=True)  # protogen/__init__.py is committed: pip maps it
        shutil.copytree(staging / "gonka", output / "gonka")
    return [output / p.relative_to(staging) for p in generated]


if __name__ == "__main__":
    print(f"generated {len(generate(OUTPUT))} files in {OUTPUT.relative_to(PROTO_ROOT.parent)}", file=sys.stderr)
