"""Atoms and triples from one call per chunk (task ``atoms_triples``; ``chunk_knowledge`` adds the tags): the
shared call's replies split into each layer's extractor for the batch; a failed call fails its chunk in every
layer the call serves; a layer chosen alone keeps its own task."""

from __future__ import annotations

from typing import Any, cast

from kg.layers.distilled.base import Built, Context
from kg.layers.distilled.extractors import LLMExtractors, OfflineExtractors
from kg.layers.distilled.models import ChunkRecord, DistillConfig
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.store.base import GraphStore
from tests.distill.conftest import EMBEDDER, Responder, questions_from, section

CHUNKS = [
    ChunkRecord("c1", "d1", "Bob Edwards hosted Morning Edition. Renée Montagne co-hosted Morning Edition.",
                "Morning Edition", 0),
    ChunkRecord("c2", "d1", "Apple Inc. designs the iPhone in Cupertino.", "Apple Inc.", 1),
]
KEYS = ("head", "head_type", "relation", "tail", "tail_type")
LAYERS = ("atoms", "triples")


def triples_of(chunk: str) -> list[dict[str, str]]:
    if "Bob Edwards" in chunk:  # the second triple names someone the chunk never mentions
        found = [("Bob Edwards", "Person", "hosted", "Morning Edition", "Show"),
                 ("Jane Doe", "Person", "hosted", "Morning Edition", "Show")]
    else:
        found = [("Apple Inc.", "Organization", "designs", "iPhone", "Product")]
    return [dict(zip(KEYS, t, strict=True)) for t in found]


def knowledge_from(text: str) -> Any:
    return {**questions_from(text), "triples": triples_of(section(text, "Chunk:"))}


class NoGraph:
    """The extraction of atoms and triples reads nothing from the graph: any use of this store fails."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the extractors used the store ({name})")


def context(llm: OpenAICompatibleLLM) -> Context:
    return Context(cast(GraphStore, NoGraph()), EMBEDDER, llm, DistillConfig(llm_concurrency=1))


def test_atoms_and_triples_come_from_one_call_per_chunk(responder: Responder, llm: OpenAICompatibleLLM) -> None:
    responder.tasks["atoms_triples"] = knowledge_from
    ctx = context(llm)
    knowledge = LLMExtractors().knowledge(ctx, with_tags=False)
    assert knowledge is not None
    built = Built()
    shared = knowledge.extract(CHUNKS, built, LAYERS)
    assert set(responder.seen) == {"atoms_triples"} and len(responder.seen["atoms_triples"]) == 2
    assert [c.id for c in shared.chunks] == ["c1", "c2"] and not built.failed and shared.tags is None
    atoms = shared.atoms.atoms(shared.chunks, built)
    assert [c.id for c, _ in atoms] == ["c1", "c2"] and all(questions for _, questions in atoms)
    by_id = {c.id: e for c, e in shared.triples.triples(shared.chunks, built)}
    assert [(t.head, t.tail) for t in by_id["c1"].triples] == [("Bob Edwards", "Morning Edition")]
    assert [(t.head, t.tail) for t in by_id["c2"].triples] == [("Apple Inc.", "iPhone")]
    usage = llm.accounting.report()
    assert usage.calls == 2 and usage.by_task["atoms_triples"].invalid_items == 1  # Jane Doe dropped


def test_a_failed_shared_call_fails_its_chunk_in_every_layer_and_keeps_the_others(
        responder: Responder, llm: OpenAICompatibleLLM) -> None:
    responder.tasks["atoms_triples"] = lambda text: "no JSON here" if "iPhone" in text else knowledge_from(text)
    knowledge = LLMExtractors().knowledge(context(llm), with_tags=False)
    assert knowledge is not None
    built = Built()
    shared = knowledge.extract(CHUNKS, built, LAYERS)
    assert [c.id for c in shared.chunks] == ["c1"]
    assert sorted((f.layer, f.id) for f in built.failed) == [("atoms", "c2"), ("triples", "c2")]
    assert all("atoms_triples" in f.error for f in built.failed)
    assert [c.id for c, _ in shared.atoms.atoms(shared.chunks, built)] == ["c1"]


def test_a_layer_alone_keeps_its_own_task_and_offline_shares_nothing(
        responder: Responder, llm: OpenAICompatibleLLM) -> None:
    responder.tasks.update({"atomic_questions": questions_from,
                            "triples": lambda text: {"triples": triples_of(section(text, "Text:"))}})
    ctx, extractors = context(llm), LLMExtractors()
    atoms = extractors.atoms(ctx).atoms(CHUNKS, Built())
    triples = extractors.triples(ctx).triples(CHUNKS, Built())
    assert len(atoms) == len(triples) == 2
    assert {task: len(seen) for task, seen in responder.seen.items()} == {"atomic_questions": 2, "triples": 2}
    assert LLMExtractors(combined=False).knowledge(ctx, with_tags=True) is None
    assert OfflineExtractors().knowledge(ctx, with_tags=True) is None
