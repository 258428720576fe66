"""resolve_profile: pure resolution, and the active profile read over real SSH."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from skupper_mcp.engine import Engine
from skupper_mcp.engine.model_actions import active_profile
from skupper_mcp.engine.operations.resolve import resolve_static
from skupper_mcp.engine.sitemap import model_url
from skupper_mcp.errors import ConfigError
from skupper_mcp.facts.model_endpoint import models_command, parse_model_ids
from skupper_mcp.results import ResolveResult
from skupper_mcp.topology import load_topology, parse_topology
from sshkit import asyncssh_server
from topology_samples import SMALL_TOPOLOGY, ssh_topology


def test_parse_model_ids() -> None:
    answer = json.dumps({"object": "list", "data": [{"id": "org/a"}, {"id": "org/b"}, {"x": 1}]})
    assert parse_model_ids(answer) == ["org/a", "org/b"]
    assert parse_model_ids("<html>") is None
    assert parse_model_ids('{"data": "nope"}') is None
    assert parse_model_ids("[1]") is None


def test_active_profile_matches_the_hosts_own_profiles() -> None:
    alpha = parse_topology(SMALL_TOPOLOGY).providers[0]
    assert active_profile(alpha, ["other", "org/alpha-small"]) == "a-small"
    assert active_profile(alpha, ["org/beta-fast"]) is None


def test_models_command_quotes_the_url() -> None:
    alpha = parse_topology(SMALL_TOPOLOGY).providers[0]
    assert models_command(model_url(alpha.endpoints[0])) == (
        "curl -fsS --max-time 3 http://127.0.0.1:9000/v1/models | head -c 1048577"
    )


def test_profiles_and_consumers_resolve_without_any_host(example_path: Path) -> None:
    t = load_topology(example_path)
    given = resolve_static(t, "g3b-4k")
    assert isinstance(given, ResolveResult)
    assert (given.host, given.site, given.role) == ("rhtevan-work", "hub-rhtevan-work", "provider")
    assert (given.profile, given.profile_source, given.listener_port) == ("g3b-4k", "given", 10000)
    assert given.routing_key == "model-api-rhtevan-work"
    for name in ("crc", "crc-ezhang", "local", "local-ezhang"):
        consumer = resolve_static(t, name)
        assert isinstance(consumer, ResolveResult)
        assert consumer.role == "consumer" and consumer.profile is None
    assert resolve_static(t, "hub-rhel-ai") == t.providers[0].endpoints[0]


def test_unknown_name_lists_the_valid_ones(example_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_static(load_topology(example_path), "rhel")
    assert "rhel-ai, rhtevan-work, local, crc" in str(caught.value)
    assert "g8b-fp8-spec-128k" in str(caught.value)


def _fake_curl(directory: Path, body: str) -> Path:
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    answer = directory / "answer.json"
    answer.write_text(body)
    curl = bin_dir / "curl"
    curl.write_text(f"#!/bin/sh\ncat {answer}\n")
    curl.chmod(0o755)
    return bin_dir


@asynccontextmanager
async def _engine_over_ssh(
    tmp_path: Path, write_topology, tools: Path, *others: tuple[str, str, int], **options: Any
) -> AsyncIterator[Engine]:
    """An engine on alpha, an SSH server at 127.207.0.2 with ``tools`` on its PATH, and on
    ``others`` (name, address, port)."""
    async with asyncssh_server(tmp_path / "ssh", "127.207.0.2", tools=tools) as server:
        text = ssh_topology(
            [("alpha", "127.207.0.2", server.port), *others],
            identities=[str(server.keys.client_key)],
            known_hosts=str(server.known_hosts),
            **options,
        )
        async with Engine(parse_topology(text, write_topology(text))) as engine:
            yield engine


async def _resolve_alpha(tmp_path: Path, write_topology, tools: Path) -> ResolveResult:
    async with _engine_over_ssh(tmp_path, write_topology, tools) as engine:
        return await engine.resolve("alpha")


async def test_host_resolves_to_the_active_profile_over_ssh(tmp_path: Path, write_topology) -> None:
    served = json.dumps({"data": [{"id": "org/alpha-alt"}]})
    tools = _fake_curl(tmp_path, served)
    beta = ("beta", "127.207.0.3", 1)
    async with _engine_over_ssh(tmp_path, write_topology, tools, beta, connect_timeout=2) as engine:
        active = await engine.resolve("alpha")
        unreachable = await engine.resolve("hub-beta")
    assert (active.profile, active.profile_source) == ("alpha-alt", "active")
    assert active.model_id == "org/alpha-alt"
    # beta's SSH port 1 refuses: the default profile, with the reason
    assert (unreachable.profile, unreachable.profile_source) == ("beta-main", "default")
    assert "could not be read" in (unreachable.detail or "")


async def test_host_serving_a_foreign_model_falls_back_to_default(
    tmp_path: Path, write_topology
) -> None:
    served = json.dumps({"data": [{"id": "someone/else"}]})
    tools = _fake_curl(tmp_path, served)
    result = await _resolve_alpha(tmp_path, write_topology, tools)
    assert (result.profile, result.profile_source) == ("alpha-main", "default")
    assert "someone/else" in (result.detail or "")


async def test_a_long_model_list_is_quoted_cut_and_counted(tmp_path: Path, write_topology) -> None:
    # issue 31: a 12 MB list became an 11 MB detail; this one is under the 1 MiB read cap
    ids = [{"id": "x" * 500}] + [{"id": f"org/model-{n}"} for n in range(20000)]
    tools = _fake_curl(tmp_path, json.dumps({"data": ids}))
    result = await _resolve_alpha(tmp_path, write_topology, tools)
    detail = result.detail or ""
    assert result.profile_source == "default"
    assert len(detail) < 1500
    assert "'" + "x" * 80 + "'... (420 more characters)" in detail
    assert "'org/model-6'" in detail and "and 19993 more ids" in detail


async def test_an_endless_model_list_is_cut_at_the_read_cap(tmp_path: Path, write_topology) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    curl = bin_dir / "curl"
    curl.write_text('#!/bin/sh\nprintf \'{"data": [\'\nwhile :; do printf \'{"id": "m"},\'; done\n')
    curl.chmod(0o755)
    result = await asyncio.wait_for(_resolve_alpha(tmp_path, write_topology, bin_dir), 60)
    assert result.profile_source == "default"
    assert "passed 1024 KiB and was cut off" in (result.detail or "")
    assert len(result.detail or "") < 500
