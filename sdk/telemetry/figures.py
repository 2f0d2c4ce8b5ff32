"""What a module reports about itself (``Module.metrics``): named figures read from committed state.

Kept free of any metrics library so that a module's code imports only this small type.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One sample of a gauge: published as ``gonka_<module>_<name>``; every figure of one name carries the
    same label names (e.g. ``(("host", "gonka1…"),)``)."""

    name: str
    help: str
    value: int | float
    labels: tuple[tuple[str, str], ...] = ()
