"""Triples and entities (KG2RAG 2.1): per chunk, typed (head, relation, tail) triples, resolved entities,
reified facts that keep their chunk, and the chunk's mentions.

With an LLM the ``triples`` task extracts them; offline, :class:`~kg.layers.distilled.offline.OfflineExtractor`
finds entities with spaCy and relates those that share a sentence. Mentions of the whole batch are
resolved at once by :class:`~kg.layers.distilled.resolve.EntityResolver` (indexed lookups, never all pairs).
Each triple becomes ``(:Fact {head, relation, tail, text})-[:FACT_OF]->(:Chunk)`` with ``SUBJECT`` and
``OBJECT`` edges to its entities, so a fact is deleted with its document while the entities, shared
across documents, stay as long as some chunk mentions them (docs/schema.md: why a node, not a relationship).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

from kg.layers.distilled.base import Built, Layer, call_many, short_hash
from kg.layers.distilled.models import ChunkExtraction, ChunkRecord, ExtractedTriple
from kg.layers.distilled.offline import OfflineExtractor
from kg.layers.distilled.resolve import EntityResolver
from kg.llm import Triples

__all__ = ["TriplesLayer"]


class TriplesLayer(Layer):
    name = "triples"
    llm_tasks = ("triples",)
    clear = ("distill/clear_facts",)
    stale = ("tables",)  # relation rows are read from the chunk's facts

    @cached_property
    def extractor(self) -> OfflineExtractor:
        return OfflineExtractor(model=self.ctx.config.spacy_model)

    @property
    def method(self) -> str:
        return f"offline ({self.extractor.method})" if self.ctx.offline else "llm"

    def _extract(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, ChunkExtraction]]:
        if self.ctx.offline:
            return list(zip(chunks, self.extractor.extract_many([c.text for c in chunks]), strict=True))
        outcome = call_many(self.ctx, "triples", Triples, [{"chunk": c.text} for c in chunks])
        built.absorb(outcome)
        out: list[tuple[ChunkRecord, ChunkExtraction]] = []
        ungrounded = 0
        for i, chunk in enumerate(chunks):
            if i in outcome.errors:
                built.fail(self.name, [chunk.id], outcome.errors[i])
                continue
            extraction = ChunkExtraction()
            # What the chunk names: its title, its text, and whom its references point at (the summary).
            text = f"{chunk.title}\n{chunk.text}\n{chunk.summary}".casefold()
            for t in outcome.results[i].triples:
                if not (t.head.strip() and t.tail.strip() and t.relation.strip()):
                    continue
                if not (_grounded(t.head, text) and _grounded(t.tail, text)):
                    ungrounded += 1  # a small model names things the chunk never mentions
                    continue
                extraction.triples.append(ExtractedTriple(t.head.strip(), t.head_type, t.relation.strip(),
                                                          t.tail.strip(), t.tail_type))
                extraction.entities += [(t.head.strip(), t.head_type), (t.tail.strip(), t.tail_type)]
            out.append((chunk, extraction))
        if ungrounded:
            self.ctx.llm.accounting.count("triples", invalid_items=ungrounded)
        return out

    def build(self, chunks: Sequence[ChunkRecord]) -> Built:
        built = Built()
        extracted = self._extract(chunks, built)
        source = "offline" if self.ctx.offline else "llm"
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
        if facts:
            vectors = self.ctx.embedder.embed([str(f["text"]) for f in facts])
            for fact, vector in zip(facts, vectors, strict=True):
                fact["embedding"] = vector.tolist()
        new = [{"id": e.id, "key": e.key, "name": e.name, "type": e.type, "aliases": sorted(e.aliases),
                "source": source, "embedding": e.embedding} for e in resolution.new]
        built.rows += [("distill/merge_entities", new), ("distill/add_aliases", resolution.alias_rows()),
                       ("distill/create_facts", facts), ("distill/create_mentions", mentions)]
        built.counts = {"Entity": len(new), "Entity reused": len(resolution.entities) - len(new),
                        "Fact": len(facts), "MENTIONS": len(mentions)}
        return built


_WORD = re.compile(r"\w+")
_FUNCTION_WORDS = frozenset({"the", "and", "for", "with", "from", "into", "von", "der", "des", "les", "del"})


def _grounded(name: str, chunk_casefolded: str) -> bool:
    r"""True when the chunk (its title and text) names ``name``, in full or by part of it ("Edwards" for "Bob
    Edwards"): a fact must link entities its chunk mentions, not ones a small model made up.

    >>> _grounded("turbine T-14", "the gearbox of turbine t-14 failed")
    True
    >>> _grounded("Bob Edwards", "bob edwards\nedwards retired in 2004.")
    True
    >>> _grounded("reparations", "repairs took 12 days")
    False
    >>> _grounded("The Reparations", "the repairs took 12 days")
    False
    """
    folded = " ".join(name.casefold().split())
    if folded in chunk_casefolded:
        return True
    words = [w for w in _WORD.findall(folded) if (len(w) >= 3 or w.isdigit()) and w not in _FUNCTION_WORDS]
    return any(re.search(rf"\b{re.escape(w)}\b", chunk_casefolded) for w in words)
