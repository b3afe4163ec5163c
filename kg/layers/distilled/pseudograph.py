"""The PG-RAG pseudo-graph: verified fact-check items per document, organised by a mind map
(topic -> routes -> facts), and fused across documents through super-nodes.

Per chunk, the ``fact_items`` task rewrites the text as standalone fact items; each item is verified
against its chunk with ROUGE-L precision (``fact_rouge``) and the cosine to the best-matching sentence
(``fact_similarity``). When items fail, the chunk is asked again (at most ``fact_regenerations`` times,
at a higher temperature so the cache does not replay the same answer); items that still fail are
dropped and counted. The ``mind_map`` task then organises a document's items into a topic tree, and
each item hangs under the leaf route whose path text is nearest to it. Offline, items are the chunk's
own statements (verbatim, so trivially verified), the topic is the document title and the routes are
the chunk's section path. The layer's :class:`~kg.layers.distilled.extractors.FactItemExtractor` does
either; the layer writes what it gives.

Every topic, route and item carries its path text (topic > route > ... > fact) and is embedded on it, and
links with ``ITEM_OF`` to the chunks it came from: an item to its chunk, a route to its items' chunks, the
topic to all of the chunks it maps. A mind map covers one document part: a document's chunks of the same
``order // MIND_MAP_CHUNKS`` (all of a document of up to 500 chunks), so a document of any size is mapped in
bounded batches, one topic per part (ids ``<document>:topic``, ``<document>:p<part>:topic`` past the first). A
part's mind map is written in one transaction, and the layer's unit of work is the part: its batches are whole
parts, and a part is cleared through its chunks before it is written again.

Fusion (``DistillConfig.fusion``, ``strata distill --fuse``; off by default, since no retrieval method reads the
fusion nodes and it was a third of offline distillation's time: docs/scaling.md, "What the distilled layer costs"):
topics and items are written with ``fusion_pending``; once a fusing run's batches have committed, every pending
node, of this run or of any run before it, is fused with similar ones of other documents
(``(:SuperTopic)-[:SIMILAR]->(:Topic)`` above ``topic_fusion``, 0.92, and ``(:SuperFact)-[:SIMILAR]->(:FactItem)``
above ``fact_fusion``, 0.98, exact cosines of the stored vectors) and loses the flag in the transaction that writes
its links. Fusion that fails or is interrupted is therefore retried by the next run of this layer, even when no
chunk is pending any more. Candidates of both come from the MinHash band keys of their path text (stored on a node
when fusion first reaches it), looked up in a keyword full-text index (a topic per document part, several items per
chunk: an HNSW search each grew with the vector index's size and segments, and was most of offline distillation's
time; a key lookup does not grow). Keys find what the fusion threshold keeps, texts of nearly the same words
(:func:`~kg.layers.distilled.text.fusion_keys`); a paraphrase in other words that an embedder places above the
threshold is not fused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kg.layers.distilled.base import Built, ExtractorLayer, short_hash, written
from kg.layers.distilled.extractors.protocols import ROUTE_SEP, FactItemExtractor
from kg.layers.distilled.models import ChunkRecord, DistillConfig
from kg.layers.distilled.stored_keys import StoredKeys, ensure_stored_keys
from kg.layers.distilled.text import FUSION_KEYS_VERSION, fusion_keys, text_key
from kg.shared.disjoint_sets import DisjointSets
from kg.store.base import GraphStore, Query, Transaction
from kg.store.lucene import whole_terms_queries
from kg.store.queries import (
    FUSE,
    FUSION_BY_KEYS,
    FUSION_KEYS_OF,
    FUSION_PENDING,
    FUSION_SUPERS,
    SET_FUSION_KEYS,
    TEXTS_PAGE_FUSION,
    CountRow,
)

__all__ = ["FACTITEM_KEYS", "MIND_MAP_CHUNKS", "TOPIC_KEYS", "PseudoGraphLayer", "fuse"]

# Pending nodes fused per transaction: bounds a resumed run's transactions and the ids held, not the groups
# (a later slice reuses the fusion nodes an earlier one wrote).
_FUSION_SLICE = 1000
# Chunks per mind map: a document part (claims.Claims). Fixed, so a part re-distilled later is the same part.
MIND_MAP_CHUNKS = 500


class PseudoGraphLayer(ExtractorLayer[FactItemExtractor]):
    name = "pseudograph"
    # mind_map runs once per document: counting it per chunk errs high, the safe side for a budget.
    llm_tasks = ("fact_items", "mind_map")
    clear = ("distill/clear_pseudograph",)
    part_chunks: int = MIND_MAP_CHUNKS

    def build(self, chunks: Sequence[ChunkRecord], *, previous_written: Callable[[], None] = written) -> Built:
        built = Built()
        docs: dict[str, list[ChunkRecord]] = {}  # by part: the document id, with ":p<part>" past the first
        for c in chunks:
            docs.setdefault(_part_key(c, self.part_chunks), []).append(c)
        items = self.extractor.verified(chunks, built)
        docs = {d: cs for d, cs in docs.items() if all(c.id in items for c in cs)}
        maps = self.extractor.mind_maps(docs, items, built)
        topics: list[dict[str, Any]] = []
        routes: dict[str, dict[str, Any]] = {}
        facts: list[dict[str, Any]] = []
        embed = self.ctx.embedder.embed
        for part, (topic, paths) in maps.items():
            doc = docs[part][0].document_id
            topic_id = f"{part}:topic"
            topics.append({"id": topic_id, "document_id": doc, "text": topic, "path_text": topic, "source": self.method,
                           "chunk_ids": [c.id for c in docs[part]]})
            doc_items = [it for c in docs[part] for it in items[c.id]]
            leaf_of = self.extractor.place(topic, paths, docs[part], doc_items)
            for it, path in zip(doc_items, leaf_of, strict=True):
                parent = topic_id
                for depth in range(1, len(path) + 1):
                    route_id = f"{part}:route{short_hash(*path[:depth])}"
                    route = routes.setdefault(route_id, {
                        "id": route_id, "document_id": doc, "parent_id": parent, "text": path[depth - 1],
                        "path_text": ROUTE_SEP.join((topic, *path[:depth])), "depth": depth, "chunk_ids": []})
                    if it.chunk.id not in route["chunk_ids"]:
                        route["chunk_ids"].append(it.chunk.id)
                    parent = route_id
                path_text = ROUTE_SEP.join((topic, *path, it.text))
                facts.append({
                    "id": f"{it.chunk.id}:fi{short_hash(text_key(it.text), n=10)}", "document_id": doc,
                    "chunk_id": it.chunk.id, "route_id": parent, "text": it.text, "topic": topic,
                    "path_text": path_text, "rouge_l": round(it.rouge, 4), "similarity": round(it.similarity, 4),
                    "source": self.method})
            built.done += [c.id for c in docs[part]]
        unique = list({f["id"]: f for f in facts}.values())
        route_rows = sorted(routes.values(), key=lambda r: r["depth"])
        embedded = [*topics, *route_rows, *unique]
        for row, vector in zip(embedded, embed([r["path_text"] for r in embedded]) if embedded else [], strict=True):
            row["embedding"] = vector  # a list as it is sent: embedding_listed
        built.rows += [("distill/create_topics", topics), ("distill/create_routes", route_rows),
                       ("distill/link_routes", route_rows), ("distill/create_items", unique)]
        built.counts.update({"Topic": len(topics), "Route": len(route_rows), "FactItem": len(unique)})
        return built

    def prepare(self) -> None:
        if self.ctx.config.fusion:
            for kind in (TOPIC_KEYS, FACTITEM_KEYS):
                ensure_stored_keys(self.ctx.store, kind)

    def finish(self) -> dict[str, int]:
        cfg = self.ctx.config
        if not cfg.fusion:
            return {}
        store = self.ctx.store
        return {
            "SuperTopic groups": fuse(store, _TOPICS, cfg.topic_fusion, cfg),
            "SuperFact groups": fuse(store, _FACTS, cfg.fact_fusion, cfg),
        }


def _part_key(chunk: ChunkRecord, part_chunks: int) -> str:
    """The document part a chunk's mind map covers, as its nodes' ids begin: the document id for the first."""
    part = chunk.order // part_chunks
    return chunk.document_id if part == 0 else f"{chunk.document_id}:p{part}"


def _fusion_keys(label: str, index: str) -> StoredKeys:
    """Fusion keys of ``label``'s path texts in ``index``, given once to the nodes a graph held before they had
    them (fact items before 2026-11-26, topics before 2026-11-27)."""
    return StoredKeys(index, TEXTS_PAGE_FUSION.render(label=label), SET_FUSION_KEYS.render(label=label),
                      version=FUSION_KEYS_VERSION, keys=fusion_keys)


TOPIC_KEYS = _fusion_keys("Topic", "topic_fusion_keys")
FACTITEM_KEYS = _fusion_keys("FactItem", "factitem_fusion_keys")


@dataclass(frozen=True)
class Fusion:
    """What fusing one label takes: its stored keys (candidates by key lookups), the label of its fusion nodes
    and their id prefix."""

    label: str
    keys: StoredKeys
    fusion_label: str
    prefix: str

    @property
    def write(self) -> Query[CountRow]:
        """Links each group's members to its fusion node (``distill/fuse.cypher``)."""
        return FUSE.render(label=self.label, fusion_label=self.fusion_label)


_TOPICS = Fusion("Topic", TOPIC_KEYS, "SuperTopic", "st_")
_FACTS = Fusion("FactItem", FACTITEM_KEYS, "SuperFact", "sf_")
Edges = list[tuple[str, str]]
# Fusion nodes join the members' components under this prefix, which no node id starts with.
_SUPER_KEY = "\0super:"


def fuse(store: GraphStore, fusion: Fusion, threshold: float, config: DistillConfig) -> int:
    """Fuse every node of ``fusion.label`` still marked ``fusion_pending`` (see the module docstring);
    returns the groups written (a group that slices of pending nodes found again counts once)."""
    pending = FUSION_PENDING.render(label=fusion.label)
    groups: set[str] = set()
    with ThreadPoolExecutor(max_workers=config.fusion_readers, thread_name_prefix="fusion-read") as readers:
        while ids := sorted(r["id"] for r in store.read(pending, limit=_FUSION_SLICE)):
            rows = _groups(store, fusion, _near(store, fusion, ids, threshold, config, readers))

            def write(tx: Transaction, rows: list[dict[str, Any]] = rows, ids: list[str] = ids) -> None:
                tx.run(fusion.write, rows=rows)
                tx.run_template("distill/fusion_done", label=fusion.label, ids=ids)

            store.atomic(write)
            groups.update(r["super_id"] for r in rows)
    return len(groups)


def _in_parts(readers: ThreadPoolExecutor, count: int, items: list[Any], read: Callable[[list[Any]], list[Any]]
              ) -> list[Any]:
    """``read`` over ``items`` split into ``count`` parts read at once (each read runs on one server core)."""
    share = -(-len(items) // count)
    parts = readers.map(read, [items[i:i + share] for i in range(0, len(items), share)])
    return [r for found in parts for r in found]


def _near(store: GraphStore, fusion: Fusion, ids: list[str], threshold: float, config: DistillConfig,
          readers: ThreadPoolExecutor) -> Edges:
    """Links from each of ``ids`` to the nodes of other documents that share one of its keys and are within the
    threshold: the best ``2 * fusion_candidates`` by the key index's score, the document's own excluded by the
    lookup itself, so a large document's own items never crowd the others out. Nodes written without keys (the
    layer writes none: only fusion reads them) are keyed first, so later slices and runs find them; a link is
    found from either end, so a slice need not find the slices after it."""
    nodes = store.read(FUSION_KEYS_OF.render(label=fusion.label), ids=ids)
    unkeyed = [{"id": r["id"], "keys": list(fusion_keys(r["path_text"]))} for r in nodes if r["keys"] is None]
    if unkeyed:
        store.write(SET_FUSION_KEYS.render(label=fusion.label), rows=unkeyed)
    keyed = {r["id"]: r["keys"] for r in unkeyed}
    rows = []
    for r in nodes:
        if keys_of := keyed.get(r["id"], r["keys"]):
            [keys] = whole_terms_queries(keys_of)
            [document] = whole_terms_queries([r["document_id"]])
            rows.append({"id": r["id"], "query": f"fusion_keys:({keys}) AND NOT document_id:{document}"})
    query = FUSION_BY_KEYS.render(label=fusion.label, index=fusion.keys.index)
    found = _in_parts(readers, config.fusion_readers, rows, lambda part: store.read(
        query, rows=part, limit=2 * config.fusion_candidates, threshold=threshold))
    return [(r["id"], other) for r in found for other in r["similar"]]


def _groups(store: GraphStore, fusion: Fusion, edges: Edges) -> list[dict[str, Any]]:
    """One row per connected group of the linked nodes and of the fusion nodes they already belong to: its fusion
    node (the first existing one by id, else a new one) and the other existing ones it absorbs, which two groups
    fused apart by earlier slices or runs have when a new node links them."""
    if not edges:
        return []
    components = DisjointSets[str]()
    for a, b in edges:
        components.union(a, b)
    members = sorted(components.members())
    supers: dict[str, set[str]] = {}
    for r in store.read(FUSION_SUPERS.render(label=fusion.label), ids=members):
        supers.setdefault(r["id"], set()).add(r["super_id"])
        components.union(r["id"], _SUPER_KEY + r["super_id"])
    groups: dict[str, list[str]] = {}
    for m in members:
        groups.setdefault(components.find(m), []).append(m)
    rows = []
    for group in groups.values():
        existing = sorted(set().union(*(supers.get(m, set()) for m in group)))
        rows.append({"super_id": existing[0] if existing else fusion.prefix + short_hash(min(group), n=16),
                     "members": group, "absorbed": existing[1:]})
    return rows
