"""Every parse of a host's JSON is bounded in depth as in size (issue 43, item 2): 2 KB of
``[[[[...]]]]`` is each parser's typed refusal, never a ``RecursionError``."""

from __future__ import annotations

import asyncio
import json

import pytest

from skupper_mcp import host_json
from skupper_mcp.engine.model_http import ApiKey, probe_models
from skupper_mcp.errors import Unparsed
from skupper_mcp.facts.model_endpoint import parse_model_ids
from skupper_mcp.facts.resource_yaml import load_resource
from skupper_mcp.facts.site_state import parse_podman_ps, parse_router_inspect

DEEP = "[" * 1000 + "]" * 1000


def test_the_depth_is_counted_outside_strings_only() -> None:
    assert host_json.depth('{"a": "[[[[\\"[[", "b": [[1]]}') == 3
    assert host_json.depth("") == 0
    assert host_json.loads('{"a": ["[[[["]}') == {"a": ["[[[["]}
    assert host_json.loads(b'[1, [2, {"x": null}]]') == [1, [2, {"x": None}]]


def test_a_deep_document_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(host_json.TooDeep, match="nests 1000 levels deep"):
        host_json.loads(DEEP)
    within = "[" * host_json.MAX_DEPTH + "]" * host_json.MAX_DEPTH
    assert host_json.depth(within) == host_json.MAX_DEPTH
    host_json.loads(within)
    # a megabyte of brackets is measured in C, not a Python loop per byte
    with pytest.raises(ValueError):
        host_json.loads("[" * (1024 * 1024))


@pytest.mark.parametrize(
    "text",
    ['"' + '\\"' * 500_000, '"a' * 500_000, "[" * 1000 + '"' + "]" * 1000, '"\\' * 300_000],
    ids=["escaped-quotes", "unterminated-strings", "brackets-then-a-quote", "backslashes"],
)
def test_the_depth_scan_is_linear_on_any_text(text: str) -> None:
    import time

    started = time.process_time()
    host_json.depth(text)
    assert time.process_time() - started < 1.0  # 80 KB of escaped quotes took 46 s
    if text.startswith("["):  # brackets before a string JSON never ends: still counted
        assert host_json.depth(text) == 1000


def test_a_parsed_documents_depth_is_walked_without_recursion() -> None:
    nested: list[object] = []
    for _ in range(100_000):
        nested = [nested]
    assert host_json.deeper_than(nested, 100)
    assert not host_json.deeper_than({"a": [1, {"b": [2]}]}, 4)
    assert host_json.deeper_than({"a": [1, {"b": [2]}]}, 3)


@pytest.mark.parametrize("parse", [parse_podman_ps, parse_router_inspect])
def test_podmans_json_too_deep_is_unparsed(parse: object) -> None:
    with pytest.raises(Unparsed, match="nests 1000 levels deep"):
        parse(DEEP)  # type: ignore[operator]


def test_a_model_list_too_deep_is_no_model_list() -> None:
    assert parse_model_ids(DEEP) is None
    assert parse_model_ids(json.dumps({"data": [{"id": "a"}]})) == ["a"]


@pytest.mark.parametrize("text", [DEEP, "- " * 999 + "x", "a: " + "{b: " * 500 + "c" + "}" * 500])
def test_a_resource_file_too_deep_is_refused(text: str) -> None:
    parsed = load_resource(text)
    assert parsed.refused is not None and "nests deeper" in parsed.refused


def test_a_model_servers_deep_answer_is_its_probes_error() -> None:
    class Answer:
        status_code = 200

        async def aiter_raw(self) -> object:
            yield DEEP.encode()

        aiter_bytes = aiter_raw
        headers: dict[str, str] = {}

    class Http:
        def stream(self, *_: object, **__: object) -> object:
            class Opened:
                async def __aenter__(self) -> Answer:
                    return Answer()

                async def __aexit__(self, *_: object) -> None:
                    return None

            return Opened()

    probe = asyncio.run(probe_models(Http(), ApiKey()))
    assert probe.ids is None and probe.error == "/v1/models did not answer an OpenAI model list"


# -- a compressed answer is bounded as it is unpacked (issue 43, item 7) ---------------------

BOMB_ADDRESS = "127.207.0.55"


async def test_a_gzip_bomb_is_cut_at_the_bound_without_being_unpacked() -> None:
    import tracemalloc

    import httpx

    from hostile_model_server import gzip_bomb, serving
    from sshkit import free_port

    bomb = gzip_bomb()  # 1 MiB that unpacks to 1 GiB of zeros
    port = free_port(BOMB_ADDRESS)
    with serving(BOMB_ADDRESS, port, bomb, (("Content-Encoding", "gzip"),)) as server:
        async with httpx.AsyncClient(trust_env=False) as http:
            tracemalloc.start()
            try:
                probe = await probe_models(
                    http, ApiKey(), f"http://{BOMB_ADDRESS}:{port}/v1/models"
                )
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    # what was held: the bound and a chunk or two, never the 64 MiB a chunk unpacks to
    assert peak < 8 * 1024 * 1024, peak
    assert probe.ids is None
    assert probe.error is not None and "once unpacked: cut off there" in probe.error
    assert server.asked[0]["Accept-Encoding"] == "identity"  # type: ignore[attr-defined]


async def test_a_small_gzip_answer_is_still_read() -> None:
    import gzip

    import httpx

    from hostile_model_server import model_list, serving
    from sshkit import free_port

    port = free_port(BOMB_ADDRESS)
    body = gzip.compress(model_list("org/a", "org/b"))
    with serving(BOMB_ADDRESS, port, body, (("Content-Encoding", "gzip"),)):
        async with httpx.AsyncClient(trust_env=False) as http:
            probe = await probe_models(http, ApiKey(), f"http://{BOMB_ADDRESS}:{port}/v1/models")
    assert probe.ids == ["org/a", "org/b"], probe.error
