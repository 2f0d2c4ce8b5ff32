"""Folded stacks to an SVG flame graph, and Go pprof profiles to folded stacks.

py-spy draws its own SVGs; CometBFT is Go, profiled through its ``pprof_laddr`` endpoint. ``go tool pprof
-traces`` prints each sampled stack with its time; this module folds them (``root;...;leaf weight``) and draws
the same kind of picture py-spy does, so both processes of a node can be read side by side.

    .venv/bin/python bench/flamegraph.py cometbft.pprof cometbft.svg --title "cometbft"
"""

from __future__ import annotations

import argparse
import html
import re
import subprocess
from collections import Counter
from pathlib import Path

WIDTH = 1200
ROW = 16
FONT = 11
MIN_WIDTH = 0.5  # px: narrower frames are left out, as flamegraph.pl does
_TIME = re.compile(r"^\s*([\d.]+)(ns|us|µs|ms|s)\s+(\S.*)$")
_SCALE = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}


def fold_pprof_traces(text: str) -> Counter[str]:
    """``go tool pprof -traces`` output to folded stacks weighted in microseconds (root first)."""
    folded: Counter[str] = Counter()
    frames: list[str] = []
    weight = 0.0
    for line in text.splitlines():
        if line.startswith("-----------+"):
            if frames:
                folded[";".join(reversed(frames))] += round(weight)
            frames, weight = [], 0.0
            continue
        match = _TIME.match(line)
        if match:
            weight = float(match.group(1)) * _SCALE[match.group(2)]
            frames.append(match.group(3).strip())
        elif line.startswith(" " * 11) and line.strip() and frames:
            frames.append(line.strip())
    if frames:
        folded[";".join(reversed(frames))] += round(weight)
    return folded


def _tree(folded: Counter[str]) -> dict:
    root: dict = {"name": "all", "value": 0, "children": {}}
    for stack, weight in folded.items():
        root["value"] += weight
        node = root
        for frame in stack.split(";"):
            child = node["children"].setdefault(frame, {"name": frame, "value": 0, "children": {}})
            child["value"] += weight
            node = child
    return root


def _color(name: str) -> str:
    h = sum(name.encode()) % 60
    return f"rgb({200 + h // 2},{90 + h},{50 + h // 3})"


def render_svg(folded: Counter[str], title: str) -> str:
    """A flame graph: the root at the bottom, each frame as wide as its share of the samples."""
    root = _tree(folded)
    total = root["value"] or 1
    depth_max = 0
    rects: list[str] = []

    def draw(node: dict, x: float, depth: int) -> None:
        nonlocal depth_max
        width = node["value"] / total * WIDTH
        if width < MIN_WIDTH:
            return
        depth_max = max(depth_max, depth)
        rects.append((x, depth, width, node["name"], node["value"]))  # type: ignore[arg-type]
        offset = x
        for child in sorted(node["children"].values(), key=lambda c: c["name"]):
            draw(child, offset, depth + 1)
            offset += child["value"] / total * WIDTH

    draw(root, 0.0, 0)
    height = (depth_max + 1) * ROW + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="monospace"'
        f' font-size="{FONT}">',
        f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="14">{html.escape(title)}</text>',
    ]
    for x, depth, width, name, value in rects:  # type: ignore[misc]
        y = height - (depth + 1) * ROW
        label = html.escape(name)
        share = 100.0 * value / total
        chars = int(width / (FONT * 0.6))
        text = label if len(name) <= chars else (html.escape(name[: max(chars - 2, 0)]) + ".." if chars > 3 else "")
        out.append(
            f'<g><title>{label} ({share:.2f}%)</title><rect x="{x:.2f}" y="{y}" width="{width:.2f}"'
            f' height="{ROW - 1}" fill="{_color(name)}"/><text x="{x + 2:.2f}" y="{y + ROW - 4}">{text}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out)


def pprof_to_svg(profile: Path, svg: Path, title: str, go: str = "go") -> Counter[str]:
    """Render a CPU profile fetched from a Go program's pprof endpoint; returns its folded stacks."""
    traces = subprocess.run([go, "tool", "pprof", "-traces", str(profile)], capture_output=True, text=True, check=True)
    folded = fold_pprof_traces(traces.stdout)
    svg.write_text(render_svg(folded, title))
    return folded


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", type=Path)
    ap.add_argument("svg", type=Path)
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    pprof_to_svg(args.profile, args.svg, args.title or args.profile.name)


if __name__ == "__main__":
    main()
