"""An endpoint's kind (chat, embeddings, completions): declared in the topology
(``<PREFIX>_MODEL_KIND``), read in its model id, or learnt by test_model from what the
server answers; test_model then checks what the endpoint serves (an embedding vector, a
text completion), and the exports name the kind where the tool has one.

The servers here answer as the engines do on an embeddings model (docs/sandbox.md): vLLM's
newer releases have no chat route (404 ``{"detail":"Not Found"}``), its older ones send the
error object with HTTP 200, llama.cpp's server with ``--embeddings`` answers 501."""

from __future__ import annotations

import asyncio
import json

import pytest
import yaml

from model_api_server import ADDRESS, details, model_api
from skupper_mcp.engine.operations.model_checks import route_checks
from skupper_mcp.errors import ConfigError
from skupper_mcp.exports import render_export
from skupper_mcp.facts.model_kind import KindReading, embedding_vector, kind_of, refusal_words
from skupper_mcp.results import ModelRow
from skupper_mcp.topology import parse_topology
from topology_samples import TWO_ENDPOINTS_TOPOLOGY

EMBED_ID = "granite-embedding-125m-english"
MODELS = (200, json.dumps({"data": [{"id": "bert-small"}]}).encode())
VECTOR = (200, json.dumps({"object": "list", "data": [{"embedding": [0.1, -0.2, 0.3]}]}).encode())
LLAMACPP_REFUSAL = (
    501,
    json.dumps(
        {
            "error": {
                "code": 501,
                "message": "This server does not support completions. Start it without "
                "`--embeddings`",
                "type": "not_supported_error",
            }
        }
    ).encode(),
)
OLD_VLLM_REFUSAL = (
    200,
    json.dumps(
        {
            "error": {
                "message": "The model does not support Chat Completions API",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        }
    ).encode(),
)
NEW_VLLM_NO_ROUTE = (404, b'{"detail":"Not Found"}')


def test_the_kind_is_declared_else_read_in_the_id_else_chat() -> None:
    assert kind_of("completions", [EMBED_ID]) == KindReading(
        "completions", "topology", "declared in the topology (MODEL_KIND)"
    )
    for embedding_id in (EMBED_ID, "nomic-embed-text", "BAAI/bge-m3", "intfloat/e5-large"):
        assert kind_of(None, [embedding_id]).kind == "embeddings", embedding_id
    for chat_id in ("ibm-granite/granite-3.3-8b-instruct", "qwen3:8b", "bgeneral-7b"):
        assert kind_of(None, [chat_id]) == KindReading(
            "chat", "default", "assumed: nothing declares or says otherwise"
        ), chat_id


def test_the_engines_refusals_are_recognised_and_nothing_else() -> None:
    assert "llama.cpp" in (refusal_words(*LLAMACPP_REFUSAL) or "")
    assert "vLLM" in (refusal_words(*OLD_VLLM_REFUSAL) or "")
    assert refusal_words(*NEW_VLLM_NO_ROUTE) is None  # a 404 alone says too little
    assert refusal_words(500, b'{"error":{"message":"CUDA out of memory"}}') is None
    assert embedding_vector({"data": [{"embedding": [1, 2.5]}]}) == 2
    bad_answers: list[dict[str, object]] = [
        {"data": []},
        {"data": [{"embedding": []}]},
        {"data": [{"embedding": ["x"]}]},
    ]
    for bad in bad_answers:
        with pytest.raises(ValueError):
            embedding_vector(bad)


@pytest.mark.parametrize(
    "refusal", [LLAMACPP_REFUSAL, OLD_VLLM_REFUSAL, NEW_VLLM_NO_ROUTE], ids=lambda r: str(r[0])
)
async def test_an_undeclared_embeddings_server_is_checked_on_its_embeddings_route(
    refusal: tuple[int, bytes],
) -> None:
    answers = {
        "/health": (200, b"{}"),
        "/v1/models": MODELS,
        "/v1/chat/completions": refusal,
        "/v1/embeddings": VECTOR,
    }
    async with model_api(answers) as port:
        checks = await asyncio.wait_for(
            route_checks(ADDRESS, port, ["bert-small"], timeout=5, kind_variable="A_MODEL_KIND"),
            timeout=20,
        )
    found = details(checks)
    assert [c.name for c in checks][-1] == "embeddings", found
    passed, detail = found["embeddings"]
    assert passed, detail
    assert "vector of 3 numbers" in detail and "A_MODEL_KIND=embeddings" in detail


async def test_a_chat_server_whose_chat_fails_is_not_called_embeddings() -> None:
    answers = {"/health": (200, b"{}"), "/v1/models": MODELS, "/v1/chat/completions": (404, b"")}
    async with model_api(answers) as port:  # no /v1/embeddings either: 404
        checks = await asyncio.wait_for(
            route_checks(ADDRESS, port, ["bert-small"], timeout=5), timeout=20
        )
    passed, detail = details(checks)["chat completion"]
    assert not passed and "HTTP 404" in detail


async def test_a_declared_kind_is_checked_on_its_own_route() -> None:
    answers = {
        "/health": (200, b"{}"),
        "/v1/models": MODELS,
        "/v1/completions": (200, json.dumps({"choices": [{"text": " up."}]}).encode()),
        "/v1/embeddings": (200, json.dumps({"data": [{"embedding": []}]}).encode()),
    }
    async with model_api(answers) as port:
        completion = await route_checks(
            ADDRESS, port, ["bert-small"], 5, kind=kind_of("completions", [])
        )
        embedded = await route_checks(
            ADDRESS, port, ["bert-small"], 5, kind=kind_of("embeddings", [])
        )
    assert details(completion)["completion"] == (True, "answered: up.")
    passed, detail = details(embedded)["embeddings"]
    assert not passed and "no embedding vector" in detail  # an empty vector is no answer


def test_the_topology_declares_a_kind_per_endpoint() -> None:
    text = TWO_ENDPOINTS_TOPOLOGY + "ALPHA_EMBED_MODEL_KIND=embeddings\n"
    chat, embed = parse_topology(text).providers[0].endpoints
    assert (chat.kind, embed.kind) == (None, "embeddings")
    with pytest.raises(ConfigError) as caught:
        parse_topology(TWO_ENDPOINTS_TOPOLOGY + "ALPHA_EMBED_MODEL_KIND=embedding\n")
    assert "chat, embeddings, completions" in str(caught.value)


def _row(host: str, port: int, ids: list[str], kind: str = "chat") -> ModelRow:
    return ModelRow.model_validate(
        {
            "model_ids": ids,
            "host": host,
            "profile": f"{host}-default",
            "site": f"hub-{host}",
            "listener_port": port,
            "local_base_url": f"http://127.0.0.1:{port}/v1",
            "routing_key": f"model-api-{host}",
            "kind": kind,
            "state": "serving",
        }
    )


def test_the_exports_name_the_kind_where_the_tool_has_one() -> None:
    rows: list[ModelRow] = [
        _row("alpha-chat", 9000, ["org/alpha-big"]),
        _row("alpha-embed", 9001, [EMBED_ID], kind="embeddings"),
        _row("beta", 10000, ["org/beta-code"], kind="completions"),
    ]
    litellm = yaml.safe_load(render_export(rows, "litellm"))
    modes = {d["model_name"]: d["model_info"].get("mode") for d in litellm["model_list"]}
    assert modes == {"org/alpha-big": None, EMBED_ID: "embedding", "org/beta-code": "completion"}
    continue_ = yaml.safe_load(render_export(rows, "continue"))
    roles = {m["model"]: m.get("roles") for m in continue_["models"]}
    assert roles == {"org/alpha-big": None, EMBED_ID: ["embed"], "org/beta-code": ["autocomplete"]}


def test_the_env_exports_live_block_is_a_chat_model() -> None:
    rows = [
        _row("alpha-embed", 9001, [EMBED_ID], kind="embeddings"),
        _row("alpha-chat", 9000, ["org/alpha-big"]),
    ]
    lines = render_export(rows, "env").splitlines()
    assert "export OPENAI_BASE_URL=http://127.0.0.1:9000/v1" in lines
    assert "# export OPENAI_BASE_URL=http://127.0.0.1:9001/v1" in lines
    assert any(line.endswith("serving, embeddings") for line in lines), lines
