"""The REST API over a real (offline) Strata client and Neo4j: health, documents, retrieve/ask, token, limits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from fastapi.testclient import TestClient
from neo4j import RoutingControl

from kg.app.client import Strata
from kg.app.demo import CORPUS
from kg.app.rest import ApiSettings, KnowledgeBases, StrataService, create_app
from kg.store.base import GraphStore

Client = Callable[..., TestClient]


def upload(client: TestClient, *names: str, paths: list[str] | None = None, **params: str) -> dict[str, object]:
    files = [("files", (name, (CORPUS / name).read_bytes())) for name in names]
    response = client.post("/documents", files=files, params=params, data={"path": paths} if paths else None)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_health_and_openapi(client_for: Client) -> None:
    client = client_for(token="s3cret")
    health = client.get("/health")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "neo4j": {"default": "ok"}, "default_kb": "default", "kbs": ["default"],
                             "auth": True}
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/health", "/documents", "/documents/{key}", "/ask", "/retrieve", "/stats"} <= set(paths)


def test_upload_list_delete(client_for: Client, store: GraphStore) -> None:
    client = client_for()
    report = upload(client, "fleet-overview.md", "failure-report-2024.pdf")
    assert [f["status"] for f in report["files"]] == ["loaded", "loaded"]  # type: ignore[index]
    # The temporary files are gone once loaded.
    assert not any(Path(f["path"]).exists() for f in report["files"])  # type: ignore[index]
    docs = {d["title"]: d for d in client.get("/documents").json()}
    assert set(docs) == {"Borealis Wind fleet overview", "Component failure report 2024"}
    assert docs["Component failure report 2024"]["pages"] == 2
    assert all(d["chunks"] > 0 for d in docs.values())
    # Uploading the same file again under the same name is a no-op, as with `strata load`.
    named = upload(client, "fleet-overview.md", paths=["fleet/overview.md"])
    assert [f["status"] for f in named["files"]] == ["loaded"]  # type: ignore[index]
    again = upload(client, "fleet-overview.md", paths=["fleet/overview.md"])
    assert [f["status"] for f in again["files"]] == ["unchanged"]  # type: ignore[index]
    client.delete(f"/documents/{named['files'][0]['document_id']}")  # type: ignore[index]

    pdf_id = docs["Component failure report 2024"]["id"]
    deleted = client.delete(f"/documents/{pdf_id}")
    assert deleted.status_code == 200 and deleted.json()["id"] == pdf_id
    assert [d["id"] for d in client.get("/documents").json()] == [docs["Borealis Wind fleet overview"]["id"]]
    assert store.query("MATCH (c:Chunk {document_id: $id}) RETURN count(c) AS n", id=pdf_id) == [{"n": 0}]
    missing = client.delete(f"/documents/{pdf_id}")
    assert missing.status_code == 404 and pdf_id in missing.json()["detail"]


def test_retrieve_and_ask_through_the_port(client_for: Client, service: StrataService, store: GraphStore) -> None:
    client = client_for()
    upload(client, "failure-report-2024.pdf", "maintenance-policy.html")

    response = client.post("/retrieve", json={"question": "gearbox oil sampled", "k": 2})
    assert response.status_code == 200, response.text
    hits = response.json()
    assert hits["kb"] == "default" and 1 <= len(hits["hits"]) <= 2
    assert "Gearbox oil is sampled every 6 months" in hits["hits"][0]["text"]

    response = client.post("/ask", json={"question": "How often is gearbox oil sampled?"})
    assert response.status_code == 200, response.text
    data = response.json()
    assert "every 6 months" in data["answer"]["answer"]
    assert data["answer"]["trace"] and data["answer"]["offline"] is True
    first = data["citations"][0]
    start, end = first["highlight"]
    cited = first["chunk_text"][start:end]
    assert "Gearbox oil is sampled every 6 months" in cited
    assert first["title"] == "Borealis Wind maintenance policy"
    # The highlight is the cited span, the document's text at the cited offsets, placed in its chunk.
    assert first["char_end"] - first["char_start"] == end - start

    link = urlparse(data["browser_link"])
    assert (link.path, parse_qs(link.query)["cmd"]) == ("/browser/", ["edit"])
    assert parse_qs(link.query)["arg"] == [data["evidence_cypher"]]
    rows = store.query(data["evidence_cypher"])
    chunk_ids = {c["chunk_id"] for c in data["citations"]}
    assert {r["path"][-1]["id"] for r in rows} == chunk_ids
    assert all(r["path"][0]["title"] for r in rows)  # each chunk reached from its document


def test_bearer_token(client_for: Client) -> None:
    client = client_for(token="s3cret")
    assert client.get("/documents").status_code == 401
    wrong = client.get("/documents", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
    assert client.get("/documents", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.get("/").status_code == 200  # the page itself is public; its API calls carry the token


def test_oversize_requests_get_413(client_for: Client) -> None:
    client = client_for(max_upload_bytes=2048, max_body_bytes=512)
    big = [("files", ("big.md", b"# Big\n\n" + b"word " * 2000))]
    response = client.post("/documents", files=big)
    assert response.status_code == 413
    assert "the limit is 2048 bytes" in response.json()["detail"]

    def stream() -> Iterator[bytes]:  # no Content-Length: the limit is enforced while the body streams in
        yield b'--b\r\nContent-Disposition: form-data; name="files"; filename="big.md"\r\n\r\n'
        yield from (b"word " * 200 for _ in range(5))
        yield b"\r\n--b--\r\n"

    streamed = client.post("/documents", content=stream(), headers={"Content-Type": "multipart/form-data; boundary=b"})
    assert streamed.status_code == 413
    question = client.post("/ask", json={"question": "why " * 400})
    assert question.status_code == 413 and "limit is 512 bytes" in question.json()["detail"]
    assert client.get("/documents").json() == []


def test_bad_questions_are_the_callers_error(make_kb: Callable[[str], Strata]) -> None:
    service = StrataService(make_kb("default"))
    # No `with`: the app's shutdown would close the knowledge base, whose driver the test session shares.
    client = TestClient(create_app(KnowledgeBases(lambda name: service), ApiSettings()))
    empty = client.post("/retrieve", json={"question": "   ", "k": 2})
    assert (empty.status_code, empty.json()["detail"]) == (400, "the question is empty")
    unknown = client.post("/ask", json={"question": "Why?", "method": "magic"})
    assert unknown.status_code == 400 and "unknown method 'magic'" in unknown.json()["detail"]


def test_delete_finds_a_document_past_the_first_ten_thousand(client_for: Client, store: GraphStore) -> None:
    # A listing page holds at most 10,000 documents; deleting must look the document up by id instead.
    store.query("UNWIND range(0, 10000) AS n CREATE (:Document {id: 'doc-' + n, source: '/corpus/' + n + '.md', "
                "title: 'Doc ' + n, format: 'markdown', sha256: '', loaded_at: datetime()})",
                routing=RoutingControl.WRITE)
    client = client_for()
    first_page = {d["id"] for d in client.get("/documents", params={"limit": 10_000}).json()}
    [last] = [r["id"] for r in store.query("MATCH (d:Document) RETURN d.id AS id") if r["id"] not in first_page]
    deleted = client.delete(f"/documents/{last}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["id"] == last
    assert store.query("MATCH (d:Document) RETURN count(d) AS n") == [{"n": 10_000}]


def test_uploads_go_to_a_private_folder_and_never_through_a_link(client_for: Client, tmp_path: Path) -> None:
    root = tmp_path / "uploads"
    (root / "default").mkdir(parents=True, mode=0o755)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", "utf-8")
    (root / "default" / "fleet-overview.md").symlink_to(victim)  # planted where the upload will be written

    report = upload(client_for(upload_dir=root), "fleet-overview.md", paths=["fleet-overview.md"])
    assert [f["status"] for f in report["files"]] == ["loaded"]  # type: ignore[index]
    assert victim.read_text("utf-8") == "keep me"
    assert {oct(p.stat().st_mode & 0o777) for p in (root, root / "default")} == {"0o700"}
    assert report["files"][0]["path"].endswith("/default/fleet-overview.md")  # type: ignore[index]
