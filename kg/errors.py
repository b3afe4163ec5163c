"""Strata's exception tree. Every error Strata raises derives from :class:`StrataError`.

Driver, SDK and validation errors are wrapped at the boundary (``raise ... from exc``) so callers
catch one family::

    StrataError
    ├── ConfigError                  a setting is missing or invalid (names the setting)
    ├── Neo4jError
    │   ├── Neo4jUnavailable         no server answers at the configured address
    │   ├── QueryError               the server answers but refused one query (a statement or procedure
    │   │                            error, e.g. Lucene's TooManyClauses): not an outage, so not exit 4
    │   ├── ConflictError            a write met a unique key another transaction wrote first (a concurrent
    │   │                            load of the same files, or a commit confirmed only after a retry)
    │   ├── ProvisioningError        the local server cannot be installed or started
    │   │   ├── MissingToolError     java or mvn is not installed
    │   │   ├── PortInUseError       a port Strata needs is taken
    │   │   └── StartTimeoutError    the server did not come up in time (carries the log tail)
    │   └── SchemaError
    │       └── EmbeddingMismatchError  the graph was built with another embedder or dimension
    │                                   (also a ConfigError: the fix is a setting, so the CLI exits 3)
    ├── LoaderError                  one input file cannot be read (names the file, and line or field)
    ├── LLMError
    │   ├── LLMUnavailableError      retries exhausted: timeouts, 429, 5xx, dropped connections
    │   ├── LLMOutputError           output invalid after the repair round trip (names the task)
    │   │   └── LLMTruncatedError    the output hit its token limit even after asking for less
    │   ├── LLMProvisioningError     the local model server cannot be installed or started
    │   │   └── ModelChecksumError   an assembled model file does not have the published sha256
    │   └── BudgetExceededError      the job's token budget would be exceeded
    ├── EmbeddingError
    ├── RetrievalError
    └── ReasoningError
"""

from __future__ import annotations


class StrataError(Exception):
    """Root of every error Strata raises."""


class ConfigError(StrataError):
    """A setting is missing or invalid; the message names the setting."""


class Neo4jError(StrataError):
    """A failure talking to, or running, Neo4j."""


class Neo4jUnavailable(Neo4jError):
    """No Neo4j server answers at the configured address."""


class QueryError(Neo4jError):
    """Neo4j answers but rejected one query (``Neo.ClientError.Statement.*`` or ``.Procedure.*``).

    The server is fine: the input that reached the query is what failed, so callers report it against that
    input (one file, one question) and the CLI exits 6, never 4 ("Neo4j unavailable").
    """


class ConflictError(Neo4jError):
    """A write met a uniqueness constraint another transaction had already satisfied
    (``Neo.ClientError.Schema.ConstraintValidationFailed``): another run wrote the same document at the same
    time, or this run's own commit went through although its confirmation was lost (a restart) and was retried.
    The writer settles it by reading what is now stored; it is never reported raw.
    """


class ProvisioningError(Neo4jError):
    """The local Neo4j server cannot be installed or started."""


class MissingToolError(ProvisioningError):
    """A tool the local server needs (java, mvn) is not installed."""


class PortInUseError(ProvisioningError):
    """A port the local server needs is already taken by another process."""


class StartTimeoutError(ProvisioningError):
    """The server did not answer on Bolt in time; the message carries the log's tail."""


class SchemaError(Neo4jError):
    """The graph's schema is missing or incompatible."""


class EmbeddingMismatchError(SchemaError, ConfigError):
    """The graph was built with another embedder or embedding dimension than the configured one.

    Neo4j answers fine; the configured embedder is what must change, hence also a :class:`ConfigError`.
    """


class LoaderError(StrataError):
    """One input cannot be loaded. ``path`` names the file; ``location`` a line, page or field."""

    def __init__(self, path: str, reason: str, location: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.location = location
        where = f"{path}:{location}" if location else path
        super().__init__(f"{where}: {reason}")


class LLMError(StrataError):
    """A failure of the LLM service."""


class LLMUnavailableError(LLMError):
    """The endpoint kept failing (timeouts, 429, 5xx, dropped connections) after all retries."""


class LLMOutputError(LLMError):
    """The LLM's output stayed invalid after one repair round trip."""

    def __init__(self, task: str, reason: str, excerpt: str) -> None:
        self.task = task
        self.excerpt = excerpt
        super().__init__(f"task {task!r}: {reason}; output began {excerpt!r}")


class LLMTruncatedError(LLMOutputError):
    """The output stopped at its token limit (``finish_reason == "length"``) even after asking for less."""


class LLMProvisioningError(LLMError):
    """The local model server (``strata llm start``) cannot be installed or started; names the fix."""


class ModelChecksumError(LLMProvisioningError):
    """A model file assembled from its packages does not have the sha256 it was published with."""


class BudgetExceededError(LLMError):
    """The next call would exceed the job's token budget; the job stops cleanly."""


class EmbeddingError(StrataError):
    """A failure of the embedding service."""


class RetrievalError(StrataError):
    """A retrieval method cannot run (unknown method, missing layer or index)."""


class ReasoningError(StrataError):
    """A reasoning method cannot run or produced no usable answer."""
