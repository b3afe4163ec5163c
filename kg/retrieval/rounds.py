"""Multi-round retrieval without an LLM: a later round seeded by the bridge names an earlier round found.

A composed question ("Which country is the director of the 1950 MGM musical film from?") describes its first
hop and never names the bridge (the director) its answer hangs on, so no single query can rank the second
hop's passage: it shares no word with the question but the relation ("country", "from"). The first round's
passages do name the bridge. IRCoT (Trivedi et al., 2023) and HippoRAG's multi-step retrieval append what
the last round read (a generated thought, or the passage) to the next round's query; here the next round's
queries are built from the passage itself, without a model:

1. :func:`bridge_names`: from each seed (the earlier round's best passages), the names in its sentences that
   share the most words with the question (the sentence that answers the hop it matched: "... directed by
   Norman Taurog"), that the question does not already name, first the sentences' own order;
2. one probe per (seed, bridge): a Lucene query that requires the bridge as a phrase and ranks by the
   question's other terms, over every passage but the seed's own document (``retrieval/next_round.cypher``,
   every probe of a round in one round trip);
3. each probe's passages are ranked by their BM25 score and their cosine to the question, and those *about* the
   bridge (titled by it, or naming each of its words in its first :data:`OPENING` characters) above the rest
   (:func:`probe_hits`); a name that more than ``specific`` passages hold is a common word, not a bridge, and
   its probe is dropped;
4. :func:`chained`: each seed's best hit about a bridge is placed after the seed and the seed's bridge links (a
   chain: the next hop goes with the passage that led to it), never before round one's first ``after``
   results, explained by its round and bridge (``round2 3.83 via 'Norman Taurog'``).

Names are capitalised phrases, so a text in a script without case (Chinese) has none and gets no later round.

A round's best hits seed the next one, up to ``rounds`` rounds in all (one round trip each). Fusing a later
round's hits as one more ranked list instead cost recall on the tuning set (docs/retrieval.md).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kg.retrieval.base import Hit, HitSource, RetrievalFilter
from kg.retrieval.common import filter_params, hit_from_row
from kg.shared.text import title_core
from kg.store.base import GraphStore
from kg.store.lucene import STOPWORDS, lucene_query
from kg.store.queries import NEXT_ROUND, NextRoundRow
from loaders import split_sentences

__all__ = ["ABOUT", "Bridge", "bridge_names", "chained", "next_round", "probe_hits"]

# How far into a passage its subject is named: a lead's first words ("Norman Rae Taurog (February 23, 1899").
OPENING = 60
# What a probe's hit scores for being about the bridge (:func:`probe_hits`): more than any other hit can score
# (at most 2), so a score of ABOUT or more says the hit is about its bridge.
ABOUT = 3.0

# A name: capitalised words, joined by the lower-case particles names hold ("Bank of England", "Leonardo da
# Vinci"), not by "and" (which joins two names far more often than it is part of one); a hyphen, an apostrophe
# or a full stop may sit inside a word ("Jean-Luc", "O'Brien", "J.R.R.").
_NAME = re.compile(r"[A-Z][\w'\u2019.\-]*(?:\s+(?:(?:of|the|de|da|di|del|der|du|van|von|la|le|y)\s+)*"
                   r"[A-Z][\w'\u2019.\-]*)*")
_WORD = re.compile(r"\w+")
# Capitalised words that are no name: sentence openers, months and days (a date is not an entity to follow).
_NOT_NAMES = STOPWORDS | frozenset(
    """january february march april may june july august september october november december monday tuesday
    wednesday thursday friday saturday sunday after before during since while although however later""".split()  # noqa: SIM905 - a word list reads better as text
)


@dataclass(frozen=True)
class Bridge:
    """A name ``seed`` holds that the question does not: what a later round looks for, in round ``number``."""

    name: str
    seed: Hit
    number: int


def _trimmed(name: str) -> str:
    """The name without the capitalised words that open a sentence or date it ("In March", "The")."""
    words = name.rstrip(".'\u2019-").split()
    while words and words[0].lower().strip(".") in _NOT_NAMES:
        words.pop(0)
    return " ".join(words)


def bridge_names(question: str, seed: Hit, *, limit: int = 2, sentences: int = 2) -> list[str]:
    """Up to ``limit`` names of ``seed``'s ``sentences`` sentences sharing most words with ``question`` (ties: the
    earlier sentence), in their order there, that the question does not name: a name more than half of whose
    words the question holds (a variant of a name it asks about), or a name within the seed's own title, is
    not a bridge."""
    asked = {w.lower() for w in _WORD.findall(question)}
    own = title_core(seed.title).lower()
    ranked = sorted(enumerate(seed.text[a:b] for a, b in split_sentences(seed.text)),
                    key=lambda p: (-len(asked & {w.lower() for w in _WORD.findall(p[1])} - STOPWORDS), p[0]))
    names: list[str] = []
    for _, sentence in ranked[:sentences]:
        for match in _NAME.finditer(sentence):
            name = _trimmed(match.group(0))
            content = [w.lower() for w in _WORD.findall(name)]
            if (len(name) < 3 or 2 * sum(w in asked for w in content) > len(content) or name.lower() in own
                    or name in names):
                continue
            names.append(name)
            if len(names) >= limit:
                return names
    return names


def _probe_query(question: str, bridge: str, common: Collection[str]) -> str:
    """Lucene: the bridge as a required phrase, the question's terms (not led by the ``common`` ones) to rank."""
    phrase = " ".join(w.lower() for w in _WORD.findall(bridge))
    asked = " ".join(t for t in lucene_query(question).split() if t not in common)
    return f'+"{phrase}" {asked}'.strip()


def probe_hits(rows: Sequence[NextRoundRow], bridge: Bridge, *, specific: int) -> list[Hit]:
    """One probe's rows as hits, best first: BM25 relative to the probe's best, plus cosine to the question
    (at least 0), plus :data:`ABOUT` for a passage about the bridge (the next hop's passage is the bridge's own).
    None when the name matched ``specific`` passages or more: a common word, not a bridge."""
    if not rows or rows[0]["matched"] >= specific:
        return []
    top = max(r["score"] or 0.0 for r in rows) or 1.0
    scored = sorted((((r["score"] or 0.0) / top + max(r["sim"] or 0.0, 0.0) + ABOUT * r["about"], r) for r in rows),
                    key=lambda p: -p[0])
    return [hit_from_row(r, [HitSource(path=f"round{bridge.number}", score=s, via=bridge.name,
                                       via_id=bridge.seed.chunk_id)]).model_copy(update={"score": s})
            for s, r in scored]


def next_round(store: GraphStore, question: str, seeds: Sequence[Hit], vector: list[float], *, number: int,
               bridges: int = 2, candidates: int = 10, specific: int = 30, common: Collection[str] = (),
               where: RetrievalFilter | None = None) -> list[list[Hit]]:
    """Round ``number``: each probe's hits (:func:`probe_hits`), probes in seed order, then bridge order; one
    round trip, none when no seed names a bridge."""
    found = [Bridge(name, seed, number) for seed in seeds for name in bridge_names(question, seed, limit=bridges)]
    if not found:
        return []
    probes = [{"query": _probe_query(question, b.name, common), "name": b.name, "words": b.name.split(),
               "own": b.seed.document_id} for b in found]
    rows = store.read(NEXT_ROUND, probes=probes, vector=vector, candidates=candidates, specific=specific,
                      opening=OPENING, **filter_params(where))
    by_probe: list[list[NextRoundRow]] = [[] for _ in found]
    for row in rows:
        by_probe[row["n"]].append(row)
    return [probe_hits(r, b, specific=specific) for r, b in zip(by_probe, found, strict=True)]


def chained(ranking: Sequence[Hit], about: Mapping[str, Sequence[Hit]], *, after: int, per_seed: int,
            k: int) -> list[Hit]:
    """``ranking`` with the first ``per_seed`` hits ``about`` each of its hits' bridges (by the seed's chunk id)
    placed after their seed and the seed's bridge links (the title links round one placed after it), but not
    before its first ``after`` hits (round one's best pair usually holds both hops of a question that names
    them, and a chain's guess should not push either out), each once, with the score of the hit before it;
    the first ``k``."""
    out: list[Hit] = []
    placed: set[str] = set()
    due: dict[str, list[Hit]] = {}  # seed chunk id -> its chains not yet placed

    def place() -> None:
        for chain in (h for hits in due.values() for h in hits):
            if chain.chunk_id not in placed:
                out.append(chain.model_copy(update={"score": out[-1].score}))
                placed.add(chain.chunk_id)
        due.clear()

    for position, hit in enumerate(ranking):
        if hit.chunk_id not in placed:
            out.append(hit)
            placed.add(hit.chunk_id)
        if about.get(hit.chunk_id):
            due[hit.chunk_id] = list(about[hit.chunk_id][:per_seed])
        following = ranking[position + 1] if position + 1 < len(ranking) else None
        if position + 1 < after or (following is not None and _follows(following, due)):
            continue
        place()
    if due and out:
        place()
    return out[:k]


def _follows(hit: Hit, seeds: Collection[str]) -> bool:
    """Whether ``hit`` is a bridge link round one placed after one of ``seeds``."""
    return any(s.path == "bridge" and s.via_id in seeds for s in hit.sources)
