"""Each module registers its commands on :data:`kg.cli.app.app` when imported."""

from kg.cli.commands import knowledge, server, surfaces

__all__ = ["knowledge", "server", "surfaces"]
