"""The code's shape in numbers: import cycles among the project's files and its longest functions.

``.venv/bin/python bench/code_shape.py [--root DIR] [--top N]``: the cycles (``tests/test_import_cycles.py``
holds them at zero) and the N longest functions outside ``tests/`` (lines from ``def`` to the last line of the
body, docstring included), so a tree before and after a change can be compared under the same formatter.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_import_cycles import cycles, import_graph  # noqa: E402

SKIPPED = ("tests", "protogen", "proto", "build", "native")


def function_lengths(root: Path) -> list[tuple[int, str]]:
    """(lines, ``path:line name``) of every function and method outside the tests, longest first."""
    rows = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0].startswith(".") or relative.parts[0] in SKIPPED:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                rows.append((node.end_lineno - node.lineno + 1, f"{relative}:{node.lineno} {node.name}"))
    return sorted(rows, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    found = cycles(import_graph(args.root))
    print(f"import cycles: {len(found)}")
    for cycle in found:
        print("  " + " <-> ".join(cycle))
    lengths = function_lengths(args.root)
    outside_bench = [row for row in lengths if not row[1].startswith("bench/")]
    print(f"functions: {len(lengths)}; over 50 lines: {sum(n > 50 for n, _ in lengths)}")
    print("longest outside bench/:")
    for lines, where in outside_bench[: args.top]:
        print(f"  {lines:4d}  {where}")


if __name__ == "__main__":
    main()
