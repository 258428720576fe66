"""A model server as people run them: vLLM --api-key (a bearer key on every /v1 route) and
Ollama or LM Studio (no /health). The route checks and the catalog's probe against the
sandbox's model server, served in this process on loopback."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from model_api_server import serving
from skupper_mcp.engine.model_http import ApiKey, api_key, probe_models
from skupper_mcp.engine.operations.model_checks import route_checks
from skupper_mcp.redaction import redact
from skupper_mcp.topology import ModelEndpoint
from skupper_sandbox.model_server import ModelServer

ADDRESS = "127.204.1.33"
MODEL = "granite-3b"
KEY = "sk-i33-unit-key-5f1c"
VARIABLE = "GPU_MODEL_API_KEY_FILE"


@asynccontextmanager
async def model_api(key: str | None, health: bool) -> AsyncIterator[int]:
    async with serving(ModelServer(MODEL, key, health).handle, ADDRESS) as port:
        yield port


async def checks(port: int, key: ApiKey) -> dict[str, tuple[bool, str]]:
    found = await asyncio.wait_for(
        route_checks(ADDRESS, port, [MODEL], timeout=5, key=key, key_variable=VARIABLE), 30
    )
    return {c.name: (c.passed, c.detail) for c in found}


async def test_a_keyed_server_without_health_passes_with_its_key() -> None:
    async with model_api(KEY, health=False) as port:
        found = await checks(port, ApiKey(KEY))
    assert all(passed for passed, _ in found.values()), found
    assert "/health answered HTTP 404" in found["API health"][1]
    assert all(KEY not in detail for _, detail in found.values())


async def test_without_the_key_the_checks_name_the_key_file_variable() -> None:
    async with model_api(KEY, health=False) as port:
        found = await checks(port, ApiKey())
    assert found["listener port"][0]
    for name in ("API health", "model id"):
        passed, detail = found[name]
        assert not passed and "HTTP 401" in detail and VARIABLE in detail, found
    assert not found["chat completion"][0]


async def test_a_wrong_key_is_said_to_be_refused() -> None:
    async with model_api(KEY, health=True) as port:
        found = await checks(port, ApiKey("not-the-key"))
    assert found["API health"][0]  # vLLM leaves /health open
    passed, detail = found["model id"]
    assert not passed and f"refused the key from {VARIABLE}" in detail


async def test_a_health_that_says_no_still_fails() -> None:
    """A 404 is a server without /health; anything else it answers is its verdict."""

    async def unhealthy(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 503 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    async with serving(unhealthy, ADDRESS) as port:
        found = await checks(port, ApiKey())
    assert found["API health"] == (False, "/health answered HTTP 503")


async def test_the_probe_uses_the_key_and_reports_status_and_latency() -> None:
    async with model_api(KEY, health=False) as port, httpx.AsyncClient() as http:
        url = f"http://{ADDRESS}:{port}/v1/models"
        keyed = await probe_models(http, ApiKey(KEY), url)
        bare = await probe_models(http, ApiKey(), url)
    assert (keyed.status, keyed.ids, keyed.error) == (200, [MODEL], None)
    assert keyed.latency_ms >= 0
    assert bare.refused and bare.ids is None and "401" in (bare.error or "")


async def test_the_probe_of_a_closed_port_is_a_result_not_an_exception() -> None:
    async with httpx.AsyncClient() as http:
        found = await probe_models(http, ApiKey(), f"http://{ADDRESS}:1/v1/models", timeout=2)
    assert found.status is None and found.ids is None and found.error


def _provider(key_file: Path | None) -> ModelEndpoint:
    return ModelEndpoint.model_validate(
        {
            "host": "gpu",
            "prefix": "GPU",
            "model_host": "127.0.0.1",
            "model_port": 8000,
            "local_port": 9000,
            "routing_key": "model-api-gpu",
            "profiles": {"small": MODEL},
            "default_profile": "small",
            "model_container": None,
            "model_api_key_file": key_file,
        }
    )


def test_the_key_is_read_from_its_file_and_redacted_from_then_on(tmp_path: Path) -> None:
    path = tmp_path / "gpu.key"
    path.write_text(KEY + "\n")
    os.chmod(path, 0o600)
    found = api_key(_provider(path))
    assert found.value == KEY and found.problem is None
    assert KEY not in redact(f"the server said {KEY}")[0]


@pytest.mark.parametrize("mode", [0o644, None])
def test_a_key_file_that_cannot_be_used_is_a_problem_naming_the_variable(
    tmp_path: Path, mode: int | None
) -> None:
    path = tmp_path / "gpu.key"
    if mode is not None:
        path.write_text("sk-open-key\n")
        os.chmod(path, mode)
    found = api_key(_provider(path))
    assert found.value is None and found.problem is not None
    assert found.problem.startswith(VARIABLE)
    assert "sk-open-key" not in found.problem


def test_no_key_file_declared_is_no_key() -> None:
    assert api_key(_provider(None)) == ApiKey()
