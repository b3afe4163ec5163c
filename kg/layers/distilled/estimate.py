"""What ``strata load --estimate`` predicts a load will spend with an LLM, before anything is spent or written:
calls, prompt tokens and completion tokens per task.

The files are parsed and chunked structurally (no Neo4j, no LLM). Each task's prompt is rendered as the load
renders it (the chunk's language, its title and text, a typical tag-class listing) and counted with the token
estimate the accounting uses. Completion tokens follow the model's own replies when it has answered the task
at least ``MIN_OBSERVED_CALLS`` times on this machine (:mod:`kg.llm.usage_history`): each call's prompt tokens
times the model's completion-to-prompt ratio on that task (a longer chunk gets more atoms and triples, so the
ratio carries across chunk sizes where a mean reply length does not); else a typical length. Each task says
which (``completion_basis``). The calls follow what the job does
(:mod:`kg.layers.distilled.pipeline`):

- ``enhanced_chunk``: one call per chunk (the recurrent split makes one call per chunk it cuts);
- per chunk, the distilled layers' tasks of :func:`~kg.layers.distilled.pipeline.llm_tasks_of`: one shared
  call for atoms, triples and tags when they are chosen together (``chunk_knowledge``, or ``atoms_triples``
  without tags), else each layer's own task; ``fact_items`` for the pseudo-graph (regenerations not counted);
- with tags: ``tag_classes`` once for the corpus (the classes are then kept in the graph) and ``tag_aliases``
  about once per batch of ``batch_chunks`` chunks (the aliases of the batch's new tags, 40 to a call);
- with the pseudo-graph: ``mind_map`` once per document part (up to ``MIND_MAP_CHUNKS`` chunks), its facts (here:
  its chunks) at most ``mind_map_tokens``.

A re-load of unchanged files spends nothing (every chunk is marked); the estimate is for a first load.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kg.errors import LoaderError
from kg.layers.corpus.ingest import prepare_structural
from kg.layers.distilled.models import DistillConfig
from kg.layers.distilled.pipeline import llm_tasks_of
from kg.layers.distilled.pseudograph import MIND_MAP_CHUNKS
from kg.layers.distilled.text import fact_listing
from kg.llm import estimate_messages_tokens, render
from kg.llm.prompts import load_prompt
from kg.llm.usage_history import TaskUsage
from loaders import Chunk, load_path

__all__ = ["MIN_OBSERVED_CALLS", "TYPICAL_COMPLETION_TOKENS", "estimate_load"]

TYPICAL_COMPLETION_TOKENS = {
    "enhanced_chunk": 120, "atomic_questions": 150, "triples": 250, "chunk_tags": 60,
    "atoms_triples": 400, "chunk_knowledge": 460, "tag_classes": 200, "tag_aliases": 200,
    "fact_items": 250, "mind_map": 300,
}
"""A typical answer's length per task, in tokens, for a model that has no history here."""

MIN_OBSERVED_CALLS = 5
"""Calls of a task a model must have answered before its mean reply length replaces the typical one."""

# What a prompt's other fields hold, typically: the tag classes the corpus gets (about six), a forward
# summary, and the names of a batch's new tags (about one a chunk: most of a chunk's tags name what other
# chunks name too; at most 40 to a call).
_TAG_LISTING = "\n".join(f"- class_{n}: the kind of thing this tag class names in the collection" for n in range(6))
_SUMMARY = " ".join(["The text so far describes the subject, its parts and the events it reports."] * 3)
_ALIAS_GROUP = 40
_SAMPLE_CHARS, _TAG_SAMPLE = 600, 30


def _fields(chunk: Chunk, title: str, first: bool) -> dict[str, str]:
    """A chunk's prompt fields; the forward summary is empty at a document's first chunk."""
    return {"title": title, "chunk": chunk.text, "text": chunk.text, "tag_classes": _TAG_LISTING,
            "summary": "(start)" if first else _SUMMARY, "domain": "general"}


def _prompt_tokens(task: str, fields: dict[str, str]) -> int:
    wanted = load_prompt(task, "en").fields
    rendered = render(task, {k: v for k, v in fields.items() if k in wanted})  # in the text's language
    return estimate_messages_tokens(rendered.messages)


def estimate_load(
    files: Sequence[Path], *, layers: Sequence[str], chunk_tokens: int, chunk_overlap: int,
    password: str | None = None, enhanced: bool = True, batch_chunks: int = 16,
    observed: Mapping[str, TaskUsage] | None = None, mind_map_tokens: int = DistillConfig.mind_map_tokens,
) -> dict[str, Any]:
    """Calls and tokens a load of ``files`` distilling ``layers`` would spend with an LLM (see the module
    docstring). ``batch_chunks``: the chunks per distillation batch (the job's, with an LLM: a few times the
    calls in flight). ``observed``: the model's past spending per task (its usage history). Files that fail
    to parse are counted as failed, not guessed."""
    per_chunk = (*(("enhanced_chunk",) if enhanced else ()), *llm_tasks_of(layers))
    per_chunk = tuple(t for t in per_chunk if t != "mind_map")  # once per document, below
    tags = "tags" in layers
    tasks = (*per_chunk, *(("tag_classes", "tag_aliases") if tags else ()),
             *(("mind_map",) if "pseudograph" in layers else ()))
    ratio: dict[str, float] = {}  # completion per prompt token, where the model has a history
    basis = {}
    for task in tasks:
        seen = (observed or {}).get(task)
        if seen is not None and seen.calls >= MIN_OBSERVED_CALLS and seen.prompt_tokens:
            ratio[task], basis[task] = seen.completion_tokens / seen.prompt_tokens, f"observed over {seen.calls} calls"
        else:
            basis[task] = "typical"
    by_task: dict[str, dict[str, Any]] = {
        t: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "completion_basis": basis[t]} for t in tasks
    }

    def spend(task: str, fields: dict[str, str], calls: int = 1) -> None:
        entry = by_task[task]
        prompt = _prompt_tokens(task, fields)
        entry["calls"] += calls
        entry["prompt_tokens"] += calls * prompt
        entry["completion_tokens"] += round(calls * (prompt * ratio[task] if task in ratio
                                                     else TYPICAL_COMPLETION_TOKENS[task]))

    n_chunks = failed = documents = 0
    sample: list[str] = []
    for path in files:
        try:
            docs = [prepare_structural(doc, chunk_tokens, chunk_overlap) for doc in load_path(path, password=password)]
        except LoaderError:
            failed += 1
            continue
        for prepared in docs:
            documents += 1
            title = prepared.source.title
            for n, chunk in enumerate(prepared.chunks):
                n_chunks += 1
                fields = _fields(chunk, title, first=n == 0)
                for task in per_chunk:
                    spend(task, fields)
                if len(sample) < min(_TAG_SAMPLE, batch_chunks):  # tag classes come from the first batch
                    sample.append(chunk.text[:_SAMPLE_CHARS])
            if "mind_map" in by_task:
                parts: dict[int, list[str]] = {}
                for chunk in prepared.chunks:
                    parts.setdefault(chunk.order // MIND_MAP_CHUNKS, []).append(chunk.text)
                for texts in parts.values():
                    spend("mind_map", {"title": title, "facts": fact_listing(texts, mind_map_tokens)})
    if tags and n_chunks:
        samples = "\n\n".join(f"[{i + 1}] {text}" for i, text in enumerate(sample))
        spend("tag_classes", {"domain": "general", "samples": samples})
        names = "\n".join(f"tag value {n}" for n in range(min(_ALIAS_GROUP, batch_chunks)))
        spend("tag_aliases", {"tags": names}, calls=math.ceil(n_chunks / max(1, batch_chunks)))
    calls = sum(e["calls"] for e in by_task.values())
    distill_calls = calls - by_task.get("enhanced_chunk", {"calls": 0})["calls"]
    return {
        "files": len(files), "chunks": n_chunks, "documents": documents, "failed_files": failed,
        "calls": calls, "distill_calls_per_chunk": round(distill_calls / n_chunks, 3) if n_chunks else 0.0,
        "prompt_tokens": sum(e["prompt_tokens"] for e in by_task.values()),
        "completion_tokens": sum(e["completion_tokens"] for e in by_task.values()),
        "by_task": by_task,
    }
