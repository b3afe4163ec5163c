"""Typed records passed between the distillation stages, the tuning knobs, and the job report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from kg.errors import ConfigError
from kg.llm.accounting import LLMReport

__all__ = [
    "ALL_LAYERS",
    "CO_OCCURRENCE",
    "DISTILL_BATCH_CHARS",
    "DISTILL_BATCH_CHUNKS",
    "ChunkExtraction",
    "ChunkFailure",
    "ChunkRecord",
    "DistillConfig",
    "DistillReport",
    "ExtractedTriple",
    "LayerName",
    "LayerReport",
]

# A job's batch, unless its caller says: each batch is one write transaction per layer, and each transaction
# that writes vectors leaves one segment in their index, which every search of it walks until Neo4j merges (at
# 50): at 10,000 chunks, 500 chunks a batch left 20 segments, 1,000 10, 2,000 5, and 2,000 searched faster. What
# a batch holds in the client grows with its text (its atoms and facts), not its chunk count: the 100 MB file's
# 2,000-chunk batches held 2.8 million characters each and its load peaked at 2.00 GiB (docs/scaling.md,
# "Distillation's batch"); a batch is 2,000 chunks or DISTILL_BATCH_CHARS of their text, whichever comes first,
# so longer chunks (a larger chunk_tokens) do not multiply it.
DISTILL_BATCH_CHUNKS = 2000
DISTILL_BATCH_CHARS = 2_000_000

LayerName = Literal["atoms", "triples", "tags", "tables", "pseudograph"]
# Run order: tables read the facts the triples layer wrote for the same chunk.
ALL_LAYERS: tuple[LayerName, ...] = ("atoms", "triples", "tables", "tags", "pseudograph")


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk as distillation reads it from the graph."""

    id: str
    document_id: str
    text: str
    title: str
    order: int
    summary: str = ""  # enhanced chunking's forward summary: whom the chunk's pronouns and references name


# The relation of two entities that share a sentence and nothing more telling between them (offline extraction).
CO_OCCURRENCE = "co_occurs_with"


@dataclass(frozen=True)
class ExtractedTriple:
    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str


@dataclass
class ChunkExtraction:
    """Entities a chunk names (surface name, type) and the triples among them."""

    entities: list[tuple[str, str]] = field(default_factory=list)
    triples: list[ExtractedTriple] = field(default_factory=list)


@dataclass
class DistillConfig:
    """Tuning of the layers; the defaults follow the papers where they give values.

    ``entity_threshold``: cosine above which a new entity joins an existing one of a compatible type whose
    name holds the same words, or one word more or fewer (with ``entity_name_similarity``, a character
    n-gram guard, so that vectors alone never merge two different names); ``entity_candidates``: the
    entities each of a mention's name lookups returns at most. ``fact_rouge``/``fact_similarity``: PG-RAG
    fact-check thresholds (ROUGE-L precision against the chunk, cosine to the best-matching sentence);
    ``fact_regenerations`` bounds the re-asks when an item fails them. ``fusion``: whether the pseudo-graph layer
    fuses its new topics and fact items across documents when its batches are done (off by default: no retrieval
    method reads the fusion nodes, and fusion was a third of offline distillation's time, docs/scaling.md; nodes
    written without it stay pending, so a later run with it fuses them all). ``topic_fusion``/``fact_fusion``:
    PG-RAG fusion thresholds; a topic's or fact item's key lookup returns at most twice ``fusion_candidates``
    nodes of other documents; ``fusion_readers`` of those lookups run at once (each takes one server core).
    ``mind_map_tokens``: the most a mind-map prompt shows of a document's fact items, in estimated tokens; a
    document with more shows an even sample of them (its structure from start to end), and every item is still
    placed under its nearest route (4,000 leaves room for the prompt and the reply in an 8k context).
    Every similarity threshold is a cosine. ``llm_concurrency``: LLM calls a batch keeps in flight (the
    client connects it to the endpoint's ``max_concurrency``); ``lease_seconds``: how long a worker holds the
    chunks it claimed before another may take them over (a batch must finish within it). ``batch_chars``: the
    most chunk text one batch claims (at least one chunk), which bounds what it holds in memory: a batch's atoms
    and facts grow with its sentences, not its chunk count.
    """

    atom_temperature: float = 0.7
    statement_max_words: int = 40
    entity_threshold: float = 0.92
    entity_name_similarity: float = 0.5
    entity_candidates: int = 10
    fact_rouge: float = 0.4
    fact_similarity: float = 0.5
    fact_regenerations: int = 1
    fusion: bool = False
    topic_fusion: float = 0.92
    fact_fusion: float = 0.98
    fusion_candidates: int = 10
    fusion_readers: int = 2
    mind_map_tokens: int = 4000
    tag_sample: int = 30
    tags_per_chunk: int = 3
    domain: str = "general"
    llm_concurrency: int = 8
    lease_seconds: float = 3600.0
    batch_chars: int = DISTILL_BATCH_CHARS
    spacy_model: str | None = "en_core_web_sm"

    def __post_init__(self) -> None:
        if self.fusion_readers < 1:
            raise ConfigError(f"DistillConfig.fusion_readers must be at least 1, not {self.fusion_readers}")
        if self.mind_map_tokens < 1:
            raise ConfigError(f"DistillConfig.mind_map_tokens must be at least 1, not {self.mind_map_tokens}")


class ChunkFailure(BaseModel):
    """A chunk (or document, for the pseudo-graph) left undistilled; the next run retries it."""

    layer: str
    id: str
    error: str


class LayerReport(BaseModel):
    """One layer's run: how many chunks it distilled, the nodes and edges it wrote, what failed."""

    chunks: int = 0
    pending: int = 0
    created: dict[str, int] = Field(default_factory=dict)
    failed: list[ChunkFailure] = Field(default_factory=list)
    seconds: float = 0.0
    llm_seconds: float = 0.0
    method: str = ""

    def add(self, counts: dict[str, int]) -> None:
        for key, value in counts.items():
            self.created[key] = self.created.get(key, 0) + value


class DistillReport(BaseModel):
    """The job report: per-layer counts, whether it ran offline, and the model layer's accounting."""

    layers: dict[str, LayerReport] = Field(default_factory=dict)
    offline: bool
    llm: LLMReport = Field(default_factory=LLMReport)
    seconds: float = 0.0
    stopped: str | None = None  # why the job stopped early (an LLM outage or spent budget)

    @property
    def failed(self) -> int:
        return sum(len(r.failed) for r in self.layers.values())

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
