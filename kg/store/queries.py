"""Every named query whose rows Strata reads by column, with the type of its rows, one section per layer.

A handle such as :data:`CHUNK_VECTOR` is a :class:`~kg.store.base.Query`: ``store.read(CHUNK_VECTOR, ...)``
returns ``list[ChunkVectorRow]``, so a misspelt or renamed column is a ``mypy`` error at the call site, and
``tests/store/test_row_types.py`` checks that each row type's keys are exactly the ``RETURN`` columns of its
``.cypher`` file (renaming a column in Cypher fails that test). A query whose rows nobody reads by column
(writes, ``meta/ping``) is still run by its plain name.

Value types say what the graph holds: ``| None`` where a property may be missing and the query does not
``coalesce`` it.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from kg.store.base import Query

# -- meta ----------------------------------------------------------------------------------------------------


class MetaRow(TypedDict):
    schema_version: int | None
    embedder: str | None
    dimensions: int | None


class VectorIndexRow(TypedDict):
    name: str
    label: str | None
    dimensions: int | None


class EmbeddedRow(TypedDict):
    embedded: int


class CountRow(TypedDict):
    count: int


class IndexRow(TypedDict):
    name: str
    type: str
    labelsOrTypes: list[str] | None  # None for the token lookup indexes
    properties: list[str] | None
    state: str
    populationPercent: float


class NameRow(TypedDict):
    name: str


class IndexAnalyzerRow(TypedDict):
    name: str
    analyzer: str | None


META_READ = Query("meta/read", MetaRow)
FULLTEXT_ANALYZERS = Query("meta/fulltext_analyzers", NameRow)
FULLTEXT_INDEX_ANALYZERS = Query("meta/fulltext_index_analyzers", IndexAnalyzerRow)
META_VECTOR_INDEXES = Query("meta/vector_indexes", VectorIndexRow)
META_INDEXES = Query("meta/indexes", IndexRow)
COUNT_EMBEDDED = Query("meta/count_embedded", EmbeddedRow)
"""Template: ``COUNT_EMBEDDED.render(label=...)``."""
COUNT_LABEL = Query("meta/count_label", CountRow)
"""Template: ``COUNT_LABEL.render(label=...)``."""
COUNT_REL = Query("meta/count_rel", CountRow)
"""Template: ``COUNT_REL.render(rel=...)``."""


# -- graph: the corpus and resource layers -------------------------------------------------------------------


class IdRow(TypedDict):
    id: str


class DocumentRow(TypedDict):
    """A document as :class:`kg.app.client.DocumentInfo` lists it."""

    id: str
    title: str
    source: str
    format: str
    pages: int | None
    sha256: str
    loaded_at: str
    chunks: int


class DocumentStateRow(TypedDict):
    id: str
    sha256: str


class MentionKeyCountRow(TypedDict):
    term: str
    documents: int


class TitleRow(TypedDict):
    id: str
    title: str


class UnnamedDocumentRow(TypedDict):
    id: str
    title: str
    opening: str


class TitleUsedRow(TypedDict):
    id: str
    used: bool


class MentionKeysStateRow(TypedDict):
    version: bool | int | None


class IdsRow(TypedDict):
    ids: list[str]


class StoredChunkRow(TypedDict):
    id: str
    hidden: bool


class DeletedRow(TypedDict):
    deleted: int


class RevealedRow(TypedDict):
    revealed: int


class RetiredRow(TypedDict):
    id: str
    resumed: bool


class NeighbourRow(TypedDict):
    chunk_id: str
    order: int
    text: str | None
    page: int | None
    char_start: int
    char_end: int


class ChunkContextRow(TypedDict):
    chunk_id: str
    document_id: str
    title: str | None
    source: str | None
    page: int | None
    char_start: int
    char_end: int
    order: int
    kind: str | None
    text: str
    section_path: list[str]
    neighbours: list[NeighbourRow]


class EntityMatchRow(TypedDict):
    id: str
    name: str
    type: str
    aliases: list[str]
    exact: bool
    score: float
    facts: int
    mentions: int


class EvidenceColumns(TypedDict):
    """The chunk that states a fact or mentions an entity."""

    chunk_id: str
    document_id: str
    title: str | None
    source: str | None
    page: int | None
    char_start: int
    char_end: int
    chunk_text: str


class EntityFactRow(EvidenceColumns):
    fact_id: str
    head: str
    relation: str
    tail: str
    text: str | None
    method: str | None
    role: Literal["subject", "object"]


class EntityMentionRow(EvidenceColumns):
    names: list[str]


class OutlineRow(TypedDict):
    id: str
    key: str
    title: str
    level: int
    page: int | None
    chunk_ids: list[str]


LIST_DOCUMENTS = Query("graph/list_documents", DocumentRow)
FIND_DOCUMENT = Query("graph/find_document", DocumentRow)
FILE_DOCUMENTS = Query("graph/file_documents", DocumentRow)
DOCUMENT_STATES = Query("graph/document_states", DocumentStateRow)
SHARED_CANDIDATES = Query("graph/shared_candidates", IdsRow)
CHUNKS_SHARED = Query("graph/chunks_shared", IdsRow)
COUNT_CHUNKS = Query("graph/count_chunks", CountRow)
STORED_CHUNKS = Query("graph/stored_chunks", StoredChunkRow)
KEEP_CHUNKS = Query("graph/keep_chunks", CountRow)
RETIRE_DOCUMENTS = Query("graph/retire_documents", RetiredRow)
DELETE_OWNED_BATCH = Query("graph/delete_owned_batch", DeletedRow)
"""Template: ``DELETE_OWNED_BATCH.render(label=...)``."""
DELETE_HIDDEN_BATCH = Query("graph/delete_hidden_batch", DeletedRow)
REVEAL_CHUNKS = Query("graph/reveal_chunks", RevealedRow)
SWEEP_ORPHANS = Query("graph/sweep_orphans", DeletedRow)
"""Template: ``SWEEP_ORPHANS.render(label=...)``."""
MENTIONS_PENDING = Query("graph/mentions_pending", IdRow)
MENTION_KEY_COUNTS = Query("graph/mention_key_counts", MentionKeyCountRow)
UNKEYED_TITLES = Query("graph/unkeyed_titles", TitleRow)
QUALIFIED_TITLES = Query("graph/qualified_titles", TitleRow)
MENTION_KEYS_STATE = Query("graph/mention_keys_state", MentionKeysStateRow)
UNNAMED_DOCUMENTS = Query("graph/unnamed_documents", UnnamedDocumentRow)
TITLES_USED = Query("graph/titles_used", TitleUsedRow)
CHUNK_CONTEXT = Query("graph/chunk_context", ChunkContextRow)
FIND_ENTITIES = Query("graph/find_entities", EntityMatchRow)
ENTITY_FACTS = Query("graph/entity_facts", EntityFactRow)
ENTITY_MENTIONS = Query("graph/entity_mentions", EntityMentionRow)
DOCUMENT_OUTLINE = Query("graph/document_outline", OutlineRow)


# -- retrieval -----------------------------------------------------------------------------------------------


class ChunkColumns(TypedDict):
    """The chunk columns every retrieval query returns."""

    chunk_id: str
    text: str | None
    document_id: str
    title: str | None
    source: str | None
    page: int | None
    char_start: int | None
    char_end: int | None
    sentences: list[int]  # where each sentence of the text starts


class ScoredChunkRow(ChunkColumns):
    """A chunk with its raw cosine to the query vector, null without one."""

    score: float | None


class PathChunkRow(ChunkColumns):
    """A chunk found by one path: ``path`` names it, ``via``/``via_id`` the node it went through."""

    score: float
    path: str
    via: str | None
    via_id: str | None


class SourceRow(TypedDict, total=False):
    path: str
    score: float | None
    via: str | None
    via_id: str | None


class SourcedChunkRow(ChunkColumns):
    """A chunk found by several paths, each with its own score."""

    score: float
    sources: list[SourceRow]


class AtomCandidateRow(PathChunkRow):
    atom_id: str
    atom_text: str


class TitleLinkRow(PathChunkRow):
    n: int


class NextRoundRow(ScoredChunkRow):
    """A chunk a later retrieval round's probe ``n`` found: its BM25 ``score`` and raw cosine ``sim`` to the
    question (null for a chunk without an embedding), how many passages the probe's index search ``matched``, and
    whether the passage is ``about`` the probe's name."""

    n: int
    sim: float | None
    matched: int
    about: bool


class HybridRow(SourcedChunkRow):
    links: list[PathChunkRow] | None
    question_links: list[PathChunkRow] | None  # on the first row only, when asked for
    named_by: list[PathChunkRow]  # for the top link seeds, when asked for: the passages that name it


class PresentRow(TypedDict):
    present: bool


class SeedEntityRow(TypedDict):
    chunk_id: str
    entity_id: str
    name: str | None


class HopRow(TypedDict):
    fact_id: str
    text: str | None
    subject_id: str
    subject: str | None
    object_id: str
    object: str | None
    chunk_id: str
    relevance: float


class PathNode(TypedDict):
    id: str
    text: str
    path_text: str
    score: float | None


class AnchorRow(TypedDict):
    anchor_id: str
    score: float
    path: list[PathNode]


class SubtreeRow(TypedDict):
    item_id: str
    chunk_id: str
    item_score: float
    path: list[PathNode]


class TermSampleRow(TypedDict):
    id: str
    text: str
    title: str


CHUNK_VECTOR = Query("retrieval/chunk_vector", PathChunkRow)
ATOM_VECTOR = Query("retrieval/atom_vector", PathChunkRow)
ATOM_CANDIDATES = Query("retrieval/atom_candidates", AtomCandidateRow)
FULLTEXT = Query("retrieval/fulltext", PathChunkRow)
ENTITY_LINKS = Query("retrieval/entity_links", PathChunkRow)
TITLE_LINKS = Query("retrieval/title_links", TitleLinkRow)
NEXT_ROUND = Query("retrieval/next_round", NextRoundRow)
CHUNKS_BY_ID = Query("retrieval/chunks_by_id", ScoredChunkRow)
HYBRID = Query("retrieval/hybrid", HybridRow)
MULTIGRAIN = Query("retrieval/multigrain", SourcedChunkRow)
HAS_LABEL = Query("retrieval/has_label", PresentRow)
"""Template: ``HAS_LABEL.render(label=...)``."""
KG2RAG_SEED_ENTITIES = Query("retrieval/kg2rag_seed_entities", SeedEntityRow)
KG2RAG_HOP = Query("retrieval/kg2rag_hop", HopRow)
PGRAG_ANCHORS = Query("retrieval/pgrag_anchors", AnchorRow)
PGRAG_SUBTREE = Query("retrieval/pgrag_subtree", SubtreeRow)
TERM_SAMPLE = Query("retrieval/term_sample", TermSampleRow)


class PPRSeedRow(TypedDict):
    kind: Literal["fact", "statement", "name", "dense", "lexical"]
    id: str
    name: str | None
    score: float
    via: str | None
    via_id: str | None
    chunks: int


class PPRSeedsRow(TypedDict):
    seeds: list[PPRSeedRow]
    version: list[int | str]  # the counts and the newest load the projection is named after


class PPRProjectRow(TypedDict):
    graph: str
    nodes: int
    relationships: int
    millis: int


class GraphNameRow(TypedDict):
    graph: str


class PPRGdsRow(TypedDict):
    present: bool  # GDS's PageRank and catalog
    weighted: bool  # Strata's strata.ppr.stream (weighted source nodes on a GDS projection)


class PPRRankRow(TypedDict):
    chunk_id: str
    score: float


class PPRNeighbour(TypedDict):
    id: str
    weight: float


class PPRNeighboursRow(TypedDict):
    id: str
    neighbours: list[PPRNeighbour]
    degree: float


class PPREdgesRow(TypedDict):
    """Parallel lists, one entry per chunk and entity (a chunk naming other documents has more than one)."""

    ids: list[str]
    chunks: list[bool]
    targets: list[list[str]]
    weights: list[list[float]]


class PPRPathRow(ChunkColumns):
    """A ranked chunk and the shortest way to it from a seed (both null for a seed chunk, or one reached only
    by longer walks)."""

    seed_id: str | None
    path: list[str] | None


class ChunkIdRow(TypedDict):
    chunk_id: str


PPR_SEEDS = Query("retrieval/ppr_seeds", PPRSeedsRow)
PPR_GDS = Query("retrieval/ppr_gds", PPRGdsRow)
PPR_GRAPHS = Query("retrieval/ppr_graphs", GraphNameRow)
PPR_DROP = Query("retrieval/ppr_drop", GraphNameRow)
PPR_PROJECT = Query("retrieval/ppr_project", PPRProjectRow)
PPR_RANK = Query("retrieval/ppr_rank", PPRRankRow)
PPR_RANK_WEIGHTED = Query("retrieval/ppr_rank_weighted", PPRRankRow)
PPR_NEIGHBOURS = Query("retrieval/ppr_neighbours", PPRNeighboursRow)
PPR_EDGES = Query("retrieval/ppr_edges", PPREdgesRow)
PPR_PATHS = Query("retrieval/ppr_paths", PPRPathRow)
PPR_FILTER = Query("retrieval/ppr_filter", ChunkIdRow)


# -- distilled layer -----------------------------------------------------------------------------------------


class ClaimCandidateRow(TypedDict):
    id: str
    document_id: str
    order: int
    chars: int


class ClaimedChunkRow(TypedDict):
    id: str
    document_id: str
    text: str | None
    title: str
    order: int
    summary: str


class PendingTotalRow(TypedDict):
    pending: int


class LeaseOwnerRow(TypedDict):
    owner: str


class SerialOwnerRow(TypedDict):
    owner: str | None


class PendingCountRow(TypedDict):
    layer: str
    chunks: int
    pending: int


class ChunkTableRow(TypedDict):
    chunk_id: str
    table_id: str
    document_id: str
    header: list[str] | None
    csv: str | None


class ChunkFactRow(TypedDict):
    chunk_id: str
    fact_id: str
    document_id: str
    head: str
    head_type: str | None
    relation: str
    tail: str
    tail_type: str | None


class AggregateRow(TypedDict):
    count: int
    sum: float | None
    avg: float | None
    min: float | None
    max: float | None


class SectionPathRow(TypedDict):
    id: str
    section_path: list[str]


class EntityByKeyRow(TypedDict):
    key: str
    id: str
    name: str
    type: str
    aliases: list[str] | None


class EntityByNameRow(TypedDict):
    key: str
    id: str
    name: str
    type: str
    aliases: list[str] | None
    score: float


class TextPageRow(TypedDict):
    """A node's text its stored keys come from, and whether it lacks them (kg.layers.distilled.stored_keys)."""

    id: str
    text: str
    missing: bool


class KeysStateRow(TypedDict):
    version: int | None


class EntityByBlockRow(TypedDict):
    i: int
    id: str
    name: str
    type: str
    aliases: list[str] | None
    score: float


class FusionNearRow(TypedDict):
    id: str
    similar: list[str]


class FusionKeysRow(TypedDict):
    id: str
    document_id: str
    keys: list[str] | None  # None: written without them (fusion keys them when it reaches the node)
    path_text: str


class FusionSuperRow(TypedDict):
    id: str
    super_id: str


class TagClassesRow(TypedDict):
    tag_classes: str | None


# ``class`` is a Python keyword: this row type is declared in the functional form.
TagForTermRow = TypedDict("TagForTermRow", {"name": str, "class": str | None, "direct": bool})

CLAIM_CANDIDATES = Query("distill/claim_candidates", ClaimCandidateRow)
CLAIM_PARTS = Query("distill/claim_parts", ClaimCandidateRow)
CLAIM_CHUNKS = Query("distill/claim_chunks", ClaimedChunkRow)
LEASE_OWNERS = Query("distill/lease_owners", LeaseOwnerRow)
LOCK_SERIAL = Query("distill/lock_serial", LeaseOwnerRow)
SERIAL_OWNER = Query("distill/serial_owner", SerialOwnerRow)
PENDING_TOTAL = Query("distill/pending_total", PendingTotalRow)
PENDING_COUNTS = Query("distill/pending_counts", PendingCountRow)
CHUNK_TABLES = Query("distill/chunk_tables", ChunkTableRow)
CHUNK_FACTS = Query("distill/chunk_facts", ChunkFactRow)
AGGREGATE_ROWS = Query("distill/aggregate_rows", AggregateRow)
SECTION_PATHS = Query("distill/section_paths", SectionPathRow)
ENTITIES_BY_KEY = Query("distill/entities_by_key", EntityByKeyRow)
ENTITIES_BY_NAME = Query("distill/entities_by_name", EntityByNameRow)
ENTITIES_BY_BLOCKS = Query("distill/entities_by_blocks", EntityByBlockRow)
TEXTS_PAGE_ENTITY = Query("distill/entity_texts_page", TextPageRow)
KEYS_STATE = Query("distill/keys_state", KeysStateRow)
"""Template: ``KEYS_STATE.render(index=...)``."""
KEYS_DONE = Query("distill/keys_done", CountRow)
"""Template: ``KEYS_DONE.render(index=...)``."""
SET_ENTITY_KEYS = Query("distill/set_entity_keys", CountRow)
SET_FUSION_KEYS = Query("distill/set_fusion_keys", CountRow)
"""Template: ``SET_FUSION_KEYS.render(label=...)``."""
TEXTS_PAGE_FUSION = Query("distill/fusion_texts_page", TextPageRow)
"""Template: ``TEXTS_PAGE_FUSION.render(label=...)``."""
FUSION_KEYS_OF = Query("distill/fusion_keys_of", FusionKeysRow)
"""Template: ``FUSION_KEYS_OF.render(label=...)``."""
FUSION_BY_KEYS = Query("distill/fusion_by_keys", FusionNearRow)
"""Template: ``FUSION_BY_KEYS.render(label=..., index=...)``."""
FUSION_PENDING = Query("distill/fusion_pending", IdRow)
"""Template: ``FUSION_PENDING.render(label=...)``."""
FUSION_SUPERS = Query("distill/fusion_supers", FusionSuperRow)
"""Template: ``FUSION_SUPERS.render(label=...)``."""
FUSE = Query("distill/fuse", CountRow)
"""Template: ``FUSE.render(label=..., fusion_label=...)``; counts the memberships written."""
TAG_CLASSES_READ = Query("distill/tag_classes_read", TagClassesRow)
TAGS_EXISTING = Query("distill/tags_existing", IdRow)
TAGS_FOR_TERMS = Query("distill/tags_for_terms", TagForTermRow)


# -- reasoning -----------------------------------------------------------------------------------------------


class TableColumnsRow(TypedDict):
    table_id: str
    header: list[str] | None
    caption: str
    section: str
    document: str
    cells: list[list[str]]
    chunk_id: str | None  # the chunk that represents the table; the chunk's columns are null without one
    text: str | None
    document_id: str
    title: str | None
    page: int | None
    char_start: int | None
    char_end: int | None


class RankRow(TypedDict):
    cells: list[str]
    value: float
    index: int


class CellRow(TypedDict):
    table_id: str
    cells: list[str]


TABLE_COLUMNS = Query("reasoning/table_columns", TableColumnsRow)
RANK_ROWS = Query("reasoning/rank_rows", RankRow)
ROWS_WITH_CELL = Query("reasoning/rows_with_cell", CellRow)


def all_queries() -> list[Query[Any]]:
    """Every typed query handle of this module (what the row-type test checks)."""
    return [value for value in globals().values() if isinstance(value, Query)]


class ChunkEmbeddingRow(TypedDict):
    chunk_id: str
    embedding: list[float]


CHUNK_EMBEDDINGS = Query("meta/chunk_vectors", ChunkEmbeddingRow)
