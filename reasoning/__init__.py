"""Reasoning over the knowledge graph: PIKE-RAG's knowledge-aware decomposition (Algorithm 1), the paper's
baselines, KG2RAG and PG-RAG answers, routing by question class (L1-L4), cited answers and decomposer
training data (Algorithm 2).

Example::

    from reasoning import answer
    out = answer("Who succeeded Bob Edwards?", store=store, embedder=embedder, llm=llm, method="decompose")
    print(out.answer, [(c.marker, c.title, c.page) for c in out.citations])
    print(out.decomposition.render())
"""

from __future__ import annotations

from collections.abc import Callable

from kg.embeddings import Embedder
from kg.errors import ReasoningError
from kg.llm import LLM
from kg.store.base import GraphStore
from reasoning.baselines import naive, self_ask, zero_shot_cot
from reasoning.bindings import default_ports
from reasoning.core import Run, usage_snapshot
from reasoning.decompose import decompose
from reasoning.ports import Ports
from reasoning.router import route
from reasoning.settings import ReasoningSettings
from reasoning.types import Answer, Citation, DecompositionTrace, TraceStep

__all__ = [
    "METHODS",
    "Answer",
    "Citation",
    "DecompositionTrace",
    "Ports",
    "ReasoningSettings",
    "TraceStep",
    "answer",
]

_METHODS: dict[str, Callable[[Run], Answer]] = {
    "zero-shot-cot": zero_shot_cot,
    "naive-r": lambda r: naive(r, "naive-r", r.ports.flat, r.settings.flat_k),
    "naive-hr": lambda r: naive(r, "naive-hr", r.ports.hierarchical, r.settings.hr_k),
    "self-ask": lambda r: self_ask(r, "self-ask", None, r.settings.hybrid_k),
    "self-ask-r": lambda r: self_ask(r, "self-ask-r", r.ports.flat, r.settings.flat_k),
    "self-ask-hr": lambda r: self_ask(r, "self-ask-hr", r.ports.hierarchical, r.settings.hr_k),
    "kg2rag": lambda r: naive(r, "kg2rag", r.ports.kg2rag, r.settings.hybrid_k),
    "pgrag": lambda r: naive(r, "pgrag", r.ports.pgrag, r.settings.hybrid_k),
    "decompose": decompose,
    "auto": route,
}
METHODS: tuple[str, ...] = tuple(_METHODS)
"""Method names ``answer`` accepts; ``auto`` (routing by question class) is the default."""


def answer(
    question: str,
    *,
    store: GraphStore,
    embedder: Embedder,
    llm: LLM,
    method: str = "auto",
    settings: ReasoningSettings | None = None,
    ports: Ports | None = None,
) -> Answer:
    """Answer ``question`` with ``method`` over the graph in ``store``, with citations and a trace.

    Without an LLM (:class:`kg.llm.OfflineLLM`) every method gives an extractive answer marked ``offline=True``
    (:mod:`reasoning.extractive_answerer`).
    ``ports`` overrides the retrieval the methods use (default: :func:`reasoning.bindings.default_ports`).
    """
    if method not in _METHODS:
        raise ReasoningError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if not question.strip():
        raise ReasoningError("the question is empty")
    chosen = settings or ReasoningSettings()
    run = Run(question=question.strip(), store=store, llm=llm,
              ports=ports or default_ports(store, embedder, llm, chosen), settings=chosen,
              start=usage_snapshot(llm))
    return run.finish(_METHODS[method](run))
