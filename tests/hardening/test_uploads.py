"""Uploads never collide: a document's identity is the knowledge base plus a name the client controls, by
default a new one per upload; replacing through the API is explicit."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient

Client = Callable[..., TestClient]


def post(client: TestClient, content: str, filename: str = "minutes.md", path: str | None = None,
         **params: str) -> tuple[int, dict[str, object]]:
    response = client.post("/documents", files=[("files", (filename, content.encode()))],
                           data={"path": [path]} if path else None, params=params)
    return response.status_code, response.json()


def titles(client: TestClient) -> list[str]:
    return sorted(d["title"] for d in client.get("/documents").json())


def test_two_teams_uploading_minutes_md_keep_both(client_for: Client) -> None:
    client = client_for()
    assert post(client, "# Team A minutes\n\nAlpha decided to ship.\n")[0] == 200
    assert post(client, "# Team B minutes\n\nBeta decided to wait.\n")[0] == 200
    # Traversal-looking names are only names: they collide with nothing.
    assert post(client, "# Etc X\n\nOne.\n", filename="../../etc/x")[0] == 200
    assert post(client, "# Plain X\n\nTwo.\n", filename="x")[0] == 200
    assert titles(client) == ["Etc X", "Plain X", "Team A minutes", "Team B minutes"]


def test_named_uploads_replace_only_when_asked(client_for: Client) -> None:
    client = client_for()
    status, first = post(client, "# Team A minutes\n\nAlpha.\n", path="team-a/minutes.md")
    assert status == 200 and first["uploads"] == [  # type: ignore[comparison-overlap]
        {"path": "team-a/minutes.md", "source": first["uploads"][0]["source"]}]  # type: ignore[index]
    assert post(client, "# Team B minutes\n\nBeta.\n", path="team-b/minutes.md")[0] == 200
    assert post(client, "# Team A minutes\n\nAlpha.\n", path="team-a/minutes.md")[1]["files"][0][  # type: ignore[index]
        "status"] == "unchanged"
    status, refused = post(client, "# Team A minutes v2\n\nAlpha again.\n", path="team-a/minutes.md")
    assert status == 409 and "replace=true" in str(refused["detail"])
    assert titles(client) == ["Team A minutes", "Team B minutes"]
    status, replaced = post(client, "# Team A minutes v2\n\nAlpha again.\n", path="team-a/minutes.md",
                            replace="true")
    assert status == 200 and replaced["files"][0]["status"] == "replaced"  # type: ignore[index]
    assert titles(client) == ["Team A minutes v2", "Team B minutes"]


def test_unusable_names_get_a_json_4xx(client_for: Client) -> None:
    client = client_for()
    for bad in ("../../etc/x", "a/./b", "x" * 300, "/".join("abcdefghij"), "a/b:c", "a/<b>"):
        status, body = post(client, "# T\n\nText.\n", path=bad)
        assert 400 <= status < 500 and "detail" in body, bad
    assert titles(client) == []


def test_invalid_unicode_and_out_of_range_paging_get_a_json_4xx(client_for: Client) -> None:
    client = client_for()
    for route in ("/ask", "/retrieve"):
        response = client.post(route, content=b'{"question": "gearbox \\ud800 failure"}',
                               headers={"Content-Type": "application/json"})
        assert response.status_code == 422 and "detail" in response.json(), (route, response.text)
    response = client.get("/documents", params={"skip": "99999999999999999999"})
    assert response.status_code == 422 and "detail" in response.json()
    assert client.get("/documents", params={"skip": "5"}).status_code == 200
