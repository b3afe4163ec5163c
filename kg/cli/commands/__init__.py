"""Each module registers its commands on :data:`kg.cli.app.app` when imported."""

from kg.cli.commands import knowledge, retrieve, server

__all__ = ["knowledge", "retrieve", "server"]
