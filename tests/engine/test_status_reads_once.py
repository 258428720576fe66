"""status --readiness, models and test_model read each key file once, and status and models
ask each listener once: the answer of
``GET /v1/models`` serves both what the endpoint serves (``served.read_served``) and its
readiness (``readiness.readiness``), as ``models`` already did. Over the recorded ``up``
world (``site_replay``), rhel-ai's listener a vLLM-like model server with a key, counting
what it is asked."""

from __future__ import annotations

import asyncio
import collections
import os
from pathlib import Path
from typing import Any

import pytest

from model_api_server import serving
from site_replay import HOSTS, ReplayedHost, ReplayEngine, probes_answered
from skupper_mcp.engine import model_http
from skupper_mcp.topology import load_topology
from skupper_sandbox import engines
from skupper_sandbox.model_server import ModelServer, Request

STATES = Path(__file__).resolve().parent / "site_states"
ADDRESS = "127.204.1.48"
KEY = "sk-h48-reads-once-1d7e"
MODEL = "granite-3.3-8b-instruct-fp8"


class Counted(ModelServer):
    """The sandbox's model server, counting each path it is asked."""

    def __init__(self) -> None:
        super().__init__(MODEL, KEY, engine=engines.VLLM)
        self.asked: collections.Counter[str] = collections.Counter()

    async def _route(self, request: Request, writer: asyncio.StreamWriter) -> None:
        self.asked[request.path] += 1
        await super()._route(request, writer)


def topology_text(state_dir: Path, port: int, key: Path) -> str:
    text = (STATES / "topology.env").read_text()
    text = text.replace("LOCAL_LISTENER_HOST=127.231.238.1", f"LOCAL_LISTENER_HOST={ADDRESS}")
    text = text.replace("RHEL_AI_LOCAL_PORT=9000", f"RHEL_AI_LOCAL_PORT={port}")
    return text + f"STATE_DIR={state_dir}\nRHEL_AI_MODEL_API_KEY_FILE={key}\n"


async def observe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, operation: str
) -> tuple[Any, Counted, collections.Counter[str]]:
    """The operation's result over the recorded ``up`` world, what rhel-ai's listener was
    asked, and how many times each key file was read."""
    key = tmp_path / "model.key"
    key.write_text(KEY + "\n")
    os.chmod(key, 0o600)
    reads: collections.Counter[str] = collections.Counter()
    real_read = model_http.read_model_api_key

    def counted_read(path: Path, variable: str) -> str:
        reads[variable] += 1
        return real_read(path, variable)

    monkeypatch.setattr(model_http, "read_model_api_key", counted_read)
    model = Counted()
    async with serving(model.handle, ADDRESS) as port:
        (tmp_path / "topology.env").write_text(topology_text(tmp_path, port, key))
        topology = load_topology(tmp_path / "topology.env")
        hosts = {h: ReplayedHost(h, "up") for h in HOSTS}
        with probes_answered(topology, hosts):
            async with ReplayEngine(topology, hosts, "") as engine:
                if operation == "status":
                    result: Any = await asyncio.wait_for(engine.status(readiness=True), 60)
                elif operation == "test_model":
                    result = await asyncio.wait_for(engine.test_model("rhel-ai"), 60)
                else:
                    result = await asyncio.wait_for(engine.models(), 60)
    return result, model, reads


async def test_status_readiness_asks_each_listener_once_and_reads_its_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, model, reads = await observe(tmp_path, monkeypatch, "status")
    [row] = [li for li in status.listeners if li.provider == "rhel-ai" and li.service is None]
    assert row.readiness is not None and row.readiness.state == "ready", row.readiness
    assert row.model_ids == [MODEL]  # what it serves came from the same answer
    assert model.asked["/v1/models"] == 1, model.asked
    assert reads == {"RHEL_AI_MODEL_API_KEY_FILE": 1}, reads


async def test_models_asks_each_listener_once_and_reads_its_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models, model, reads = await observe(tmp_path, monkeypatch, "models")
    [row] = [r for r in models.rows if r.host == "rhel-ai"]
    assert row.readiness is not None and row.readiness.state == "ready", row.readiness
    assert model.asked["/v1/models"] == 1, model.asked
    assert reads == {"RHEL_AI_MODEL_API_KEY_FILE": 1}, reads


async def test_test_model_reads_the_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skupper_mcp.engine.operations import model_checks

    async def no_remote(*_: object) -> list[object]:
        return []  # the host's own checks (over SSH) are not what this test is about

    monkeypatch.setattr(model_checks, "_remote", no_remote)
    result, _, reads = await observe(tmp_path, monkeypatch, "test_model")
    assert result.readiness is not None and result.readiness.state == "ready", result
    assert reads == {"RHEL_AI_MODEL_API_KEY_FILE": 1}, reads
