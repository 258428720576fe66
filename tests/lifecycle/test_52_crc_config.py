"""The Kubernetes site configured but unusable (a kubeconfig or context that is not there)
or unreachable (its API stopped): up skips it with the reason, status never calls it
reachable, and diagnose points at the topology or the cluster, never at SSH or itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skupper_mcp.engine.core import Engine
from skupper_mcp.topology import parse_topology
from skupper_sandbox.testing import World

from .helpers import only_up


def engine_with(world: World, tmp_path: Path, variable: str, value: str) -> Engine:
    text = Path(world.topology).read_text()
    text = re.sub(rf"^{variable}=.*$", f"{variable}={value}", text, flags=re.M)
    path = tmp_path / "topology.env"
    path.write_text(text)
    return Engine(parse_topology(text, path))


async def check_skipped_and_diagnosed(engine: Engine, *words: str) -> None:
    result = await engine.up()
    by_host = {s.host: s for s in result.sites}
    assert by_host["crc"].outcome == "skipped", result.summary
    assert all(w in (by_host["crc"].reason or "") for w in words), by_host["crc"].reason
    assert {h: by_host[h].outcome for h in ("rhel-ai", "rhtevan-work", "local")} == dict.fromkeys(
        ("rhel-ai", "rhtevan-work", "local"), "up"
    )
    status = await engine.status()
    crc = next(s for s in status.sites if s.host == "crc")
    assert crc.reachable is False
    assert all(w in crc.state_reason for w in words)
    found = [f for f in (await engine.diagnose()).findings if f.host == "crc"]
    assert found, "the cluster's problem is a finding"
    for f in found:
        told = f"{f.cause} {f.fix}"
        assert "SSH" not in told, told
        assert all(step.tool != "diagnose" for step in f.next), f.next


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("CRC_KUBECONFIG", "/nonexistent/kubeconfig", ("CRC_KUBECONFIG", "does not exist")),
        ("CRC_CONTEXT", "no-such-context", ("CRC_CONTEXT", "no context 'no-such-context'")),
    ],
)
async def test_a_cluster_configured_with_what_is_not_there_is_skipped_and_named(
    built: World, engine: Engine, tmp_path: Path, variable: str, value: str, words: tuple[str, ...]
) -> None:
    await only_up(engine, ())
    async with engine_with(built, tmp_path, variable, value) as misconfigured:
        await check_skipped_and_diagnosed(misconfigured, *words)
        found = [f for f in (await misconfigured.diagnose()).findings if f.host == "crc"]
        assert [f.id for f in found] == ["site-misconfigured"]
        assert variable in found[0].fix


async def test_a_stopped_cluster_is_skipped_like_an_unreachable_host(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ())
    built.fault("crc", "down")
    try:
        async with Engine(engine.topology) as fresh:
            await check_skipped_and_diagnosed(fresh)
    finally:
        built.fault("crc", "restore")
