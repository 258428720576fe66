"""The sandbox model server: an OpenAI-compatible API a provider's container serves."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from hostkit import start_model_server, write_host
from polling import wait_for
from skupper_sandbox.model_server import completion, completion_chunks, reply_text
from skupper_sandbox.netprobe import port_open

ADDRESS = "127.202.0.200"
PORT = 18200


@pytest.fixture(scope="module")
def model_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A model server on a sandbox host that was told HOST=0.0.0.0 (the host's own address)."""
    tmp_path = tmp_path_factory.mktemp("model-world")
    info = write_host(tmp_path, "provider", ADDRESS, skupper_version="2.1.3")
    process = start_model_server(
        info.host_dir, "0.0.0.0", PORT, "ibm-granite/granite-3.3-8b-instruct"
    )
    try:
        wait_for(
            lambda: process.poll() is not None or port_open(ADDRESS, PORT),
            timeout=5,
            every=0.02,
            what="the model server to listen",
        )
        assert process.poll() is None, "the model server exited"
        yield f"http://{ADDRESS}:{PORT}"
    finally:
        process.kill()
        process.wait(timeout=5)


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
