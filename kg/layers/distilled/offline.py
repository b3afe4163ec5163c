"""Offline entities and relations: spaCy, with a trained model when one is installed, else rules.

Without an LLM the triples layer still links chunks through entities. With ``en_core_web_sm`` (or any
model named in ``model``) installed, its named entities are used; otherwise a rule-based matcher over
``spacy.blank`` tokens finds proper nouns (capitalised word sequences, title-cased multiword names with
"of"/"de"/"van" inside), years, dates and numbers with units, and, in Chinese text, names in
book-title or corner quotes. Relations are co-occurrences within one sentence (each entity with the
next one and with the sentence's first): the short lower-case verb phrase between two entities when
there is one ("founded", "was born in"), else ``co_occurs_with``.
Everything it produces is marked ``source='offline'``.

>>> ex = OfflineExtractor(model=None)
>>> [(e.name, e.type) for e in ex.entities("Bob Edwards hosted Morning Edition on NPR in 1979.")]
[('Bob Edwards', 'Entity'), ('Morning Edition', 'Entity'), ('NPR', 'Entity'), ('1979', 'Date')]
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import spacy
from spacy.language import Language
from spacy.matcher import Matcher

from kg.layers.distilled.models import CO_OCCURRENCE, ChunkExtraction, ExtractedTriple
from kg.layers.distilled.text import STOPWORDS, sentences
from kg.shared.text import is_cjk

__all__ = ["OfflineEntity", "OfflineExtractor"]

_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"
]
_SPACY_TYPES = {
    "PERSON": "Person", "ORG": "Organization", "GPE": "Location", "LOC": "Location", "FAC": "Location",
    "NORP": "Group", "DATE": "Date", "TIME": "Date", "CARDINAL": "Number", "QUANTITY": "Number",
    "MONEY": "Number", "PERCENT": "Number", "ORDINAL": "Number", "EVENT": "Event", "WORK_OF_ART": "Work",
    "PRODUCT": "Product", "LAW": "Law", "LANGUAGE": "Language",
}
# Capitalised words that start sentences or stand alone without being names.
_NOT_NAMES = frozenset(
    [
        "The", "A", "An", "In", "On", "At", "For", "From", "By", "With", "As", "It", "Its", "This", "That", "These",
        "Those", "He", "She", "They", "His", "Her", "Their", "We", "Our", "You", "Your", "I", "After", "Before",
        "During", "When", "While", "Although", "However", "But", "And", "Or", "If", "Since", "Until", "Because",
        "Also", "There", "Here", "What", "Who", "Which", "Where", "Why", "How", "Some", "Many", "Most", "Each",
        "Both"
    ]
)
_CJK_QUOTED = re.compile(r"[《「『“]([^》」』”]{1,30})[》」』”]")
_VERB_GAP = re.compile(r"^[a-z]+(?: [a-z]+){0,3}$")


@dataclass(frozen=True)
class OfflineEntity:
    name: str
    type: str
    start: int  # character offset in the sentence
    end: int


def _rule_patterns() -> dict[str, list[list[dict[str, Any]]]]:
    title = {"IS_TITLE": True}
    upper = {"IS_UPPER": True, "LENGTH": {">=": 2}}
    name_token = {"TEXT": {"REGEX": r"^[A-Z][\w'\-]*$"}}
    joiner = {"LOWER": {"IN": ["of", "de", "la", "du", "von", "van", "der"]}}
    # "Apollo 11", "Boeing 747": a short number ends a name; a year does not ("Hamburg 1990" is two things).
    numeral = {"TEXT": {"REGEX": r"^(?!(1[0-9]|20)\d\d$)\d{1,4}$"}}
    return {
        "Entity": [
            [name_token, {"OP": "*", **name_token}],
            [name_token, {"OP": "*", **name_token}, numeral],
            [name_token, {"OP": "*", **name_token}, joiner, name_token, {"OP": "*", **name_token}],
            [upper],
            [title, {"TEXT": "."}, name_token],
        ],
        "Date": [
            [{"LOWER": {"IN": _MONTHS}}, {"IS_DIGIT": True, "LENGTH": {"<=": 2}, "OP": "?"},
             {"TEXT": ",", "OP": "?"}, {"TEXT": {"REGEX": r"^(1[0-9]|20)\d\d$"}}],
            [{"IS_DIGIT": True, "LENGTH": {"<=": 2}}, {"LOWER": {"IN": _MONTHS}},
             {"TEXT": {"REGEX": r"^(1[0-9]|20)\d\d$"}}],
            [{"TEXT": {"REGEX": r"^(1[0-9]|20)\d\d$"}}],
        ],
        "Number": [
            [{"LIKE_NUM": True}, {"LOWER": {"IN": ["million", "billion", "thousand", "percent", "%", "km",
                                                   "kilometres", "kilometers", "miles", "metres", "meters",
                                                   "people", "years"]}}],
        ],
    }


class OfflineExtractor:
    """Entities and co-occurrence triples without an LLM (see the module docstring).

    ``model``: a spaCy pipeline package to use when installed (default ``en_core_web_sm``); None forces
    the rule-based matcher.
    """

    def __init__(self, *, model: str | None = "en_core_web_sm", max_pairs_per_sentence: int = 8) -> None:
        self.max_pairs = max_pairs_per_sentence
        self.model_name: str | None = None
        self.nlp: Language
        if model and importlib.util.find_spec(model) is not None:
            self.nlp = spacy.load(model, disable=["lemmatizer", "parser"])
            self.model_name = model
            self.matcher: Matcher | None = None
        else:
            self.nlp = spacy.blank("en")
            self.matcher = Matcher(self.nlp.vocab)
            for label, patterns in _rule_patterns().items():
                self.matcher.add(label, patterns, greedy="LONGEST")

    @property
    def method(self) -> str:
        return f"spacy:{self.model_name}" if self.model_name else "spacy:rules"

    def entities(self, sentence: str) -> list[OfflineEntity]:
        return self.entities_many([sentence])[0]

    def entities_many(self, texts: Sequence[str]) -> list[list[OfflineEntity]]:
        """Entities of each text (one sentence each), in text order, without overlaps."""
        out: list[list[OfflineEntity]] = []
        for text, doc in zip(texts, self.nlp.pipe(texts, batch_size=256), strict=True):
            found: list[OfflineEntity] = []
            if self.matcher is None:
                found = [OfflineEntity(e.text, _SPACY_TYPES.get(e.label_, "Entity"), e.start_char, e.end_char)
                         for e in doc.ents]
            else:
                for match_id, start, end in self.matcher(doc):
                    span = doc[start:end]
                    label = self.nlp.vocab.strings[match_id]
                    if label == "Entity":
                        while len(span) and span[0].text in _NOT_NAMES:
                            span = span[1:]
                        # A single title-case word opening a sentence is usually not a name.
                        opener = (len(span) == 1 and span.start == 0 and span.text.istitle()
                                  and not _multi_capital(span.text) and not _looks_like_name(text, span.text))
                        if not len(span) or opener:
                            continue
                    found.append(OfflineEntity(span.text, label, span.start_char, span.end_char))
            found += [OfflineEntity(m.group(1), "Work", m.start(1), m.end(1)) for m in _CJK_QUOTED.finditer(text)]
            out.append(_without_overlaps(found))
        return out

    def extract_many(self, texts: Sequence[str]) -> list[ChunkExtraction]:
        """Per text, its entities and the co-occurrence triples of the entities of each sentence."""
        split = [sentences(t) for t in texts]
        found = iter(self.entities_many([s for group in split for s in group]))
        out: list[ChunkExtraction] = []
        for group in split:
            extraction = ChunkExtraction()
            for sentence in group:
                ents = next(found)
                extraction.entities.extend((e.name, e.type) for e in ents)
                # Each entity with the next one (a chain) and with the sentence's first entity (usually
                # its subject): linear in the entities, not quadratic.
                pairs = sorted({(i, i + 1) for i in range(len(ents) - 1)} | {(0, j) for j in range(2, len(ents))})
                for i, j in pairs[:self.max_pairs]:
                    head, tail = ents[i], ents[j]
                    if head.name == tail.name:
                        continue
                    gap = sentence[head.end:tail.start].strip(" ,")
                    relation = CO_OCCURRENCE
                    if _VERB_GAP.match(gap) and any(w not in STOPWORDS for w in gap.split()):
                        relation = gap.replace(" ", "_")
                    extraction.triples.append(ExtractedTriple(
                        head=head.name, head_type=head.type, relation=relation, tail=tail.name,
                        tail_type=tail.type))
            out.append(extraction)
        return out


def _multi_capital(word: str) -> bool:
    return sum(ch.isupper() for ch in word) > 1 or any(ch.isdigit() for ch in word)


def _looks_like_name(text: str, word: str) -> bool:
    """A sentence-initial word is a name if it appears capitalised elsewhere in the text too."""
    return re.search(rf"(?<!^)(?<=[\s(\"'])\b{re.escape(word)}\b", text[len(word):]) is not None


def _without_overlaps(found: list[OfflineEntity]) -> list[OfflineEntity]:
    found.sort(key=lambda e: (e.start, -(e.end - e.start)))
    out: list[OfflineEntity] = []
    for ent in found:
        if out and ent.start < out[-1].end:
            continue
        if not ent.name.strip() or (len(ent.name) == 1 and not is_cjk(ent.name)):
            continue
        out.append(ent)
    return out
