"""The web page end to end in headless Chromium (Debian's package): ask via /?q=..., see cited answers.

Chromium is installed by CI (``.ci/run``: ``apt-get install -y chromium``); this test installs nothing and
fails, saying so, when it is missing. The screenshot is kept in ``test-artifacts/`` for people to look at.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, quote, urlparse
from urllib.request import Request, urlopen

import pytest
import uvicorn

from kg.app.demo import CORPUS
from kg.app.rest import ApiSettings, KnowledgeBases, StrataService, create_app
from tests.conftest import REPO, free_port

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
QUESTION = "Which site had the most blade erosion failures in 2024?"
SERVER_START_S = 30.0


@pytest.fixture
def chromium() -> Path:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's Chromium first (apt-get install -y chromium); "
                    "the web page test drives it headless")
    return CHROMIUM


@pytest.fixture
def server_url(service: StrataService) -> Iterator[str]:
    report = service.load([CORPUS / "failure-report-2024.pdf", CORPUS / "fleet-overview.md"])
    assert not report.failed, report.to_json()
    service.distill()  # the layers `strata load` builds offline, among them the PDF's table rows
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(KnowledgeBases(lambda name: service), ApiSettings()),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_START_S
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the API server did not start: its thread ended (see the log above)")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the API server did not start within {SERVER_START_S:.0f} s on port {port}")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


def headless(chromium: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(chromium), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
               "--virtual-time-budget=20000", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def test_page_asks_and_shows_cited_answer(chromium: Path, server_url: str, tmp_path: Path) -> None:
    url = f"{server_url}/?q={quote(QUESTION)}"
    dom = headless(chromium, tmp_path / "profile", "--dump-dom", url).stdout

    assert 'id="result"' in dom and 'id="result" hidden' not in dom, dom[-3000:]
    citations = re.findall(r'<li id="citation-(\d+)" class="citation"', dom)
    assert citations, dom[-3000:]
    marks = [unescape(m) for m in re.findall(r"<mark>(.*?)</mark>", dom, re.S)]
    assert any("Kestrel Ridge" in m for m in marks), marks  # the cited span, highlighted in its chunk
    assert re.search(r'href="#citation-1" class="marker"', dom)  # the answer's [1] links to its citation
    assert "Component failure report 2024, page 1" in unescape(dom)
    # The trace, step by step: each step of the answer the API gives is on the page.
    asked = json.loads(urlopen(Request(f"{server_url}/ask", data=json.dumps({"question": QUESTION}).encode(),
                                       headers={"Content-Type": "application/json"}), timeout=120).read())
    kinds = [unescape(k) for k in re.findall(r'<li class="step"[^>]*><span class="kind">(.*?)</span>', dom)]
    assert kinds == [step["kind"] for step in asked["answer"]["trace"]] and len(kinds) >= 2
    link = unescape(re.search(r'<a href="([^"]+)"[^>]*id="browser-link"', dom).group(1))  # type: ignore[union-attr]
    query = parse_qs(urlparse(link).query)
    assert urlparse(link).path == "/browser/" and query["cmd"] == ["edit"]
    assert "MATCH path = (d:Document)" in query["arg"][0]

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "web-answer.png"
    shot.unlink(missing_ok=True)
    headless(chromium, tmp_path / "profile2", f"--screenshot={shot}", "--window-size=1280,1400", url)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
