"""`strata llm start|stop|status` without a model: the errors a user meets, and nothing left running."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kg.errors import ConfigError, LLMProvisioningError
from kg.llm.local import LocalLLMServer, find_runtime, model_file
from kg.settings import LocalLLMSettings, Settings, free_port
from kg.shared.processes import alive


def require_runtime() -> None:
    """Skip without the runtime, except where `make test` (and CI) requires it: there that is a failure."""
    if find_runtime() is None:
        reason = "no local model runtime (make install-llm)"
        if os.environ.get("STRATA_REQUIRE_REAL_LLM") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def settings(tmp_path: Path, **fields: object) -> LocalLLMSettings:
    return LocalLLMSettings(**{"home": tmp_path / "llm", "cache_dir": tmp_path / "cache", "start_timeout_s": 60,
                               **fields})  # type: ignore[arg-type]


def test_a_stale_pid_file_is_removed(tmp_path: Path) -> None:
    server = LocalLLMServer(settings(tmp_path))
    server.home.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    server.pid_file.write_text(f"{dead.pid}\n")
    server.info_file.write_text(json.dumps({
        "base_url": "http://127.0.0.1:1/v1", "alias": "m", "model": "m", "model_file": "/x.gguf", "port": 1,
        "threads": 1, "context_tokens": 512, "runtime": "llama-cpp-python", "pid": dead.pid}))
    assert server.running() is None
    assert not server.pid_file.exists() and not server.info_file.exists()
    assert server.stop() is False


def test_a_taken_port_is_named(tmp_path: Path) -> None:
    require_runtime()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(LLMProvisioningError, match=f"port {port} on 127.0.0.1 is taken.*STRATA_LOCAL_LLM_PORT"):
            LocalLLMServer(settings(tmp_path, port=port, model=str(tmp_path / "m.gguf"))).start()


def test_a_model_that_does_not_load_is_reported_with_the_log_and_nothing_runs(tmp_path: Path) -> None:
    require_runtime()
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file" * 100)
    server = LocalLLMServer(settings(tmp_path, port=free_port(), model=str(broken)))
    with pytest.raises(LLMProvisioningError, match=re.escape("exited during start-up. Log tail:")) as caught:
        server.start()
    assert str(server.log_file) in str(caught.value)
    assert server.running() is None and not server.pid_file.exists()


def test_model_names_a_gguf_file_or_a_named_model(tmp_path: Path) -> None:
    named = re.escape("name a .gguf file or one of qwen2.5-coder-1.5b, qwen2.5-coder-0.5b")
    with pytest.raises(ConfigError, match=named):
        model_file("llama-70b", cache_dir=tmp_path)
    with pytest.raises(ConfigError, match="no such file"):
        model_file(str(tmp_path / "missing.gguf"), cache_dir=tmp_path)
    real = tmp_path / "mine.gguf"
    real.write_bytes(b"GGUF")
    assert model_file(str(real), cache_dir=tmp_path) == real


def test_base_url_local_takes_the_local_servers_defaults(tmp_path: Path) -> None:
    env = {"STRATA_HOME": str(tmp_path), "STRATA_LLM_BASE_URL": "local", "STRATA_LOCAL_MODEL": "qwen2.5-coder-0.5b"}
    llm = Settings.from_env(env).llm
    assert llm.is_local and llm.local is not None and llm.local.model == "qwen2.5-coder-0.5b"
    assert (llm.max_concurrency, llm.timeout_s, llm.retry_timeouts) == (1, 600.0, False)
    remote = Settings.from_env({"STRATA_HOME": str(tmp_path), "STRATA_LLM_BASE_URL": "http://x/v1"}).llm
    assert (remote.max_concurrency, remote.timeout_s, remote.retry_timeouts) == (4, 60.0, True)


def test_alive_sees_a_process_end() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    assert alive(child.pid)
    child.kill()
    child.wait()
    assert not alive(child.pid)


def test_a_server_that_answered_once_is_used_without_waiting_for_a_probe(tmp_path: Path) -> None:
    """A one-slot server busy with another client's generation answers no probe for minutes; once it has
    answered (``ready`` in its info file), a second client uses it at once, and its requests queue there."""
    port = free_port()
    busy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(port)])
    try:
        server = LocalLLMServer(settings(tmp_path, port=port, start_timeout_s=1))
        server.home.mkdir(parents=True)
        server.pid_file.write_text(f"{busy.pid}\n")
        info = {"base_url": f"http://127.0.0.1:{port}/v1", "alias": "m", "model": "m", "model_file": "/x.gguf",
                "port": port, "threads": 1, "context_tokens": 512, "runtime": "llama-cpp-python", "pid": busy.pid}
        server.info_file.write_text(json.dumps(info))
        with pytest.raises(LLMProvisioningError, match="did not answer"):
            LocalLLMServer(settings(tmp_path, port=port, model="m", start_timeout_s=1)).start()
        server.info_file.write_text(json.dumps({**info, "ready": True}))
        found = LocalLLMServer(settings(tmp_path, port=port, model="m", start_timeout_s=1)).start()
        assert found.pid == busy.pid and not found.started
    finally:
        busy.kill()
        busy.wait()
