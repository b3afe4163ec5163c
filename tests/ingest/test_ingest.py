"""Loading real files into the real Neo4j: layers, provenance, reload, replacement, deletion, bad input."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from kg.embeddings import HashingEmbedder
from kg.layers.corpus.ingest import FileReport, Ingestor
from kg.layers.resource.documents import delete_documents
from kg.shared.ids import document_id
from kg.store.base import GraphStore
from kg.store.schema import ensure_schema
from loaders import SourceDocument, load_path
from tests.loaders.conftest import corrupt_pdf, truncate_zip_member, write_docx, write_pdf, write_xlsx

EMBEDDER = HashingEmbedder(dimensions=64)


@pytest.fixture
def ingestor(store: GraphStore) -> Ingestor:
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    return Ingestor(store, EMBEDDER, batch_size=50, chunk_tokens=60, chunk_overlap=10)


def make_corpus(root: Path) -> dict[str, Path]:
    md = root / "manual.md"
    md.write_text(
        "# Turbine manual\n\nThe gearbox is inspected every 6 months. See [safety](safety.html).\n\n"
        "## Blades\n\nBlades are checked for leading-edge erosion after each storm season.\n\n"
        "| part | interval |\n|---|---|\n| gearbox | 6 months |\n| blades | 12 months |\n",
        "utf-8",
    )
    html = root / "safety.html"
    html.write_text(
        "<html><body><nav>menu</nav><h1>Safety</h1><p>Nobody climbs a turbine when wind exceeds 15 m/s.</p>"
        "<p>Details of the fleet are in fleet.pdf.</p><script>alert(1)</script></body></html>", "utf-8")
    pdf = root / "fleet.pdf"
    doc = pymupdf.open()
    for n, site in enumerate(("North", "South", "East")):
        page = doc.new_page()
        page.insert_text((72, 40), "Northwind fleet report 2024", fontsize=9)  # running header
        page.insert_text((72, 90), f"Site {site}", fontsize=18)
        page.insert_text((72, 130), f"Site {site} runs {10 + n} turbines of model NW-{n + 2}.", fontsize=11)
    doc.save(pdf)
    return {"md": md, "html": html, "pdf": pdf}


def chunk_rows(store: GraphStore, doc_id: str) -> list[dict[str, object]]:
    return store.query(
        "MATCH (d:Document {id: $id})-[:HAS_SECTION*]->(s:Section)-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN c.text AS text, c.page AS page, c.char_start AS start, c.char_end AS end, c.kind AS kind",
        id=doc_id,
    )


def test_layers_provenance_and_references(tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    files = make_corpus(tmp_path)
    report = ingestor.load([tmp_path])
    assert [f.status for f in report.files] == ["loaded", "loaded", "loaded"], report.to_json()

    counts = {label: store.query(f"MATCH (n:{label}) RETURN count(n) AS n")[0]["n"] for label in ("Document", "Table")}
    assert counts == {"Document": 3, "Table": 1}
    # Every chunk is reachable from its document through its section, and its span is the document text.
    for path in files.values():
        source = next(load_path(path))
        rows = chunk_rows(store, document_id(source.source))
        assert rows, path
        for row in rows:
            if row["kind"] == "text":
                assert source.text[row["start"]:row["end"]] == row["text"]  # type: ignore[misc]
    pdf_pages = {r["page"] for r in chunk_rows(store, document_id(str(files["pdf"])))}
    assert pdf_pages == {1, 2, 3}
    pdf_text = " ".join(str(r["text"]) for r in chunk_rows(store, document_id(str(files["pdf"]))))
    assert "Site South runs 11 turbines" in pdf_text
    assert "Northwind fleet report" not in pdf_text  # the running header is removed

    refs = store.query(
        "MATCH (a:Document)-[:REFERENCES]->(b:Document) RETURN a.title AS a, b.source AS b ORDER BY a")
    targets = {(r["a"], Path(str(r["b"])).name) for r in refs}
    assert ("Turbine manual", "safety.html") in targets
    assert ("Safety", "fleet.pdf") in targets

    nexts = store.query("MATCH (:Chunk)-[r:NEXT]->(:Chunk) RETURN count(r) AS n")[0]["n"]
    chunks = store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    assert nexts == chunks - 3  # a chain per document
    embedded = store.query("MATCH (c:Chunk) WHERE c.embedding IS NOT NULL RETURN count(c) AS n")[0]["n"]
    assert embedded == chunks


def test_reload_is_noop_and_change_replaces(tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    files = make_corpus(tmp_path)
    ingestor.load([tmp_path])
    before = store.query("MATCH (n) RETURN count(n) AS n")[0]["n"]
    again = ingestor.load([tmp_path])
    assert {f.status for f in again.files} == {"unchanged"}
    assert store.query("MATCH (n) RETURN count(n) AS n")[0]["n"] == before

    files["md"].write_text("# Turbine manual\n\nThe gearbox is now inspected every 3 months.\n", "utf-8")
    changed = ingestor.load([files["md"]])
    assert changed.files[0].status == "replaced"
    texts = [r["text"] for r in chunk_rows(store, document_id(str(files["md"])))]
    assert any("3 months" in str(t) for t in texts)
    assert not any("leading-edge" in str(t) for t in texts)
    assert store.query("MATCH (t:Table) RETURN count(t) AS n")[0]["n"] == 0
    ids = store.query("MATCH (d:Document) RETURN d.id AS id")
    assert len(ids) == 3


def test_delete_cascades_and_keeps_shared_entities(tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    files = make_corpus(tmp_path)
    ingestor.load([tmp_path])
    md_id, html_id = document_id(str(files["md"])), document_id(str(files["html"]))
    # Two documents' chunks mention one entity; one mentions an entity of its own.
    from neo4j import RoutingControl

    store.query(
        "MATCH (a:Chunk {document_id: $md}), (b:Chunk {document_id: $html}) "
        "WITH collect(a)[0] AS a, collect(b)[0] AS b "
        "MERGE (shared:Entity {id: 'e-shared', name: 'Gearbox'}) MERGE (own:Entity {id: 'e-own', name: 'Blade'}) "
        "MERGE (a)-[:MENTIONS]->(shared) MERGE (b)-[:MENTIONS]->(shared) MERGE (a)-[:MENTIONS]->(own)",
        routing=RoutingControl.WRITE, md=md_id, html=html_id,
    )
    delete_documents(store, [md_id])
    left = {r["id"] for r in store.query("MATCH (e:Entity) RETURN e.id AS id")}
    assert left == {"e-shared"}
    assert store.query("MATCH (n {document_id: $id}) RETURN count(n) AS n", id=md_id)[0]["n"] == 0
    assert store.query("MATCH (d:Document {id: $id}) RETURN count(d) AS n", id=md_id)[0]["n"] == 0
    assert store.query("MATCH (c:Chunk {document_id: $id}) RETURN count(c) AS n", id=html_id)[0]["n"] > 0


def assert_nothing_of(store: GraphStore, path: Path) -> None:
    did = document_id(str(path))
    assert store.query("MATCH (d:Document) WHERE d.id = $id OR d.source = $source RETURN count(d) AS n",
                       id=did, source=str(path))[0]["n"] == 0, path
    assert store.query("MATCH (n {document_id: $id}) RETURN count(n) AS n", id=did)[0]["n"] == 0, path


def test_bad_files_fail_alone_and_leave_nothing(tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    make_corpus(tmp_path)
    scratch = tmp_path.parent / f"{tmp_path.name}-scratch"
    scratch.mkdir()
    # Each bad file with what its one-line reason must say.
    bad = {
        "empty.txt": "empty", "junk.txt": "binary", "broken.pdf": "corrupt", "corpus.json": "corpus.json",
        "cut.docx": "XMLSyntaxError", "cut.xlsx": "ParseError", "repaired.pdf": "IndexError",
        "secret.pdf": "encrypted PDF: set a password", "bad_utf8.txt": "line 3",
    }
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "junk.txt").write_bytes(bytes(range(256)) * 40)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\n this is not a pdf")
    (tmp_path / "corpus.json").write_text(json.dumps([{"title": "ok", "text": "fine"}, {"title": "no text"}]))
    # Parser errors from deep inside a format: a half XML part in a valid zip, a PDF that breaks mid-read.
    truncate_zip_member(write_docx(scratch / "ok.docx"), tmp_path / "cut.docx", "word/document.xml")
    truncate_zip_member(write_xlsx(scratch / "ok.xlsx"), tmp_path / "cut.xlsx", "xl/worksheets/sheet1.xml")
    corrupt_pdf(write_pdf(scratch / "ok.pdf"), tmp_path / "repaired.pdf")
    write_pdf(tmp_path / "secret.pdf", encrypt_password="s3cret")
    (tmp_path / "bad_utf8.txt").write_bytes("caf\u00e9 ok\nline two\n".encode() + b"bad \xff byte\n")
    # Documented recoveries: ragged rows are padded (and listed), deep nesting is flattened.
    (tmp_path / "ragged.csv").write_text("name,age,city\nann,30\nbob,41,Oslo,extra\n", "utf-8")
    (tmp_path / "deep.html").write_text("<div>" * 5000 + "<p>deep text</p>" + "</div>" * 5000, "utf-8")

    report = ingestor.load([tmp_path])
    by_name = {Path(f.path).name: f for f in report.files}
    for name, reason in bad.items():
        entry = by_name[name]
        assert entry.status == "failed", (name, entry)
        assert entry.error and name in entry.error and reason in entry.error, entry.error
        assert "\n" not in entry.error
        assert_nothing_of(store, tmp_path / name)
    assert report.summary()["loaded"] == 5 and report.summary()["failed"] == len(bad)
    sources = {Path(r["s"]).name for r in store.query("MATCH (d:Document) RETURN d.source AS s")}
    assert sources == {"manual.md", "safety.html", "fleet.pdf", "ragged.csv", "deep.html"}
    ragged = store.query("MATCH (d:Document {source: $s})-[:HAS_SECTION*]->(:Section)-[:HAS_TABLE]->(t:Table) "
                         "RETURN d.metadata AS meta, t.header AS header, t.n_rows AS rows",
                         s=str(tmp_path / "ragged.csv"))
    assert ragged == [{"meta": ["ragged_rows=line 2: 2 of 3 cells; line 3: 4 of 3 cells"],
                       "header": ["name", "age", "city", "column_4"], "rows": 2}]
    deep = chunk_rows(store, document_id(str(tmp_path / "deep.html")))
    assert [r["text"] for r in deep] == ["deep text"]


def _loaded(report: FileReport) -> SourceDocument:
    assert report.status == "loaded", report
    return next(load_path(report.path))


def test_pdf_docx_csv_xlsx_structure_pages_and_offsets(tmp_path: Path, ingestor: Ingestor,
                                                       store: GraphStore) -> None:
    write_pdf(tmp_path / "report.pdf")
    write_docx(tmp_path / "memo.docx")
    write_xlsx(tmp_path / "book.xlsx")
    (tmp_path / "scores.csv").write_text("method,score\nPIKE,0.81\nKG2RAG,0.77\n", "utf-8")
    report = ingestor.load([tmp_path])
    sources = {Path(f.path).name: _loaded(f) for f in report.files}
    assert set(sources) == {"report.pdf", "memo.docx", "book.xlsx", "scores.csv"}

    items_of: dict[str, list[dict[str, Any]]] = {}
    for name, source in sources.items():
        did = document_id(source.source)
        # Every chunk hangs off its document through its section, and its span is the document's text
        # (a table's chunk is its caption, if any, then the table's markdown, which is the span).
        for row in chunk_rows(store, did):
            span = source.text[row["start"]:row["end"]]  # type: ignore[misc]
            assert span and str(row["text"]).endswith(span), (name, row)
            assert row["kind"] == "table" or row["text"] == span, (name, row)
        # Tables and figures sit in a section of their document, each with one chunk in that same section.
        items = store.query(
            "MATCH (d:Document {id: $id})-[:HAS_SECTION*]->(s:Section)-[:HAS_TABLE|HAS_FIGURE]->(x) "
            "OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)-[:REPRESENTS]->(x) "
            "RETURN labels(x)[0] AS label, s.title AS section, x.page AS page, x.caption AS caption, "
            "x.header AS header, x.markdown AS markdown, x.char_start AS a, x.char_end AS b, "
            "collect(c {.page, .kind, .text}) AS chunks ORDER BY a",
            id=did,
        )
        assert len(items) == len(source.tables) + len(source.figures), name
        for item in items:
            [chunk] = item["chunks"]
            assert (chunk["kind"], chunk["page"]) == (item["label"].lower(), item["page"]), (name, item)
            span = source.text[item["a"]:item["b"]]
            assert span == (item["markdown"] if item["label"] == "Table" else item["caption"]), (name, item)
            assert span in chunk["text"]
        items_of[name] = items

    pdf = document_id(str(tmp_path / "report.pdf"))
    [doc] = store.query("MATCH (d:Document {id: $id}) RETURN d.title AS title, d.format AS format, "
                        "d.pages AS pages, d.has_links AS links", id=pdf)
    assert doc == {"title": "Strata Report", "format": "pdf", "pages": 3, "links": True}
    pdf_items = items_of["report.pdf"]
    assert [(i["label"], i["section"], i["page"]) for i in pdf_items] == [("Table", "Results", 2),
                                                                          ("Figure", "Figures", 3)]
    assert pdf_items[0]["header"] == ["Method", "Score"] and "| KG2RAG | 0.77 |" in pdf_items[0]["markdown"]
    assert pdf_items[1]["caption"] == "Figure 1: The graph schema of Strata."
    pages = {str(r["text"]): r["page"] for r in chunk_rows(store, pdf) if r["kind"] == "text"}
    assert pages["Graphs store knowledge about entities and their relations."] == 1
    assert pages["Scores are exact-match accuracy."] == 2
    assert pages["The schema links chunks to sections."] == 3
    sections = store.query("MATCH (:Document {id: $id})-[:HAS_SECTION*]->(s:Section)-[:HAS_CHUNK]->(c:Chunk) "
                           "WHERE c.text STARTS WITH 'Earlier systems' RETURN s.title AS t, s.level AS l", id=pdf)
    assert sections == [{"t": "Background", "l": 2}]

    assert [(i["section"], i["header"]) for i in items_of["memo.docx"]] == [("Details", ["h1", "h2"])]
    assert [(i["section"], i["header"]) for i in items_of["book.xlsx"]] == [("People", ["name", "age"]),
                                                                           ("Cities", ["city"])]
    [csv_table] = store.query("MATCH (:Document {id: $id})-[:HAS_SECTION]->(s:Section)-[:HAS_TABLE]->(t:Table) "
                              "RETURN s.level AS level, t.n_rows AS rows, t.csv AS csv",
                              id=document_id(str(tmp_path / "scores.csv")))
    assert csv_table["level"] == 0 and csv_table["rows"] == 2 and "KG2RAG,0.77" in csv_table["csv"]


def test_hotpotqa_sample_loads_every_passage_with_sentences(shared_data: Path, ingestor: Ingestor,
                                                            store: GraphStore) -> None:
    corpus = shared_data / "hotpotqa_sample" / "hotpotqa_train_corpus.json"
    report = ingestor.load([corpus])
    titles = json.loads(corpus.read_text("utf-8"))
    assert report.files[0].status == "loaded"
    assert report.files[0].documents == len(titles)
    assert store.query("MATCH (d:Document) RETURN count(d) AS n")[0]["n"] == len(titles)
    title = "Demon algorithm"
    row = store.query(
        "MATCH (d:Document {title: $title})-[:HAS_SECTION*]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN c.text AS text, c.sentences AS sentences ORDER BY c.order LIMIT 1", title=title)
    assert row and row[0]["sentences"][:2] == [0, 1]
    assert str(row[0]["text"]).startswith(titles[title][0].strip()[:30])
    # Passages that name another passage (its mention name: here its title) reference it, through the chunks
    # that name it.
    mentions = store.query(
        "MATCH (a:Document)-[r:REFERENCES]->(b:Document) UNWIND r.mention_chunks AS id MATCH (c:Chunk {id: id}) "
        "RETURN a.id AS a, b.mention_name AS title, c.document_id AS doc, c.text AS text")
    assert len({(m["a"], m["title"]) for m in mentions}) >= 20
    assert all(m["title"] in " ".join(m["text"].split()) and m["doc"] == m["a"] for m in mentions)


def test_edited_qa_corpus_replaces_only_what_changed(tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    corpus = tmp_path / "corpus.json"
    passages = [{"title": f"Site {name}", "text": f"Site {name} has {n} turbines."}
                for n, name in enumerate(("Kestrel", "Gannet", "Heron", "Osprey"), start=10)]
    corpus.write_text(json.dumps(passages), "utf-8")
    first = ingestor.load([corpus]).files[0]
    assert (first.status, first.documents, first.removed) == ("loaded", 4, 0)
    stamps = {r["title"]: r["at"] for r in store.query("MATCH (d:Document) RETURN d.title AS title, d.loaded_at AS at")}

    passages[1]["text"] = "Site Gannet has 24 turbines."  # changed
    del passages[2]  # removed
    passages.append({"title": "Site Puffin", "text": "Site Puffin is planned."})  # added
    corpus.write_text(json.dumps(passages), "utf-8")
    second = ingestor.load([corpus]).files[0]
    assert (second.status, second.documents, second.removed) == ("replaced", 4, 1)
    after = {r["title"]: r for r in store.query(
        "MATCH (d:Document)-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN d.title AS title, d.loaded_at AS at, c.text AS text")}
    assert sorted(after) == ["Site Gannet", "Site Kestrel", "Site Osprey", "Site Puffin"]
    assert after["Site Gannet"]["text"] == "Site Gannet has 24 turbines."
    # Unchanged passages of the edited file were not rewritten.
    assert after["Site Kestrel"]["at"] == stamps["Site Kestrel"] and after["Site Osprey"]["at"] == stamps["Site Osprey"]
    assert store.query("MATCH (n {document_id: $id}) RETURN count(n) AS n",
                       id=document_id(f"{corpus}#Site Heron"))[0]["n"] == 0

    # Removing passages alone also counts as a change of the file; a reload after it is a no-op.
    corpus.write_text(json.dumps(passages[:2]), "utf-8")
    third = ingestor.load([corpus]).files[0]
    assert (third.status, third.removed) == ("replaced", 2)
    assert ingestor.load([corpus]).files[0].status == "unchanged"
    assert store.query("MATCH (d:Document) RETURN count(d) AS n")[0]["n"] == 2


def test_full_text_sees_each_write_and_delete_as_soon_as_it_returns(store: GraphStore, ingestor: Ingestor,
                                                                     tmp_path: Path) -> None:
    # The chunk and title indexes are eventually consistent; without the writer's barrier about one query
    # in seven right after a write missed it (measured), so twenty rounds would all but surely catch it.
    for n in range(20):
        path = tmp_path / f"note{n}.txt"
        path.write_text(f"Inspection note {n}: the zorblax{n} bearing was replaced.", "utf-8")
        ingestor.write([ingestor.prepare(doc) for doc in load_path(path)])
        found = store.query("CALL db.index.fulltext.queryNodes('chunk_text', $q) YIELD node RETURN count(*) AS n",
                            q=f"zorblax{n}")
        assert found[0]["n"] == 1, f"round {n}: the full-text index missed the chunk just written"
        delete_documents(store, [document_id(str(path))])
        gone = store.query("CALL db.index.fulltext.queryNodes('document_title', $q) YIELD node RETURN count(*) AS n",
                           q=f"note{n}")
        assert gone[0]["n"] == 0, f"round {n}: the title index still returns a deleted document"
        assert store.query("MATCH (d:Document) RETURN count(d) AS n")[0]["n"] == 0


def test_a_large_document_is_written_in_batches_with_the_same_graph(tmp_path: Path, store: GraphStore) -> None:
    """Documents over ``batch_size`` chunks go label by label in bounded statements; the graph is the same
    as when each document is one row of graph/create_corpus."""
    make_corpus(tmp_path)
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    shape = (
        "MATCH (n) WHERE n:Document OR n:Section OR n:Chunk OR n:Table OR n:Figure "
        "OPTIONAL MATCH (n)-[r]->(m) "
        "WITH n, collect([type(r), m.id]) AS out "
        "RETURN n.id AS id, labels(n) AS labels, properties(n) AS props, out ORDER BY id")

    def graph() -> list[dict[str, Any]]:
        rows = store.query(shape)
        for row in rows:
            row["props"].pop("loaded_at", None)
            row["out"] = sorted(row["out"])
        return rows

    Ingestor(store, EMBEDDER, batch_size=1000, chunk_tokens=20, chunk_overlap=4).load([tmp_path])
    whole = graph()
    store.run_autocommit("meta/wipe")
    ensure_schema(store, EMBEDDER.name, EMBEDDER.dimensions)
    Ingestor(store, EMBEDDER, batch_size=1, chunk_tokens=20, chunk_overlap=4).load([tmp_path])
    assert graph() == whole
    # Two documents took the batched path and one the one-row path, in the same transaction.
    per_document = Counter(row["props"]["document_id"] for row in whole if "Chunk" in row["labels"])
    assert sorted(per_document.values())[:2] == [1, 3]


def test_a_transaction_over_the_memory_limit_fails_at_once_other_transient_errors_are_retried(
        store: GraphStore) -> None:
    from neo4j.exceptions import Neo4jError as DriverError

    from kg.errors import Neo4jError

    def failing(code: str, times: int) -> tuple[list[int], Callable[[Any], str]]:
        attempts: list[int] = []

        def work(tx: Any) -> str:
            attempts.append(1)
            if len(attempts) <= times:  # the exception the driver raises for this server answer
                raise DriverError._hydrate_neo4j(code=code, message="from the test")
            return "committed"
        return attempts, work

    attempts, work = failing("Neo.TransientError.General.MemoryPoolOutOfMemoryError", times=100)
    with pytest.raises(Neo4jError, match=r"more memory than the server allows.*STRATA_NEO4J_HEAP"):
        store.atomic(work)
    assert len(attempts) == 1
    attempts, work = failing("Neo.TransientError.Transaction.DeadlockDetected", times=1)
    assert store.atomic(work) == "committed" and len(attempts) == 2
