"""Nothing private leaks: an endpoint that echoes the request's Authorization header (and a password) in its
error body puts no secret into `ask`, `retrieve` or `load` output, their --json reports, or API responses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kg.shared.redaction import MASK, redact, redact_data
from kg.store.base import GraphStore
from tests.conftest import REPO, TestServer
from tests.surfaces.test_cli import server_env

API_KEY = "sk-echo-0123456789abcdefSECRET"


class Echo(BaseHTTPRequestHandler):
    """Every request fails, its body quoting the credentials it was sent, as a misconfigured proxy does."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = json.dumps({"error": {"message": f"invalid request; headers were Authorization: "
                                                f"{self.headers.get('Authorization')} api_key={API_KEY} "
                                                f"password=hunter2-db-pass", "type": "invalid_request_error"}})
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    do_GET = do_POST

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def echo_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_redact_masks_keys_tokens_and_passwords_and_keeps_json_valid() -> None:
    text = json.dumps({"detail": f"Authorization: Bearer {API_KEY}", "x": "password=abc123; token: zzz999"})
    masked = redact(text)
    assert API_KEY not in masked and "abc123" not in masked and "zzz999" not in masked
    assert json.loads(masked)["detail"] == f"Authorization: Bearer {MASK}"
    assert redact("the token limit was hit after 5 tokens") == "the token limit was hit after 5 tokens"
    assert redact_data({"a": [f"Bearer {API_KEY}"]}) == {"a": [f"Bearer {MASK}"]}
    assert redact("my key is hunter2-secret-value", ["hunter2-secret-value"]) == f"my key is {MASK}"


def strata(env: dict[str, str | None], *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    return subprocess.run([sys.executable, "-m", "kg.app.cli", *args], env=environ, capture_output=True, text=True,
                          check=False, cwd=REPO)


def test_echoed_secrets_never_reach_cli_output_or_reports(tmp_path: Path, neo4j_server: TestServer,
                                                           store: GraphStore, echo_url: str) -> None:
    env = {**server_env(neo4j_server, tmp_path / "home"), "STRATA_LLM_BASE_URL": echo_url,
           "STRATA_LLM_MODEL": "echo-model", "STRATA_LLM_API_KEY": API_KEY, "STRATA_LLM_MAX_RETRIES": "0",
           "STRATA_LLM_CACHE": "0"}
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes.md").write_text("# Notes\n\nThe gearbox of Site North failed in 2023.\n", "utf-8")
    report = tmp_path / "load.json"
    runs = {  # the real command (its error printer is part of what is tested), in a child process
        "load": strata(env, "load", str(corpus), "--json", str(report)),
        "load-stdout": strata(env, "load", str(corpus), "--json", "-"),
        "ask": strata(env, "ask", "Why did the gearbox fail?"),
        "ask-json": strata(env, "ask", "Why did the gearbox fail?", "--json"),
        "retrieve": strata(env, "retrieve", "gearbox failure", "--method", "hr", "--json"),
    }
    outputs = {name: r.stdout + r.stderr for name, r in runs.items()}
    outputs["load.json"] = report.read_text("utf-8") if report.exists() else ""
    assert any("Authorization" in text or "api_key" in text for text in outputs.values()), outputs  # echoed...
    for name, text in outputs.items():
        assert API_KEY not in text, name  # ...but masked
        assert "hunter2-db-pass" not in text, name
        assert "0123456789abcdef" not in text, name
    assert any(MASK in text for text in outputs.values())
