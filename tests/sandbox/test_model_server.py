"""The sandbox model server: an OpenAI-compatible API a provider's container serves."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from hostkit import start_model_server, write_host
from polling import wait_for
from skupper_sandbox.model_server import completion, completion_chunks, reply_text
from skupper_sandbox.netprobe import port_open
from skupper_sandbox.world import model_server_up

ADDRESS = "127.202.0.200"
PORT = 18200


@contextmanager
def _listening(process: subprocess.Popen[bytes], port: int, name: str) -> Iterator[str]:
    """``name``'s URL once it listens on ``port`` of ADDRESS (it must not have exited); the
    process is killed after."""
    try:
        wait_for(
            lambda: process.poll() is not None or port_open(ADDRESS, port),
            timeout=30,
            every=0.02,
            what=f"{name} to listen",
        )
        assert process.poll() is None, f"{name} exited"
        yield f"http://{ADDRESS}:{port}"
    finally:
        process.kill()
        process.wait(timeout=5)


@pytest.fixture(scope="module")
def model_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A model server on a sandbox host that was told HOST=0.0.0.0 (the host's own address)."""
    tmp_path = tmp_path_factory.mktemp("model-world")
    info = write_host(tmp_path, "provider", ADDRESS, skupper_version="2.1.3")
    process = start_model_server(
        info.host_dir, "0.0.0.0", PORT, "ibm-granite/granite-3.3-8b-instruct"
    )
    with _listening(process, PORT, "the model server") as url:
        yield url


def test_health_answers_ok(model_url: str) -> None:
    response = httpx.get(f"{model_url}/health")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_models_lists_the_model_id(model_url: str) -> None:
    body = httpx.get(f"{model_url}/v1/models").json()

    assert body["object"] == "list"
    assert [(m["id"], m["object"], m["owned_by"]) for m in body["data"]] == [
        ("ibm-granite/granite-3.3-8b-instruct", "model", "sandbox")
    ]


def test_chat_completion_echoes_the_last_user_message(model_url: str) -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "an answer"},
        {"role": "user", "content": "Say hello from rhel-ai"},
    ]
    body = httpx.post(f"{model_url}/v1/chat/completions", json={"messages": messages}).json()

    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert body["model"] == "ibm-granite/granite-3.3-8b-instruct"
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant"
    assert "Say hello from rhel-ai" in choice["message"]["content"]
    assert "first question" not in choice["message"]["content"]
    assert choice["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_streamed_chat_completion_is_sse_chunks_ending_with_done(model_url: str) -> None:
    request = {"stream": True, "messages": [{"role": "user", "content": "stream me"}]}
    with httpx.stream("POST", f"{model_url}/v1/chat/completions", json=request) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        data = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]

    assert data[-1] == "[DONE]"
    chunks = [json.loads(item) for item in data[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert "stream me" in text
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_bad_json_is_a_400_with_an_openai_error(model_url: str) -> None:
    response = httpx.post(
        f"{model_url}/v1/chat/completions",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "JSON" in error["message"]


def test_unknown_path_is_a_404(model_url: str) -> None:
    assert httpx.get(f"{model_url}/v2/nothing").status_code == 404


def test_reply_is_deterministic_and_handles_content_parts() -> None:
    parts = [{"role": "user", "content": [{"type": "text", "text": "from parts"}]}]

    assert reply_text(parts) == reply_text(parts) == "You said: from parts"
    assert reply_text([]) != ""


def test_stream_chunks_spell_the_same_reply_as_the_completion() -> None:
    body = {"messages": [{"role": "user", "content": "same words here"}]}
    whole = completion("m", body)["choices"][0]["message"]["content"]
    streamed = "".join(
        c["choices"][0]["delta"].get("content", "") for c in completion_chunks("m", body)
    )

    assert streamed == whole


# -- servers as people run them: a bearer key (vLLM --api-key), no /health (Ollama) -----------

KEYED_PORT = 18201
KEY = "sandbox-test-key-7f3a"


@pytest.fixture(scope="module")
def keyed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A model server that requires a bearer key (from its file) and serves no /health."""
    tmp_path = tmp_path_factory.mktemp("keyed-model-world")
    info = write_host(tmp_path, "provider", ADDRESS, skupper_version="2.1.3")
    key_file = tmp_path / "model.key"
    key_file.write_text(f"{KEY}\n")
    process = start_model_server(
        info.host_dir,
        "0.0.0.0",
        KEYED_PORT,
        "org/keyed-model",
        ["--api-key-file", str(key_file), "--no-health"],
    )
    with _listening(process, KEYED_PORT, "the keyed model server") as url:
        yield url


@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong-key", f"Basic {KEY}", f"Bearer {KEY}x", KEY]
)
def test_without_the_key_every_v1_route_answers_401_as_vllm_does(
    keyed_url: str, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    models = httpx.get(f"{keyed_url}/v1/models", headers=headers)
    chat = httpx.post(
        f"{keyed_url}/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}]},
        headers=headers,
    )
    assert (models.status_code, chat.status_code) == (401, 401)
    assert models.json() == {"error": "Unauthorized"}


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_with_the_key_the_model_answers(keyed_url: str, scheme: str) -> None:
    headers = {"Authorization": f"{scheme} {KEY}"}
    models = httpx.get(f"{keyed_url}/v1/models", headers=headers)
    assert models.status_code == 200
    assert [m["id"] for m in models.json()["data"]] == ["org/keyed-model"]
    chat = httpx.post(
        f"{keyed_url}/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "ping"}]},
        headers=headers,
    )
    assert chat.json()["choices"][0]["message"]["content"] == "You said: ping"


def test_no_health_route_is_a_404_and_needs_no_key(keyed_url: str) -> None:
    assert httpx.get(f"{keyed_url}/health").status_code == 404
    assert (
        httpx.get(f"{keyed_url}/health", headers={"Authorization": f"Bearer {KEY}"}).status_code
        == 404
    )


def test_with_a_key_but_health_served_health_stays_open(tmp_path: Path) -> None:
    info = write_host(tmp_path, "provider", ADDRESS, skupper_version="2.1.3")
    port = KEYED_PORT + 1
    process = start_model_server(info.host_dir, "0.0.0.0", port, "m", ["--api-key", KEY])
    try:
        wait_for(
            lambda: process.poll() is not None or port_open(ADDRESS, port),
            timeout=30,
            what="the model server to listen (or exit)",
        )
        assert httpx.get(f"http://{ADDRESS}:{port}/health").status_code == 200
        assert httpx.get(f"http://{ADDRESS}:{port}/v1/models").status_code == 401
    finally:
        process.kill()
        process.wait(timeout=5)


def test_a_key_file_that_cannot_be_read_stops_the_server(tmp_path: Path) -> None:
    info = write_host(tmp_path, "provider", ADDRESS, skupper_version="2.1.3")
    process = start_model_server(
        info.host_dir, "0.0.0.0", KEYED_PORT + 2, "m", ["--api-key-file", str(tmp_path / "none")]
    )
    assert process.wait(timeout=10) == 2


# -- when sandbox up calls a model server up -----------------------------------------------------


def test_a_keyed_server_without_health_is_up(keyed_url: str, model_url: str) -> None:
    assert asyncio.run(model_server_up(ADDRESS, KEYED_PORT))  # /health 404, /v1/models 401
    assert asyncio.run(model_server_up(ADDRESS, PORT))  # /health 200


class _Loading(BaseHTTPRequestHandler):
    """llama.cpp's server while it loads its model: 503 on /health and /v1/models."""

    def do_GET(self) -> None:
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_loading_server_and_nothing_listening_are_not_up() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Loading)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert not asyncio.run(model_server_up("127.0.0.1", server.server_address[1]))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    assert not asyncio.run(model_server_up("127.0.0.1", server.server_address[1]))


@pytest.mark.parametrize(
    ("engine", "refusal"),
    [
        ("vllm", (404, {"detail": "Not Found"})),
        (
            "llamacpp",
            (
                501,
                {
                    "error": {
                        "message": "This server does not support completions. Start it "
                        "without `--embeddings`",
                        "type": "not_supported_error",
                        "code": 501,
                    }
                },
            ),
        ),
    ],
)
def test_an_embeddings_server_answers_vectors_and_refuses_chat_as_its_engine_does(
    tmp_path: Path, engine: str, refusal: tuple[int, dict[str, object]]
) -> None:
    """``--kind embeddings`` (``SKMCP_MODEL_KIND``, the ``--embeddings HOST`` server): vLLM
    with a pooling model has no chat route (FastAPI's 404), llama.cpp's server with
    ``--embeddings`` answers 501 in its words; ``/v1/embeddings`` answers a vector per input,
    the same text the same vector."""
    port = 18231 + (engine == "llamacpp")
    info = write_host(tmp_path, "provider", ADDRESS, skupper_version="2.1.3")
    process = start_model_server(
        info.host_dir, "0.0.0.0", port, "granite-embedding-125m-english", ["--engine", engine],
        {"SKMCP_MODEL_KIND": "embeddings"},
    )  # fmt: skip
    with _listening(process, port, "the embeddings server") as url:
        chat = httpx.post(f"{url}/v1/chat/completions", json={"messages": []}, timeout=10)
        assert (chat.status_code, chat.json()) == refusal
        texts = ["is the network up?", "is the network up?", "another"]
        answer = httpx.post(f"{url}/v1/embeddings", json={"input": texts}, timeout=10).json()
        vectors = [d["embedding"] for d in answer["data"]]
        assert answer["object"] == "list" and [d["index"] for d in answer["data"]] == [0, 1, 2]
        assert len(vectors[0]) == 768 and vectors[0] == vectors[1] != vectors[2]
        bad = httpx.post(f"{url}/v1/embeddings", json={"input": 3}, timeout=10)
        assert bad.status_code == 400


def test_a_chat_server_refuses_embeddings_as_its_engine_does(tmp_path: Path) -> None:
    """A chat server's ``/v1/embeddings``: llama.cpp without ``--embeddings`` answers 501
    ``Start it with `--embeddings```."""
    port = 18233
    info = write_host(tmp_path, "provider", ADDRESS, skupper_version="2.1.3")
    process = start_model_server(info.host_dir, "0.0.0.0", port, "m", ["--engine", "llamacpp"])
    with _listening(process, port, "the llama.cpp server") as url:
        wait_for(
            lambda: httpx.get(f"{url}/health", timeout=5).status_code == 200,
            timeout=10,
            every=0.05,
            what="llama.cpp to load",
        )
        answer = httpx.post(f"{url}/v1/embeddings", json={"input": "x"}, timeout=10)
        assert answer.status_code == 501
        assert "Start it with `--embeddings`" in answer.json()["error"]["message"]
