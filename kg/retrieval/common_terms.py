"""Which terms of a knowledge base are so common that a Lucene query should not be led by them.

A term in a large share of the chunks adds little to a passage's BM25 score (its idf is small) but costs a
walk of its whole posting list, and an OR of several such terms makes Lucene score most of the store to find
its top few: at a million ``bench scale`` passages the two Lucene paths were seven tenths of a ``strata``
query (docs/scaling.md). :func:`kg.store.lucene.lucene_query` therefore requires one of a query's other terms
when it has some, and :class:`CommonTerms` says which terms are common in a store.

A term is common when it is in more than :attr:`CommonTermRule.ratio` of the chunks *and* in more than
:attr:`CommonTermRule.min_chunks` of them: the first says its weight is low, the second that its posting list
is long enough to cost something (in a small store no term is, and queries stay as they were). The share is
estimated from a sample of :attr:`CommonTermRule.sample` chunks (the whole store when it is that small), read
in windows from points drawn evenly over the chunk ids (hashes). The estimate is kept until the store's chunk
count has moved by more than :data:`RESAMPLE_CHANGE` of itself, which is checked (one count-store read) at most
every :attr:`CommonTermRule.refresh_s` seconds: a term's share moves with the corpus, not with each write, and
a stale estimate only makes a query slower, or its lexical path a little wider or narrower, than a fresh one.

Retrievers take their estimate from :func:`shared_common_terms`: one per store and rule, so a client that makes a
retriever per question (``Strata.retrieve``) samples once, not per question. A process of one question
(``strata ask``) pays for one sample (about 0.1 s of reading 2,048 chunk texts at 10,000 passages, warm).

Example::

    terms = shared_common_terms(store, CommonTermRule())
    query = lucene_query("harbour castle Place 123 near", common=terms.terms())   # '+(123) harbour castle place near'
"""

from __future__ import annotations

import random
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from typing import Annotated

from pydantic import Field
from pydantic.dataclasses import dataclass

from kg.store.base import GraphStore
from kg.store.lucene import lucene_query, text_terms
from kg.store.queries import COUNT_LABEL, TERM_SAMPLE

__all__ = ["RESAMPLE_CHANGE", "CommonTermRule", "CommonTerms", "shared_common_terms"]

RESAMPLE_CHANGE = 0.1  # a sample is taken again once the chunk count has moved by a tenth of itself
_WINDOWS = 16  # the sample is read in this many windows of consecutive ids
_ID_PREFIX = "doc_"  # kg.shared.ids: a chunk id starts with its document's, "doc_" and a hex digest
_HEX = "0123456789abcdef"


@dataclass(frozen=True)
class CommonTermRule:
    """When a term counts as common (the module docstring): in more than ``ratio`` of the chunks and more than
    ``min_chunks`` of them, estimated from ``sample`` chunks, the store's count checked every ``refresh_s``."""

    ratio: Annotated[float, Field(gt=0.0, le=1.0)] = 0.05
    min_chunks: Annotated[int, Field(ge=0)] = 1000
    sample: Annotated[int, Field(ge=1)] = 2048
    refresh_s: Annotated[float, Field(ge=0.0)] = 30.0


class CommonTerms:
    """The common terms of ``store``'s chunks under ``rule`` (``None``: no term is common), estimated on first
    use and again when the store has grown or shrunk (the module docstring). Thread-safe."""

    def __init__(self, store: GraphStore, rule: CommonTermRule | None = CommonTermRule(), *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store, self.rule, self._clock = store, rule, clock
        self._terms: frozenset[str] = frozenset()
        self._sampled_chunks: int | None = None
        self._checked_at = float("-inf")
        self._lock = threading.Lock()

    def terms(self) -> frozenset[str]:
        """The common terms, re-estimated first when the rule says it is due."""
        rule = self.rule
        if rule is None:
            return frozenset()
        with self._lock:
            now = self._clock()
            if now - self._checked_at >= rule.refresh_s:
                self._checked_at = now
                chunks = int(self.store.read(COUNT_LABEL.render(label="Chunk"))[0]["count"])
                sampled = self._sampled_chunks
                if sampled is None or abs(chunks - sampled) > RESAMPLE_CHANGE * sampled:
                    self._terms = self._estimate(rule, chunks)
                    self._sampled_chunks = chunks
            return self._terms

    def query(self, text: str) -> str:
        """``text`` as a Lucene query that is not led by the store's common terms."""
        return lucene_query(text, common=self.terms())

    def _estimate(self, rule: CommonTermRule, chunks: int) -> frozenset[str]:
        # No term is in more than min_chunks of a store that small: the sample would be read for nothing.
        if chunks <= rule.min_chunks:
            return frozenset()
        if chunks <= rule.sample:
            starts, per_start = [""], rule.sample
        else:
            # Fixed draws: the same store gives the same estimate, so retrieval stays reproducible.
            rng = random.Random(0)
            starts = [_ID_PREFIX + "".join(rng.choices(_HEX, k=6)) for _ in range(_WINDOWS)]
            per_start = -(-rule.sample // _WINDOWS)
        rows = self.store.read(TERM_SAMPLE, starts=starts, per_start=per_start)
        texts = {row["id"]: f"{row['text']} {row['title']}" for row in rows}
        if not texts:
            return frozenset()
        holding = Counter(term for text in texts.values() for term in text_terms(text))
        share = max(rule.ratio, rule.min_chunks / chunks) * len(texts)
        return frozenset(term for term, n in holding.items() if n > share)


_SHARED: weakref.WeakKeyDictionary[GraphStore, dict[CommonTermRule | None, CommonTerms]] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def shared_common_terms(store: GraphStore, rule: CommonTermRule | None) -> CommonTerms:
    """The one :class:`CommonTerms` of ``store`` under ``rule`` in this process (kept while the store is); a
    store that cannot be weakly referenced (a class with ``__slots__``) gets one of its own at each call."""
    with _SHARED_LOCK:
        try:
            by_rule = _SHARED.setdefault(store, {})
        except TypeError:
            return CommonTerms(store, rule)
        terms = by_rule.get(rule)
        if terms is None:
            terms = by_rule[rule] = CommonTerms(store, rule)
        return terms
