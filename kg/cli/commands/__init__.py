"""Each module registers its commands on :data:`kg.cli.app.app` when imported."""

from kg.cli.commands import bench, distill, knowledge, server

__all__ = ["bench", "distill", "knowledge", "server"]
