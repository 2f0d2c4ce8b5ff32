"""No import cycles among the project's own files: every import between two files points one way.

A cycle means two files cannot be read, tested or moved apart, so the first of them to change drags the
other along. The graph has a node per file (a package is its ``__init__.py``) and an edge per import,
function-level ones included, since a lazy import is still a dependency; ``from a import b`` points at
``a/b.py`` when that file exists, at nothing when ``b`` is a native module (``sdk/store/_jmt``), else at
``a``. To see the test fail, add ``from x.bank import module`` to ``x/bank/keys.py``: it names the cycle.
``test_a_cycle_is_caught`` does the same on a scratch tree.
"""

from __future__ import annotations

from pathlib import Path

from test_layout import ROOT, imports_of

SKIPPED = ("tests", "bench", "proto", "protogen", "build")


def module_of(relative: Path) -> str:
    parts = relative.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def native(root: Path, module: str) -> bool:
    """Whether ``module`` is a compiled extension in the tree, which imports nothing of the project."""
    path = root.joinpath(*module.split("."))
    return any(path.parent.glob(path.name + ".*.so")) or path.with_suffix(".so").exists()


def import_graph(root: Path) -> dict[str, set[str]]:
    """File → the project files it imports, by dotted name."""
    files = {
        module_of(path.relative_to(root)): path
        for path in sorted(root.rglob("*.py"))
        if not path.relative_to(root).parts[0].startswith(".") and path.relative_to(root).parts[0] not in SKIPPED
    }
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for _, candidates in imports_of(path, package):
            if native(root, candidates[0]):
                continue
            target = next((c for c in candidates if c in files), None)
            if target is not None and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one file (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycles() -> None:
    assert cycles(import_graph(ROOT)) == []


def test_a_cycle_is_caught(tmp_path: Path) -> None:
    files = {
        "sdk/__init__.py": "",
        "sdk/a.py": "from sdk import b\n",
        "sdk/b.py": "def f():\n    from sdk.c import g\n",
        "sdk/c.py": "import sdk.a\n",
        "sdk/d.py": "from sdk.a import f\n",
        "x/__init__.py": "",
        "x/bank/__init__.py": "from x.bank.keeper import Keeper\nfrom x.bank.codec import encode\n",
        "x/bank/keeper.py": "from x.bank import keys\n",
        "x/bank/keys.py": "",
        "x/bank/_native.abi3.so": "",
        "x/bank/codec.py": "from . import _native\n",
    }
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source)
    assert cycles(import_graph(tmp_path)) == [["sdk.a", "sdk.b", "sdk.c"]]
