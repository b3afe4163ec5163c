"""Each module registers its commands on :data:`kg.cli.app.app` when imported."""

from kg.cli.commands import bench_ingest, knowledge, server, surfaces

__all__ = ["bench_ingest", "knowledge", "server", "surfaces"]
