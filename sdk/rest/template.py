"""``google.api.http`` path templates (``/cosmos/bank/v1beta1/balances/{address}``, ``{denom=**}``) as regexes.

The grammar is google/api/http.proto's: ``Template = "/" Segments [":" Verb]``, a segment being ``*``,
``**``, a literal or ``{field.path[=Segments]}``. A template matches a request's raw (still percent-encoded)
path, so that an escaped ``/`` inside a value (``%2F``) stays inside that value; each captured value is then
percent-decoded, as grpc-gateway does for the SDK.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote


@dataclass(frozen=True)
class PathTemplate:
    template: str
    pattern: re.Pattern[str]
    fields: tuple[str, ...]
    """The request field path each capture group fills, in group order."""
    literals: int
    """Literal segments: the more a template has, the more specific it is and the earlier it is tried."""

    def match(self, raw_path: str) -> dict[str, str] | None:
        """The field values ``raw_path`` gives, decoded; None if it does not match."""
        found = self.pattern.fullmatch(raw_path)
        if found is None:
            return None
        return {field: unquote(value) for field, value in zip(self.fields, found.groups(), strict=True)}


def _segment(segment: str) -> str:
    if segment == "*":
        return "[^/]+"
    if segment == "**":
        return ".+"
    if not segment or any(c in segment for c in "{}*=:"):
        raise ValueError(f"bad path segment {segment!r}")
    return re.escape(segment)


def parse_template(template: str) -> PathTemplate:
    """Compile ``template``; ValueError if it is not one."""
    if not template.startswith("/"):
        raise ValueError(f"path template {template!r} does not start with /")
    body, verb = template[1:], ""
    if ":" in body.rpartition("}")[2].rpartition("/")[2]:
        body, _, verb = body.rpartition(":")
    parts: list[str] = []
    fields: list[str] = []
    literals = 0
    for token in re.split(r"/(?![^{]*})", body):  # slashes inside {...} belong to the variable
        if token.startswith("{") and token.endswith("}"):
            field, _, inner = token[1:-1].partition("=")
            if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", field):
                raise ValueError(f"bad variable {token!r} in {template!r}")
            fields.append(field)
            parts.append("(" + "/".join(_segment(s) for s in (inner or "*").split("/")) + ")")
        else:
            literals += token not in ("*", "**")
            parts.append(_segment(token))
    pattern = "/" + "/".join(parts) + (":" + re.escape(verb) if verb else "")
    return PathTemplate(template, re.compile(pattern), tuple(fields), literals)
