"""Extractor strategies: the job gives each layer the extractor of its mode once; a layer runs whichever it is
given, and an LLM extractor turns a chunk's failed call into that chunk's failure."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from kg.errors import LLMUnavailableError
from kg.layers.distilled.atoms import AtomsLayer
from kg.layers.distilled.base import Built, Context
from kg.layers.distilled.extractors import (
    LLMAtomExtractor,
    LLMExtractors,
    LLMFactItemExtractor,
    LLMTagExtractor,
    LLMTripleExtractor,
    OfflineAtomExtractor,
    OfflineExtractors,
    OfflineFactItemExtractor,
    OfflineTagExtractor,
    OfflineTripleExtractor,
)
from kg.layers.distilled.models import ChunkRecord, DistillConfig
from kg.layers.distilled.pipeline import _MAKE
from kg.llm import OfflineLLM, OpenAICompatibleLLM
from kg.settings import LLMSettings
from kg.store.base import GraphStore
from kg.testing import FailingTransport, TransportFault
from tests.distill.conftest import EMBEDDER

CHUNKS = [
    ChunkRecord("c1", "d1", "Neo4j is a graph database. It stores nodes and relationships.", "Neo4j", 0),
    ChunkRecord("c2", "d1", "Cypher is the query language of Neo4j.", "Neo4j", 1),
]


@pytest.fixture
def transport() -> FailingTransport:
    return FailingTransport({"questions": ["What is Neo4j?"]})


@pytest.fixture
def online(kb: GraphStore, transport: FailingTransport) -> Iterator[Context]:
    llm = OpenAICompatibleLLM(LLMSettings(base_url=FailingTransport.BASE_URL, model="m", max_retries=1),
                              transport=transport, base_backoff_s=0.001, max_backoff_s=0.002)
    yield Context(kb, EMBEDDER, llm, DistillConfig(llm_concurrency=1))
    llm.close()


def test_each_mode_gives_every_layer_its_extractor(kb: GraphStore, online: Context) -> None:
    offline = Context(kb, EMBEDDER, OfflineLLM(), DistillConfig(spacy_model=None))
    expected = {
        "atoms": (OfflineAtomExtractor, LLMAtomExtractor), "triples": (OfflineTripleExtractor, LLMTripleExtractor),
        "tags": (OfflineTagExtractor, LLMTagExtractor), "pseudograph": (OfflineFactItemExtractor, LLMFactItemExtractor),
    }
    for name, (off, on) in expected.items():
        assert type(_MAKE[name](offline, OfflineExtractors()).extractor) is off  # type: ignore[attr-defined]
        assert type(_MAKE[name](online, LLMExtractors()).extractor) is on  # type: ignore[attr-defined]
    methods = {name: _MAKE[name](offline, OfflineExtractors()).method for name in _MAKE}
    assert methods == {"atoms": "offline", "triples": "offline (spacy:rules)", "tables": "rules",
                       "tags": "offline (tf-idf keyphrases)", "pseudograph": "offline"}
    assert {_MAKE[name](online, LLMExtractors()).method for name in _MAKE} == {"llm", "rules"}


class _Fixed:
    """A test strategy: every chunk's atoms are given."""

    method, kind, source = "fixed", "statement", "test"

    def atoms(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[str]]]:
        return [(c, [f"atom of {c.id}", f"ATOM of {c.id}"]) for c in chunks]


def test_a_layer_runs_the_strategy_it_is_given(kb: GraphStore) -> None:
    layer = AtomsLayer(Context(kb, EMBEDDER, OfflineLLM(), DistillConfig()), _Fixed())
    built = layer.build(CHUNKS)
    [(query, rows)] = built.rows
    assert query == "distill/create_atoms" and layer.method == "fixed" and built.done == ["c1", "c2"]
    assert [(r["text"], r["kind"], r["source"]) for r in rows] == [("atom of c1", "statement", "test"),
                                                                   ("atom of c2", "statement", "test")]


def test_a_failed_call_fails_its_chunk_alone(online: Context, transport: FailingTransport) -> None:
    # Calls run one at a time: chunk c1's call and its repair get malformed replies, c2's call succeeds.
    transport.faults = {1: TransportFault.malformed_reply(), 2: TransportFault.malformed_reply()}
    layer = AtomsLayer(online, LLMExtractors().atoms(online))
    built = layer.build(CHUNKS)
    assert built.done == ["c2"] and [f.id for f in built.failed] == ["c1"] and built.fatal is None
    assert [r["text"] for _, rows in built.rows for r in rows] == ["What is Neo4j?"]
    assert "invalid output after one repair" in built.failed[0].error


def test_an_endpoint_that_stays_down_stops_the_job(online: Context, transport: FailingTransport) -> None:
    transport.always = TransportFault.server_error(503)
    built = AtomsLayer(online, LLMExtractors().atoms(online)).build(CHUNKS)
    assert built.done == [] and isinstance(built.fatal, LLMUnavailableError)
    assert transport.calls == 4  # two chunks, each tried twice (max_retries=1)
