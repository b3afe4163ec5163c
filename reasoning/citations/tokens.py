"""Check 1 of a citation, always run, offline and cheap: the cited chunk must contain the key tokens of the
sentence that cites it.

Key tokens are the numbers (thousands separators dropped: "84,000" is 84000), the words of three letters or more
that are not function words (NFKC, case-folded, accents and a plural "s" dropped) and, in CJK text, every pair of
adjacent ideographs (CJK has no spaces to split words on; a lone ideograph counts alone). A sentence that is the
whole answer, or does not restate any key token of the question ("13", "Bob Edwards"), answers the question itself:
its claim is "the answer to the question is ...", so the question's key tokens join its own (its numbers too: "16"
answers "How many were approved in 2023?" only where 2023 is stated). The question's tokens that most of the
evidence given shares (in more than half the chunks, at least three: "Borealis Wind" in a corpus about Borealis
Wind) say nothing about what was asked and do not count. A sentence sharing no key token with the question must also
find the names the question asks about ("Tern" answers "What is the rated power at Puffin Point?" only where Puffin
Point is named), and every sentence must find the names it states itself (one word of each suffices: "Steve
Inskeep" where the source says "Inskeep"): "The rated power at Puffin Point is 4.2 MW" is not supported by a
table row of another site.

The claim is looked for in the chunk's best passage, two adjacent sentences (a table row is a sentence, read with
its table's header row) with the title of the chunk's document (the context of every passage), not across the whole
chunk: a number that appears somewhere in a chunk does not support a claim about something the chunk states
elsewhere. The ``score`` is the share of the claim's key tokens in that passage (when the question joined the claim,
at most the share of the question's key tokens there: the passage must be about what was asked, not only repeat the
answer's words); the chunk supports the sentence when every number (and name) of the claim is in the passage and the
score is at least :data:`SUPPORT_THRESHOLD` (0.5). Scores in :data:`UNDECIDED` (0.25 to 0.75) with nothing missing
are close calls that an LLM's entailment check settles when one is enabled (:mod:`reasoning.citations.entailment`).

>>> claim = Claim("The repair cost EUR 84,000.", "What did the repair cost?",
...               "Turbine T-14 lost its gearbox. The repair took 12 days and cost EUR 84,000.")
>>> TokenVerifier().support(claim)
Support(supported=True, score=1.0, by='tokens')
>>> table = "| year | failures |\\n|---|---|\\n| 2024 | 13 |"
>>> TokenVerifier().support(Claim("13", "Who is the CEO of Borealis Wind?", table))
Support(supported=False, score=0.0, by='tokens')
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kg.shared.text import CJK_CHARACTERS, is_cjk
from loaders import split_sentences
from reasoning.citations.base import Claim, Support

__all__ = [
    "SUPPORT_THRESHOLD", "UNDECIDED", "TokenScore", "TokenVerifier", "common_tokens",
    "joint_score", "key_tokens", "passages", "question_names", "score",
]

SUPPORT_THRESHOLD = 0.5
"""The least share of a claim's key tokens the cited passage must contain to support it."""
UNDECIDED = (0.25, 0.75)
"""Scores from the first (inclusive) to the second (exclusive) are close calls: an entailment check, when
enabled, decides them instead of the threshold."""

_TOKEN = re.compile(rf"\d+(?:[.,]\d+)*|[^\W\d_{CJK_CHARACTERS}]{{3,}}|[{CJK_CHARACTERS}]+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")
_FUNCTION_WORDS = """
a about above after again against all also although among and another any are around as at be because been
before being below between both but by can cannot could did does doing done down during each either else even
ever every few for from further had has have having her here hers him his how however into its itself just
least less like made make many may might more most much must neither nor not now off once only onto other
others our ours out over own per rather same shall she should since some such than that the their theirs them
then there these they this those though through thus too toward under until upon very was were what whatever
when where whether which while who whom whose why will with within without would yes yet you your yours
answer answers source sources question questions text
"""
_STOPWORDS = frozenset(_FUNCTION_WORDS.split())
_CJK_QUESTION_PAIRS = "什么 多少 哪个 哪些 哪里 为什 么时 时候 怎么 如何 是否 资料 没有 问题 答案"
_CJK_STOP = frozenset(_CJK_QUESTION_PAIRS.split())
_TABLE_ROW = re.compile(r"^\s*\|")
_TABLE_RULE = re.compile(r"^\s*\|[\s:|-]+\|?\s*$")


def _folded(text: str) -> str:
    """NFKC, case-folded, accents dropped ("Renée" is "renee": a question may be typed without them)."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", bare).casefold()


def key_tokens(text: str) -> set[str]:
    """The key tokens of ``text`` (see the module's description).

    >>> sorted(key_tokens("Bob Edwards hosted 2 shows, worth EUR 84,000, in 北湖风电场."))
    ['2', '84000', 'bob', 'edward', 'eur', 'hosted', 'show', 'worth', '北湖', '湖风', '电场', '风电']
    """
    out: set[str] = set()
    for token in _TOKEN.findall(_folded(text)):
        if token[0].isdigit():
            out.add(_THOUSANDS.sub("", token).rstrip(".,"))
        elif is_cjk(token[0]):
            pairs = {token[i:i + 2] for i in range(len(token) - 1)} or {token}
            out.update(p for p in pairs if p not in _CJK_STOP)
        elif token not in _STOPWORDS:
            out.add(token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token)
    return out



def passages(source: str) -> list[str]:
    """The passages of ``source`` a claim is looked for in: each sentence with the next one when both are
    prose, each table row alone with its table's header row (two rows are two records, never one passage).

    >>> passages("Prices rose. They fell.\\n\\n| year | price |\\n|---|---|\\n| 2023 | 12 |\\n| 2024 | 13 |")
    ['Prices rose. They fell.', 'They fell.', '| year | price | | 2023 | 12 |', '| year | price | | 2024 | 13 |']
    """
    lines = [source[a:b].strip() for a, b in split_sentences(source) if source[a:b].strip()]
    units: list[tuple[str, bool]] = []  # (text, is a table row)
    header = ""
    for i, line in enumerate(lines):
        if _TABLE_RULE.match(line):
            continue
        if not _TABLE_ROW.match(line):
            header = ""
            units.append((line, False))
        elif i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            header = line  # the row above a table's rule names the columns of the rows below it
        else:
            units.append((f"{header} {line}".strip(), True))
    out = []
    for i, (text, row) in enumerate(units):
        following = units[i + 1] if i + 1 < len(units) else None
        out.append(f"{text} {following[0]}" if not row and following and not following[1] else text)
    return out or [source]


@dataclass(frozen=True)
class TokenScore:
    """Check 1's reading of a claim: the share of its key tokens in the source's best passage, and the
    claim's numbers and names that passage lacks."""

    score: float
    missing: tuple[str, ...]

    @property
    def supported(self) -> bool:
        return not self.missing and self.score >= SUPPORT_THRESHOLD

    @property
    def undecided(self) -> bool:
        """A close call an entailment check may settle (never one with a number or name the passage lacks)."""
        return not self.missing and UNDECIDED[0] <= self.score < UNDECIDED[1]


def question_names(question: str) -> set[str]:
    """Key tokens of the capitalised words of ``question`` after its first word (the names it asks about).

    >>> sorted(question_names("What is the rated power of the turbines at Puffin Point?"))
    ['point', 'puffin']
    """
    words = question.split()[1:]
    return key_tokens(" ".join(w for w in words if w[:1].isupper()))


def name_groups(sentence: str) -> list[set[str]]:
    """The key tokens of each run of capitalised words of ``sentence`` after its first word (the names it
    states); a name is found when any of its tokens is ("Steve Inskeep" where the source says "Inskeep").

    >>> [sorted(g) for g in name_groups("The rated power at Puffin Point is 4.2 MW, says Steve Inskeep.")]
    [['point', 'puffin'], ['inskeep', 'steve']]
    """
    groups: list[set[str]] = []
    run: list[str] = []
    for word in [*sentence.split()[1:], ""]:
        if word[:1].isupper():
            run.append(word)
            continue
        if run and (tokens := key_tokens(" ".join(run))):
            groups.append(tokens)
        run = []
    return groups


def common_tokens(texts: Sequence[str]) -> frozenset[str]:
    """Key tokens in more than half of ``texts`` and in at least three: what the sources all talk about.

    >>> sorted(common_tokens(["Borealis Wind runs turbines.", "Borealis Wind insures.", "Borealis Wind, 1990."]))
    ['boreali', 'wind']
    """
    counts = Counter(t for text in texts for t in key_tokens(text))
    return frozenset(t for t, n in counts.items() if n >= 3 and n > len(texts) / 2)


def claim_tokens(claim: Claim) -> tuple[set[str], set[str], set[str]]:
    """``(key tokens of the claim, the question's key tokens it must be about, the tokens it may not miss)``;
    the question's tokens most of the evidence shares (``claim.common``) do not count.

    The question joins the claim of a sentence that is the whole answer or shares no key token with the
    question (it answers the question itself, not a part of it). Never missing: the claim's numbers, and for
    a sentence sharing no key token with the question ("Tern"), the names the question asks about too (the
    names the sentence itself states are looked for by :func:`score`)."""
    own, asked = key_tokens(claim.sentence), key_tokens(claim.question) - claim.common
    elliptical = not own & asked
    context = asked if claim.whole_answer or elliptical else set()
    wanted = own | context
    required = {t for t in wanted if t[0].isdigit()} | (question_names(claim.question) & asked if elliptical else set())
    return wanted, context, required


def score(claim: Claim) -> TokenScore:
    """The best passage's score for the claim, and the claim's numbers and names that passage lacks."""
    wanted, context, required = claim_tokens(claim)
    if not wanted:
        return TokenScore(0.0, ())
    titled = key_tokens(claim.title)
    named = name_groups(claim.sentence)
    best: tuple[float, tuple[str, ...]] = (0.0, tuple(sorted(required)))
    for passage in passages(claim.source):
        present = key_tokens(passage) | titled
        found = present & wanted
        share = len(found) / len(wanted)
        if context:  # about what was asked, not only sharing the answer's words
            share = min(share, len(found & context) / len(context))
        lacking = [" ".join(sorted(g)) for g in named if not g & present]  # a name the sentence states
        candidate = (round(share, 4), tuple(sorted(required - found)) + tuple(lacking))
        if (not candidate[1], candidate[0]) > (not best[1], best[0]):
            best = candidate
    return TokenScore(*best)


def joint_score(claim: Claim, sources: Sequence[tuple[str, str]]) -> TokenScore:
    """:func:`score` of a sentence that cites several chunks (``(text, title)`` each) and states what none holds
    alone ("Yes [2][3]" to "Are Nolan and Kalathil both directors?", one director per chunk): each chunk's best
    passage must hold some of the claim's key tokens, and together they must support it."""
    wanted, context, required = claim_tokens(claim)
    if not wanted:
        return TokenScore(0.0, ())
    present: set[str] = set()
    for text, title in sources:
        titled = key_tokens(title)
        best = max((key_tokens(p) | titled for p in passages(text)), key=lambda tokens: len(tokens & wanted))
        if not best & wanted:
            return TokenScore(0.0, (f"anything of the claim in {title!r}",))
        present |= best
    found = present & wanted
    share = len(found) / len(wanted)
    if context:
        share = min(share, len(found & context) / len(context))
    lacking = [" ".join(sorted(g)) for g in name_groups(claim.sentence) if not g & present]
    return TokenScore(round(share, 4), tuple(sorted(required - found)) + tuple(lacking))


class TokenVerifier:
    """:class:`reasoning.citations.base.CitationVerifier` by key tokens alone (check 1)."""

    def support(self, claim: Claim) -> Support:
        found = score(claim)
        return Support(supported=found.supported, score=found.score, by="tokens")
