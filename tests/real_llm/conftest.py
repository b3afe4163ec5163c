"""The real-model tier: a local qwen2.5-coder-0.5b behind `strata llm start`, started once per session.

The model is assembled in the machine's Strata cache (``STRATA_CACHE_DIR`` or ~/.cache/strata) and reused
by later runs; the server's state lives in the session's temporary folder. Without the runtime
(``make install-llm``) the tier is skipped with the reason, except where ``STRATA_REQUIRE_REAL_LLM=1``
(``make test`` and CI) makes that a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from kg.app.client import Strata
from kg.embeddings.hashing import HashingEmbedder
from kg.llm import OfflineLLM
from kg.llm.local import LocalLLMInfo, LocalLLMServer, find_runtime
from kg.settings import LLMSettings, LocalLLMSettings, Settings
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from tests.conftest import TestServer
from tests.reasoning.conftest import DOCS

REAL_MODEL = "qwen2.5-coder-0.5b"


def model_cache_dir() -> Path:
    return Path(os.environ.get("STRATA_CACHE_DIR", Path.home() / ".cache" / "strata"))


@pytest.fixture(scope="session")
def local_llm_settings(tmp_path_factory: pytest.TempPathFactory) -> LocalLLMSettings:
    if find_runtime() is None:
        reason = "no local model runtime: run `make install-llm` (builds llama-cpp-python once)"
        if os.environ.get("STRATA_REQUIRE_REAL_LLM") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return LocalLLMSettings(home=tmp_path_factory.mktemp("llm"), cache_dir=model_cache_dir(), model=REAL_MODEL,
                            threads=os.cpu_count() or 1, context_tokens=8192)


@pytest.fixture(scope="session")
def local_llm(local_llm_settings: LocalLLMSettings) -> Iterator[LocalLLMInfo]:
    server = LocalLLMServer(local_llm_settings)
    info = server.start()
    try:
        yield info
    finally:
        server.stop()


@pytest.fixture(scope="session")
def real_llm_settings(local_llm: LocalLLMInfo) -> LLMSettings:
    """What ``STRATA_LLM_BASE_URL=local`` resolves to, as the CLI would build it."""
    return LLMSettings(base_url=local_llm.base_url, model=local_llm.alias, context_tokens=local_llm.context_tokens,
                       timeout_s=600.0, max_concurrency=1, retry_timeouts=False, max_retries=2, seed=7)


EMBEDDER = HashingEmbedder(256)


def offline_kb(store: GraphStore, server: TestServer, root: Path, *, also: Sequence[Path] = (),
               layers: list[str] | None = None) -> None:
    """Wipe the session's graph and load the reasoning tests' documents (as Markdown) and ``also``, distilled
    offline into ``layers`` (the defaults when None): only what a test asks the model afterwards is the model's."""
    store.run_autocommit("meta/wipe")
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    docs = root / "docs"
    docs.mkdir()
    for key, (title, text) in DOCS.items():
        (docs / f"{key}.md").write_text(f"# {title}\n\n{text}\n", "utf-8")
    settings = Settings.from_env({"STRATA_HOME": str(root / "home"), "STRATA_CACHE_DIR": str(root / "cache")})
    with Strata.connect(settings, uri=server.uri, user=server.user, password=server.password,
                        embedder=EMBEDDER, llm=OfflineLLM()) as kb:
        report = kb.load([docs, *also])
        assert {f.status for f in report.files} == {"loaded"}, report.to_json()
        kb.distill(layers=layers, retry_failed=False)
