"""Multi-hop QA data sets: question files and passage corpora, one document per unique passage.

Recognised layouts (detected from the JSON itself, not the file name):

* ``hotpotqa`` — HotpotQA and 2WikiMultiHopQA question files: records with ``context`` as
  ``[[title, [sentence, ...]], ...]`` and ``supporting_facts`` as ``[[title, sentence_index], ...]``.
* ``musique`` — MuSiQue-style records with ``paragraphs: [{title, paragraph_text | text, ...}]``
  (JSON list or JSON Lines).
* ``corpus`` — a list of ``{title, text}`` or a dict ``title -> [sentence, ...]``.

A HotpotQA passage keeps its sentence list: sentence *i* of the document is the *i*-th list element, so
supporting-sentence retrieval can be scored against ``supporting_facts``. Other passages are split with
the chunker's sentence splitter. The same passage repeated across questions (distractors are) becomes
one document; a title reused with different text gets a ``#2``, ``#3`` ... suffix on its ``source``.
Each passage's ``sha256`` hashes the passage (title, text and sentence spans), not the file, so editing
one passage of a large corpus replaces that passage only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from kg.errors import LoaderError
from loaders.base import Loader, require_nonempty
from loaders.builder import TextBuilder
from loaders.chunking import split_sentences
from loaders.models import Sentence, SourceDocument
from loaders.text import read_text

__all__ = ["QALoader", "QAQuestion", "detect_layout", "load_questions", "passage_key"]

Layout = Literal["hotpotqa", "musique", "corpus"]


class QAQuestion(BaseModel):
    """A benchmark question with its gold evidence, for evaluating retrieval and answers."""

    id: str
    question: str
    answers: list[str]
    gold_titles: list[str]
    gold_sentences: list[tuple[str, int]]
    type: str | None = None
    passages: list[tuple[str, str]]
    # passage_key of each gold passage: titles repeat within a MuSiQue question, passages do not
    gold_passages: list[str] = []


def passage_key(title: str, text: str) -> str:
    """A passage's identity, the same whichever file or slice it comes from: a hash of its title and text."""
    return hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()


class _Passage(BaseModel):
    title: str
    text: str
    sentences: list[tuple[int, int]]


def _passage_digest(passage: _Passage) -> str:
    spans = ",".join(f"{a}-{b}" for a, b in passage.sentences)
    return hashlib.sha256(f"{passage.title}\x00{passage.text}\x00{spans}".encode()).hexdigest()


def _read_records(path: Path) -> Any:
    """A JSON document, or the list of records of a JSON Lines file."""
    require_nonempty(path)
    raw = read_text(path)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as first:
        records = []
        for number, line in enumerate(raw.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                if number == 1:  # not JSON Lines either: report the whole-document error
                    where = f"line {first.lineno}"
                    raise LoaderError(str(path), f"invalid JSON: {first.msg}", where) from exc
                where = f"line {number}"
                raise LoaderError(str(path), f"invalid JSON Lines record: {exc.msg}", where) from exc
        return records


def detect_layout(data: Any) -> Layout | None:
    if isinstance(data, dict):
        values = list(data.values())[:5]
        if values and all(isinstance(v, list) for v in values):
            return "corpus"
        return None
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        return None
    first = data[0]
    if "context" in first and "supporting_facts" in first:
        return "hotpotqa"
    if "paragraphs" in first:
        return "musique"
    if "title" in first and ("text" in first or "paragraph_text" in first):
        return "corpus"
    return None


def _field(path: Path, record: Any, name: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    if not isinstance(record, dict) or name not in record:
        raise LoaderError(str(path), f"missing field {name!r}", f"{where}, field {name!r}")
    value = record[name]
    if not isinstance(value, kind):
        problem = f"field {name!r} has type {type(value).__name__}"
        raise LoaderError(str(path), problem, f"{where}, field {name!r}")
    return value


def _from_sentences(sentences: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Join stripped sentences with single spaces; span *i* is list element *i* (possibly empty)."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for sentence in sentences:
        clean = " ".join(str(sentence).split())
        if parts and clean:
            parts.append(" ")
            position += 1
        spans.append((position, position + len(clean)))
        parts.append(clean)
        position += len(clean)
    return "".join(parts), spans


def _text_key(record: Any) -> str:
    """MuSiQue names passage text ``paragraph_text``; corpora and case studies use ``text``."""
    return "paragraph_text" if isinstance(record, dict) and "paragraph_text" in record else "text"


def _from_text(text: str) -> tuple[str, list[tuple[int, int]]]:
    clean = text.strip()
    return clean, split_sentences(clean)


def _passages(path: Path, data: Any, layout: Layout, first_index: int = 0) -> Iterator[_Passage]:
    """Every passage in file order, with sentence spans; field errors name the record index
    (``first_index`` is the index of ``data[0]`` in the file)."""
    if layout == "corpus" and isinstance(data, dict):
        for title, sentences in data.items():
            if not isinstance(sentences, list):
                raise LoaderError(str(path), "expected a list of sentences", f"title {title!r}")
            text, spans = _from_sentences(sentences)
            yield _Passage(title=title, text=text, sentences=spans)
        return
    for index, record in enumerate(data, start=first_index):
        where = f"record {index}"
        if layout == "corpus":
            title = _field(path, record, "title", where)
            text, spans = _from_text(_field(path, record, _text_key(record), where))
            yield _Passage(title=title, text=text, sentences=spans)
        elif layout == "hotpotqa":
            for number, entry in enumerate(_field(path, record, "context", where, list)):
                if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list)):
                    problem = "context entry is not [title, [sentences]]"
                    raise LoaderError(str(path), problem, f"{where}, context[{number}]")
                text, spans = _from_sentences(entry[1])
                yield _Passage(title=str(entry[0]), text=text, sentences=spans)
        else:
            for number, paragraph in enumerate(_field(path, record, "paragraphs", where, list)):
                inner = f"{where}, paragraphs[{number}]"
                title = _field(path, paragraph, "title", inner)
                text, spans = _from_text(_field(path, paragraph, _text_key(paragraph), inner))
                yield _Passage(title=title, text=text, sentences=spans)


def _load_layout(path: Path) -> tuple[Any, Layout]:
    data = _read_records(path)
    layout = detect_layout(data)
    if layout is None:
        expected = "expected HotpotQA, MuSiQue or a passage corpus"
        raise LoaderError(str(path), f"unrecognised JSON layout ({expected})", "record 0")
    return data, layout


class QALoader(Loader):
    formats: ClassVar[tuple[str, ...]] = ("hotpotqa", "musique", "corpus")
    extensions: ClassVar[tuple[str, ...]] = (".json", ".jsonl")

    def sniff(self, head: bytes) -> bool:
        return head.lstrip().startswith((b"[", b"{"))

    def load(self, path: Path, *, password: str | None = None) -> Iterator[SourceDocument]:
        data, layout = _load_layout(path)
        seen: set[str] = set()
        variants: dict[str, int] = {}
        for passage in _passages(path, data, layout):
            key = hashlib.sha1(f"{passage.title}\x00{passage.text}".encode()).hexdigest()
            if key in seen:
                continue
            seen.add(key)
            variants[passage.title] = variants.get(passage.title, 0) + 1
            count = variants[passage.title]
            source = f"{path}#{passage.title}" + (f"#{count}" if count > 1 else "")
            builder = TextBuilder(passage.title)
            builder.add_block(passage.text)
            doc = builder.finish(source=source, format=layout, sha256=_passage_digest(passage))
            doc.file = str(path)
            doc.sentences = [
                Sentence(index=i, char_start=a, char_end=b) for i, (a, b) in enumerate(passage.sentences)
            ]
            yield doc


def _answers(record: dict[str, Any], path: Path, where: str) -> list[str]:
    answer = _field(path, record, "answer", where, (str, int, float, list))  # case studies list their answers
    aliases = record.get("answer_aliases") or []
    return list(dict.fromkeys(str(a) for a in [*(answer if isinstance(answer, list) else [answer]), *aliases]))


def load_questions(path: str | Path) -> list[QAQuestion]:
    """Questions with gold titles/sentences and their passages (text identical to the loaded documents)."""
    file = Path(path)
    data, layout = _load_layout(file)
    if layout == "corpus":
        raise LoaderError(str(file), "a passage corpus has no questions")
    questions = []
    for index, record in enumerate(data):
        where = f"record {index}"
        passages = [(p.title, p.text) for p in _passages(file, [record], layout, index)]
        if layout == "hotpotqa":
            facts = _field(file, record, "supporting_facts", where, list)
            gold_sentences = [(str(title), int(i)) for title, i in facts]
            gold_titles = list(dict.fromkeys(t for t, _ in gold_sentences))
            first = {title: passage_key(title, text) for title, text in reversed(passages)}
            gold = [first[t] for t in gold_titles if t in first]  # a context's titles are unique here
            qid = str(_field(file, record, "_id", where, (str, int)))
        else:
            gold_sentences = []
            supporting = [bool(p.get("is_supporting")) for p in record["paragraphs"]]
            gold_titles = list(dict.fromkeys(t for (t, _), s in zip(passages, supporting, strict=True) if s))
            gold = [passage_key(t, x) for (t, x), s in zip(passages, supporting, strict=True) if s]
            qid = str(_field(file, record, "id", where, (str, int)))
        kind = record.get("type")
        if kind is None and layout == "musique" and "__" in qid:
            kind = qid.split("__", 1)[0]  # MuSiQue ids start with the hop type, e.g. "2hop__..."
        questions.append(
            QAQuestion(
                id=qid,
                question=_field(file, record, "question", where),
                answers=_answers(record, file, where),
                gold_titles=gold_titles,
                gold_sentences=gold_sentences,
                type=kind,
                passages=passages,
                gold_passages=list(dict.fromkeys(gold)),
            )
        )
    return questions
