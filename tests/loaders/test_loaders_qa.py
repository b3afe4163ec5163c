from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kg.errors import LoaderError
from loaders import SourceDocument, load_path, load_questions


def test_hotpotqa_passages_and_sentences(shared_data: Path, check: Callable[[SourceDocument], None]) -> None:
    path = shared_data / "hotpotqa_sample" / "hotpotqa_train.json"
    docs = list(load_path(path))
    raw = json.loads(path.read_text(encoding="utf-8"))
    titles = {title for record in raw for title, _ in record["context"]}
    assert {d.title for d in docs} == titles
    assert len({d.source for d in docs}) == len(docs)
    by_title = {d.title: d for d in docs}
    for doc in docs[:50]:
        check(doc)
        assert doc.format == "hotpotqa"
    # Every supporting fact of the first question resolves to the right sentence text.
    first = raw[0]
    context = dict((title, sentences) for title, sentences in first["context"])
    for title, index in first["supporting_facts"]:
        doc = by_title[title]
        sentence = doc.sentences[index]
        assert doc.text[sentence.char_start : sentence.char_end] == context[title][index].strip()


def test_hotpotqa_questions(shared_data: Path) -> None:
    path = shared_data / "hotpotqa_sample" / "hotpotqa_train.json"
    questions = load_questions(path)
    assert len(questions) == 100
    q = questions[0]
    assert q.id == "5a77ec115542992a6e59dff7" and q.answers == ["a spirit"] and q.type == "bridge"
    assert q.gold_titles == ["Alû", "Lilu (mythology)"]
    assert q.gold_sentences == [("Alû", 3), ("Lilu (mythology)", 0)]
    docs = {d.title: d.text for d in load_path(path)}
    assert all(docs[title] == text for title, text in q.passages)


def test_hotpotqa_corpus_dict(shared_data: Path) -> None:
    path = shared_data / "hotpotqa_sample" / "hotpotqa_train_corpus.json"
    docs = list(load_path(path))
    assert len(docs) == 994 and {d.format for d in docs} == {"corpus"}
    assert all(len(d.sentences) >= 1 for d in docs)


def test_musique_style_case_study(shared_data: Path, check: Callable[[SourceDocument], None]) -> None:
    path = shared_data / "case_study" / "case_study_movies.json"
    docs = list(load_path(path))
    assert docs[0].title == "Black Hawk Down" and docs[0].format == "musique"
    check(docs[0])
    assert docs[0].text.startswith("Black Hawk Down is a 2001 war film")
    first = docs[0].sentences[0]
    assert docs[0].text[first.char_start : first.char_end].endswith("from a screenplay by Ken Nolan.")
    [question] = load_questions(path)
    assert question.answers == ["Black Hawk Down"]
    assert question.gold_titles[:2] == ["Black Hawk Down", "Ridley Scott"]
    corpus = list(load_path(shared_data / "case_study" / "case_study_movies_corpus.json"))
    assert corpus[0].format == "corpus" and corpus[0].title == "Black Hawk Down"


def test_musique_jsonl_and_duplicate_titles(tmp_path: Path) -> None:
    path = tmp_path / "musique.jsonl"
    records = [
        {
            "id": "2hop__1_2",
            "question": "q?",
            "answer": "a",
            "answer_aliases": ["A"],
            "paragraphs": [{"title": "T", "paragraph_text": "One. Two!", "is_supporting": True, "idx": 0}],
        },
        {
            "id": "2hop__3_4",
            "question": "q2?",
            "answer": "b",
            "paragraphs": [{"title": "T", "paragraph_text": "Other text.", "is_supporting": False, "idx": 0}],
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    docs = list(load_path(path))
    assert [d.source for d in docs] == [f"{path}#T", f"{path}#T#2"]
    assert {d.file for d in docs} == {str(path)}
    assert [(s.char_start, s.char_end) for s in docs[0].sentences] == [(0, 4), (5, 9)]
    questions = load_questions(path)
    assert questions[0].answers == ["a", "A"] and questions[0].type == "2hop"
    assert questions[0].gold_titles == ["T"] and questions[1].gold_titles == []


def test_corpus_missing_field_names_record_and_field(tmp_path: Path) -> None:
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps([{"title": "A", "text": "x"}, {"title": "B"}]), encoding="utf-8")
    with pytest.raises(LoaderError) as info:
        list(load_path(path))
    assert info.value.location == "record 1, field 'text'"
    assert "corpus.json" in str(info.value)


def test_unrecognised_json_layout(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps([{"foo": 1}]), encoding="utf-8")
    with pytest.raises(LoaderError, match="unrecognised JSON layout"):
        list(load_path(path))


def test_a_passage_hash_is_its_own_not_its_files(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps([{"title": "A", "text": "Alpha."}, {"title": "B", "text": "Beta."}]), "utf-8")
    second.write_text(json.dumps([{"title": "A", "text": "Alpha."}, {"title": "B", "text": "Beta, edited."}]), "utf-8")
    a1, b1 = load_path(first)
    a2, b2 = load_path(second)
    assert a1.sha256 == a2.sha256  # the same passage, whichever file holds it
    assert b1.sha256 != b2.sha256 and a1.sha256 != b1.sha256
    # The same text split into other sentences is another passage (its sentence indices differ).
    third = tmp_path / "c.json"
    third.write_text(json.dumps({"A": ["Alpha."], "B": ["Beta,", "edited."]}), "utf-8")
    fourth = tmp_path / "d.json"
    fourth.write_text(json.dumps({"A": ["Alpha."], "B": ["Beta, edited."]}), "utf-8")
    assert [d.sha256 for d in load_path(third)][1] != [d.sha256 for d in load_path(fourth)][1]
