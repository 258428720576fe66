"""A Kubernetes site whose API trickles its answers (issue 31): on main a status kept going
past 100 s and an ``up`` held the operation lock so long that a ``down`` elsewhere gave up
after 120 s. Here the cluster's read ends at its bound, as that site's error, the lock comes
back within it, and another site's call answers in its usual time meanwhile.

The API is ``hostile_kube_server`` over HTTPS; the provider is a real SSH server whose
``curl`` answers a model list; ``KUBE_TIMEOUT`` is cut to one second so the bounds are short.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hostile_kube_server import HostileKubeApi, kubeconfig_for
from polling import eventually
from skupper_mcp.engine import Engine
from skupper_mcp.engine.store.lock import operation_lock
from skupper_mcp.sites import kube as kube_site
from skupper_mcp.topology import parse_topology
from skupper_sandbox.kube.kubeconfig import ensure_credentials
from sshkit import asyncssh_server, free_port
from topology_samples import ssh_topology

API_ADDRESS = "127.207.0.40"
SSH_ADDRESS = "127.207.0.41"
TIMEOUT = 1.0
#: The most the cluster's read may take: its own bound, and slack for a loaded machine.
READ_BOUND = kube_site.READ_TIMEOUTS * TIMEOUT + 5.0


@pytest.fixture
def trickling_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, HostileKubeApi]]:
    """A trickling API server: its kubeconfig's path, and the server (what it was asked)."""
    monkeypatch.setattr(kube_site, "KUBE_TIMEOUT", TIMEOUT)
    port = free_port(API_ADDRESS)
    credentials = ensure_credentials(tmp_path / "api", API_ADDRESS, port)
    server = HostileKubeApi(credentials, API_ADDRESS, port, "trickle")
    try:
        yield kubeconfig_for(credentials, tmp_path / "kubeconfig"), server
    finally:
        server.stop()


def _tools(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    curl = bin_dir / "curl"
    curl.write_text(f"#!/bin/sh\necho '{json.dumps({'data': [{'id': 'org/alpha-alt'}]})}'\n")
    curl.chmod(0o755)
    return bin_dir


async def test_a_trickling_cluster_neither_holds_the_lock_nor_delays_another_site(
    tmp_path: Path,
    trickling_api: tuple[Path, HostileKubeApi],
    write_topology: Callable[[str], Path],
) -> None:
    loop = asyncio.get_running_loop()
    kubeconfig, api = trickling_api

    async def asked_since(before: int) -> bool:
        return api.requests > before

    async with asyncssh_server(tmp_path / "ssh", SSH_ADDRESS, tools=_tools(tmp_path)) as ssh:
        text = ssh_topology(
            [("alpha", SSH_ADDRESS, ssh.port)],
            identities=[str(ssh.keys.client_key)],
            known_hosts=str(ssh.known_hosts),
            connect_timeout=2,
        ) + (
            "LOCAL_SSH_HOST=127.207.0.42\n"  # nothing listens: the local site is unreachable
            "CRC_SITE_NAME=crc-hostile\nCRC_MODEL_PORT=9100\nCRC_CONTEXT=crc-admin\n"
            f"CRC_NAMESPACE=van\nCRC_KUBECONFIG={kubeconfig}\nSTATE_DIR={tmp_path / 'state'}\n"
        )
        topology = parse_topology(text, write_topology(text))
        async with Engine(topology) as engine:
            started = loop.time()
            assert (await engine.resolve("alpha")).profile_source == "active"
            usual = loop.time() - started

            # status reads the cluster; meanwhile alpha answers as fast as it did alone
            asked = api.requests
            status = asyncio.create_task(engine.status())
            await eventually(lambda: asked_since(asked), what="status to ask the cluster")
            started = loop.time()
            assert (await engine.resolve("alpha")).profile == "alpha-alt"
            assert loop.time() - started < usual + 3.0
            result = await asyncio.wait_for(status, READ_BOUND)
            crc = next(s for s in result.sites if s.host == "crc")
            assert "get version: no complete answer within 1s" in crc.state_reason

            # an up on the cluster gives the lock back within the cluster's bound
            asked = api.requests
            up = asyncio.create_task(engine.up("crc"))
            await eventually(lambda: asked_since(asked), what="up to ask the cluster")
            started = loop.time()
            async with operation_lock(topology.state_dir, topology.path, "down", wait=60):
                waited = loop.time() - started
            outcome = await up
    assert waited < READ_BOUND
    [site] = [r for r in outcome.sites if r.host == "crc"]
    assert site.outcome == "failed"
    assert "no complete answer within 1s" in (site.reason or ""), site.reason
