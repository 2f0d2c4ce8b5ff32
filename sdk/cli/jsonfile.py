"""The one reader of the JSON files commands are given (proposals, params, genesis files, gentxs): whatever
is in the file, the answer is the document or a one-line ValueError naming the file, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays and objects accepted, as protobuf's JSON parser: no command's file needs more,
and what reads a document (``copy.deepcopy``, ``json_format.ParseDict``) recurses once or more per level,
so a deeper one would end in a RecursionError far from the file."""


def nesting_depth(value: Any) -> int:
    """How deep arrays and objects nest in a parsed document (a scalar: 0), level by level, without recursion."""
    depth, level = 0, [value]
    while True:
        containers = [v for v in level if isinstance(v, (dict, list))]
        if not containers:
            return depth
        depth += 1
        level = [item for c in containers for item in (c.values() if isinstance(c, dict) else c)]


def read_json_file(path: str | Path) -> Any:
    """The JSON document in ``path``. ValueError (one line, naming the file) when it is not UTF-8, not JSON or
    nested deeper than ``MAX_JSON_DEPTH``; OSError when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    too_deep = ValueError(f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        document = json.loads(text)
    except RecursionError:  # the decoder recurses per level: far too deep
        raise too_deep from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    if nesting_depth(document) > MAX_JSON_DEPTH:
        raise too_deep
    return document


def read_json_object(path: str | Path) -> dict[str, Any]:
    """``read_json_file`` for a file that must hold one JSON object (a genesis, params, a gentx): anything
    else is a one-line ValueError here rather than an AttributeError wherever its first field is read."""
    document = read_json_file(path)
    if not isinstance(document, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(document).__name__}")
    return document
