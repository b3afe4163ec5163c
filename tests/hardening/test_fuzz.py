"""Property-based tests: any byte string, under any loader's extension, either loads (to a document that
keeps the loaders' invariants and chunks within bounds) or fails with a LoaderError; and every request the
REST API's OpenAPI document allows (schemathesis) is answered without a 500."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.app.client import Strata
from kg.app.rest import ApiSettings, KnowledgeBases, StrataService, create_app
from kg.errors import LoaderError
from loaders import chunk_document, load_path
from loaders.chunking import MAX_WORD_CHARS
from tests.loaders.conftest import assert_invariants, write_docx, write_pdf, write_xlsx

EXTENSIONS = (".txt", ".md", ".html", ".csv", ".tsv", ".json", ".jsonl", ".pdf", ".docx", ".xlsx", ".log")
MARKUP = "#*-_|`>[]()!<>/=\"' \t\n\r\\.:;0123456789abcABCéß中文\u00a0\u2028\x00\x1b"
VALID: dict[str, bytes] = {}


def valid(ext: str) -> bytes:
    """A small valid file of a binary format, made once, for the mutation strategy."""
    if ext not in VALID:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"ok{ext}"
            {".pdf": write_pdf, ".docx": write_docx, ".xlsx": write_xlsx}[ext](path)
            VALID[ext] = path.read_bytes()
    return VALID[ext]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    """A valid PDF, DOCX or XLSX with some bytes overwritten, cut short, or both."""
    ext = draw(st.sampled_from((".pdf", ".docx", ".xlsx")))
    data = bytearray(valid(ext))
    for _ in range(draw(st.integers(0, 8))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    cut = draw(st.integers(len(data) // 4, len(data)))
    return ext, bytes(data[:cut])


files = st.one_of(
    st.tuples(st.sampled_from(EXTENSIONS), st.binary(max_size=2048)),
    st.tuples(st.sampled_from(EXTENSIONS), st.text(alphabet=MARKUP, max_size=2048).map(lambda t: t.encode())),
    mutated(),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)
@given(files)
def test_any_bytes_load_or_fail_with_a_loader_error(file: tuple[str, bytes]) -> None:
    ext, data = file
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"input{ext}"
        path.write_bytes(data)
        try:
            docs = list(load_path(path))
        except LoaderError as exc:
            assert exc.path == str(path) and exc.reason and "\n" not in str(exc).strip()
            return
        for doc in docs:
            assert doc.text.strip() or doc.tables or doc.figures or ext in (".json", ".jsonl")
            assert_invariants(doc)
            for chunk in chunk_document(doc, "doc", max_tokens=20, overlap=4):
                assert chunk.kind != "text" or len(chunk.text) <= 2 * 20 * MAX_WORD_CHARS + MAX_WORD_CHARS


# -- the REST API, from its OpenAPI document ------------------------------------------------------------------

@pytest.fixture
def api_app(make_kb: Callable[[str], Strata]) -> Iterator[object]:
    service = StrataService(make_kb("default"))
    app = create_app(KnowledgeBases(lambda name: service), ApiSettings())
    with TestClient(app) as client:  # a few documents, so the generated questions meet real chunks
        client.post("/documents", files=[("files", ("minutes.md", b"# Board Minutes\n\nThe Board of Northwind "
                                                    b"approved the gearbox budget in 2023.\n"))])
        yield app


GENERATED_PER_OPERATION = 40
answered: list[int] = []


@pytest.mark.neo4j
def test_no_generated_request_gets_a_500(api_app: object) -> None:
    """schemathesis generates requests (valid and invalid bodies, queries and paths) for every operation of the
    OpenAPI document; run through hypothesis directly (schemathesis' pytest plugin does not load under this
    pytest)."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", api_app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 6
    for operation in operations:
        @settings(max_examples=GENERATED_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck),
                  database=None)
        @given(case=operation.as_strategy())
        def answers(case: schemathesis.Case) -> None:
            response = case.call()
            answered.append(response.status_code)
            assert response.status_code != 500, (case.method, case.path, case.path_parameters, case.query,
                                                  case.body, response.text[:300])
            if response.status_code >= 400:
                assert "detail" in response.json(), response.text[:300]

        answers()
    assert len(answered) >= 4 * len(operations)
