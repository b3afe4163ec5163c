"""The Browser guide's Cypher runs on the real Neo4j, and the style file colours every label Strata writes."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import cypher
from kg.app.browser import browser_link, evidence_cypher, grass_path
from kg.app.client import LAYERS, Strata
from kg.app.demo import CORPUS
from kg.store.base import GraphStore
from tests.conftest import REPO


def guide_snippets() -> list[tuple[str, dict[str, object]]]:
    text = (REPO / "docs" / "browser.md").read_text("utf-8")
    snippets = []
    for block in re.findall(r"```cypher\n(.*?)```", text, re.S):
        params = {m[0]: ast.literal_eval(m[1]) for m in re.findall(r"^:param (\w+) => (.+)$", block, re.M)}
        snippets.append(("\n".join(line for line in block.splitlines() if not line.startswith(":param")), params))
    return snippets


def test_guide_snippets_run(store: GraphStore, make_kb: Callable[[str], Strata]) -> None:
    make_kb("default").load([CORPUS / "failure-report-2024.pdf", CORPUS / "fleet-overview.md"])
    snippets = guide_snippets()
    assert len(snippets) >= 6
    results = [store.query(query, **params) for query, params in snippets]
    assert results[0] and all(r["p"] for r in results[0])  # the document's sections and chunks
    assert results[1]  # the documents reference each other


def test_evidence_link_and_query(store: GraphStore, make_kb: Callable[[str], Strata]) -> None:
    make_kb("default").load([CORPUS / "gearbox-history.md"])
    ids = [r["id"] for r in store.query("MATCH (c:Chunk) RETURN c.id AS id ORDER BY c.order LIMIT 2")]
    hostile = 'x"}) DETACH DELETE c //'
    query = evidence_cypher([*ids, ids[0], hostile])
    assert query.count(ids[0]) == 1  # each chunk once
    rows = store.query(query)
    assert sorted(r["path"][-1]["id"] for r in rows) == sorted(ids)  # the hostile id is only a string
    assert store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"] >= 2
    link = browser_link("http://localhost:7474/browser/", query)
    assert link.startswith("http://localhost:7474/browser/?cmd=edit&arg=MATCH%20path")


def test_style_colours_every_label_by_layer() -> None:
    grass = grass_path().read_text("utf-8")
    styled = dict(re.findall(r"node\.(\w+) \{\s*color: (#[0-9A-F]{6});", grass))
    assert set(styled) == cypher.LABELS - {"StrataMeta"}
    assert {label for labels in LAYERS.values() for label in labels} == set(styled)
    colours = {layer: {styled[label] for label in labels} for layer, labels in LAYERS.items()}
    assert not colours["corpus"] & colours["distilled"] and not colours["information-resource"] & colours["corpus"]
