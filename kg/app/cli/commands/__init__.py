"""Each module registers its commands on :data:`kg.app.cli.app.app` when imported."""

from kg.app.cli.commands import (
    ask,
    bench,
    bench_ingest,
    distill,
    evaluate,
    knowledge,
    llm,
    mcp,
    retrieve,
    server,
    surfaces,
)

__all__ = ["ask", "bench", "bench_ingest", "distill", "evaluate", "knowledge", "llm", "mcp", "retrieve", "server",
           "surfaces"]
