"""Decimals as exact fractions: params such as a slash fraction or a power share are decimal text, and
every computation with them is integer arithmetic on their exact value (no floats in state transitions).

The text form is the Cosmos SDK's ``LegacyDec``: ASCII digits with at most 18 decimal places. Its proto
form (``cosmos.slashing.v1beta1.Params``' bytes fields) is the integer ``value × 10^18`` as ASCII digits.
"""

from __future__ import annotations

import re
from fractions import Fraction

PRECISION = 18
DEC_RE = re.compile(rf"^([0-9]{{1,30}})(?:\.([0-9]{{1,{PRECISION}}}))?\Z")
"""Ends in \\Z: Python's $ would also take the text with a newline after it."""


def parse_dec(text: str, what: str) -> Fraction:
    """The exact value of decimal text; ValueError naming ``what`` if it is not one."""
    match = DEC_RE.match(text)
    if match is None:
        raise ValueError(f"{what} {text!r} is not a decimal (digits, at most {PRECISION} decimal places)")
    whole, frac = match[1], match[2] or ""
    return Fraction(int(whole + frac), 10 ** len(frac))


def parse_share(text: str, what: str, allow_zero: bool = True) -> Fraction:
    """A decimal in [0, 1] (or (0, 1] when ``allow_zero`` is off)."""
    value = parse_dec(text, what)
    if value > 1 or (value == 0 and not allow_zero):
        raise ValueError(f"{what} {text!r} must be in {'[' if allow_zero else '('}0, 1]")
    return value


def mul_floor(amount: int, share: Fraction) -> int:
    """``amount × share`` rounded down: what a slash takes, what a share of weight is."""
    return amount * share.numerator // share.denominator


def legacy_dec_text(value: Fraction) -> str:
    """The SDK's LegacyDec text (18 decimal places), rounded down, e.g. ``0.050000000000000000``."""
    scaled = mul_floor(10**PRECISION, value)
    return f"{scaled // 10**PRECISION}.{scaled % 10**PRECISION:0{PRECISION}d}"


def legacy_dec_bytes(value: Fraction) -> bytes:
    """The SDK's LegacyDec as its proto bytes: ``value × 10^18`` in ASCII digits."""
    return str(mul_floor(10**PRECISION, value)).encode()


def legacy_dec_wire_text(wire: str) -> str:
    """A LegacyDec's proto form (``value × 10^18`` in ASCII digits, signed) as the SDK prints the value, e.g.
    ``500000000000000000`` → ``0.500000000000000000``; text that is not that form is returned as it is, so what a
    node sent is never hidden."""
    if re.fullmatch(r"-?[0-9]+", wire) is None:
        return wire
    scaled = int(wire)
    whole, frac = divmod(abs(scaled), 10**PRECISION)
    return f"{'-' if scaled < 0 else ''}{whole}.{frac:0{PRECISION}d}"
