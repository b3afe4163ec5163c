"""Each module registers its commands on :data:`kg.cli.app.app` when imported."""

from kg.cli.commands import distill, knowledge, server

__all__ = ["distill", "knowledge", "server"]
