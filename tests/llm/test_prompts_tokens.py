from __future__ import annotations

from pathlib import Path

import pytest

from kg.errors import ConfigError
from kg.llm import (
    TASK_SCHEMAS,
    available_prompts,
    detect_language,
    estimate_tokens,
    extract_json,
    load_prompt,
    parse_retry_after,
    prompt_for,
)

REQUIRED = [
    "atomic_questions", "triples", "question_proposals", "atom_selection", "answer", "question_class",
    "tag_classes", "chunk_tags", "fact_items", "mind_map", "enhanced_chunk", "perspective", "synthesis",
    "judge", "tag_aliases", "key_points", "atoms_triples", "chunk_knowledge",
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("task", REQUIRED)
def test_every_prompt_loads_and_renders(task: str, lang: str) -> None:
    prompt = load_prompt(task, lang)
    assert prompt.version >= 1 and prompt.lang == lang and prompt.task == task
    fields = {name: f"<{name}>" for name in prompt.fields}
    messages = prompt.messages(**fields)
    assert [m["role"] for m in messages] == ["system", "user"]
    text = "\n".join(m["content"] for m in messages)
    assert all(f"<{name}>" in text for name in fields)
    assert "{{" not in text and "JSON" in text  # escaped braces rendered, output format stated
    assert task in TASK_SCHEMAS


def test_language_choice_and_content() -> None:
    en = prompt_for("atomic_questions", "Neo4j is a graph database.")
    zh = prompt_for("atomic_questions", "Neo4j 是一个图数据库,由 Neo4j 公司开发。")
    assert en.lang == "en" and zh.lang == "zh"
    assert "pronoun" in en.text and "代词" in zh.text
    assert {"title", "chunk"} <= en.fields


def test_available_prompts_and_missing() -> None:
    found = available_prompts()
    assert all(found[t] == ["en", "zh"] for t in REQUIRED)
    with pytest.raises(ConfigError, match="no_such_task"):
        load_prompt("no_such_task", "en")


def test_prompt_version_line_required(tmp_path: Path) -> None:
    (tmp_path / "x.en.txt").write_text("no version\nHello {name}", encoding="utf-8")
    with pytest.raises(ConfigError, match="version"):
        load_prompt("x", "en", folder=tmp_path)
    (tmp_path / "y.en.txt").write_text("# version: 7\nHello {name}", encoding="utf-8")
    prompt = load_prompt("y", "zh", folder=tmp_path)  # falls back to English
    assert prompt.version == 7 and prompt.messages(name="Ada") == [{"role": "user", "content": "Hello Ada"}]
    assert prompt.render(name="Ada") == "Hello Ada"


def test_detect_language() -> None:
    assert detect_language("What is a knowledge graph?") == "en"
    assert detect_language("什么是知识图谱?") == "zh"
    assert detect_language("Neo4j 图数据库的查询语言是 Cypher") == "zh"
    assert detect_language("") == "en"


def test_cjk_checks_agree_at_every_block_edge() -> None:
    from kg.shared.text import _CJK_RANGES, has_cjk, is_cjk

    edges = [chr(c) for lo, hi in _CJK_RANGES for c in (lo - 1, lo, hi, hi + 1)]
    for ch in [*edges, "a", "é", "ß", " "]:
        assert has_cjk(f"word{ch}word") == is_cjk(ch), hex(ord(ch))
    assert is_cjk("图") and not is_cjk("Z") and not has_cjk("Neo4j graph") and has_cjk("Neo4j 图")


def test_cjk_share_counts_the_visible_characters() -> None:
    from kg.shared.text import _CJK_RANGES, cjk_share, is_cjk

    edges = "".join(chr(c) for lo, hi in _CJK_RANGES for c in (lo - 1, lo, hi, hi + 1))
    assert cjk_share(edges) == sum(map(is_cjk, edges)) / len(edges)
    assert cjk_share("Café \u3000 知识\n") == 2 / 6  # an ideographic space is a space
    assert cjk_share("Neo4j graph") == cjk_share(" \t") == cjk_share("") == 0.0


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    english = "The quick brown fox jumps over the lazy dog. " * 10
    assert 90 <= estimate_tokens(english) <= 130  # ~100 tokens with OpenAI's tokenizer
    assert estimate_tokens("知识图谱") == 4
    long_word = "internationalization"
    assert estimate_tokens(long_word) >= 4


def test_extract_json() -> None:
    assert extract_json('{"a": 1}') == '{"a": 1}'
    assert extract_json('text ```json\n{"a": "}"}\n``` more') == '{"a": "}"}'
    assert extract_json('Answer: {"a": {"b": [1, 2]}} and {"c": 3}') == '{"a": {"b": [1, 2]}}'
    assert extract_json('broken {"a": 1 then {"b": 2}') == '{"b": 2}'
    assert extract_json("no json here") is None
    assert extract_json('{"a": "unterminated') is None


def test_parse_retry_after() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None
