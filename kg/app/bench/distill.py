"""``strata bench distill``: distillation throughput and entity-resolution cost against graph size.

Runs in a throwaway local Neo4j with an offline embedder (feature hashing) and the scripted LLM server,
so the numbers measure Strata, not a model: chunks per second through offline distillation, and through
LLM distillation with the time spent waiting on the LLM subtracted; then, for each size, the time to
resolve a batch of entity mentions (half of them new) against that many existing entities, divided by the
new entities it creates (``new_entities``). Resolution uses indexed lookups only, so the time per new entity
should stay flat as the graph grows tenfold. Each size is measured twice with different mentions: right
after seeding (``cold_ms_per_entity``: index segments and pages just written, not yet read) and again
(``ms_per_entity``), which separates a cold index from real growth.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kg.embeddings import Embedder, HashingEmbedder
from kg.layers.corpus.ingest import Ingestor
from kg.layers.distilled import DistillConfig, EntityResolver, distill, entity_row
from kg.layers.distilled.text import sentences
from kg.llm import LLMReport, OfflineLLM
from kg.llm.openai_llm import OpenAICompatibleLLM
from kg.provisioning.throwaway import throwaway_server
from kg.settings import LLMSettings, Settings
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.schema import ensure_schema
from kg.testing.scripted_llm import ScriptedLLMServer

__all__ = ["DistillBenchReport", "ResolutionPoint", "run_distill_bench"]

_WORDS = (
    "alpha", "beta", "gamma", "delta", "north", "south", "river", "lake", "stone", "iron", "gold", "silver", "red",
    "blue", "green", "valley", "hill", "port", "bay", "cape", "mount", "field", "wood", "bridge", "castle", "tower",
    "harbour",
)


@dataclass
class ResolutionPoint:
    existing_entities: int
    new_mentions: int
    seconds: float
    ms_per_entity: float
    setup_seconds: float
    cold_ms_per_entity: float = 0.0
    new_entities: int = 0  # the entities the measured batch created (the ms_per_entity divisor)
    cold_seconds: float = 0.0


@dataclass
class DistillBenchReport:
    passages: int
    chunks: int
    offline_seconds: float
    offline_chunks_per_s: float
    llm_seconds: float
    llm_wait_seconds: float
    llm_chunks_per_s_excluding_llm: float
    offline_layers: dict[str, Any] = field(default_factory=dict)
    resolution: list[ResolutionPoint] = field(default_factory=list)
    embedder: str = ""
    llm: LLMReport = field(default_factory=LLMReport)
    corpus: str = ""  # the passages' file, or "synthetic" when none was found (then the chunks/s are not comparable)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "llm": self.llm.to_json()}


def _scripted_reply(body: dict[str, Any]) -> Any:
    """Atomic questions and triples derived from the chunk text: realistic sizes, no model. Answers the one
    call per chunk that distillation makes by default (``atoms_triples``) and each layer's own task."""
    task = body.get("response_format", {}).get("json_schema", {}).get("name", "")
    text = body["messages"][-1]["content"].split(":", 1)[-1]
    if task == "atomic_questions":
        return {"questions": _questions(text)}
    if task == "triples":
        return {"triples": _triples(text)}
    if task == "atoms_triples":
        return {"questions": _questions(text), "triples": _triples(text)}
    return {"error": task}


def _questions(text: str) -> list[str]:
    return [f"What does the passage say in sentence {i}: {s[:60]}?" for i, s in enumerate(sentences(text))]


def _triples(text: str) -> list[dict[str, str]]:
    caps = [w.strip(".,;()\"'") for w in text.split() if w[:1].isupper()]
    return [{"head": a, "head_type": "Entity", "relation": "related_to", "tail": b, "tail_type": "Entity"}
            for a, b in list(itertools.pairwise(caps))[:6] if a and b]


def _passages(corpus: Path | None, n: int) -> dict[str, str]:
    if corpus is not None and corpus.is_file():
        data = json.loads(corpus.read_text("utf-8"))
        items = data.items() if isinstance(data, dict) else ((d["title"], d["text"]) for d in data)
        out = {str(t): " ".join(x) if isinstance(x, list) else str(x) for t, x in items}
        return dict(list((t, x) for t, x in out.items() if x.strip())[:n])
    rng = random.Random(7)

    def name() -> str:
        return f"{rng.choice(_WORDS).title()} {rng.choice(_WORDS).title()}"

    return {f"Passage {i}": " ".join(f"{name()} met {name()} in {1900 + i % 100}." for _ in range(4))
            for i in range(n)}


def _seed_entities(store: GraphStore, embedder: Embedder, total: int, start: int) -> None:
    """Grow the graph's entities to ``total`` with synthetic names (batched UNWIND writes)."""
    rng = random.Random(start)
    for offset in range(start, total, 5000):
        names = [f"{rng.choice(_WORDS).title()} {rng.choice(_WORDS).title()} {i}" for i in
                 range(offset, min(offset + 5000, total))]
        vectors = embedder.embed(names)
        rows = [entity_row(f"bench_{offset + k}", name, "Entity", source="bench", embedding=v.tolist())
                for k, (name, v) in enumerate(zip(names, vectors, strict=True))]
        store.write_batches("distill/merge_entities", rows, batch_size=5000)
    store.write("meta/await_indexes", timeout_s=600)


def _resolve(store: GraphStore, embedder: Embedder, size: int, mentions: int, seed: int) -> tuple[float, int]:
    """Seconds to resolve a batch of mentions, and the new entities the batch creates."""
    resolver = EntityResolver(store, embedder, DistillConfig())
    rng = random.Random(seed)
    # Half the mentions name seeded entities (exact or re-cased), half are new.
    batch = [(f"{rng.choice(_WORDS).title()} {rng.choice(_WORDS).title()} {rng.randrange(size)}"
              if i % 2 else f"Newplace {rng.choice(_WORDS)} {seed}-{size + i}", "Entity") for i in range(mentions)]
    started = time.perf_counter()
    resolution = resolver.resolve(batch)
    return time.perf_counter() - started, len(resolution.new)


def _resolution_point(store: GraphStore, embedder: Embedder, size: int, mentions: int) -> ResolutionPoint:
    cold, cold_new = _resolve(store, embedder, size, mentions, seed=size)
    seconds, new = _resolve(store, embedder, size, mentions, seed=size + 1)
    # Per entity created, not per mention: the mentions that join existing entities create none.
    return ResolutionPoint(size, mentions, round(seconds, 4), round(1000 * seconds / max(new, 1), 4), 0.0,
                           cold_ms_per_entity=round(1000 * cold / max(cold_new, 1), 4), new_entities=new,
                           cold_seconds=round(cold, 4))


def run_distill_bench(settings: Settings, *, passages: int = 1000, sizes: Sequence[int] = (10_000, 100_000),
                      mentions: int = 500, corpus: Path | None = None, work_dir: Path | None = None
                      ) -> DistillBenchReport:
    """Run the benchmark in a throwaway Neo4j (see the module docstring)."""
    embedder = HashingEmbedder(256)
    texts = _passages(corpus, passages)
    with throwaway_server(settings) as endpoint:
        store = Neo4jGraphStore.connect(endpoint.uri, endpoint.user, endpoint.password)
        try:
            ensure_schema(store, embedder.name, embedder.dimensions)
            folder = work_dir or Path(settings.cache_dir) / "bench"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / "distill_bench_corpus.json"
            path.write_text(json.dumps([{"title": t, "text": x} for t, x in texts.items()]), "utf-8")
            Ingestor(store, embedder).load([path])
            chunks = int(store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"])
            offline = distill(store, embedder, OfflineLLM(), layers=["atoms", "triples", "tables"])
            with ScriptedLLMServer(default=_scripted_reply) as server:
                llm = OpenAICompatibleLLM(LLMSettings(base_url=server.base_url, model="bench", max_concurrency=16),
                                          cache_dir=None)
                try:
                    online = distill(store, embedder, llm, layers=["atoms", "triples"], force=True,
                                     config=DistillConfig(llm_concurrency=16))
                finally:
                    llm.close()
            waited = sum(e.llm_seconds for e in online.layers.values())
            report = DistillBenchReport(
                passages=len(texts), chunks=chunks, offline_seconds=offline.seconds,
                offline_chunks_per_s=round(chunks / offline.seconds, 1) if offline.seconds else 0.0,
                llm_seconds=online.seconds, llm_wait_seconds=round(waited, 3),
                llm_chunks_per_s_excluding_llm=round(chunks / max(online.seconds - waited, 1e-9), 1),
                offline_layers={k: v.model_dump(include={"chunks", "created", "seconds"})
                                for k, v in offline.layers.items()},
                embedder=embedder.name, llm=online.llm,
                corpus=str(corpus) if corpus is not None and corpus.is_file() else "synthetic",
            )
            seeded = int(store.query("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"])
            for size in sorted(sizes):
                started = time.perf_counter()
                _seed_entities(store, embedder, size, seeded)
                seeded = max(seeded, size)
                point = _resolution_point(store, embedder, size, mentions)
                point.existing_entities = int(store.query("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"])
                point.setup_seconds = round(time.perf_counter() - started - point.seconds - point.cold_seconds, 2)
                report.resolution.append(point)
        finally:
            store.close()
    return report
