"""Answers held to their sources: every citation marker is checked against the sentence that carries it,
unsupported ones are dropped and counted, and an answer left with no supported citation abstains.

What happens to an answer (:func:`hold_to_sources`):

* each ``[n]`` in a sentence is checked by the run's :class:`~reasoning.citations.base.CitationVerifier` against
  evidence ``n``: it stands when the evidence supports the sentence, or the clause the marker ends ("Vestas supplied
  it [1], and an alarm was added [2]": [1] for its first half); a sentence that is only markers, "[2]", is checked
  as the sentence before it. A marker that supports neither is removed from that sentence and counted in
  ``unsupported_citations`` (once per sentence it was removed from); a sentence none of whose markers stands
  cites instead the given chunk that supports it best by key tokens, when one does, else the pair of given chunks
  that holds it together (the model, or the extractive answerer, named the wrong one of the chunks it was given,
  or one of the two a comparison needs). A number the model listed without writing it in the text is kept when it
  supports some sentence of the answer (or the whole answer), else dropped and counted; an answer whose listed
  numbers all fail, with no marker in its text, cites the given chunk or pair that holds it, as above.
  A sentence citing several chunks, none of which holds it alone, keeps them all when together they do and each
  holds part of it ("Yes [2][3]": both directors, one per chunk; by key tokens only);
* when no supported citation is left (including an answer that cited nothing, which is how the answer prompt
  lets the model say the sources do not contain the answer, and an answer from no evidence at all), the answer
  abstains: its text becomes :func:`abstention` ("The sources do not contain the answer to this question.";
  in Chinese "资料中没有这个问题的答案。"), its citations are emptied and ``abstained`` is set; the evidence
  that was searched stays on the answer;
* left as they are: closed-book answers (an LLM method given no sources by design, :data:`CLOSED_BOOK_METHODS`,
  the paper's baselines without retrieval, answers from the model's own knowledge and cites nothing), L4
  creative answers (:data:`IDEA_METHODS`: ideas cite what they build on, which never states them; markers
  naming no evidence are still dropped) and answers that already abstained (offline creative: no LLM).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kg.retrieval.base import Hit
from kg.shared.text import detect_language
from loaders import split_sentences
from reasoning.citations.base import CitationVerifier, Claim
from reasoning.citations.tokens import common_tokens, joint_score, key_tokens, name_groups, score
from reasoning.evidence import MARKER, check_citations, strip_markers
from reasoning.types import Answer

__all__ = [
    "ABSTENTIONS", "CLOSED_BOOK_METHODS", "IDEA_METHODS", "Held", "abstention", "hold_markers", "hold_to_sources",
]

ABSTENTIONS = {"en": "The sources do not contain the answer to this question.",
               "zh": "资料中没有这个问题的答案。"}
"""The one wording of an abstention, per language of the question."""
CLOSED_BOOK_METHODS = frozenset({"zero-shot-cot", "self-ask"})
"""Methods that, with an LLM, answer from the model's own knowledge with no sources given."""
IDEA_METHODS = frozenset({"creative"})
"""Methods whose answers propose ideas (PIKE-RAG's L4): a citation points at what an idea builds on, which never
states the idea itself."""


def abstention(question: str) -> str:
    """The abstention's wording in the language of ``question``."""
    return ABSTENTIONS[detect_language(question)]


@dataclass(frozen=True)
class Held:
    """An answer text with its unsupported markers removed: ``listed`` are the listed-only numbers kept,
    ``unsupported`` counts the markers removed."""

    text: str
    listed: list[int]
    unsupported: int


_TRIM = re.compile(r"^[\s.,;:!?\u3002\uff0c]+|[\s.,;:!?\u3002\uff0c]+$")
_MARKERS_RUN = re.compile(r"(?:\s*\[\d+\])+")


def _clauses(sentence: str) -> dict[int, str]:
    """Each marker's clause: the words of ``sentence`` between the markers before it and it ("A [1], and B
    [2]." gives 1 "A" and 2 ", and B")."""
    out: dict[int, str] = {}
    last = 0
    for run in _MARKERS_RUN.finditer(sentence):
        for n in MARKER.findall(run.group()):
            out.setdefault(int(n), sentence[last:run.start()])
        last = run.end()
    return out


def _best_sources(claim: Claim, evidence: Sequence[Hit], verifier: CitationVerifier) -> list[int]:
    """The numbers of the given chunks that support ``claim`` best: the one whose key tokens do, if the verifier
    agrees (so at most one entailment call); else, for a comparison (a question naming two things, a claim that
    states nothing it does not name: "Yes, both are directors", "The Exies"), the pair of chunks about two of
    the things named that holds it together, by key tokens as a sentence citing both is held; else none. Nothing
    else is pieced together from two chunks: "1947" to "When was Steve Inskeep born?" from one naming Inskeep and
    another a birth in 1947, or "Yes" to "Did Vestas supply the alarm?" from one naming Vestas and another the
    alarm, would be claims neither chunk makes."""
    scored = [(found.score, -n) for n, hit in enumerate(evidence, 1)
              if (found := score(replace(claim, source=hit.text, title=hit.title))).supported]
    if scored:
        n = -max(scored)[1]
        hit = evidence[n - 1]
        return [n] if verifier.support(replace(claim, source=hit.text, title=hit.title)).supported else []
    compared = name_groups(claim.question)
    if len(compared) < 2 or not key_tokens(claim.sentence) <= key_tokens(claim.question):
        return []

    about = []  # per given chunk, which of the compared names it names
    for hit in evidence:
        present = key_tokens(hit.text) | key_tokens(hit.title)
        about.append({i for i, name in enumerate(compared) if name & present})
    pairs = [(found.score, -a, -b) for a, b in itertools.combinations(range(1, len(evidence) + 1), 2)
             if any(i != j for i in about[a - 1] for j in about[b - 1])
             and (found := joint_score(claim, [(evidence[a - 1].text, evidence[a - 1].title),
                                               (evidence[b - 1].text, evidence[b - 1].title)])).supported]
    if not pairs:
        return []
    _, a, b = max(pairs)
    return [-a, -b]


def hold_markers(text: str, question: str, evidence: Sequence[Hit], verifier: CitationVerifier,
                 listed: Sequence[int] = ()) -> Held:
    """Remove from ``text`` (markers normalised, as :func:`reasoning.evidence.check_citations` leaves them)
    each ``[n]`` whose evidence supports neither the sentence carrying it nor the clause it ends; keep the
    ``listed`` numbers that support some sentence."""
    spans = [(a, b) for a, b in split_sentences(text) if text[a:b].strip()] or [(0, len(text))]
    claims: list[str] = []
    for a, b in spans:
        said = strip_markers(text[a:b])
        claims.append(said if re.search(r"\w", said) else (claims[-1] if claims else strip_markers(text)))
    whole = len(dict.fromkeys(claims)) == 1
    common = common_tokens([h.text for h in evidence])

    def supports(n: int, *said: str) -> bool:
        hit = evidence[n - 1]
        # The sentence and its clause, each once ("A [1]." and "A " are one claim).
        claims = {_TRIM.sub("", s): s for s in said if re.search(r"\w", s)}
        return any(verifier.support(Claim(s, question, hit.text, whole_answer=whole, title=hit.title,
                                          common=common)).supported for s in claims.values())

    unsupported = 0
    pieces, last = [], 0
    for (a, b), claim in zip(spans, claims, strict=True):
        sentence = text[a:b]
        cited = _clauses(sentence)
        failed = [n for n, clause in cited.items() if not supports(n, claim, strip_markers(clause))]
        if len(cited) > 1 and len(failed) == len(cited) and joint_score(
                Claim(claim, question, "", whole_answer=whole, common=common),
                [(evidence[n - 1].text, evidence[n - 1].title) for n in cited]).supported:
            failed = []  # the sentence's sources hold it together (a comparison: one fact per source)
        unsupported += len(failed)
        others = (_best_sources(Claim(claim, question, "", whole_answer=whole, common=common), evidence, verifier)
                  if failed and len(failed) == len(cited) else [])
        for n in failed:
            # A sentence none of whose sources hold it cites the given chunks that do, if some do.
            sentence = sentence.replace(f"[{n}]", "".join(f"[{o}]" for o in others) if n == failed[0] else "")
        pieces += [text[last:a], sentence]
        last = b
    cleaned = "".join([*pieces, text[last:]])
    cleaned = re.sub(r"[ \t]+([.,;:!?\u3002\uff0c])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned)).strip()
    in_text = {int(m) for m in MARKER.findall(text)}
    kept = []
    only_listed = [n for n in dict.fromkeys(listed) if n not in in_text]
    for n in only_listed:
        if supports(n, *claims):
            kept.append(n)
        else:
            unsupported += 1
    if only_listed and not kept and not in_text:
        # The model cited chunks it was given, none of which holds the answer alone: it cites the given chunks
        # that do, as a sentence citing the wrong chunk does.
        said = strip_markers(text)
        kept = _best_sources(Claim(said, question, "", whole_answer=True, common=common), evidence, verifier)
    return Held(cleaned, kept, unsupported)


def hold_to_sources(answer: Answer, verifier: CitationVerifier, *, asked: str | None = None,
                    closed_book: bool = True) -> Answer:
    """``answer`` with unsupported citations dropped and counted, abstaining when none is left; ``asked`` is
    the question its evidence was retrieved for when that is not ``answer.question`` (a bridge's rewritten
    question, "Who is the manager of South Bay?"); ``closed_book``: whether the answerer that wrote it answers
    a closed-book method from its own knowledge (the LLM answerer's
    :attr:`~reasoning.answerer.Answerer.answers_closed_book`; the extractive answerer searches instead, so its
    answer is held like any other)."""
    closed_book = closed_book and answer.method in CLOSED_BOOK_METHODS and not answer.evidence
    if answer.abstained or closed_book or answer.method in IDEA_METHODS:
        return answer
    listed = [c.marker for c in answer.citations if not c.claims]
    held = hold_markers(answer.answer, asked or answer.question, answer.evidence, verifier, listed)
    _, citations, _ = check_citations(held.text, answer.evidence, held.listed)
    unsupported = answer.unsupported_citations + held.unsupported
    if not citations:
        return answer.model_copy(update={"answer": abstention(answer.question), "citations": [],
                                         "supporting_sentence": None, "short_answer": None, "abstained": True,
                                         "unsupported_citations": unsupported})
    # An extractive answer re-cited to another chunk was not taken from that chunk's sentence: it names none.
    kept = answer.supporting_sentence and any(" ".join(answer.supporting_sentence.split()) in " ".join(c.text.split())
                                              for c in citations)
    return answer.model_copy(update={"answer": held.text, "citations": citations, "unsupported_citations": unsupported,
                                     "supporting_sentence": answer.supporting_sentence if kept else None})
