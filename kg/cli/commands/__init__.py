"""Each module registers its commands on :data:`kg.cli.app.app` when imported."""

from kg.cli.commands import ask, knowledge, server

__all__ = ["ask", "knowledge", "server"]
