from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.settings import LLMSettings
from kg.testing.scripted_llm import ScriptedLLMServer


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as srv:
        yield srv


@pytest.fixture
def make_client(server: ScriptedLLMServer, tmp_path: Path) -> Iterator[Callable[..., OpenAICompatibleLLM]]:
    made: list[OpenAICompatibleLLM] = []

    def make(*, cache_dir: Path | None = None, budget_tokens: int | None = None, **settings: Any
             ) -> OpenAICompatibleLLM:
        fields: dict[str, Any] = {"base_url": server.base_url, "model": "test-model", "api_key": "sk-secret",
                                  "timeout_s": 5.0, "max_retries": 3}
        fields.update(settings)
        client = OpenAICompatibleLLM(
            LLMSettings(**fields), cache_dir=cache_dir, budget_tokens=budget_tokens,
            base_backoff_s=0.01, max_backoff_s=0.05,
        )
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Refuse every outbound connection, and tell any hub client it is offline (test_embeddings.py has its own,
    which lets the scripted server on localhost through)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield
