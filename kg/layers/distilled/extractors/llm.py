"""The LLM mode of each distillation layer: every extraction is an LLM task run concurrently over a batch.

A call whose output stays invalid fails its chunk alone (recorded in the batch's :class:`Built`); an endpoint
that is down or a spent budget stops the job after the batch (:attr:`LLMOutcome.fatal`).

Atoms, triples and tags come from one call per chunk when a job builds atoms and triples together (the
default): :class:`LLMKnowledgeExtractor` runs ``chunk_knowledge`` (atoms, triples and tags) or, without the
tags layer, ``atoms_triples``, once per chunk of a batch, and hands each layer its part through a
:class:`GivenAtoms`, :class:`GivenTriples` or :class:`GivenTags` extractor built for that batch alone
(:mod:`kg.layers.distilled.combined`): nothing is kept across batches. A layer chosen alone keeps its own task
(``atomic_questions`` sampled at ``atom_temperature``, ``triples``, ``chunk_tags``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kg.layers.distilled.base import Built, Context, call_many
from kg.layers.distilled.extractors.protocols import ROUTE_SEP, MindMapOutline, SharedExtraction, VerifiedItem
from kg.layers.distilled.models import ChunkExtraction, ChunkRecord, ExtractedTriple
from kg.layers.distilled.text import fact_listing, name_key, rouge_l, sentences, text_key
from kg.llm import (
    ATOMIC_QUESTIONS,
    ATOMS_TRIPLES,
    CHUNK_KNOWLEDGE,
    CHUNK_TAGS,
    FACT_ITEMS,
    MIND_MAP,
    TAG_ALIASES,
    TAG_CLASSES,
    TRIPLES,
    AtomsTriples,
    ChunkKnowledge,
    MindMapNode,
    TagClass,
    Task,
    Triple,
)
from kg.store.queries import TAG_CLASSES_READ

__all__ = [
    "GivenAtoms",
    "GivenTags",
    "GivenTriples",
    "LLMAtomExtractor",
    "LLMExtractors",
    "LLMFactItemExtractor",
    "LLMKnowledgeExtractor",
    "LLMTagExtractor",
    "LLMTripleExtractor",
]

_ALIAS_GROUP = 40


class LLMAtomExtractor:
    """PIKE-RAG atomizing: the questions each chunk answers (task ``atomic_questions``, temperature
    ``atom_temperature``, 0.7 by default as the paper samples diverse questions)."""

    method = "llm"
    kind = "question"
    source = "llm"

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def atoms(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[str]]]:
        outcome = call_many(self.ctx, ATOMIC_QUESTIONS, [{"title": c.title, "chunk": c.text} for c in chunks],
                            temperature=self.ctx.config.atom_temperature)
        built.absorb(outcome)
        out: list[tuple[ChunkRecord, list[str]]] = []
        for i, (chunk, result) in enumerate(zip(chunks, outcome.results, strict=True)):
            if result is None:
                built.fail("atoms", [chunk.id], outcome.errors[i])
            else:
                out.append((chunk, list(result.questions)))
        return out


class LLMTripleExtractor:
    """KG2RAG: typed triples per chunk (task ``triples``); a triple is kept only when the chunk names both ends."""

    method = "llm"
    source = "llm"

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def triples(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, ChunkExtraction]]:
        outcome = call_many(self.ctx, TRIPLES, [{"chunk": c.text} for c in chunks])
        built.absorb(outcome)
        found: list[tuple[ChunkRecord, list[Triple]]] = []
        for i, (chunk, result) in enumerate(zip(chunks, outcome.results, strict=True)):
            if result is None:
                built.fail("triples", [chunk.id], outcome.errors[i])
            else:
                found.append((chunk, result.triples))
        return _grounded_extractions(self.ctx, TRIPLES, found)


def _grounded_extractions(ctx: Context, task: Task[Any], found: Sequence[tuple[ChunkRecord, Sequence[Triple]]]
                          ) -> list[tuple[ChunkRecord, ChunkExtraction]]:
    """Each chunk's grounded extraction; the triples dropped are counted as the task's invalid items."""
    out: list[tuple[ChunkRecord, ChunkExtraction]] = []
    ungrounded = 0
    for chunk, triples in found:
        extraction, dropped = _grounded_extraction(chunk, triples)
        ungrounded += dropped
        out.append((chunk, extraction))
    if ungrounded:
        ctx.llm.accounting.count(task.name, invalid_items=ungrounded)
    return out


def _grounded_extraction(chunk: ChunkRecord, triples: Sequence[Triple]) -> tuple[ChunkExtraction, int]:
    """The chunk's triples whose ends it names (its title, its text, and whom its references point at: the
    summary), and how many were dropped because a small model named things the chunk never mentions."""
    extraction = ChunkExtraction()
    text = f"{chunk.title}\n{chunk.text}\n{chunk.summary}".casefold()
    dropped = 0
    for t in triples:
        if not (t.head.strip() and t.tail.strip() and t.relation.strip()):
            continue
        if not (_grounded(t.head, text) and _grounded(t.tail, text)):
            dropped += 1
            continue
        extraction.triples.append(ExtractedTriple(t.head.strip(), t.head_type, t.relation.strip(),
                                                  t.tail.strip(), t.tail_type))
        extraction.entities += [(t.head.strip(), t.head_type), (t.tail.strip(), t.tail_type)]
    return extraction, dropped


_PLACEHOLDERS = frozenset({"...", "class_name", "name", "<class name>", "value"})


def _tag_pairs(ctx: Context, task: str, chunk: ChunkRecord, tags: Mapping[str, Sequence[str]],
               classes: Sequence[TagClass]) -> list[tuple[str, str]]:
    """A reply's tags as (class, value) pairs: blank ones dropped, and, counted as the task's invalid items, those
    of a class the scheme does not have and values the chunk never names (a tag is a phrase of the corpus; small
    models echo the prompt's placeholders or the class names instead)."""
    known = {c.name.strip() for c in classes}
    text = f"{chunk.title}\n{chunk.text}".casefold()
    pairs, invalid = [], 0
    for cls, values in tags.items():
        for value in values:
            if not (cls.strip() and name_key(value)):
                continue
            if (known and cls.strip() not in known) or not _grounded(value, text):
                invalid += 1
                continue
            pairs.append((cls.strip(), value.strip()))
    if invalid:
        ctx.llm.accounting.count(task, invalid_items=invalid)
    return pairs


class LLMTagExtractor:
    """PIKE-RAG auto-tagging: tag classes for the corpus (``tag_classes``, kept on the ``StrataMeta`` node
    so later runs use the same classes), tags per chunk (``chunk_tags``) and colloquial aliases of each new
    tag (``tag_aliases``)."""

    method = "llm"
    source = "llm"

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.classes: list[TagClass] = []

    def prepare(self, chunks: Sequence[ChunkRecord]) -> None:
        stored = self.ctx.store.read(TAG_CLASSES_READ)
        if stored and stored[0]["tag_classes"]:
            self.classes = [TagClass.model_validate(c) for c in json.loads(stored[0]["tag_classes"])]
            return
        if not chunks:
            return
        n = self.ctx.config.tag_sample
        sample = [chunks[i * len(chunks) // n] for i in range(min(n, len(chunks)))]
        text = "\n\n".join(f"[{i + 1}] {c.text[:600]}" for i, c in enumerate(sample))
        result = call_many(self.ctx, TAG_CLASSES, [{"domain": self.ctx.config.domain, "samples": text}])
        found = result.results[0]
        if found is None:
            raise result.errors[0]
        # Small models echo the prompt's placeholders; a class must be a name of its own, once.
        self.classes = list({c.name.strip(): c for c in found.classes
                             if name_key(c.name) and c.name.strip() not in _PLACEHOLDERS}.values())
        self.ctx.store.write("distill/tag_classes_write",
                             tag_classes=json.dumps([c.model_dump() for c in self.classes], ensure_ascii=False))

    def listing(self) -> str:
        """The tag classes as a prompt lists them (after :meth:`prepare`)."""
        return "\n".join(f"- {c.name}: {c.description}" for c in self.classes)

    def tags(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[tuple[str, str]]]]:
        listing = self.listing()
        outcome = call_many(self.ctx, CHUNK_TAGS, [{"tag_classes": listing, "chunk": c.text} for c in chunks])
        built.absorb(outcome)
        out = []
        for i, (chunk, result) in enumerate(zip(chunks, outcome.results, strict=True)):
            if result is None:
                built.fail("tags", [chunk.id], outcome.errors[i])
                continue
            out.append((chunk, _tag_pairs(self.ctx, CHUNK_TAGS.name, chunk, result.tags, self.classes)))
        return out

    def aliases(self, names: list[str], built: Built) -> dict[str, list[str]]:
        if not names:
            return {}
        groups = [names[i:i + _ALIAS_GROUP] for i in range(0, len(names), _ALIAS_GROUP)]
        outcome = call_many(self.ctx, TAG_ALIASES, [{"tags": "\n".join(g)} for g in groups])
        built.absorb(outcome)
        built.counts["tag alias calls failed"] = len(outcome.errors)
        found: dict[str, list[str]] = {}
        for result in outcome.results:
            if result is not None:
                for tag, aliases in result.aliases.items():
                    found.setdefault(name_key(tag), []).extend(a.strip() for a in aliases if name_key(a))
        return found


class LLMFactItemExtractor:
    """PG-RAG: fact items per chunk (``fact_items``) verified against the chunk, regenerated when some fail;
    a mind map per document part (``mind_map``); each item under the leaf route whose path text is nearest."""

    method = "llm"

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def verified(self, chunks: Sequence[ChunkRecord], built: Built) -> dict[str, list[VerifiedItem]]:
        cfg = self.ctx.config
        sents = [sentences(c.text) or [c.text] for c in chunks]
        flat = self.ctx.embedder.embed([s for group in sents for s in group])
        bounds = np.cumsum([0] + [len(g) for g in sents])
        accepted: dict[str, list[VerifiedItem]] = {}
        seen: dict[str, set[str]] = {c.id: set() for c in chunks}
        todo = list(range(len(chunks)))
        rejected = 0
        for attempt in range(cfg.fact_regenerations + 1):
            if not todo:
                break
            # A higher temperature on each regeneration, so the cache does not replay the same answer.
            temperature = min(1.0, 0.3 + 0.2 * attempt) if attempt else None
            fields = [{"title": chunks[i].title, "text": chunks[i].text} for i in todo]
            outcome = call_many(self.ctx, FACT_ITEMS, fields, temperature=temperature)
            built.absorb(outcome)
            candidates: list[tuple[int, str]] = []
            for n, i in enumerate(todo):
                result = outcome.results[n]
                if result is None:
                    if attempt == 0:  # a failed regeneration keeps the items verified before
                        built.fail("pseudograph", [chunks[i].id], outcome.errors[n])
                    continue
                accepted.setdefault(chunks[i].id, [])
                # One fact a sentence: small models join several into one item, which then matches no other.
                candidates += [(i, s.strip()) for item in result.items for s in sentences(item.fact) or [item.fact]
                               if s.strip()]
            vectors = self.ctx.embedder.embed([t for _, t in candidates]) if candidates else np.zeros((0, 1))
            retry: set[int] = set()
            for (i, text), vector in zip(candidates, vectors, strict=True):
                chunk = chunks[i]
                key = text_key(text)
                if key in seen[chunk.id]:
                    continue
                score = rouge_l(text, chunk.text).precision
                similarity = float((flat[bounds[i]:bounds[i + 1]] @ vector).max())
                if score >= cfg.fact_rouge and similarity >= cfg.fact_similarity:
                    seen[chunk.id].add(key)
                    accepted[chunk.id].append(VerifiedItem(chunk, text, score, similarity))
                else:
                    rejected += 1
                    retry.add(i)
            todo = sorted(i for i in retry if chunks[i].id in accepted)
        built.counts["FactItem rejected"] = rejected
        return accepted

    def mind_maps(self, docs: dict[str, list[ChunkRecord]], items: dict[str, list[VerifiedItem]],
                  built: Built) -> dict[str, MindMapOutline]:
        ids = list(docs)
        budget = self.ctx.config.mind_map_tokens
        fields = [{"title": docs[d][0].title,
                   "facts": fact_listing([it.text for c in docs[d] for it in items[c.id]], budget)} for d in ids]
        outcome = call_many(self.ctx, MIND_MAP, fields)
        built.absorb(outcome)
        out: dict[str, MindMapOutline] = {}
        for n, (doc, result) in enumerate(zip(ids, outcome.results, strict=True)):
            if result is None:
                built.fail("pseudograph", [doc], outcome.errors[n])
                continue
            out[doc] = (result.topic.strip() or docs[doc][0].title, _leaf_paths(result.branches) or [("overview",)])
        return out

    def place(self, topic: str, paths: list[tuple[str, ...]], chunks: list[ChunkRecord],
              items: list[VerifiedItem]) -> list[tuple[str, ...]]:
        embed = self.ctx.embedder.embed
        leaves = embed([ROUTE_SEP.join((topic, *p)) for p in paths])
        item_vecs = embed([it.text for it in items]) if items else leaves[:0]
        return [paths[int(np.argmax(leaves @ v))] for v in item_vecs]


class LLMKnowledgeExtractor:
    """One call per chunk for the atoms, triples and (when ``with_tags``) tags of a batch: task
    ``chunk_knowledge``, or ``atoms_triples`` without the tags layer. Run at the endpoint's temperature (one
    call serves three layers; a re-run asks the same request and the response cache answers it)."""

    method = "llm"

    def __init__(self, ctx: Context, tagger: LLMTagExtractor | None) -> None:
        self.ctx = ctx
        self.tagger = tagger

    @property
    def task(self) -> Task[Any]:
        return ATOMS_TRIPLES if self.tagger is None else CHUNK_KNOWLEDGE

    def extract(self, chunks: Sequence[ChunkRecord], built: Built, layers: Sequence[str]) -> SharedExtraction:
        """The batch's replies split by layer; a chunk whose call failed is failed in every one of ``layers``."""
        if self.tagger is not None:
            self.tagger.prepare(chunks)  # the tag classes (stored, or one call for the corpus)
            listing = self.tagger.listing()
            fields = [{"title": c.title, "chunk": c.text, "tag_classes": listing} for c in chunks]
        else:
            fields = [{"title": c.title, "chunk": c.text} for c in chunks]
        outcome = call_many(self.ctx, self.task, fields)
        built.absorb(outcome)
        found: list[tuple[ChunkRecord, AtomsTriples]] = []
        for i, (chunk, result) in enumerate(zip(chunks, outcome.results, strict=True)):
            if result is None:
                for layer in layers:
                    built.fail(layer, [chunk.id], outcome.errors[i])
            else:
                found.append((chunk, result))
        return SharedExtraction([c for c, _ in found], GivenAtoms(found), GivenTriples(self.ctx, self.task, found),
                                None if self.tagger is None else GivenTags(self.tagger, found))


class GivenAtoms:
    """The atoms layer's extractor for one batch whose atomic questions a shared call already returned."""

    method = "llm"
    kind = "question"
    source = "llm"

    def __init__(self, found: Sequence[tuple[ChunkRecord, AtomsTriples]]) -> None:
        self.found = found

    def atoms(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[str]]]:
        return [(chunk, list(result.questions)) for chunk, result in self.found]


class GivenTriples:
    """The triples layer's extractor for one batch whose triples a shared call already returned (grounded as
    the ``triples`` task's are; the dropped ones are counted as the shared task's invalid items)."""

    method = "llm"
    source = "llm"

    def __init__(self, ctx: Context, task: Task[Any], found: Sequence[tuple[ChunkRecord, AtomsTriples]]) -> None:
        self.ctx, self.task, self.found = ctx, task, found

    def triples(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, ChunkExtraction]]:
        return _grounded_extractions(self.ctx, self.task, [(chunk, r.triples) for chunk, r in self.found])


class GivenTags:
    """The tags layer's extractor for one batch whose tags a shared call already returned; the colloquial
    aliases of new tags are still the tagger's (``tag_aliases``)."""

    method = "llm"
    source = "llm"

    def __init__(self, tagger: LLMTagExtractor, found: Sequence[tuple[ChunkRecord, AtomsTriples]]) -> None:
        self.tagger, self.found = tagger, found

    def prepare(self, chunks: Sequence[ChunkRecord]) -> None:
        """Done before the shared call (its prompt lists the classes)."""

    def tags(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[tuple[str, str]]]]:
        return [(chunk, _tag_pairs(self.tagger.ctx, CHUNK_KNOWLEDGE.name, chunk, r.tags, self.tagger.classes)
                 if isinstance(r, ChunkKnowledge) else []) for chunk, r in self.found]

    def aliases(self, names: list[str], built: Built) -> dict[str, list[str]]:
        return self.tagger.aliases(names, built)


class LLMExtractors:
    """The LLM mode: each layer's extractor calls the model; with ``combined`` (the default) a job that builds
    atoms and triples together makes one call per chunk for them and for tags (:meth:`knowledge`)."""

    def __init__(self, combined: bool = True) -> None:
        self.combined = combined

    def atoms(self, ctx: Context) -> LLMAtomExtractor:
        return LLMAtomExtractor(ctx)

    def triples(self, ctx: Context) -> LLMTripleExtractor:
        return LLMTripleExtractor(ctx)

    def tags(self, ctx: Context) -> LLMTagExtractor:
        return LLMTagExtractor(ctx)

    def fact_items(self, ctx: Context) -> LLMFactItemExtractor:
        return LLMFactItemExtractor(ctx)

    def knowledge(self, ctx: Context, with_tags: bool) -> LLMKnowledgeExtractor | None:
        """The shared per-chunk call of atoms, triples and (``with_tags``) tags; None when not ``combined``."""
        if not self.combined:
            return None
        return LLMKnowledgeExtractor(ctx, LLMTagExtractor(ctx) if with_tags else None)


def _leaf_paths(nodes: Sequence[MindMapNode], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for node in nodes:
        label = node.label.strip()
        if not label:
            continue
        path = (*prefix, label)
        out += _leaf_paths(node.children, path) if node.children else [path]
    return out


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

