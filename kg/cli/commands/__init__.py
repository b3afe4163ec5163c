"""Each module registers its commands on :data:`kg.cli.app.app` when imported."""

<<<<<<< HEAD
from kg.cli.commands import bench_ingest, knowledge, server

__all__ = ["bench_ingest", "knowledge", "server"]
=======
from kg.cli.commands import knowledge, server, surfaces

__all__ = ["knowledge", "server", "surfaces"]
>>>>>>> surfaces
