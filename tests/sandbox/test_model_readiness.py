"""Issue 48's first done-when on a sandbox world whose providers are a vLLM, a llama.cpp
server and an Ollama (``sandbox up --model-engine``), keyed and unkeyed: a vLLM that takes
20 s to load (its container runs, its port refuses) reads ``loading`` until it is ready,
then ``ready``; a llama.cpp server answering 503 ``Loading model`` reads ``loading`` with
those words; a llama.cpp server asleep reads ``sleeping``; 8 requests waiting read
``saturated`` with ``waiting: 8``; Ollama lists its loaded models with their share in VRAM;
each through ``models`` over the MCP client and the CLI. A pool whose members are one
loading and one ready names the ready one and says the other is loading."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from polling import eventually
from product import cli as _cli
from skupper_mcp.engine.core import Engine
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import MODEL_CONTAINER, WorldSpec, env_prefix
from skupper_sandbox.testing import World, reachable_dir, running_world

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.spawns,
    pytest.mark.slow,
    pytest.mark.usefixtures("bounded_mcp_clients"),
]

KEY = "sk-i48-readiness-5e0a"
VLLM, LLAMACPP, OLLAMA = "rhel-ai", "rhtevan-work", "provider-3"
ENGINES = {VLLM: "vllm", LLAMACPP: "llamacpp", OLLAMA: "ollama"}
VERSIONS = {VLLM: "2.2.1", LLAMACPP: "2.2.1", OLLAMA: "2.2.1", "local": "2.2.1"}
POOL_PORT = 9150
CLIENT_TIMEOUT = 120.0
#: A model load the test holds until it has read it loading, then ends (``load_seconds=0``):
#: a 20 s load ran out before a busy machine's reads did. How long it then waits for ready.
HELD = 600.0
LOAD_BOUND = 120.0


@dataclass
class Readiness:
    world: World
    topology: Path
    keyed: bool


@pytest.fixture(scope="module", params=["unkeyed", "keyed"])
def readiness(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Readiness]:
    keyed = request.param == "keyed"
    root = tmp_path_factory.mktemp(f"readiness-{request.param}")
    with contextlib.ExitStack() as stack:
        spec = WorldSpec(
            providers=3,
            kubernetes=False,
            skupper_versions=VERSIONS,
            model_engines=ENGINES,
            podman="emulated",
        )
        lines = [
            'POOLS="chat"',
            f'POOL_CHAT_PROVIDERS="{VLLM} {LLAMACPP}"',
            f"POOL_CHAT_LOCAL_PORT={POOL_PORT}",
            "POOL_CHAT_STRATEGY=any",
            "MODEL_SATURATED_WAITING=4",
        ]
        if keyed:
            served_key = stack.enter_context(reachable_dir("model-key")) / "model.key"
            served_key.write_text(KEY + "\n")
            served_key.chmod(0o644)
            server = [sys.executable, "-m", "skupper_sandbox.model_server"]
            spec = WorldSpec(
                **{
                    **spec.__dict__,
                    "model_server_command": shlex.join(
                        [*server, "--api-key-file", str(served_key)]
                    ),
                    "model_server_volumes": (str(served_key.parent),),
                }
            )
            key_file = root / "model.key"
            key_file.write_text(KEY + "\n")
            os.chmod(key_file, 0o600)
            lines += [f"{env_prefix(p)}MODEL_API_KEY_FILE={key_file}" for p in ENGINES]
        world = stack.enter_context(running_world(root / "world", spec))
        topology = root / "topology.env"
        topology.write_text(world.topology.read_text() + "\n" + "\n".join(lines) + "\n")

        async def build() -> None:
            async with Engine(load_topology(topology)) as engine:
                assert (await engine.setup()).ok
                assert (await engine.up()).ok

        asyncio.run(build())
        yield Readiness(world, topology, keyed)


def cli_rows(r: Readiness) -> dict[str, dict[str, Any]]:
    done = _cli(r.topology, "models", "--json")
    assert KEY not in done.stdout + done.stderr
    assert done.returncode in (0, 3), done.stderr
    return {row["host"]: row for row in json.loads(done.stdout)["rows"]}


async def mcp_rows(r: Readiness) -> dict[str, dict[str, Any]]:
    server = build_server(r.topology)
    async with Client(server, read_timeout_seconds=CLIENT_TIMEOUT) as client:
        called = await client.call_tool("models", {})
    assert KEY not in json.dumps(called.structured_content)
    return {row["host"]: row for row in called.structured_content["rows"]}


async def both(r: Readiness) -> list[dict[str, dict[str, Any]]]:
    """The rows as the CLI and the MCP client each read them."""
    return [cli_rows(r), await mcp_rows(r)]


def restart_model(r: Readiness, host: str) -> None:
    rc, out, err = r.world.ssh(host, f"podman restart {MODEL_CONTAINER}")
    assert rc == 0, out + err


async def test_ready_engines_say_which_they_are_and_ollama_its_loaded_models(
    readiness: Readiness,
) -> None:
    readiness.world.model(OLLAMA, vram_share=0.75, sleeping=False)
    for rows in await both(readiness):
        vllm, llama, ollama = (rows[h]["readiness"] for h in (VLLM, LLAMACPP, OLLAMA))
        assert (vllm["state"], vllm["engine"]) == ("ready", "vllm"), vllm
        assert (vllm["running"], vllm["waiting"], vllm["kv_cache_used"]) == (0, 0, 0.0)
        assert (llama["state"], llama["engine"]) == ("ready", "llama.cpp"), llama
        assert llama["kv_cache_used"] is None  # llama.cpp does not tell it: null, not 0
        assert (ollama["state"], ollama["engine"]) == ("ready", "ollama"), ollama
        assert ollama["running"] is None and ollama["waiting"] is None
        [loaded] = ollama["loaded_models"]
        assert loaded["vram_share"] == 0.75
        assert loaded["name"] == readiness.world.info.host(OLLAMA).default_model_id


async def test_eight_waiting_is_saturated_and_sleep_is_sleeping(readiness: Readiness) -> None:
    world = readiness.world
    world.model(VLLM, waiting=8, running=2)
    world.model(LLAMACPP, sleeping=True)
    world.model(OLLAMA, sleeping=True)
    try:
        for rows in await both(readiness):
            vllm = rows[VLLM]["readiness"]
            assert (vllm["state"], vllm["waiting"], vllm["running"]) == ("saturated", 8, 2)
            assert rows[LLAMACPP]["readiness"]["state"] == "sleeping"
            ollama = rows[OLLAMA]["readiness"]
            assert (ollama["state"], ollama["loaded_models"]) == ("sleeping", [])
            # the pool: its members' readiness, none ready to prefer but the saturated one
            pool = rows["chat"]
            assert [(m["host"], m["readiness"]["state"]) for m in pool["members"]] == [
                (VLLM, "saturated"),
                (LLAMACPP, "sleeping"),
            ]
            assert pool["prefer"] == VLLM
    finally:
        world.model(VLLM, waiting=0, running=0)
        world.model(LLAMACPP, sleeping=False)
        world.model(OLLAMA, sleeping=False)


async def _state(r: Readiness, host: str) -> tuple[str, dict[str, Any]]:
    row = cli_rows(r)[host]
    return row["readiness"]["state"], row


async def test_a_loading_llamacpp_says_its_words_and_the_pool_prefers_the_other(
    readiness: Readiness,
) -> None:
    world = readiness.world
    world.model(LLAMACPP, load_seconds=HELD)
    try:
        restart_model(readiness, LLAMACPP)
        for rows in await both(readiness):
            reading = rows[LLAMACPP]["readiness"]
            assert reading["state"] == "loading", reading
            assert "Loading model" in reading["reason"]
            pool = rows["chat"]
            assert pool["prefer"] == VLLM, pool
            members = {m["host"]: m["readiness"]["state"] for m in pool["members"]}
            assert members == {VLLM: "ready", LLAMACPP: "loading"}
            assert f"{LLAMACPP} loading" in pool["readiness"]["reason"]
        world.model(LLAMACPP, load_seconds=0)  # the load ends

        async def ready() -> bool:
            return (await _state(readiness, LLAMACPP))[0] == "ready"

        await eventually(ready, timeout=LOAD_BOUND, every=1.0, what="llama.cpp to load")
    finally:
        world.model(LLAMACPP, load_seconds=0)


async def test_a_vllm_that_takes_20s_to_load_reads_loading_then_ready(
    readiness: Readiness,
) -> None:
    world = readiness.world
    world.model(VLLM, load_seconds=HELD)
    try:
        restart_model(readiness, VLLM)
        for rows in await both(readiness):
            reading = rows[VLLM]["readiness"]
            assert reading["state"] == "loading", (reading, rows[VLLM]["reason"])
            assert "container runs" in reading["reason"]
        # the load ends 20 s after the start, or now if the reads took longer
        world.model(VLLM, load_seconds=20.0)

        async def ready() -> bool:
            return (await _state(readiness, VLLM))[0] == "ready"

        await eventually(ready, timeout=LOAD_BOUND, every=1.0, what="vLLM to load")
        seen = (await _state(readiness, VLLM))[1]
        assert seen["state"] == "serving"
    finally:
        world.model(VLLM, load_seconds=0)


def _step(result: Any, host: str, name: str) -> Any:
    site = next(s for s in result.sites if s.host == host)
    return next(s for s in site.steps if s.name == name)


async def test_up_waits_until_the_route_serves_or_says_it_does_not_yet(
    readiness: Readiness,
) -> None:
    world = readiness.world
    async with Engine(load_topology(readiness.topology)) as engine:
        assert (await engine.down(LLAMACPP)).ok
        result = await engine.up(LLAMACPP)
        assert result.ok, result.model_dump_json(indent=1)
        step = _step(result, LLAMACPP, "verify route")
        assert step.ok and "carries a request" in step.detail, step
        # a model that loads for longer than up waits: up says the route does not serve yet
        world.model(VLLM, load_seconds=600)
        try:
            restart_model(readiness, VLLM)
            result = await engine.up(VLLM)
            assert result.ok, result.model_dump_json(indent=1)  # the site is up all the same
            step = _step(result, VLLM, "verify route")
            assert not step.ok and "does not serve yet" in step.detail, step
        finally:
            world.model(VLLM, load_seconds=0)
            restart_model(readiness, VLLM)


async def test_test_model_reports_the_readiness_it_reads(readiness: Readiness) -> None:
    readiness.world.model(LLAMACPP, waiting=6, running=4)
    try:
        done = _cli(readiness.topology, "--json", "test-model", LLAMACPP)
        assert KEY not in done.stdout + done.stderr
        reading = json.loads(done.stdout)["readiness"]
        assert (reading["state"], reading["waiting"], reading["running"]) == ("saturated", 6, 4)
        text = _cli(readiness.topology, "test-model", LLAMACPP).stdout
        assert "readiness: saturated (running 4, waiting 6)" in text
    finally:
        readiness.world.model(LLAMACPP, waiting=0, running=0)


def _local_readiness(result: dict[str, Any]) -> dict[str, Any]:
    """status's readiness by provider, on the listeners of this machine's site."""
    return {li["provider"]: li["readiness"] for li in result["listeners"] if li["service"] is None}


async def test_status_with_readiness_reads_what_models_reads(readiness: Readiness) -> None:
    world = readiness.world
    world.model(VLLM, waiting=8, running=2)
    world.model(LLAMACPP, sleeping=True)
    try:
        done = _cli(readiness.topology, "status", "--readiness", "--json")
        assert done.returncode == 0, done.stderr
        assert KEY not in done.stdout + done.stderr
        async with Client(
            build_server(readiness.topology), read_timeout_seconds=CLIENT_TIMEOUT
        ) as client:
            asked = (await client.call_tool("status", {"readiness": True})).structured_content
            plain = (await client.call_tool("status", {})).structured_content
        for result in (json.loads(done.stdout), asked):
            found = _local_readiness(result)
            vllm = found[VLLM]
            assert (vllm["state"], vllm["waiting"], vllm["running"]) == ("saturated", 8, 2)
            assert found[LLAMACPP]["state"] == "sleeping", found[LLAMACPP]
            assert (found[OLLAMA]["state"], found[OLLAMA]["engine"]) == ("ready", "ollama")
            assert f"not ready to call: {VLLM} saturated, {LLAMACPP} sleeping" in result["summary"]
        # the same reading as models', decided by the same function
        models = (await mcp_rows(readiness))[VLLM]["readiness"]
        assert (models["state"], models["waiting"]) == ("saturated", 8)
        # not asked: status reads no engine
        assert all(li["readiness"] is None for li in plain["listeners"])
        text = _cli(readiness.topology, "status", "--readiness").stdout
        assert "Ready" in text and "saturated (running 2, waiting 8" in text
    finally:
        world.model(VLLM, waiting=0, running=0)
        world.model(LLAMACPP, sleeping=False)


async def test_pool_members_serving_different_models_are_a_diagnose_finding(
    readiness: Readiness,
) -> None:
    """The pool's members serve their hosts' default models, which differ: diagnose says
    so with both members and their ids, as the pool's models row does."""
    info = readiness.world.info
    ids = {h: info.host(h).default_model_id for h in (VLLM, LLAMACPP)}
    assert ids[VLLM] != ids[LLAMACPP]
    done = _cli(readiness.topology, "diagnose", "--json")
    assert KEY not in done.stdout + done.stderr
    async with Client(
        build_server(readiness.topology), read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        asked = (await client.call_tool("diagnose", {})).structured_content
    words = f'{VLLM}: "{ids[VLLM]}"; {LLAMACPP}: "{ids[LLAMACPP]}"'
    for result in (json.loads(done.stdout), asked):
        [found] = [f for f in result["findings"] if f["id"] == "pool-mixed-model-ids"]
        assert found["severity"] == "warning" and found["host"] == "local", found
        assert "pool chat" in found["symptom"] and words in found["symptom"], found
        assert [e.split(" serves ")[0] for e in found["evidence"]] == [VLLM, LLAMACPP]
        assert any(s.get("variable") == "POOL_CHAT_PROVIDERS" for s in found["next"]), found
    pool = (await mcp_rows(readiness))["chat"]
    assert words in pool["readiness"]["reason"], pool["readiness"]
