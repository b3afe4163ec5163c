"""Atoms and triples from one call per chunk (task ``chunk_knowledge``): the layer that reaches a chunk first
calls, the other takes the kept result; a failed call fails in the layer that asked and the other asks
again; the separate tasks stay available."""

from __future__ import annotations

from typing import Any, cast

from kg.layers.distilled.base import Built, Context
from kg.layers.distilled.extractors import LLMExtractors
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


def test_atoms_and_triples_share_one_call_per_chunk(responder: Responder, llm: OpenAICompatibleLLM) -> None:
    responder.tasks["chunk_knowledge"] = knowledge_from
    ctx, extractors = context(llm), LLMExtractors(combined=True)
    atoms_built, triples_built = Built(), Built()
    atoms = extractors.atoms(ctx).atoms(CHUNKS, atoms_built)
    triples = dict(extractors.triples(ctx).triples(CHUNKS, triples_built))
    assert set(responder.seen) == {"chunk_knowledge"} and len(responder.seen["chunk_knowledge"]) == 2
    assert [c.id for c, _ in atoms] == ["c1", "c2"] and all(questions for _, questions in atoms)
    assert not atoms_built.failed and not triples_built.failed
    by_id = {c.id: e for c, e in triples.items()}
    assert [(t.head, t.tail) for t in by_id["c1"].triples] == [("Bob Edwards", "Morning Edition")]
    assert [(t.head, t.tail) for t in by_id["c2"].triples] == [("Apple Inc.", "iPhone")]
    usage = llm.accounting.report()
    assert usage.calls == 2 and usage.by_task["chunk_knowledge"].invalid_items == 1  # Jane Doe dropped


def test_a_failed_shared_call_fails_where_it_was_asked_and_the_other_layer_asks_again(
        responder: Responder, llm: OpenAICompatibleLLM) -> None:
    responder.tasks["chunk_knowledge"] = lambda text: "no JSON here" if "iPhone" in text else knowledge_from(text)
    ctx, extractors = context(llm), LLMExtractors(combined=True)
    atoms_built = Built()
    atoms = extractors.atoms(ctx).atoms(CHUNKS, atoms_built)
    assert [c.id for c, _ in atoms] == ["c1"] and [f.id for f in atoms_built.failed] == ["c2"]
    assert atoms_built.failed[0].layer == "atoms" and "chunk_knowledge" in atoms_built.failed[0].error
    responder.tasks["chunk_knowledge"] = knowledge_from
    responder.seen.clear()
    triples = extractors.triples(ctx).triples(CHUNKS, Built())
    assert [c.id for c, _ in triples] == ["c1", "c2"]
    assert len(responder.seen["chunk_knowledge"]) == 1 and "iPhone" in responder.seen["chunk_knowledge"][0]


def test_the_separate_tasks_stay_available(responder: Responder, llm: OpenAICompatibleLLM) -> None:
    responder.tasks.update({"atomic_questions": questions_from,
                            "triples": lambda text: {"triples": triples_of(section(text, "Text:"))}})
    ctx, extractors = context(llm), LLMExtractors(combined=False)
    atoms = extractors.atoms(ctx).atoms(CHUNKS, Built())
    triples = extractors.triples(ctx).triples(CHUNKS, Built())
    assert len(atoms) == len(triples) == 2
    assert {task: len(seen) for task, seen in responder.seen.items()} == {"atomic_questions": 2, "triples": 2}
