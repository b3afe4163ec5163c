"""Auto-tagging (PIKE-RAG 5.2.2): tag classes for the corpus, tags per chunk, and a tag-mapping table
from colloquial terms to the corpus's own terms, used at query time by :func:`expand_query_with_tags`.

With an LLM: the ``tag_classes`` task proposes classes from an evenly spread sample of chunks (kept on
the ``StrataMeta`` node so later runs use the same classes), ``chunk_tags`` tags each chunk, and
``tag_aliases`` lists the colloquial terms users say for each new tag (``Tag.aliases``).

Offline (named ``offline (tf-idf keyphrases)`` in the report): each chunk is tagged with its top TF-IDF
terms among those shared by several chunks of the run, class ``keyphrase``. There are no colloquial
aliases offline: that mapping needs a model's knowledge of how people speak, so ``Tag.aliases`` stays
empty and :func:`expand_query_with_tags` then only finds tags the question names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from kg.layers.distilled.base import Built, Layer, call_many, short_hash
from kg.layers.distilled.models import ChunkRecord
from kg.layers.distilled.text import keyphrases, name_key
from kg.llm import ChunkTags, TagAliases, TagClass, TagClasses
from kg.shared.text import is_cjk
from kg.store.base import GraphStore
from kg.store.queries import TAG_CLASSES_READ, TAGS_EXISTING, TAGS_FOR_TERMS

__all__ = ["TagAliases", "TagsLayer", "expand_query_with_tags"]

_WORDS = re.compile(r"\w+", re.UNICODE)
_ALIAS_GROUP = 40


class TagsLayer(Layer):
    name = "tags"
    llm_tasks = ("chunk_tags",)
    clear = ("distill/clear_tagged",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.classes: list[TagClass] = []
        self.offline_terms: dict[str, list[str]] = {}

    @property
    def method(self) -> str:
        return "offline (tf-idf keyphrases)" if self.ctx.offline else "llm"

    def prepare(self, chunks: Sequence[ChunkRecord]) -> None:
        if self.ctx.offline:
            terms = keyphrases([c.text for c in chunks], top=self.ctx.config.tags_per_chunk)
            self.offline_terms = {c.id: t for c, t in zip(chunks, terms, strict=True)}
            return
        stored = self.ctx.store.read(TAG_CLASSES_READ)
        if stored and stored[0]["tag_classes"]:
            self.classes = [TagClass.model_validate(c) for c in json.loads(stored[0]["tag_classes"])]
            return
        if not chunks:
            return
        n = self.ctx.config.tag_sample
        sample = [chunks[i * len(chunks) // n] for i in range(min(n, len(chunks)))]
        text = "\n\n".join(f"[{i + 1}] {c.text[:600]}" for i, c in enumerate(sample))
        result = call_many(self.ctx, "tag_classes", TagClasses, [{"domain": self.ctx.config.domain, "samples": text}])
        if 0 in result.errors:
            raise result.errors[0]
        self.classes = list(result.results[0].classes)
        self.ctx.store.write("distill/tag_classes_write",
                             tag_classes=json.dumps([c.model_dump() for c in self.classes], ensure_ascii=False))

    def _tags(self, chunks: Sequence[ChunkRecord], built: Built) -> list[tuple[ChunkRecord, list[tuple[str, str]]]]:
        if self.ctx.offline:
            return [(c, [("keyphrase", t) for t in self.offline_terms.get(c.id, [])]) for c in chunks]
        listing = "\n".join(f"- {c.name}: {c.description}" for c in self.classes)
        outcome = call_many(self.ctx, "chunk_tags", ChunkTags,
                            [{"tag_classes": listing, "chunk": c.text} for c in chunks])
        built.absorb(outcome)
        out = []
        for i, chunk in enumerate(chunks):
            if i in outcome.errors:
                built.fail(self.name, [chunk.id], outcome.errors[i])
                continue
            result: ChunkTags = outcome.results[i]
            out.append((chunk, [(cls.strip(), v.strip()) for cls, values in result.tags.items()
                                for v in values if cls.strip() and name_key(v)]))
        return out

    def _aliases(self, names: list[str], built: Built) -> dict[str, list[str]]:
        if self.ctx.offline or not names:
            return {}
        groups = [names[i:i + _ALIAS_GROUP] for i in range(0, len(names), _ALIAS_GROUP)]
        outcome = call_many(self.ctx, "tag_aliases", TagAliases, [{"tags": "\n".join(g)} for g in groups])
        built.absorb(outcome)
        built.counts["tag alias calls failed"] = len(outcome.errors)
        found: dict[str, list[str]] = {}
        for result in outcome.results:
            if result is not None:
                for tag, aliases in result.aliases.items():
                    found.setdefault(name_key(tag), []).extend(a.strip() for a in aliases if name_key(a))
        return found

    def build(self, chunks: Sequence[ChunkRecord]) -> Built:
        built = Built()
        tagged = self._tags(chunks, built)
        source = "offline" if self.ctx.offline else "llm"
        tags: dict[str, dict[str, Any]] = {}
        links: list[dict[str, str]] = []
        for chunk, pairs in tagged:
            for cls, value in pairs:
                tag_id = "tag_" + short_hash(name_key(cls), name_key(value), n=16)
                tags.setdefault(tag_id, {"id": tag_id, "name": value, "class": cls, "name_key": name_key(value),
                                         "source": source, "aliases": [], "alias_keys": []})
                links.append({"chunk_id": chunk.id, "tag_id": tag_id})
            built.done.append(chunk.id)
        existing = {r["id"] for r in self.ctx.store.read(TAGS_EXISTING, ids=list(tags))}
        aliases = self._aliases(sorted({t["name"] for i, t in tags.items() if i not in existing}), built)
        for tag in tags.values():
            extra = [a for a in aliases.get(tag["name_key"], []) if name_key(a) != tag["name_key"]]
            tag["aliases"] = sorted(set(extra))
            tag["alias_keys"] = sorted({name_key(a) for a in extra})
        built.rows += [("distill/merge_tags", list(tags.values())), ("distill/create_tagged", links)]
        built.counts.update({"Tag": len(set(tags) - existing), "TAGGED": len(links)})
        return built


def _terms(question: str) -> list[str]:
    """Every word n-gram (1-4 words) of the question, normalised like tag names; for CJK runs every
    substring of 2-8 characters."""
    words = [w for w in _WORDS.findall(question) if not is_cjk(w[0])]
    keys = {name_key(" ".join(words[i:j])) for i in range(len(words)) for j in range(i + 1, min(i + 5, len(words) + 1))}
    for run in re.findall(r"[\u3400-\u9fff]+", question):
        keys |= {run[i:j] for i in range(len(run)) for j in range(i + 2, min(i + 9, len(run) + 1))}
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
    for row in store.read(TAGS_FOR_TERMS, terms=terms):
        if row["name"] not in out:
            out.append(row["name"])
    return out
