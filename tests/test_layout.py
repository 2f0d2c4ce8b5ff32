"""The layers import one way only: framework (``sdk/``) → modules (``x/``) → wiring (``app.py``) → binary
(``gonkad/``); ``mlnode/`` stands alone; ``diloco/`` uses ``mlnode`` and the client library; ``agent/`` (the
Transfer Agent) and ``host/`` (a host's program: its executor proxy, its finisher) stand on the client library
and what both serve with (``sdk.http``) alone: they reach the chain through the client library and ML nodes over
HTTP, never through ``app.py``, a module's keeper or ``mlnode``, and neither imports the other; ``gonka/`` (the
client SDK) stands on the client library alone too. A module's client library (``x/<module>/client.py`` or
``client/``) imports the framework, generated protos, itself and its module's ``keys``, ``errors`` and ``types``
only: never its keeper, its servers or its ``module.py`` (it finds services by name, ``sdk.services``).

Every import in the project's code is read (with ``ast``, function-level and relative ones included) and
checked against ``ALLOWED``. To see the test fail, add ``import app`` to ``sdk/errors.py`` (or
``from x.bank import keys`` to ``x/stake/keeper.py``) and run ``pytest tests/test_layout.py``: it names the
file and the import. ``test_a_bad_import_is_caught`` does the same on a scratch tree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("sdk", "x", "app", "gonkad", "gonka", "mlnode", "diloco", "agent", "host", "protogen")
"""Top-level names that are this project's own; anything else is a third-party or standard import."""
CLIENT_LIBRARY = (
    r"sdk\.client(\..*)?",
    r"sdk\.crypto(\..*)?",
    r"sdk\.keyring(\..*)?",
    r"sdk\.coins(\..*)?",
    r"sdk\.services(\..*)?",
    r"x\.\w+\.client(\..*)?",
    r"protogen(\..*)?",
)
SERVING = (*CLIENT_LIBRARY, r"sdk\.http(\..*)?")
"""What the TA and the host may import besides their own package: the client library and ``sdk.http``."""
CLIENT_OWN = ("keys", "errors", "types")
"""What of its own module a module's client library may import (besides itself)."""


def allowed(layer: str, module: str) -> bool:
    """Whether code in ``layer`` (see ``layer_of``) may import the project module ``module``."""
    top = module.split(".")[0]
    if layer == "sdk":
        return top == "sdk"
    if layer.startswith("x.") and layer.endswith(".client"):  # the framework, itself, its module's keys/errors/types
        own = layer.rsplit(".", 1)[0]
        return (
            top in ("sdk", "protogen")
            or module == layer
            or module.startswith(layer + ".")
            or any(module == f"{own}.{part}" or module.startswith(f"{own}.{part}.") for part in CLIENT_OWN)
        )
    if layer.startswith("x."):  # its own module, the framework and generated protos; other modules only
        return top in ("sdk", "protogen") or module == layer or module.startswith(layer + ".")  # via protocols
    if layer == "app":
        return top in ("sdk", "x", "protogen")
    if layer == "mlnode":
        return top == "mlnode"
    if layer == "diloco":
        return top in ("diloco", "mlnode") or any(re.fullmatch(p, module) for p in CLIENT_LIBRARY)
    if layer in ("agent", "host"):
        return top == layer or any(re.fullmatch(p, module) for p in SERVING)
    if layer == "gonka":
        return top == layer or any(re.fullmatch(p, module) for p in CLIENT_LIBRARY)
    return True  # gonkad, the binary, stands on everything; generated code is not checked


def layer_of(relative: Path) -> str | None:
    parts = relative.with_suffix("").parts
    if parts[0] == "x" and len(parts) > 2:
        return f"x.{parts[1]}.client" if parts[2] == "client" else f"x.{parts[1]}"
    if parts[0] in ("sdk", "app", "gonkad", "gonka", "mlnode", "diloco", "agent", "host"):
        return parts[0]
    return None  # tests, benchmarks, tools and generated code may import anything


def imports_of(path: Path, package: str) -> list[tuple[int, tuple[str, ...]]]:
    """Every project import in the file: its line and what it may name, relative imports resolved.

    ``from a.b import c`` may name the module ``a.b.c`` or an attribute of ``a.b``: both are given, the
    module first, and the import is allowed if either is.
    """
    found: list[tuple[int, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, (alias.name,)) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found += [(node.lineno, (f"{base}.{alias.name}", base)) for alias in node.names]
    return [(line, names) for line, names in found if names[0].split(".")[0] in PROJECT]


def violations(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0].startswith(".") or relative.parts[0] in ("tests", "bench", "proto", "protogen"):
            continue
        layer = layer_of(relative)
        if layer is None:
            continue
        package = (
            ".".join(relative.with_suffix("").parts[:-1])
            if path.name != "__init__.py"
            else ".".join(relative.parts[:-1])
        )
        for line, names in imports_of(path, package):
            if not any(allowed(layer, name) for name in names):
                out.append(f"{relative}:{line} imports {names[0]} ({layer} may not)")
    return out


def test_imports_go_one_way() -> None:
    assert violations(ROOT) == []


def test_a_bad_import_is_caught(tmp_path: Path) -> None:
    cases = {
        "sdk/errors.py": ("import app\n", "sdk/errors.py:1 imports app (sdk may not)"),
        "sdk/abci/server.py": (
            "from ...x.bank import keys\n",
            "sdk/abci/server.py:1 imports x.bank.keys (sdk may not)",
        ),
        "sdk/store/cachekv.py": (
            "from gonkad.localnet import start\n",
            "sdk/store/cachekv.py:1 imports gonkad.localnet.start (sdk may not)",
        ),
        "x/stake/keeper.py": ("from x.bank import keys\n", "x/stake/keeper.py:1 imports x.bank.keys (x.stake may not)"),
        "x/stake/module.py": (
            "from . import keeper\nfrom .. import bank\n",
            "x/stake/module.py:2 imports x.bank (x.stake may not)",
        ),
        "mlnode/model.py": ("def f():\n    import sdk.tx\n", "mlnode/model.py:2 imports sdk.tx (mlnode may not)"),
        "diloco/chain.py": (
            "from sdk.client.tx import deliver\nfrom x.learning.keeper import K\n",
            "diloco/chain.py:2 imports x.learning.keeper.K (diloco may not)",
        ),
        "app.py": ("from gonkad import node\n", "app.py:1 imports gonkad.node (app may not)"),
        "agent/server.py": (
            "from sdk.client.signing import sign_document\nfrom sdk.crypto import bech32\n"
            "from x.inference.client import Q\nimport app\n",
            "agent/server.py:4 imports app (agent may not)",
        ),
        "agent/router.py": (
            "from x.inference.keeper import Keeper\n",
            "agent/router.py:1 imports x.inference.keeper.Keeper (agent may not)",
        ),
        "agent/chain.py": (
            "from mlnode import schemas\nfrom sdk.keyring import Keyring\nfrom protogen import x\n",
            "agent/chain.py:1 imports mlnode.schemas (agent may not)",
        ),
        "gonka/client.py": (
            "from sdk.client.signing import request_headers\nfrom gonka import transport\n"
            "from agent.chain import Node\n",
            "gonka/client.py:3 imports agent.chain.Node (gonka may not)",
        ),
        "x/inference/client.py": (
            "from x.inference.errors import E\nfrom agent.chain import ChainView\n",
            "x/inference/client.py:2 imports agent.chain.ChainView (x.inference.client may not)",
        ),
        "x/inference/keeper.py": (
            "from agent.chain import ChainError\n",
            "x/inference/keeper.py:1 imports agent.chain.ChainError (x.inference may not)",
        ),
        "x/stake/client/query.py": (
            "from x.stake.errors import E\nfrom x.stake.types import T\n"
            "from x.stake.client import q\nfrom x.stake.keeper import Keeper\n",
            "x/stake/client/query.py:4 imports x.stake.keeper.Keeper (x.stake.client may not)",
        ),
        "x/bls/client.py": (
            "from sdk.services import gonka\nfrom x.bls.query_server import QueryServer\n",
            "x/bls/client.py:2 imports x.bls.query_server.QueryServer (x.bls.client may not)",
        ),
        "host/proxy.py": (
            "from sdk.http.asgi import send_json\nfrom x.inference.client import Finish\n"
            "from host.config import C\nfrom agent.router import Router\n",
            "host/proxy.py:4 imports agent.router.Router (host may not)",
        ),
        "host/finisher.py": (
            "from x.inference.keeper import Keeper\n",
            "host/finisher.py:1 imports x.inference.keeper.Keeper (host may not)",
        ),
        "agent/view.py": (
            "from sdk.http.signed import Requester\nfrom host import Finisher\n",
            "agent/view.py:2 imports host.Finisher (agent may not)",
        ),
        "gonkad/cli.py": ("import app\nfrom x.bank import cli\n", None),
    }
    for name, (source, _) in cases.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source)
    expected = sorted(message for _, message in cases.values() if message)
    assert sorted(violations(tmp_path)) == expected
