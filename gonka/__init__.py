"""The Gonka client SDK: the official ``openai`` client over Transfer Agents, every request signed, TAs
discovered and failed over with the same inference id (``gonka/README.md``)."""

from gonka.client import Gonka
from gonka.transport import TransferAgent

__all__ = ["Gonka", "TransferAgent"]
