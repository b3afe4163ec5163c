"""Triples and entities (KG2RAG 2.1): per chunk, typed (head, relation, tail) triples, resolved entities,
reified facts that keep their chunk, and the chunk's mentions.

The layer's :class:`~kg.layers.distilled.extractors.TripleExtractor` finds them: with an LLM the call per chunk it
shares with atoms and tags (:mod:`kg.layers.distilled.combined`) or alone the ``triples`` task (keeping triples
whose ends the chunk names); offline, spaCy entities related when they share a
sentence. Mentions of the whole batch are resolved at once by
:class:`~kg.layers.distilled.resolve.EntityResolver` (indexed lookups, never all pairs). Each triple becomes
``(:Fact {head, relation, tail, text})-[:FACT_OF]->(:Chunk)`` with ``SUBJECT`` and ``OBJECT`` edges to its
entities, so a fact is deleted with its document while the entities, shared across documents, stay as long
as some chunk mentions them (docs/schema.md: why a node, not a relationship).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kg.layers.distilled.base import Built, ExtractorLayer, short_hash, written
from kg.layers.distilled.extractors.protocols import TripleExtractor
from kg.layers.distilled.models import CO_OCCURRENCE, ChunkRecord
from kg.layers.distilled.resolve import ENTITY_BLOCKS, EntityResolver
from kg.layers.distilled.stored_keys import ensure_stored_keys

__all__ = ["TriplesLayer"]


class TriplesLayer(ExtractorLayer[TripleExtractor]):
    name = "triples"
    llm_tasks = ("triples",)
    clear = ("distill/clear_facts",)
    stale = ("tables",)  # relation rows are read from the chunk's facts
    serial = True  # resolution reads the entities earlier batches created

    def prepare(self) -> None:
        ensure_stored_keys(self.ctx.store, ENTITY_BLOCKS)

    def build(self, chunks: Sequence[ChunkRecord], *, previous_written: Callable[[], None] = written) -> Built:
        built = Built()
        extracted = self.extractor.triples(chunks, built)
        source = self.extractor.source
        previous_written()  # resolution reads the entities earlier batches created
        resolver = EntityResolver(self.ctx.store, self.ctx.embedder, self.ctx.config)
        resolution = resolver.resolve([m for _, ex in extracted for m in ex.entities])
        facts: list[dict[str, object]] = []
        mentions: list[dict[str, object]] = []
        for chunk, ex in extracted:
            # Each mention keeps the names the chunk used, so a deletion can take its aliases with it.
            names: dict[str, set[str]] = {}
            for surface, type_ in ex.entities:
                name = " ".join(surface.split())
                if (name, type_) in resolution.ids:
                    names.setdefault(resolution.ids[(name, type_)], set()).add(name)
            mentions += [{"chunk_id": chunk.id, "entity_id": e, "names": sorted(names[e])} for e in sorted(names)]
            seen: set[tuple[str, str, str]] = set()
            for t in ex.triples:
                head = resolution.ids.get((" ".join(t.head.split()), t.head_type))
                tail = resolution.ids.get((" ".join(t.tail.split()), t.tail_type))
                relation = "_".join(t.relation.split())
                if head is None or tail is None or (head, relation, tail) in seen:
                    continue
                seen.add((head, relation, tail))
                facts.append({
                    "id": f"{chunk.id}:f{short_hash(head, relation, tail, n=10)}", "chunk_id": chunk.id,
                    "document_id": chunk.document_id, "head": t.head, "relation": relation, "tail": t.tail,
                    "head_id": head, "tail_id": tail, "source": source,
                    "text": f"{t.head} {relation.replace('_', ' ')} {t.tail}",
                })
            built.done.append(chunk.id)
        # A co-occurrence says only that two names share a sentence: the chunk's mentions say as much, and its
        # vector would be the two names'. Left out of the fact index, it costs no HNSW insertion, which was two
        # thirds of the triples layer's server time on entity-dense text (docs/scaling.md).
        related = [f for f in facts if f["relation"] != CO_OCCURRENCE]
        if related:
            vectors = self.ctx.embedder.embed([str(f["text"]) for f in related])
            for fact, vector in zip(related, vectors, strict=True):
                fact["embedding"] = vector  # a list as it is sent: embedding_listed
        new = [e.row(source) for e in resolution.new]
        built.rows += [("distill/merge_entities", new), ("distill/add_aliases", resolution.alias_rows()),
                       ("distill/create_facts", facts), ("distill/create_mentions", mentions)]
        built.counts = {"Entity": len(new), "Entity reused": len(resolution.entities) - len(new),
                        "Fact": len(facts), "MENTIONS": len(mentions)}
        return built

