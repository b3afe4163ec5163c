from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest

from kg.llm import AtomicQuestions, make_llm
from kg.settings import LLMSettings
from kg.shared.text import estimate_tokens
from kg.testing.scripted_llm import Reply, ScriptedLLMServer


def test_default_handler_echo_and_request_log() -> None:
    def echo(body: dict[str, Any]) -> Reply:
        return Reply(json.dumps({"questions": [body["messages"][-1]["content"].upper()]}))

    with ScriptedLLMServer(default=echo) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi there"}])
        assert json.loads(reply.choices[0].message.content or "") == {"questions": ["HI THERE"]}
        assert reply.usage is not None
        assert reply.usage.prompt_tokens == estimate_tokens("hi there")
        assert reply.usage.completion_tokens == estimate_tokens(reply.choices[0].message.content or "")
        (req,) = server.requests
        assert req.task == "default" and req.status == 200 and req.usage == {
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
            "total_tokens": reply.usage.total_tokens,
        }
        client.close()


def test_sequences_last_repeats_and_constructor_script() -> None:
    with ScriptedLLMServer({"t": ["one", "two"], "u": {"k": 1}}) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)

        def ask(task: str) -> str:
            out = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}],
                                                 extra_headers={"X-Strata-Task": task})
            return out.choices[0].message.content or ""

        assert [ask("t") for _ in range(3)] == ["one", "two", "two"]
        assert json.loads(ask("u")) == {"k": 1}
        with pytest.raises(openai.BadRequestError, match="no script"):
            ask("nothing")
        server.reset()
        assert server.requests == [] and server.max_in_flight == 0
        client.close()


def test_stop_is_clean_and_port_is_freed() -> None:
    server = ScriptedLLMServer().start()
    port = server.port
    assert port > 0
    server.stop()
    again = ScriptedLLMServer(port=port).start()  # the port can be bound again at once
    again.stop()


def test_command_line_server(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({
        "responses": {"atomic_questions": [{"fault": "server_error", "status": 503},
                                           {"questions": ["From the CLI?"]}]},
        "embedding_dimensions": 8,
    }), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kg.testing.scripted_llm", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        base_url = line.strip().rsplit(" ", 1)[-1]
        assert base_url.startswith("http://127.0.0.1:")
        with make_llm(LLMSettings(base_url=base_url), base_backoff_s=0.01) as llm:
            messages = [{"role": "user", "content": "x"}]
            out = llm.complete_structured("atomic_questions", messages, AtomicQuestions)
        assert out.questions == ["From the CLI?"]
        emb = openai.OpenAI(base_url=base_url, api_key="x").embeddings.create(model="e", input=["a"])
        assert len(emb.data[0].embedding) == 8
    finally:
        proc.terminate()
        proc.wait(timeout=10)
