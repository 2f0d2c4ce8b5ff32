"""A module's gRPC service paths, built from its package name, so that no file spells them by hand.

``gonka("inference").query + "Inference"`` is ``/gonka.inference.v1.Query/Inference``: the path a query is
routed by (ABCI ``Query``, gRPC). Modules that serve a Cosmos SDK service shape use ``cosmos("bank")``
(``/cosmos.bank.v1beta1.Query/``) so wallets and explorers find them where they expect. Messages need no
prefix: they are routed by their type URLs, read from their descriptors (``sdk.module.type_url``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Services:
    """The protobuf package a module's services live in (``gonka.inference.v1``)."""

    package: str

    @property
    def query(self) -> str:
        """The prefix of every query path: ``/<package>.Query/``."""
        return f"/{self.package}.Query/"


def gonka(module: str) -> Services:
    """One of Gonka's own modules: ``gonka.<module>.v1``."""
    return Services(f"gonka.{module}.v1")


def cosmos(module: str, version: str = "v1beta1") -> Services:
    """A module that serves the Cosmos SDK's shape: ``cosmos.<module>.<version>``."""
    return Services(f"cosmos.{module}.{version}")
