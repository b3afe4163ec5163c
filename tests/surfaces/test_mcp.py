"""The MCP server (``strata mcp``), driven by the official SDK's own client against the real Neo4j.

The demo corpus is loaded once for the module (offline distillation, the hashing embedder the CLI gets with
``STRATA_EMBEDDER=hash``), then read by the server in-process, over stdio (a ``strata mcp`` subprocess) and
over streamable HTTP with a bearer token. Every citation and hit is checked against the chunk text the
server returns for its chunk id; the write tools exist only with ``--allow-write``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent
from typer.testing import CliRunner

import kg.retrieval
import reasoning
from kg.app.cli import app
from kg.app.cli import commands as _commands  # noqa: F401  (registers the commands)
from kg.app.cli.commands.mcp import parse_http
from kg.app.client import Strata
from kg.app.demo import CORPUS
from kg.app.mcp import READ_TOOLS, WRITE_TOOLS, KnowledgeBasePool, McpSettings, create_server
from kg.app.mcp.server import ReasoningMethod, RetrievalMethod
from kg.embeddings import HashingEmbedder
from kg.errors import ConfigError
from kg.llm import OfflineLLM
from kg.provisioning import Endpoint
from kg.settings import LocalServerSettings, Settings, free_port
from kg.store.base import GraphStore
from kg.store.neo4j_store import Neo4jGraphStore
from kg.store.schema import ensure_schema
from tests.conftest import TestServer

pytestmark = pytest.mark.neo4j

EMBEDDER = HashingEmbedder()  # 256 dimensions: what `strata` builds for STRATA_EMBEDDER=hash
FACTUAL = "How often is gearbox oil sampled on Borealis Wind turbines?"
TOKEN = "mcp-test-token-0123456789abcdef"


def _client(neo4j_server: TestServer, home: Path, kb: str = "default") -> Strata:
    settings = Settings(home=home, cache_dir=home / "cache", kb=kb,
                        local=LocalServerSettings(home=home / "neo4j", cache_dir=home / "cache"),
                        batch_size=100, chunk_tokens=120, chunk_overlap=16)
    endpoint = Endpoint(neo4j_server.uri, neo4j_server.user, neo4j_server.password, None, "remote", None)
    store = Neo4jGraphStore.connect(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    return Strata(settings, store, EMBEDDER, endpoint, OfflineLLM())


@pytest.fixture(scope="module")
def demo_home(neo4j_server: TestServer, session_store: GraphStore,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo corpus loaded and distilled (atoms, triples) into the wiped test database, once for the module.

    The tests here only read it, or add and remove documents of their own.
    """
    session_store.run_autocommit("meta/wipe")
    ensure_schema(session_store, EMBEDDER.name, EMBEDDER.dimensions)
    home = tmp_path_factory.mktemp("mcp-home")
    with _client(neo4j_server, home) as kb:
        report = kb.load(sorted(CORPUS.iterdir()))
        assert report.failed == 0, report.to_json()
        kb.distill(layers=["atoms", "triples"])
    yield home


@pytest.fixture
def serve(neo4j_server: TestServer, demo_home: Path
          ) -> Iterator[Callable[..., Callable[[Callable[[Client], Awaitable[None]]], None]]]:
    """``serve(**settings)(body)``: run ``body`` with the SDK's client connected to an in-process server."""
    pools: list[KnowledgeBasePool] = []

    def make(**fields: Any) -> Callable[[Callable[[Client], Awaitable[None]]], None]:
        settings = McpSettings(**fields)
        pool = KnowledgeBasePool(lambda name: _client(neo4j_server, demo_home / "kbs" / name, name), settings)
        pools.append(pool)
        server = create_server(pool, settings)

        def run(body: Callable[[Client], Awaitable[None]]) -> None:
            async def main() -> None:
                async with Client(server) as client:
                    await body(client)
            anyio.run(main)
        return run

    yield make
    for pool in pools:
        pool.close()


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured content, after checking the text names the same things."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    assert isinstance(result.structured_content, dict)
    assert _text(result).strip()
    return result.structured_content


async def fails(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return _text(result)


def _text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def check_read_tools(client: Client) -> None:
    """Every read tool against the demo corpus; every cited span and hit is the text of its chunk."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(READ_TOOLS)
    assert all(t.output_schema and t.input_schema and t.description for t in tools.values())
    assert all(t.annotations and t.annotations.read_only_hint for t in tools.values())

    docs = await call(client, "list_documents")
    assert docs["total"] == len(docs["documents"]) == len(list(CORPUS.iterdir()))
    assert docs["next_offset"] is None

    found = await call(client, "search", question="gearbox oil sampling interval", k=3)
    assert 1 <= len(found["hits"]) <= 3 and found["hits"][0]["rank"] == 1
    assert any("every 6 months" in h["text"] for h in found["hits"])
    for hit in found["hits"]:
        assert hit["found_by"] and hit["how_found"]
        chunk = await call(client, "get_chunk", chunk_id=hit["chunk_id"], neighbours=0)
        assert (chunk["text"], chunk["char_start"], chunk["char_end"], chunk["title"]) == (
            hit["text"], hit["char_start"], hit["char_end"], hit["title"])

    answer = await call(client, "ask", question=FACTUAL)
    assert "6 months" in answer["answer"] and answer["offline"]
    assert "every 6 months" in (answer["supporting_sentence"] or "")
    assert answer["citations"] and answer["trace"]
    for cited in answer["citations"]:
        chunk = await call(client, "get_chunk", chunk_id=cited["chunk_id"], neighbours=0)
        assert chunk["text"][cited["quote_start"]:cited["quote_end"]] == cited["quote"]
        assert (chunk["document_id"], chunk["page"]) == (cited["document_id"], cited["page"])
        assert chunk["char_start"] <= cited["char_start"] < cited["char_end"] <= chunk["char_end"]
        assert f"[{cited['marker']}]" in answer["answer"]
    assert any("every 6 months" in c["quote"] for c in answer["citations"])

    policy = next(h for h in found["hits"] if "every 6 months" in h["text"])
    around = await call(client, "get_chunk", chunk_id=policy["chunk_id"], neighbours=1)
    assert around["section_path"][-1] == "Inspection intervals"
    assert [n["order"] for n in around["previous"]] == [around["order"] - 1]
    assert [n["order"] for n in around["next"]] == [around["order"] + 1]

    entity = await call(client, "explain_entity", name="kestrel ridge", limit=5)
    assert entity["entity"]["name"] == "Kestrel Ridge" and entity["entity"]["facts"] > 5
    assert len(entity["facts"]) == 5 and entity["next_offset"] == 5
    stating = {c["chunk_id"]: c["text"] for c in entity["chunks"]}
    for fact in entity["facts"]:
        assert "Kestrel Ridge" in (fact["head"], fact["tail"])
        assert "Kestrel Ridge" in stating[fact["chunk_id"]]

    assert "read-only" in await fails(client, "load", text="# Note\n\nA note.", title="note")
    assert "read-only" in await fails(client, "delete", document=docs["documents"][0]["id"])

    outline_uri = f"strata://default/documents/{docs['documents'][0]['id']}/outline"
    listed = {str(r.uri) for r in (await client.list_resources()).resources}
    assert outline_uri in listed
    outline = (await client.read_resource(outline_uri)).contents[0]
    assert outline.mime_type == "text/markdown"
    assert getattr(outline, "text", "").startswith(f"# {docs['documents'][0]['title']}")

    prompt = await client.get_prompt("answer_with_citations", {"question": FACTUAL})
    assert FACTUAL in str(prompt.messages[0].content)


def test_every_tool_in_process(serve: Callable[..., Any]) -> None:
    serve()(check_read_tools)


def test_method_literals_match_the_registries() -> None:
    assert set(RetrievalMethod.__args__) == set(kg.retrieval.METHODS)
    assert set(ReasoningMethod.__args__) == set(reasoning.METHODS)


def test_inputs_are_validated_with_clear_errors(serve: Callable[..., Any]) -> None:
    async def body(client: Client) -> None:
        assert "k: Input should be less than or equal to 50 (got 500)" in await fails(
            client, "search", question="gearbox", k=500)
        assert "question: Field required" in await fails(client, "search")
        assert "the question is empty" in await fails(client, "search", question="   ")
        assert "method: Input should be 'strata'" in await fails(client, "search", question="x", method="bogus")
        assert "filters.colour: Extra inputs are not permitted" in await fails(
            client, "search", question="gearbox", filters={"colour": "red"})
        assert "no document with id or source 'nope.pdf'" in await fails(
            client, "search", question="gearbox", filters={"documents": ["nope.pdf"]})
        assert "'key=value'" in await fails(client, "search", question="gearbox", filters={"metadata": ["author"]})
        assert "does not serve knowledge base 'other'" in await fails(client, "search", question="gearbox", kb="other")
        assert "no chunk with id 'nope'" in await fails(client, "get_chunk", chunk_id="nope")
        assert "neighbours: Input should be less than or equal to 5" in await fails(
            client, "get_chunk", chunk_id="nope", neighbours=9)
        assert "no entity matches 'Zyxwvut'" in await fails(client, "explain_entity", name="Zyxwvut")
        assert "offset + k is 105" in await fails(client, "search", question="gearbox", k=10, offset=95)
    serve()(body)


def test_long_results_are_paged(serve: Callable[..., Any]) -> None:
    async def body(client: Client) -> None:
        seen: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = await call(client, "list_documents", offset=offset, limit=2)
            assert len(page["documents"]) <= 2 and page["total"] == 5
            seen += [d["id"] for d in page["documents"]]
            offset = page["next_offset"]
        assert len(seen) == len(set(seen)) == 5

        whole = await call(client, "search", question="gearbox failures", k=6)
        first = await call(client, "search", question="gearbox failures", k=3)
        second = await call(client, "search", question="gearbox failures", k=3, offset=first["next_offset"])
        assert [h["chunk_id"] for h in first["hits"] + second["hits"]] == [h["chunk_id"] for h in whole["hits"]]
        assert [h["rank"] for h in second["hits"]] == [4, 5, 6]

        facts: list[str] = []
        offset = 0
        while offset is not None:
            page = await call(client, "explain_entity", name="Kestrel Ridge", offset=offset, limit=4)
            facts += [f["fact_id"] for f in page["facts"]]
            offset = page["next_offset"]
        assert len(facts) == len(set(facts)) == page["entity"]["facts"]

        pdf = await call(client, "search", question="gearbox failures", k=5, filters={"formats": ["pdf"]})
        assert pdf["hits"] and all(h["title"] == "Component failure report 2024" for h in pdf["hits"])
    serve()(body)


def test_write_tools_load_and_delete_with_allow_write(serve: Callable[..., Any], tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    (tmp_path / "inside" / "crane-log.md").write_text(
        "# Crane log\n\nThe service crane at Gannet Bank was certified on 4 March 2024 by Nordlift.\n")
    (tmp_path / "outside.md").write_text("# Outside\n\nNot to be read.\n")

    async def body(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == set(READ_TOOLS) | set(WRITE_TOOLS)
        note = ("The anemometer on turbine HM-04 at Heron Moor was replaced on 12 May 2024 after it froze "
                "during the January cold spell.")
        loaded = await call(client, "load", text=note, title="Anemometer note")
        assert loaded["loaded"] == 1 and loaded["distilled"] == ["atoms", "triples"]
        doc_id = loaded["files"][0]["document_id"]
        again = await call(client, "load", text=note, title="Anemometer note")
        assert again["unchanged"] == 1  # the same title and text: nothing to do

        hits = (await call(client, "search", question="When was the anemometer of HM-04 replaced?", k=3))["hits"]
        assert hits[0]["document_id"] == doc_id and "12 May 2024" in hits[0]["text"]

        assert "outside the folders" in await fails(client, "load", paths=[str(tmp_path / "outside.md")])
        assert "outside the folders" in await fails(client, "load", paths=["../outside.md"])
        assert "does not exist" in await fails(client, "load", paths=["missing.md"])
        assert "either paths or text" in await fails(client, "load")
        assert "needs a title" in await fails(client, "load", text="x")
        crane = await call(client, "load", paths=["crane-log.md"])
        assert crane["loaded"] == 1

        deleted = await call(client, "delete", document=doc_id)
        assert deleted["deleted"]["id"] == doc_id
        assert await call(client, "delete", document=crane["files"][0]["document_id"])
        assert "no document with id or source" in await fails(client, "delete", document=doc_id)
        assert (await call(client, "list_documents"))["total"] == 5
    serve(allow_write=True, load_roots=(tmp_path / "inside",))(body)


def _env(neo4j_server: TestServer, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_")}
    return {**env, "STRATA_HOME": str(home), "STRATA_CACHE_DIR": str(home / "cache"),
            "STRATA_NEO4J_URI": neo4j_server.uri, "STRATA_NEO4J_USER": neo4j_server.user,
            "STRATA_NEO4J_PASSWORD": neo4j_server.password, "STRATA_EMBEDDER": "hash", **extra}


@pytest.mark.slow
def test_stdio_transport(neo4j_server: TestServer, demo_home: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "kg.app.cli", "mcp", "--kb", "default"],
                                   env=_env(neo4j_server, tmp_path), cwd=str(tmp_path))

    async def main() -> None:
        async with Client(params) as client:
            assert client.server_info is not None and client.server_info.name == "strata"
            assert "default" in (client.instructions or "")
            await check_read_tools(client)
    anyio.run(main)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, deadline: float = 300.0) -> None:
    """Readiness, not a timing assertion: the deadline only keeps a broken start from hanging the suite."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise AssertionError(f"strata mcp --http exited with {process.returncode}:\n{log.read_text()}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"strata mcp --http did not listen on {port}:\n{log.read_text()}")


@pytest.mark.slow
def test_http_transport_with_bearer_token(neo4j_server: TestServer, demo_home: Path, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "kg.app.cli", "mcp", "--http", f"127.0.0.1:{port}", "--token-env", "MCP_TOKEN"],
            env=_env(neo4j_server, tmp_path, MCP_TOKEN=TOKEN), stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        _wait_for_port(port, process, log)
        url = f"http://127.0.0.1:{port}/mcp"
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        assert httpx.post(url, json=body).status_code == 401
        assert httpx.post(url, json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401

        async def main() -> None:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                      timeout=httpx2.Timeout(30, read=300))
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                await check_read_tools(client)
        anyio.run(main)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert TOKEN not in log.read_text(errors="replace")  # the token never reaches the server's output


def test_http_address_parsing() -> None:
    assert parse_http("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_http("8765") == ("127.0.0.1", 8765)
    assert parse_http(":8765") == ("127.0.0.1", 8765)
    assert parse_http("[::1]:8765") == ("::1", 8765)
    assert parse_http("0.0.0.0:80") == ("0.0.0.0", 80)
    for bad in ("host", "host:", "host:99999", "host:x"):
        with pytest.raises(ConfigError):
            parse_http(bad)


@pytest.mark.parametrize(("args", "message"), [
    (["--token-env", "MCP_TOKEN"], "--token-env applies to --http only"),
    (["--http", "127.0.0.1:1", "--token-env", "MCP_UNSET_VARIABLE"], "not set or empty"),
    (["--http", "0.0.0.0:1", "--allow-write"], "add --token-env"),
    (["--load-root", "."], "--load-root applies to --allow-write only"),
])
def test_unsafe_or_inconsistent_options_are_refused(args: list[str], message: str, tmp_path: Path) -> None:
    env = {**{k: None for k in os.environ if k.startswith("STRATA_")}, "STRATA_HOME": str(tmp_path),
           "MCP_TOKEN": TOKEN, "MCP_UNSET_VARIABLE": ""}
    result = CliRunner().invoke(app, ["mcp", *args], env=env)
    assert isinstance(result.exception, ConfigError), result.output
    assert message in str(result.exception)
