"""Bad input is rejected at the door, one file at a time: a corpus of every kind of bad file we know, loaded
together with good files, reports each bad file with its own reason, loads the good ones (and the ones
recovered with a warning), and leaves nothing partial; two loads of the same folder at once settle with a
clear outcome per file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg.layers.corpus.ingest import Ingestor
from kg.layers.corpus.writer import LOADED_BY_ANOTHER_RUN
from kg.store.base import GraphStore
from tests.conftest import REPO, TestServer
from tests.hardening.graphs import fingerprint, strata_env, write_corpus
from tests.loaders.conftest import corrupt_pdf, truncate_zip_member, write_docx, write_pdf, write_xlsx

pytestmark = pytest.mark.neo4j
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8

# name -> (bytes, the words its one-line reason must hold)
FAILING: dict[str, tuple[bytes, str]] = {
    "empty.txt": (b"", "empty (0 bytes)"),
    "empty.md": (b"", "empty (0 bytes)"),
    "empty.csv": (b"", "empty (0 bytes)"),
    "empty.pdf": (b"", "empty"),
    "empty.docx": (b"", "empty"),
    "empty.xlsx": (b"", "empty"),
    "spaces.txt": (b"   \n\t  \n\n   ", "only whitespace"),
    "blank.md": (b"\n\n\t\n   \n", "only whitespace"),
    "nbsp.txt": ("\u00a0\u2003\n\u3000".encode(), "only whitespace"),
    "markup.html": (b"<html><head><title></title><script>var x = 1;</script></head><body>  </body></html>",
                    "only markup and whitespace"),
    "junk.txt": (bytes(range(256)) * 40, "binary"),
    "nul.md": (b"# Title\x00\x00\x00 body" * 50, "binary"),
    "image.txt": (PNG, "binary"),
    "bad_utf8.txt": ("caf\u00e9 ok\nline two\n".encode() + b"bad \xff byte\n", "line 3"),
    "broken.pdf": (b"%PDF-1.7\n this is not a pdf", "PDF"),
    "text.pdf": (b"just some words, not a PDF at all\n" * 10, "PDF"),
    "notzip.docx": (b"PK\x03\x04 this is not a zip archive" * 10, "not a readable .docx"),
    "notzip.xlsx": (b"plain text in an xlsx" * 10, "not a readable .xlsx"),
    "invalid.json": (b'[{"title": "a", "text": ', "JSON"),
    "layout.json": (json.dumps({"a": 1, "b": [2]}).encode(), "layout"),
    "missing.json": (json.dumps([{"title": "ok", "text": "fine"}, {"title": "no text"}]).encode(), "text"),
}


def write_bad_corpus(root: Path, scratch: Path, outside: Path) -> dict[str, str]:
    """Every failing kind (with its reason), plus files built from valid ones; returns name -> reason."""
    reasons = {}
    for name, (content, reason) in FAILING.items():
        (root / name).write_bytes(content)
        reasons[name] = reason
    scratch.mkdir()
    truncate_zip_member(write_docx(scratch / "ok.docx"), root / "cut.docx", "word/document.xml")
    truncate_zip_member(write_xlsx(scratch / "ok.xlsx"), root / "cut.xlsx", "xl/worksheets/sheet1.xml")
    corrupt_pdf(write_pdf(scratch / "ok.pdf"), root / "repaired.pdf")
    write_pdf(root / "secret.pdf", encrypt_password="s3cret")
    (root / "half.pdf").write_bytes((scratch / "ok.pdf").read_bytes()[:600])
    reasons.update({"cut.docx": "XMLSyntaxError", "cut.xlsx": "ParseError", "repaired.pdf": "IndexError",
                    "secret.pdf": "encrypted PDF: set a password", "half.pdf": "no text could be extracted"})
    return reasons


def write_recovered(root: Path) -> dict[str, str]:
    """Files that load, with what recovery does to them (checked below); returns name -> the kind."""
    (root / "hex.txt").write_text("Checksum: " + "DEADBEEF0123" * 25000 + "\n", "utf-8")
    (root / "aaa.txt").write_text("A" * 3_000_000, "utf-8")
    (root / "latin1.txt").write_bytes("Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e for the board.\n".encode("cp1252") * 20)
    (root / "ragged.csv").write_text("name,age,city\nann,30\nbob,41,Oslo,extra\n", "utf-8")
    (root / "deep.html").write_text("<div>" * 5000 + "<p>deep text</p>" + "</div>" * 5000, "utf-8")
    (root / "nested.md").write_text("# Nested\n\n" + "\n".join(" " * (2 * i) + f"- level {i}" for i in range(3000)),
                                    "utf-8")
    (root / "tiny.html").write_text("<ul>" + "<li>ab" * 60_000 + "</ul>", "utf-8")
    (root / "unclosed.md").write_text("# Fence\n\n```python\nprint('never closed')\n", "utf-8")
    (root / "crlf.txt").write_bytes(b"Line one\r\n\r\nLine two\rLine three\n")
    (root / "bom16.txt").write_bytes("Sixteen bits with a BOM.".encode("utf-16"))
    (root / "injection.md").write_text("# x' }) MATCH (n) DETACH DELETE n //\n\nRobert'); DROP TABLE docs;--\n",
                                       "utf-8")
    return {"hex.txt": "very long token", "aaa.txt": "3 MB of one letter", "latin1.txt": "guessed encoding",
            "ragged.csv": "ragged rows", "deep.html": "5,000 levels of nesting", "nested.md": "3,000 list levels",
            "tiny.html": "60,000 tiny blocks", "unclosed.md": "unclosed code fence", "crlf.txt": "mixed newlines",
            "bom16.txt": "UTF-16 with a BOM", "injection.md": "Cypher in a title and text"}


def test_a_corpus_of_every_bad_input_kind_fails_file_by_file_and_the_good_ones_load(
        tmp_path: Path, ingestor: Ingestor, store: GraphStore) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Outside\n\nNot part of the corpus.\n", "utf-8")
    (outside / "folder").mkdir()
    (outside / "folder" / "more.md").write_text("# More\n\nAlso outside.\n", "utf-8")
    good = {p.name for p in write_corpus(root / "good", documents=3, paragraphs=3).iterdir()}
    failing = write_bad_corpus(root, tmp_path / "scratch", outside)
    recovered = write_recovered(root)
    os.symlink(outside / "secret.md", root / "escape.md")
    os.symlink(outside / "folder", root / "linked")
    os.symlink(root / "gone.md", root / "dangling.md")
    os.symlink(outside / "secret.md", root / "good" / "also-escape.md")
    skipped = {"escape.md": "outside the folder", "linked": "links to folders are not followed",
               "dangling.md": "does not exist", "also-escape.md": "outside the folder"}

    report = ingestor.load([root])
    by_name = {Path(f.path).name: f for f in report.files}
    kinds = len(failing) + len(recovered) + len(set(skipped.values()))
    assert kinds >= 30
    for name, reason in failing.items():
        entry = by_name[name]
        assert entry.status == "failed" and entry.error is not None, (name, entry)
        assert name in entry.error and reason in entry.error and "\n" not in entry.error, (name, entry.error)
        assert not store.query("MATCH (d:Document) WHERE d.source ENDS WITH $n RETURN d", n=f"/{name}")
    for name, why in skipped.items():
        entry = by_name[name]
        assert (entry.status, entry.error) == ("skipped", None) and entry.note and why in entry.note, entry
    loaded = {name for name, f in by_name.items() if f.status == "loaded"}
    assert loaded == {*recovered, *good}
    assert report.summary() | {"seconds": 0} == {"loaded": len(loaded), "unchanged": 0, "replaced": 0,
                                                 "failed": len(failing), "skipped": len(skipped), "seconds": 0}
    assert [w for f in report.files for w in f.warnings] == [by_name["latin1.txt"].warnings[0]]
    assert "not valid UTF-8: decoded as cp125" in by_name["latin1.txt"].warnings[0]  # the guess, named
    # Nothing partial: every loaded file is one whole document, every chunk belongs to one of them.
    docs = store.query("MATCH (d:Document) RETURN d.source AS source, d.chunks AS chunks")
    assert sorted(Path(d["source"]).name for d in docs) == sorted(loaded)
    orphans = store.query("MATCH (c:Chunk) WHERE NOT EXISTS { (:Section)-[:HAS_CHUNK]->(c) } RETURN count(c) AS n")
    assert orphans[0]["n"] == 0
    assert store.query("MATCH (c:Chunk) RETURN max(size(c.text)) AS n")[0]["n"] <= 2 * 60 * 100 + 100  # see chunking
    # And a second load changes nothing: every outcome is stable.
    again = {Path(f.path).name: f.status for f in ingestor.load([root]).files}
    assert again == {name: ("unchanged" if f.status == "loaded" else f.status) for name, f in by_name.items()}


def test_two_loads_of_the_same_folder_at_once_settle_file_by_file(
        tmp_path: Path, neo4j_server: TestServer, store: GraphStore) -> None:
    env = strata_env(neo4j_server.uri, neo4j_server.user, neo4j_server.password, tmp_path / "home")
    corpus = write_corpus(tmp_path / "corpus", documents=16, paragraphs=6)
    command = [sys.executable, "-m", "kg.app.cli", "load", str(corpus), "--distill", "none", "--json", "-"]
    runs = [subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    results = [(run.communicate(timeout=600), run.returncode) for run in runs]
    for (out, err), code in results:
        assert code == 0 and "ConstraintValidationFailed" not in out + err, err
    reports = [json.loads(out) for (out, _), _ in results]
    for name in (p.name for p in corpus.iterdir()):
        outcomes = [next(f for f in r["files"] if Path(f["path"]).name == name) for r in reports]
        # Each file: loaded by one run; the other says it was unchanged, or loaded by another run.
        assert sorted(o["status"] for o in outcomes) in (["loaded", "unchanged"], ["unchanged", "unchanged"]), outcomes
        assert all(o["error"] is None for o in outcomes)
        assert all(o["note"] in (None, LOADED_BY_ANOTHER_RUN) for o in outcomes)
    together = fingerprint(store)
    store.run_autocommit("meta/wipe")
    alone = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, check=False)
    assert alone.returncode == 0, alone.stderr
    assert fingerprint(store) == together
