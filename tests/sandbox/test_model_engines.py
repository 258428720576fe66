"""The sandbox's model server as vLLM, llama.cpp's server and Ollama answer (issue 48,
item 4): each engine's own routes, its loading, sleep and queue, as its source words them
(docs/sandbox.md, section 11, "Model servers")."""

from __future__ import annotations

import errno
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hostkit import start_model_server, write_host
from polling import wait_for
from skupper_sandbox import engines
from skupper_sandbox.netprobe import port_open

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

ADDRESS = "127.202.0.201"
MODEL = "granite-3.3-2b-instruct"
KEY = "sk-engines-4c1d"
#: A load the test ends itself once it has seen it (``load_seconds=0``).
HELD = 600.0


def _start(
    tmp_path: Path, engine: str, port: int, *options: str, **control: object
) -> tuple[subprocess.Popen[bytes], Path]:
    info = write_host(tmp_path, "provider", ADDRESS, skupper_version="2.1.3")
    path = engines.control_path(tmp_path)
    engines.write_control(path, **control)
    process = start_model_server(
        info.host_dir,
        "0.0.0.0",
        port,
        MODEL,
        ["--engine", engine, *options],
        {engines.CONTROL_VAR: str(path)},
    )
    return process, path


@pytest.fixture
def stop() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait(timeout=5)


def _taken(address: str, port: int) -> bool:
    """Whether a socket is bound to ``address:port`` (ours cannot bind it), listening or not."""
    with socket.socket() as sock:
        try:
            sock.bind((address, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
        return False


def _get(url: str, **kwargs: object) -> httpx.Response:
    return httpx.get(url, timeout=5, **kwargs)  # type: ignore[arg-type]


def test_vllm_refuses_while_it_loads_then_serves_its_metrics_and_sleep(
    tmp_path: Path, stop: list[subprocess.Popen[bytes]]
) -> None:
    # the load is held until the test has seen it (a busy machine cannot outrun it), then ended
    process, control = _start(tmp_path, "vllm", 18211, load_seconds=HELD)
    stop.append(process)
    url = f"http://{ADDRESS}:18211"
    wait_for(lambda: _taken(ADDRESS, 18211), timeout=30, every=0.05, what="vLLM to bind its port")
    assert not port_open(ADDRESS, 18211)  # bound, not listening: refused
    engines.write_control(control, load_seconds=0)
    wait_for(lambda: port_open(ADDRESS, 18211), timeout=30, every=0.1, what="vLLM to load")
    health = _get(f"{url}/health")
    assert (health.status_code, health.content) == (200, b"")
    engines.write_control(control, running=2, waiting=8, kv_cache_used=0.42)
    metrics = _get(f"{url}/metrics").text
    assert f'vllm:num_requests_waiting{{engine="0",model_name="{MODEL}"}} 8.0' in metrics
    assert f'vllm:num_requests_running{{engine="0",model_name="{MODEL}"}} 2.0' in metrics
    assert f'vllm:kv_cache_usage_perc{{engine="0",model_name="{MODEL}"}} 0.42' in metrics
    engines.write_control(control, vllm_release="old")
    assert "vllm:gpu_cache_usage_perc{" in _get(f"{url}/metrics").text
    assert _get(f"{url}/is_sleeping").json() == {"is_sleeping": False}
    assert httpx.post(f"{url}/sleep", timeout=5).status_code == 200
    assert _get(f"{url}/is_sleeping").json() == {"is_sleeping": True}
    assert _get(f"{url}/v1/models").json()["data"][0]["id"] == MODEL  # asleep, still listed
    httpx.post(f"{url}/wake_up", timeout=5)
    assert _get(f"{url}/is_sleeping").json() == {"is_sleeping": False}


def test_llamacpp_answers_503_loading_model_then_its_props_slots_and_metrics(
    tmp_path: Path, stop: list[subprocess.Popen[bytes]]
) -> None:
    process, control = _start(tmp_path, "llamacpp", 18212, "--api-key", KEY, load_seconds=HELD)
    stop.append(process)
    url = f"http://{ADDRESS}:18212"
    wait_for(lambda: port_open(ADDRESS, 18212), timeout=30, every=0.05, what="llama.cpp")
    loading = _get(f"{url}/health")
    assert loading.status_code == 503
    assert loading.json() == {
        "error": {"message": "Loading model", "type": "unavailable_error", "code": 503}
    }
    assert _get(f"{url}/v1/models").status_code == 503
    engines.write_control(control, load_seconds=0)
    wait_for(lambda: _get(f"{url}/health").status_code == 200, timeout=30, every=0.1, what="loaded")
    assert _get(f"{url}/health").json() == {"status": "ok"}
    assert _get(f"{url}/v1/models").status_code == 200  # public, as llama.cpp's key check
    refused = _get(f"{url}/props")
    assert refused.status_code == 401
    assert refused.json()["error"]["message"] == "Invalid API Key"
    auth = {"Authorization": f"Bearer {KEY}"}
    assert _get(f"{url}/props", headers=auth).json()["is_sleeping"] is False
    engines.write_control(control, sleeping=True, running=3, waiting=5)
    assert _get(f"{url}/props", headers=auth).json()["is_sleeping"] is True
    metrics = _get(f"{url}/metrics", headers=auth).text
    assert "llamacpp:requests_processing 3.0" in metrics
    assert "llamacpp:requests_deferred 5.0" in metrics
    slots = _get(f"{url}/slots", headers=auth).json()
    assert [s["is_processing"] for s in slots] == [True, True, True, False]


def test_ollama_lists_its_loaded_models_with_their_vram_and_none_once_unloaded(
    tmp_path: Path, stop: list[subprocess.Popen[bytes]]
) -> None:
    process, control = _start(tmp_path, "ollama", 18213, "--no-health", vram_share=0.5)
    stop.append(process)
    url = f"http://{ADDRESS}:18213"
    wait_for(lambda: port_open(ADDRESS, 18213), timeout=10, every=0.05, what="Ollama")
    assert _get(url).text == "Ollama is running"
    assert _get(f"{url}/health").status_code == 404
    (loaded,) = _get(f"{url}/api/ps").json()["models"]
    assert loaded["name"] == MODEL and loaded["size_vram"] * 2 == loaded["size"]
    assert [m["name"] for m in _get(f"{url}/api/tags").json()["models"]] == [MODEL]
    assert _get(f"{url}/v1/models").json()["data"][0]["owned_by"] == "library"
    engines.write_control(control, sleeping=True)
    assert _get(f"{url}/api/ps").json() == {"models": []}
    assert [m["name"] for m in _get(f"{url}/api/tags").json()["models"]] == [MODEL]


@pytest.mark.parametrize(
    "values",
    [
        {"asleep": True},
        {"waiting": -1},
        {"waiting": 1.5},
        {"sleeping": "yes"},
        {"kv_cache_used": True},
    ],
)
def test_a_control_the_server_would_misread_is_refused(
    values: dict[str, object], tmp_path: Path
) -> None:
    with pytest.raises(engines.EngineError):
        engines.write_control(engines.control_path(tmp_path), **values)
    assert not engines.control_path(tmp_path).exists()


def test_the_sandbox_cli_refuses_an_unknown_engine() -> None:
    from skupper_sandbox.cli import SandboxError, _model_engines

    assert _model_engines(["rhel-ai=vllm"]) == {"rhel-ai": "vllm"}
    with pytest.raises(SandboxError, match="unknown model engine"):
        _model_engines(["rhel-ai=tgi"])
