"""Multi-hop questions in 2WikiMultiHopQA's style, made by 2Wiki's own templates from its public corpus.

A held-out check for `strata eval retrieval` (docs/retrieval.md, "A 2Wiki-style held-out set"): no 2Wiki or
MuSiQue question file can be downloaded here, but 2Wiki's corpus can (HippoRAG's repository,
reproduce/dataset/2wikimultihopqa_corpus.json, 6,119 Wikipedia leads). 2Wiki made its questions from Wikidata
relations between two passages' entities; this script reads the same relations from the passages' text with
fixed patterns ("a 1999 ... film", "directed by NAME", "son of NAME", "(born ...)"), keeps a relation only when
NAME is another passage's title, and words it with 2Wiki's templates: compositional ("Where was the director
of film F born?"), comparison ("Which film came out first, F or G?"), bridge-comparison ("Which film has the
director born first, F or G?", four gold passages) and inference ("Who is the paternal grandfather of P?").
Questions name an entity as 2Wiki's do, without Wikipedia's disambiguator ("Agni", not "Agni (2004 film)").
Gold passages are the ones a relation was read from; answers are left empty (retrieval is scored, not QA).

    .venv/bin/python scripts/make_2wiki_proxy.py 2wikimultihopqa_corpus.json 2wiki_proxy.json --seed 2020
    strata eval retrieval --dataset 2wiki_proxy.json --corpus 2wikimultihopqa_corpus.json

Output: MuSiQue-style records (id, type, question, answer, paragraphs with is_supporting).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter

from kg.shared.text import title_core

_NAME = r"([A-Z][\w.'\- ]+?)"
_DIRECTED = re.compile(r"directed by " + _NAME + r"(?=[,.;(]| and | from | for | with | starring| who| based| in |$)")
_PARENT = re.compile(r"\b(?:son|daughter) of " + _NAME + r"(?=[,.;(]| and |$)")
_FILM_YEAR = re.compile(r"\bis an? (\d{4})\b[^.]*\bfilm\b")
_LIFE = re.compile(r"\(\s*born[^)]*?\d{3,4}|\(\d{3,4}\s*[-\u2013]")


def _born(text: str) -> bool:
    return _LIFE.search(text[:300]) is not None


def make_questions(corpus: list[dict[str, str]], seed: int) -> list[dict[str, object]]:
    passages = {p["title"]: p["text"] for p in corpus if "(disambiguation)" not in p["title"]}
    rng = random.Random(seed)
    directors: dict[str, str | None] = {}
    for title, text in passages.items():
        if _FILM_YEAR.search(text[:250]):
            found = _DIRECTED.search(text)
            name = found.group(1).strip() if found else None
            directors[title] = name if name in passages and name != title else None
    people = sorted(t for t, text in passages.items() if _born(text) and t not in directors)
    parents = {}
    for title, text in passages.items():
        found = _PARENT.search(text)
        if found and found.group(1).strip() in passages and found.group(1).strip() != title:
            parents[title] = found.group(1).strip()

    records: list[dict[str, object]] = []

    def add(kind: str, question: str, gold: list[str]) -> None:
        paragraphs = [{"idx": i, "title": t, "text": passages[t], "is_supporting": True} for i, t in enumerate(gold)]
        records.append(
            {
                "id": f"{kind}__{len(records)}",
                "type": kind,
                "question": question,
                "answer": "",
                "paragraphs": paragraphs,
            }
        )

    directed = sorted(f for f, d in directors.items() if d)
    for film in rng.sample(directed, min(80, len(directed))):
        director = directors[film]
        assert director is not None
        text = passages[director]
        templates = ["What nationality is the director of film {}?", "Who is the director of film {}?"]
        if _born(text):
            templates += ["Where was the director of film {} born?", "When is the director of film {}'s birthday?"]
        if "died" in text[:300] or "\u2013" in text[:120]:
            templates += ["When did the director of film {} die?", "Where did the director of film {} die?"]
        add("compositional", rng.choice(templates).format(title_core(film)), [film, director])

    films = sorted(directors)
    for _ in range(40):
        a, b = rng.sample(films, 2)
        template = rng.choice(
            ["Which film came out first, {} or {}?", "Which film was released more recently, {} or {}?"]
        )
        add("comparison", template.format(title_core(a), title_core(b)), [a, b])
    for _ in range(20):
        a, b = rng.sample(people, 2)
        template = rng.choice(["Who was born first, {} or {}?", "Who was born later, {} or {}?"])
        add("comparison", template.format(title_core(a), title_core(b)), [a, b])

    with_born_director = [f for f in directed if _born(passages[directors[f] or ""])]
    for _ in range(40):
        a, b = rng.sample(with_born_director, 2)
        template = rng.choice(
            [
                "Which film has the director born first, {} or {}?",
                "Which film has the director who was born later, {} or {}?",
            ]
        )
        add(
            "bridge_comparison",
            template.format(title_core(a), title_core(b)),
            [a, directors[a] or "", b, directors[b] or ""],
        )

    children = sorted(parents)
    for child in rng.sample(children, min(30, len(children))):
        template = rng.choice(["Who is the paternal grandfather of {}?", "Who is the paternal grandmother of {}?"])
        add("inference", template.format(title_core(child)), [child, parents[child]])
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", help="2Wiki's corpus: a JSON list of {title, text}")
    parser.add_argument("output", help="where to write the questions")
    parser.add_argument("--seed", type=int, default=2020)
    args = parser.parse_args()
    with open(args.corpus, encoding="utf-8") as file:
        corpus = json.load(file)
    records = make_questions(corpus, args.seed)
    with open(args.output, "w", encoding="utf-8") as file:
        json.dump(records, file, ensure_ascii=False, indent=1)
    print(len(records), "questions", dict(Counter(str(r["type"]) for r in records)))


if __name__ == "__main__":
    main()
