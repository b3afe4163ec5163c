"""Auto-tagging (PIKE-RAG 5.2.2): tag classes for the corpus, tags per chunk, and a tag-mapping table
from colloquial terms to the corpus's own terms, used at query time by :func:`expand_query_with_tags`.

The layer's :class:`~kg.layers.distilled.extractors.TagExtractor` tags the chunks. With an LLM: the
``tag_classes`` task proposes classes from an evenly spread sample of chunks (kept on
the ``StrataMeta`` node so later runs use the same classes), each chunk is tagged by the call per chunk it
shares with atoms and triples (:mod:`kg.layers.distilled.combined`) or alone by ``chunk_tags``, and
``tag_aliases`` lists the colloquial terms users say for each new tag (``Tag.aliases``).

Offline (named ``offline (tf-idf keyphrases)`` in the report): each chunk is tagged with its top TF-IDF
terms among those shared by several chunks of its batch (the job's batches, so memory stays bounded however
large the corpus), class ``keyphrase``. There are no colloquial
aliases offline: that mapping needs a model's knowledge of how people speak, so ``Tag.aliases`` stays
empty and :func:`expand_query_with_tags` then only finds tags the question names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from kg.layers.distilled.base import Built, ExtractorLayer, short_hash, written
from kg.layers.distilled.extractors.protocols import TagExtractor
from kg.layers.distilled.models import ChunkRecord
from kg.layers.distilled.text import name_key
from kg.llm import TagAliases
from kg.shared.text import CJK_CHARACTERS, is_cjk
from kg.store.base import GraphStore
from kg.store.lucene import whole_terms_queries
from kg.store.queries import TAGS_EXISTING, TAGS_FOR_TERMS

__all__ = ["TagAliases", "TagsLayer", "expand_query_with_tags"]

_WORDS = re.compile(r"\w+", re.UNICODE)
_CJK_RUN = re.compile(f"[{CJK_CHARACTERS}]+")


class TagsLayer(ExtractorLayer[TagExtractor]):
    name = "tags"
    llm_tasks = ("chunk_tags",)
    clear = ("distill/clear_tagged",)

    def build(self, chunks: Sequence[ChunkRecord], *, previous_written: Callable[[], None] = written) -> Built:
        built = Built()
        self.extractor.prepare(chunks)
        tagged = self.extractor.tags(chunks, built)
        source = self.extractor.source
        tags: dict[str, dict[str, Any]] = {}
        links: list[dict[str, str]] = []
        for chunk, pairs in tagged:
            for cls, value in pairs:
                tag_id = "tag_" + short_hash(name_key(cls), name_key(value), n=16)
                tags.setdefault(tag_id, {"id": tag_id, "name": value, "class": cls, "name_key": name_key(value),
                                         "source": source, "aliases": [], "alias_keys": []})
                links.append({"chunk_id": chunk.id, "tag_id": tag_id})
            built.done.append(chunk.id)
        previous_written()  # the tags earlier batches created are not new
        existing = {r["id"] for r in self.ctx.store.read(TAGS_EXISTING, ids=list(tags))}
        aliases = self.extractor.aliases(sorted({t["name"] for i, t in tags.items() if i not in existing}), built)
        for tag in tags.values():
            extra = [a for a in aliases.get(tag["name_key"], []) if name_key(a) != tag["name_key"]]
            tag["aliases"] = sorted(set(extra))
            tag["alias_keys"] = sorted({name_key(a) for a in extra})
        built.rows += [("distill/merge_tags", list(tags.values())), ("distill/create_tagged", links)]
        built.counts.update({"Tag": len(set(tags) - existing), "TAGGED": len(links)})
        return built


def _terms(question: str) -> list[str]:
    """Every word n-gram (1-4 words) of the question, normalised like tag names; for CJK runs (Chinese,
    Japanese kana and kanji, Korean hangul: the words the n-grams leave out) every substring of 2-8
    characters, normalised the same way (a hangul or voiced-kana tag's ``name_key`` is decomposed)."""
    words = [w for w in _WORDS.findall(question) if not is_cjk(w[0])]
    keys = {name_key(" ".join(words[i:j])) for i in range(len(words)) for j in range(i + 1, min(i + 5, len(words) + 1))}
    for run in _CJK_RUN.findall(question):
        keys |= {name_key(run[i:j]) for i in range(len(run)) for j in range(i + 2, min(i + 9, len(run) + 1))}
    keys.discard("")
    return sorted(keys)


def expand_query_with_tags(store: GraphStore, question: str) -> list[str]:
    """The corpus's terms (tag names) that ``question`` names, through a colloquial alias first, then
    directly; retrieval adds them to the query. Empty when no tag matches.

    Example: with a tag "myocardial infarction" whose aliases hold "heart attack",
    ``expand_query_with_tags(store, "signs of a heart attack?")`` returns ``["myocardial infarction"]``.
    """
    terms = _terms(question)
    if not terms:
        return []
    out: list[str] = []
    for row in store.read(TAGS_FOR_TERMS, terms=terms, queries=whole_terms_queries(terms)):
        if row["name"] not in out:
            out.append(row["name"])
    return out
