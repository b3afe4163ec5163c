"""Strata's configuration: one immutable :class:`Settings` read once at the edge and passed down.

Only :meth:`Settings.from_env` reads the environment; library code receives a ``Settings`` (or one of its
parts) as an argument. Secrets are ``SecretStr`` so they never reach logs, reprs or ``strata config``.

Environment variables (all optional):

==============================  ===============================================================
STRATA_HOME                     data and state folder (default ~/.local/share/strata)
STRATA_CACHE_DIR                caches: Neo4j jars, LLM responses (default ~/.cache/strata)
STRATA_KB                       knowledge base name (default ``default``)
STRATA_NEO4J_URI                use this Neo4j (bolt://, neo4j://, neo4j+s://) instead of a local one
STRATA_NEO4J_USER               its user (default neo4j)
STRATA_NEO4J_PASSWORD           its password
STRATA_NEO4J_DATABASE           its database (default: the server's default database)
STRATA_NEO4J_BOLT_PORT          local server's Bolt port (default 7687)
STRATA_NEO4J_HTTP_PORT          local server's HTTP port (default 7474)
STRATA_NEO4J_HEAP               local server's JVM heap, e.g. 1g (default RAM/8 within 512m..4g)
STRATA_NEO4J_PAGECACHE          local server's page cache, e.g. 512m (default RAM/4 within 256m..16g)
STRATA_NEO4J_LOCAL_PASSWORD     password the local server is created with (default: a generated one)
STRATA_NEO4J_VECTOR_MERGE       local server: vector-index segments Lucene merges at once (default: Neo4j's 50;
                                smaller: faster vector searches, slower writes; docs/scaling.md)
STRATA_LLM_BASE_URL             OpenAI-compatible endpoint; ``local`` means the server `strata llm start` runs
                                (started on demand); unset means offline mode
STRATA_LLM_MODEL                chat model name
STRATA_LLM_API_KEY              API key (or OPENAI_API_KEY)
STRATA_LLM_TEMPERATURE          sampling temperature (default 0)
STRATA_LLM_MAX_TOKENS           cap on completion tokens per call (default: each task's own budget)
STRATA_LLM_MAX_RETRIES          retries on 429, 5xx, timeouts (default 5)
STRATA_LLM_TIMEOUT              seconds per request (default 60; 600 for the local server or a loopback URL)
STRATA_LLM_MAX_CONCURRENCY      concurrent requests per endpoint, chat and embeddings (default 4; local: 1)
STRATA_LLM_RESPONSE_FORMAT      auto (default: negotiated per endpoint and model) | json_schema |
                                json_object_schema | json_object | text
STRATA_LLM_MODEL_<TASK>         per-task model override, e.g. STRATA_LLM_MODEL_ATOMIC_QUESTIONS
STRATA_LLM_CACHE                1 (default) or 0 to disable the response cache
STRATA_LLM_SEED                 sampling seed sent with every request (default: none)
STRATA_LLM_PRICES               JSON price table, USD per million tokens: {"model": [input, output]}
STRATA_LOCAL_MODEL              the local server's model: qwen2.5-coder-1.5b (default), qwen2.5-coder-0.5b,
                                or a path to a .gguf file
STRATA_LOCAL_LLM_PORT           its port on 127.0.0.1 (default: a free one, kept)
STRATA_LOCAL_LLM_THREADS        its threads (default: the core count)
STRATA_LOCAL_LLM_CONTEXT        its context size in tokens (default 8192)
STRATA_EMBEDDER                 wordllama (default) | e5 | minilm | openai | sentence-transformers | hash
STRATA_EMBEDDING_MODEL          model name for openai / sentence-transformers embedders (minilm: a model dir)
STRATA_EMBEDDING_BASE_URL       endpoint for the openai embedder (default: the LLM's)
STRATA_EMBEDDING_API_KEY        its API key (default: the LLM's key, only when the endpoint is the LLM's)
STRATA_FULLTEXT_ANALYZER        Lucene analyzer of the chunk and atom full-text indexes: standard-no-stop-words
                                (default), english (stemming), cjk (Chinese, Japanese, Korean by bigrams), or
                                another the server lists; set, it rebuilds indexes built with another
==============================  ===============================================================
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from kg.errors import ConfigError
from kg.shared.private import write_private

__all__ = [
    "LOCAL_LLM",
    "EmbedderSettings",
    "LLMSettings",
    "LocalLLMSettings",
    "LocalServerSettings",
    "Neo4jSettings",
    "ResponseFormat",
    "Settings",
    "free_port",
    "kept_ports",
    "memory_defaults",
]


_KB_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def _kb_ports(home: Path, kb: str, env: Mapping[str, str]) -> tuple[int, int]:
    """The default knowledge base uses 7687/7474 (or the env's ports); each other local knowledge base
    keeps the free ports it was given the first time (see :func:`kept_ports`)."""
    if kb == "default":
        return int(env.get("STRATA_NEO4J_BOLT_PORT", "7687")), int(env.get("STRATA_NEO4J_HTTP_PORT", "7474"))
    if not _KB_NAME.match(kb):
        raise ConfigError(f"invalid knowledge base name {kb!r}: use lowercase letters, digits, '-' and '_'")
    return kept_ports(home / "kbs" / kb)


def kept_ports(root: Path) -> tuple[int, int]:
    """Bolt and HTTP ports for the local server under ``root``: chosen free the first time, then kept in
    ``<root>/ports.json`` so the server answers at the same address across runs."""
    path = root / "ports.json"
    if path.is_file():
        ports = json.loads(path.read_text("utf-8"))
        return int(ports["bolt"]), int(ports["http"])
    bolt, http = free_port(), free_port()
    write_private(path, json.dumps({"bolt": bolt, "http": http}))
    return bolt, http


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


N = TypeVar("N", int, float)


def _number(env: Mapping[str, str], name: str, default: N, kind: type[N], *, low: N) -> N:
    """``env[name]`` as ``kind`` (``default`` when unset or empty), at least ``low``; errors name the variable."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected {'an integer' if kind is int else 'a number'}") from None
    if value < low:
        raise ConfigError(f"{name}={raw!r}: must be at least {low}")
    return value


def _loopback(url: str | None) -> bool:
    """True for an endpoint on this machine (localhost, 127.0.0.0/8, ::1)."""
    host = urlsplit(url).hostname if url else None
    if host is None:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name, not an address
        return host == "localhost"


def _prices(env: Mapping[str, str]) -> dict[str, tuple[float, float]]:
    """STRATA_LLM_PRICES: ``{"model": [input_usd_per_mtok, output_usd_per_mtok]}``."""
    raw = env.get("STRATA_LLM_PRICES", "").strip()
    if not raw:
        return {}
    shape = 'expected JSON like {"gpt-4o-mini": [0.15, 0.6]} (USD per million input, output tokens)'
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"STRATA_LLM_PRICES is not JSON ({exc.msg}): {shape}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"STRATA_LLM_PRICES: {shape}")
    prices: dict[str, tuple[float, float]] = {}
    for model, pair in data.items():
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(x, int | float) and not isinstance(x, bool) and x >= 0 for x in pair)):
            raise ConfigError(f"STRATA_LLM_PRICES[{model!r}]={pair!r}: {shape}")
        prices[model] = (float(pair[0]), float(pair[1]))
    return prices


def _local_password(env: Mapping[str, str]) -> SecretStr | None:
    raw = env.get("STRATA_NEO4J_LOCAL_PASSWORD", "")
    if not raw:
        return None
    if len(raw) < 8:  # Neo4j 5 refuses shorter initial passwords
        raise ConfigError("STRATA_NEO4J_LOCAL_PASSWORD must have at least 8 characters")
    return SecretStr(raw)


def _machine_ram() -> int | None:
    """Physical memory in bytes, or None where ``os.sysconf`` cannot tell (e.g. Windows)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def memory_defaults(ram_bytes: int | None) -> tuple[str, str]:
    """The local server's heap and page cache for a machine with ``ram_bytes``: RAM/8 within 512m..4g and
    RAM/4 within 256m..16g; 1g and 512m when unknown. Neo4j takes page cache memory as it reads pages (a server
    given 8g held 762 MB of resident memory on a small store), so a large setting costs only a store that
    needs it, and a large store needs it: a million passages' fusion read 150 fact items a second with RAM/16
    (1.5 GB here) and about 1,000 with 8 GB (docs/scaling.md, "Sizing").

    >>> memory_defaults(16 * 2**30)
    ('2048m', '4096m')
    >>> memory_defaults(2 * 2**30)
    ('512m', '512m')
    """
    if ram_bytes is None:
        return "1g", "512m"
    mib = ram_bytes // 2**20
    return f"{min(max(mib // 8, 512), 4096)}m", f"{min(max(mib // 4, 256), 16384)}m"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Neo4jSettings(_Frozen):
    """An existing Neo4j server to use instead of a local one."""

    uri: str
    user: str = "neo4j"
    password: SecretStr = SecretStr("")
    database: str | None = None


class LocalServerSettings(_Frozen):
    """The Neo4j Community server Strata provisions itself when no URI is given."""

    home: Path
    cache_dir: Path
    bolt_port: int = 7687
    http_port: int = 7474
    heap: str = "1g"
    pagecache: str = "512m"
    password: SecretStr | None = None
    start_timeout_s: float = 120.0
    vector_merge_factor: int | None = None

    def another_server(self, home: Path, *, bolt_port: int, http_port: int, heap: str | None = None,
                       pagecache: str | None = None, start_timeout_s: float | None = None) -> LocalServerSettings:
        """A second local server configured like this one (cache, server settings, and memory and start timeout
        unless given) but with its own home, ports and generated password: a benchmark's or an evaluation's
        server follows every setting the user gave the knowledge base's."""
        given = {"heap": heap, "pagecache": pagecache, "start_timeout_s": start_timeout_s}
        return self.model_copy(update={"home": home, "bolt_port": bolt_port, "http_port": http_port, "password": None,
                                       **{k: v for k, v in given.items() if v is not None}})


LOCAL_LLM = "local"
"""``STRATA_LLM_BASE_URL=local``: the model server ``strata llm start`` runs on this machine."""

ResponseFormat = Literal["auto", "json_schema", "json_object_schema", "json_object", "text"]


class LocalLLMSettings(_Frozen):
    """The llama.cpp model server Strata runs itself (``strata llm start``), on loopback only.

    ``port=None`` takes a free port the first time and keeps it in ``<home>/port``.
    """

    home: Path
    cache_dir: Path
    model: str = "qwen2.5-coder-1.5b"
    port: int | None = None
    threads: int = Field(default_factory=lambda: os.cpu_count() or 1)
    context_tokens: int = 8192
    start_timeout_s: float = 300.0


class LLMSettings(_Frozen):
    """An OpenAI-compatible chat endpoint. ``base_url=None`` means offline mode; ``"local"`` the local server.

    ``max_tokens`` caps every task's own output budget (None: the task's budget alone);
    ``context_tokens`` is the endpoint's context window when known (prompt plus output must fit);
    ``retry_timeouts=False`` fails a timed-out request instead of sending it again: a server that serves one
    request at a time is still generating the first one. ``seed`` makes sampling repeatable where the
    endpoint supports it (OpenAI, vLLM, Ollama, llama.cpp).
    """

    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr = SecretStr("")
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout_s: float = 60.0
    max_retries: int = 5
    max_concurrency: int = 4
    response_format: ResponseFormat = "auto"
    context_tokens: int | None = None
    retry_timeouts: bool = True
    seed: int | None = None
    task_models: dict[str, str] = Field(default_factory=dict)
    cache: bool = True
    prices_per_mtok: dict[str, tuple[float, float]] = Field(default_factory=dict)

    local: LocalLLMSettings | None = None

    @property
    def offline(self) -> bool:
        return self.base_url is None

    @property
    def is_local(self) -> bool:
        """True for ``STRATA_LLM_BASE_URL=local``, before the server's address is known."""
        return self.base_url == LOCAL_LLM


class EmbedderSettings(_Frozen):
    """Which embedder turns text into vectors."""

    provider: Literal["wordllama", "e5", "minilm", "openai", "sentence-transformers", "hash"] = "wordllama"
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr = SecretStr("")
    dimensions: int | None = None
    max_concurrency: int = 4  # requests in flight; an endpoint shared with the LLM keeps one limit


class Settings(_Frozen):
    """Everything Strata is configured with. Build it with :meth:`from_env` at the edge, or directly."""

    home: Path
    cache_dir: Path
    kb: str = "default"
    neo4j: Neo4jSettings | None = None
    local: LocalServerSettings
    llm: LLMSettings = LLMSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    batch_size: int = 1000
    chunk_tokens: int = 256
    chunk_overlap: int = 32
    fulltext_analyzer: str | None = None  # None: keep the graph's (docs/retrieval.md, "Lexical")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Read ``STRATA_*`` variables (see the module docstring); ``overrides`` win."""
        env = os.environ if environ is None else environ
        try:
            home = Path(env.get("STRATA_HOME", Path.home() / ".local/share/strata")).expanduser()
            cache_dir = Path(env.get("STRATA_CACHE_DIR", Path.home() / ".cache/strata")).expanduser()
            kb = str(overrides.get("kb") or env.get("STRATA_KB", "default"))
            neo4j = None
            if env.get("STRATA_NEO4J_URI"):
                neo4j = Neo4jSettings(
                    uri=env["STRATA_NEO4J_URI"],
                    user=env.get("STRATA_NEO4J_USER", "neo4j"),
                    password=SecretStr(env.get("STRATA_NEO4J_PASSWORD", "")),
                    # On servers with several databases (Enterprise, Aura) each knowledge base is one.
                    database=env.get("STRATA_NEO4J_DATABASE") or (None if kb == "default" else kb),
                )
            bolt_port, http_port = _kb_ports(home, kb, env)
            heap, pagecache = memory_defaults(_machine_ram())
            local = LocalServerSettings(
                home=home / "neo4j" if kb == "default" else home / "kbs" / kb / "neo4j",
                cache_dir=cache_dir,
                bolt_port=bolt_port,
                http_port=http_port,
                heap=env.get("STRATA_NEO4J_HEAP") or heap,
                pagecache=env.get("STRATA_NEO4J_PAGECACHE") or pagecache,
                password=_local_password(env),
                vector_merge_factor=_number(env, "STRATA_NEO4J_VECTOR_MERGE", 0, int, low=2) or None,
            )
            prefix = "STRATA_LLM_MODEL_"
            base_url = env.get("STRATA_LLM_BASE_URL") or None
            is_local = base_url == LOCAL_LLM
            local_llm = LocalLLMSettings(
                home=home / "llm",
                cache_dir=cache_dir,
                model=env.get("STRATA_LOCAL_MODEL") or "qwen2.5-coder-1.5b",
                port=_number(env, "STRATA_LOCAL_LLM_PORT", 0, int, low=0) or None,
                threads=_number(env, "STRATA_LOCAL_LLM_THREADS", os.cpu_count() or 1, int, low=1),
                context_tokens=_number(env, "STRATA_LOCAL_LLM_CONTEXT", 8192, int, low=512),
            )
            max_tokens = _number(env, "STRATA_LLM_MAX_TOKENS", 0, int, low=1)  # 0: unset
            llm = LLMSettings(
                base_url=base_url,
                model=env.get("STRATA_LLM_MODEL", "gpt-4o-mini"),
                api_key=SecretStr(env.get("STRATA_LLM_API_KEY", env.get("OPENAI_API_KEY", ""))),
                temperature=_number(env, "STRATA_LLM_TEMPERATURE", 0.0, float, low=0.0),
                max_tokens=max_tokens or None,
                max_retries=_number(env, "STRATA_LLM_MAX_RETRIES", 5, int, low=0),
                # A server on this machine (ours, or Ollama/llama.cpp at a loopback URL) may run on a CPU, which
                # takes minutes on a long prompt: a shorter timeout abandons replies it is still computing.
                timeout_s=_number(env, "STRATA_LLM_TIMEOUT", 600.0 if is_local or _loopback(base_url) else 60.0,
                                  float, low=0.001),
                max_concurrency=_number(env, "STRATA_LLM_MAX_CONCURRENCY", 1 if is_local else 4, int, low=1),
                response_format=env.get("STRATA_LLM_RESPONSE_FORMAT") or "auto",  # type: ignore[arg-type]
                retry_timeouts=not is_local,
                seed=_number(env, "STRATA_LLM_SEED", -1, int, low=0) if env.get("STRATA_LLM_SEED") else None,
                task_models={k[len(prefix):].lower(): v for k, v in env.items() if k.startswith(prefix)},
                cache=env.get("STRATA_LLM_CACHE", "1") != "0",
                prices_per_mtok=_prices(env),
                local=local_llm,
            )
            embedding_url = env.get("STRATA_EMBEDDING_BASE_URL") or (None if is_local else llm.base_url)
            # The LLM's key goes only to the LLM's own endpoint, never to another embedding host.
            shared_key = llm.api_key if embedding_url == llm.base_url else SecretStr("")
            embedder = EmbedderSettings(
                provider=env.get("STRATA_EMBEDDER", "wordllama"),  # type: ignore[arg-type]
                model=env.get("STRATA_EMBEDDING_MODEL") or None,
                base_url=embedding_url,
                api_key=SecretStr(env["STRATA_EMBEDDING_API_KEY"]) if env.get("STRATA_EMBEDDING_API_KEY")
                else shared_key,
                max_concurrency=llm.max_concurrency,
            )
            fields: dict[str, object] = {
                "home": home, "cache_dir": cache_dir, "kb": kb,
                "neo4j": neo4j, "local": local, "llm": llm, "embedder": embedder,
                "fulltext_analyzer": env.get("STRATA_FULLTEXT_ANALYZER") or None,
            }
            fields.update(overrides)
            return cls.model_validate(fields)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise ConfigError(f"invalid setting {field}: {err['msg']}") from exc
        except ValueError as exc:
            raise ConfigError(f"invalid setting: {exc}") from exc

    def redacted(self) -> dict[str, object]:
        """The effective configuration as JSON-able data, secrets shown as '***' when set."""
        return self.model_dump(mode="json")
