"""The ``strata`` command line. Configuration is read here, once, and passed down.

Exit codes: 0 success; 1 some input failed (the rest was done); 2 usage error; 3 configuration error;
4 Neo4j unavailable or not provisionable; 5 LLM failure or budget stop; 6 any other Strata error (among them
a query Neo4j rejected: the server answers, so that is not exit 4).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

from rich.markup import escape

from kg.app.cli.app import app, console
from kg.errors import ConfigError, LLMError, Neo4jError, QueryError, StrataError
from kg.shared.redaction import redact

__all__ = ["app", "exit_on_termination", "main"]

EXIT_CODES: tuple[tuple[type[StrataError], int], ...] = (
    (ConfigError, 3), (QueryError, 6), (Neo4jError, 4), (LLMError, 5), (StrataError, 6),
)


def exit_on_termination() -> None:
    """SIGTERM and SIGHUP end the command as an exception would, so every ``finally`` and context manager runs:
    a throwaway Neo4j is stopped and removed, a batch's transaction rolled back. Exit status 128 + signal."""

    def leave(signum: int, _frame: FrameType | None) -> None:
        sys.exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, leave)


def main() -> None:
    # Command modules register themselves on import.
    from kg.app.cli import commands  # noqa: F401

    exit_on_termination()
    try:
        app()
    except StrataError as exc:
        # The message may quote an endpoint's reply: secrets are masked (and the console masks them again).
        # Notes carry context added on the way out (a throwaway server's log tail).
        message = "\n".join([str(exc), *getattr(exc, "__notes__", [])])
        console.print(f"[bold red]error:[/] {escape(redact(message))}", highlight=False)
        sys.exit(next(code for kind, code in EXIT_CODES if isinstance(exc, kind)))
