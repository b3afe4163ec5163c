"""The model layer's environment variables: parsed into Settings, or refused with the variable's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.errors import ConfigError
from kg.settings import Settings, memory_defaults


def env(tmp_path: Path, **values: str) -> dict[str, str]:
    return {"STRATA_HOME": str(tmp_path / "home"), "STRATA_CACHE_DIR": str(tmp_path / "cache"), **values}


def test_llm_numbers_and_prices(tmp_path: Path) -> None:
    s = Settings.from_env(env(tmp_path, STRATA_LLM_BASE_URL="http://x/v1", STRATA_LLM_TEMPERATURE="0.3",
                              STRATA_LLM_MAX_TOKENS="512", STRATA_LLM_MAX_RETRIES="0",
                              STRATA_LLM_PRICES='{"gpt-4o-mini": [0.15, 0.6], "big": [10, 30]}'))
    assert (s.llm.temperature, s.llm.max_tokens, s.llm.max_retries) == (0.3, 512, 0)
    assert s.llm.prices_per_mtok == {"gpt-4o-mini": (0.15, 0.6), "big": (10.0, 30.0)}
    defaults = Settings.from_env(env(tmp_path))
    assert (defaults.llm.temperature, defaults.llm.max_tokens, defaults.llm.max_retries) == (0.0, None, 5)
    assert defaults.llm.prices_per_mtok == {}


@pytest.mark.parametrize(("name", "value", "message"), [
    ("STRATA_LLM_TEMPERATURE", "warm", "STRATA_LLM_TEMPERATURE='warm': expected a number"),
    ("STRATA_LLM_TEMPERATURE", "-1", "STRATA_LLM_TEMPERATURE='-1': must be at least 0.0"),
    ("STRATA_LLM_MAX_TOKENS", "1.5", "STRATA_LLM_MAX_TOKENS='1.5': expected an integer"),
    ("STRATA_LLM_MAX_TOKENS", "0", "STRATA_LLM_MAX_TOKENS='0': must be at least 1"),
    ("STRATA_LLM_MAX_RETRIES", "-2", "STRATA_LLM_MAX_RETRIES='-2': must be at least 0"),
    ("STRATA_LLM_MAX_CONCURRENCY", "zero", "STRATA_LLM_MAX_CONCURRENCY='zero'"),
    ("STRATA_LLM_PRICES", "{gpt: 1}", "STRATA_LLM_PRICES is not JSON"),
    ("STRATA_LLM_PRICES", "[1, 2]", "STRATA_LLM_PRICES: expected JSON like"),
    ("STRATA_LLM_PRICES", '{"m": [1]}', "STRATA_LLM_PRICES['m']=[1]"),
    ("STRATA_LLM_PRICES", '{"m": [1, -2]}', "STRATA_LLM_PRICES['m']"),
    ("STRATA_NEO4J_LOCAL_PASSWORD", "short", "STRATA_NEO4J_LOCAL_PASSWORD must have at least 8"),
])
def test_bad_values_name_the_variable(tmp_path: Path, name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Settings.from_env(env(tmp_path, **{name: value}))
    assert message in str(info.value)


def test_embedding_key_goes_only_to_the_llm_endpoint(tmp_path: Path) -> None:
    llm = {"STRATA_LLM_BASE_URL": "http://llm/v1", "STRATA_LLM_API_KEY": "sk-llm"}
    same = Settings.from_env(env(tmp_path, **llm))
    assert same.embedder.base_url == "http://llm/v1" and same.embedder.api_key.get_secret_value() == "sk-llm"
    other = Settings.from_env(env(tmp_path, **llm, STRATA_EMBEDDING_BASE_URL="http://emb/v1"))
    assert other.embedder.api_key.get_secret_value() == ""
    own = Settings.from_env(env(tmp_path, **llm, STRATA_EMBEDDING_BASE_URL="http://emb/v1",
                                STRATA_EMBEDDING_API_KEY="sk-emb"))
    assert own.embedder.api_key.get_secret_value() == "sk-emb"
    limited = Settings.from_env(env(tmp_path, **llm, STRATA_LLM_MAX_CONCURRENCY="3"))
    assert limited.embedder.max_concurrency == limited.llm.max_concurrency == 3


def test_local_server_password_and_memory(tmp_path: Path) -> None:
    s = Settings.from_env(env(tmp_path, STRATA_NEO4J_LOCAL_PASSWORD="correct-horse",
                              STRATA_NEO4J_HEAP="3g", STRATA_NEO4J_PAGECACHE="700m"))
    assert s.local.password is not None and s.local.password.get_secret_value() == "correct-horse"
    assert (s.local.heap, s.local.pagecache) == ("3g", "700m")
    sized = Settings.from_env(env(tmp_path))
    assert sized.local.password is None
    heap, pagecache = sized.local.heap, sized.local.pagecache
    assert heap.endswith("m") and 512 <= int(heap[:-1]) <= 4096
    assert pagecache.endswith("m") and 256 <= int(pagecache[:-1]) <= 16384


@pytest.mark.parametrize(("gib", "expected"), [
    (None, ("1g", "512m")), (1, ("512m", "256m")), (8, ("1024m", "2048m")), (64, ("4096m", "16384m")),
])
def test_memory_defaults_follow_ram(gib: int | None, expected: tuple[str, str]) -> None:
    assert memory_defaults(None if gib is None else gib * 2**30) == expected


@pytest.mark.parametrize(("url", "timeout"), [
    ("http://127.0.0.1:11434/v1", 600.0), ("http://localhost:8080/v1", 600.0), ("http://[::1]:8000/v1", 600.0),
    ("https://api.openai.com/v1", 60.0), ("http://127.example.com/v1", 60.0), ("local", 600.0),
])
def test_a_server_on_this_machine_gets_a_cpu_models_timeout(tmp_path: Path, url: str, timeout: float) -> None:
    assert Settings.from_env(env(tmp_path, STRATA_LLM_BASE_URL=url)).llm.timeout_s == timeout
    chosen = Settings.from_env(env(tmp_path, STRATA_LLM_BASE_URL=url, STRATA_LLM_TIMEOUT="30"))
    assert chosen.llm.timeout_s == 30.0
