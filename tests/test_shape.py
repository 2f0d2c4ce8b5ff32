"""Every module under ``x/`` has one file shape, so a reader who knows one module finds their way in any other.

``keys.py`` (``MODULE_NAME``, ``STORE_PREFIX``, the key builders) and ``README.md`` (the spec) always; where
the concern exists: ``errors.py`` (the only file that registers errors), ``params.py`` (beside a
``MsgUpdateParams``), ``genesis.py`` (default, import and export of the genesis state), ``msg_server.py`` (the
message routes and handlers), ``query_server.py`` (the query routes and handlers) and ``metrics.py`` (its figures
for the node's metrics). ``module.py`` only wires: its genesis methods delegate to ``genesis``, its route methods
to ``msg_server`` and ``query_server``, ``metrics`` to ``metrics``, and it defines no handler. No file in ``x/``
spells a query service prefix (``"/gonka.bank.v1.Query/"``): paths are built with ``sdk/services.py``.

Files are read with ``ast``, never imported. To see the test fail, add ``def query_balance(self): ...`` to
``BankModule`` in ``x/bank/module.py`` (or ``QUERY = "/cosmos.bank.v1beta1.Query/"`` to ``x/bank/cli.py``) and
run ``pytest tests/test_shape.py``: it names the module and the rule. ``test_a_bad_shape_is_caught`` does the
same on a scratch tree.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DELEGATES = {
    "default_genesis": "genesis",
    "init_genesis": "genesis",
    "export_genesis": "genesis",
    "msg_routes": "msg_server",
    "query_routes": "query_server",
    "metrics": "metrics",
}
"""A module.py method and the sibling module its one statement must call into."""


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _delegates(statement: ast.stmt, file: str) -> bool:
    """Whether the statement returns (or makes) one call into the sibling module ``file``: ``genesis.f(...)``,
    ``query_server.QueryServer(k).routes()``, or such a call wrapped in one converting call
    (``message_dict(genesis.export_genesis(ctx, k))``)."""
    value = statement.value if isinstance(statement, (ast.Return, ast.Expr)) else None
    while isinstance(value, ast.Call):
        root: ast.expr = value.func
        while isinstance(root, (ast.Attribute, ast.Call)):
            root = root.value if isinstance(root, ast.Attribute) else root.func
        if isinstance(root, ast.Name) and root.id == file:
            return True
        value = value.args[0] if len(value.args) == 1 else None
    return False


def _body(function: ast.FunctionDef) -> list[ast.stmt]:
    """The statements of a function, its docstring left out."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:]
    return body


def _module_py(module: Path) -> list[str]:
    """What module.py does beyond wiring: handlers it defines, genesis or route methods that do not delegate."""
    out = []
    for node in ast.walk(_parse(module / "module.py")):
        if not isinstance(node, ast.FunctionDef):
            continue
        if node.name.startswith(("query_", "handle_")) and node.name not in DELEGATES:
            out.append(f"{module.name}/module.py defines handler {node.name} (query_server.py or msg_server.py)")
        file = DELEGATES.get(node.name)
        body = _body(node)
        if file and not (len(body) == 1 and _delegates(body[0], file)):
            out.append(f"{module.name}/module.py {node.name} does more than delegate to {file}.py")
    return out


def _files(module: Path) -> list[str]:
    """The concern files a module lacks, and errors registered outside errors.py."""
    present = {path.name for path in module.iterdir()}
    methods = {node.name for node in ast.walk(_parse(module / "module.py")) if isinstance(node, ast.FunctionDef)}
    needed = {"keys.py", "README.md"}
    needed |= {f"{DELEGATES[name]}.py" for name in methods & DELEGATES.keys()}
    sources = {path: path.read_text() for path in module.glob("*.py")}
    if any("MsgUpdateParams" in text for text in sources.values()):
        needed.add("params.py")
    out = [f"{module.name} has no {name}" for name in sorted(needed - present)]
    for path, text in sorted(sources.items()):
        registers = [
            node
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "register"
        ]
        if registers and path.name != "errors.py":
            out.append(f"{module.name}/{path.name} registers errors (errors.py)")
    if "keys.py" in present:
        names = {
            target.id
            for node in ast.walk(_parse(module / "keys.py"))
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        out += [
            f"{module.name}/keys.py does not define {name}"
            for name in ("MODULE_NAME", "STORE_PREFIX")
            if name not in names
        ]
    return out


def _query_prefixes(module: Path) -> list[str]:
    """Query service prefixes spelled as string literals, its client library included."""
    out = []
    for path in sorted(module.rglob("*.py")):
        for node in ast.walk(_parse(path)):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.startswith(("/gonka.", "/cosmos."))
                and node.value.endswith(".Query/")
            ):
                out.append(f"{path.relative_to(module.parent)}:{node.lineno} spells {node.value!r} (sdk/services.py)")
    return out


def violations(root: Path) -> list[str]:
    out = []
    for module in sorted(path.parent for path in (root / "x").glob("*/module.py")):
        out += _module_py(module) + _files(module) + _query_prefixes(module)
    return out


def test_every_module_has_the_shape() -> None:
    assert violations(ROOT) == []


def test_a_bad_shape_is_caught(tmp_path: Path) -> None:
    good = {
        "module.py": "class M:\n    def init_genesis(self, ctx, state):\n        '''Why.'''\n"
        "        genesis.init_genesis(ctx, self.keeper, state)\n"
        "    def query_routes(self):\n        return query_server.QueryServer(self.keeper).routes()\n",
        "genesis.py": "",
        "query_server.py": "",
        "README.md": "",
        "keys.py": "MODULE_NAME = 'good'\nSTORE_PREFIX = b'good/'\n",
    }
    bad = {
        "module.py": "QUERY = '/cosmos.bad.v1beta1.Query/'\nclass M:\n"
        "    def export_genesis(self, ctx):\n        return {}\n"
        "    def msg_routes(self):\n        return {'/x': route(msg_server.handle)}\n"
        "    def query_balance(self, ctx, req):\n        return req\n",
        "keeper.py": "from sdk.errors import register\nErrBad = register('bad', 2, 'bad')\n"
        "PARAMS = 'MsgUpdateParams'\n",
        "keys.py": "MODULE_NAME = 'bad'\n",
    }
    for module, files in (("good", good), ("bad", bad)):
        for name, text in files.items():
            (tmp_path / "x" / module / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "x" / module / name).write_text(text)
    assert violations(tmp_path) == [
        "bad/module.py export_genesis does more than delegate to genesis.py",
        "bad/module.py msg_routes does more than delegate to msg_server.py",
        "bad/module.py defines handler query_balance (query_server.py or msg_server.py)",
        "bad has no README.md",
        "bad has no genesis.py",
        "bad has no msg_server.py",
        "bad has no params.py",
        "bad/keeper.py registers errors (errors.py)",
        "bad/keys.py does not define STORE_PREFIX",
        "bad/module.py:1 spells '/cosmos.bad.v1beta1.Query/' (sdk/services.py)",
    ]
