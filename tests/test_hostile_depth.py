"""One host's nested JSON stops only that host (issue 43, item 2): a Kubernetes API, a
provider's ``podman`` and ``curl``, and a model server behind a listener each answer 2 KB of
``[[[[...]]]]`` (a thousand levels, a ``RecursionError`` for ``json.loads``). On main,
``status``, ``models`` and ``down`` failed for the whole network (``Error executing tool``;
the CLI a traceback); here each is that host's typed result and the others' come back. The
other model server lists 40,000 ids (item 7): its row keeps 100 and counts the rest.

The API is ``hostile_kube_server`` (mode ``deep``) over HTTPS; the providers are SSH servers
whose commands are a test's: alpha's ``podman`` and ``curl`` print the nested text, beta's
``curl`` a model list; the model servers are ``hostile_model_server.serving``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client

from hostile_kube_server import hostile_kubeconfig
from hostile_model_server import DEEP, model_list, serving
from skupper_mcp.cli import main
from skupper_mcp.engine.operations import catalog
from skupper_mcp.results import ModelsResult, OperationResult, StatusResult
from skupper_mcp.server import build_server
from skupper_mcp.sites import kube as kube_site
from skupper_mcp.topology import parse_topology
from sshkit import asyncssh_server
from topology_samples import ssh_topology

API_ADDRESS = "127.207.0.50"
ALPHA = "127.207.0.51"
BETA = "127.207.0.52"
LISTENER = "127.207.0.53"
CLIENT_TIMEOUT = 60.0
#: beta's model server lists its model and 40,000 more ids (920 KB, within the read bound):
#: a row keeps the first 100 and counts the rest.
BETA_IDS = ["org/beta-main", *(f"org/m-{i:05d}" for i in range(40_000))]

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")


@pytest.fixture
def deep_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An API server that answers every call with the nested text; its kubeconfig. The
    providers run no Skupper, so the catalog would not ask the model server of a provider it
    reads as stopped: here it asks every one, as it does where the routes are up."""
    monkeypatch.setattr(kube_site, "KUBE_TIMEOUT", 2.0)
    monkeypatch.setattr(catalog, "route_is_up", lambda *_: True)
    with hostile_kubeconfig(tmp_path, API_ADDRESS, "deep") as kubeconfig:
        yield kubeconfig


def _tools(directory: Path, **scripts: str) -> Path:
    directory.mkdir(parents=True)
    for name, output in scripts.items():
        tool = directory / name
        tool.write_text(f"#!/bin/sh\nprintf '%s\\n' '{output}'\n")
        tool.chmod(0o755)
    return directory


@asynccontextmanager
async def hostile_network(tmp_path: Path, kubeconfig: Path) -> AsyncIterator[Path]:
    """The SSH providers and the model servers behind the listeners; the topology's path."""
    deep = DEEP.decode()
    async with AsyncExitStack() as stack:
        alpha = await stack.enter_async_context(
            asyncssh_server(
                tmp_path / "alpha",
                ALPHA,
                tools=_tools(tmp_path / "alpha-bin", podman=deep, curl=deep),
            )
        )
        beta = await stack.enter_async_context(
            asyncssh_server(
                tmp_path / "beta",
                BETA,
                tools=_tools(tmp_path / "beta-bin", curl=model_list("org/beta-main").decode()),
            )
        )
        text = ssh_topology(
            [("alpha", ALPHA, alpha.port), ("beta", BETA, beta.port)],
            identities=[str(alpha.keys.client_key), str(beta.keys.client_key)],
            known_hosts=str(tmp_path / "known_hosts"),
            connect_timeout=3,
            listener_host=LISTENER,
        ) + (
            "LOCAL_SSH_HOST=127.207.0.54\n"  # nothing listens: the local site is unreachable
            "CRC_SITE_NAME=crc-deep\nCRC_MODEL_PORT=9100\nCRC_CONTEXT=crc-admin\n"
            f"CRC_NAMESPACE=van\nCRC_KUBECONFIG={kubeconfig}\nSTATE_DIR={tmp_path / 'state'}\n"
        )
        (tmp_path / "known_hosts").write_text(
            alpha.layout.known_hosts.read_text() + beta.layout.known_hosts.read_text()  # type: ignore[union-attr]
        )
        path = tmp_path / "topology.env"
        path.write_text(text)
        topology = parse_topology(text, path)
        ports = {p.name: p.local_port for p in topology.providers}
        stack.enter_context(serving(LISTENER, ports["alpha"], DEEP))
        stack.enter_context(serving(LISTENER, ports["beta"], model_list(*BETA_IDS)))
        yield path


def _by_host(sites: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(s["host"]): s for s in sites}


async def test_nested_answers_are_each_hosts_own_result_through_the_mcp_client(
    tmp_path: Path, deep_api: Path
) -> None:
    async with (
        hostile_network(tmp_path, deep_api) as topology,
        Client(build_server(topology), read_timeout_seconds=CLIENT_TIMEOUT) as client,
    ):
        status = await client.call_tool("status", {})
        models = await client.call_tool("models", {})
        down = await client.call_tool("down", {"target": "crc"})
    assert not status.is_error, status.content
    sites = _by_host(StatusResult.model_validate(status.structured_content).model_dump()["sites"])
    assert set(sites) == {"local", "alpha", "beta", "crc"}
    assert "nests 1000 levels deep" in str(sites["crc"]["state_reason"]), sites["crc"]
    assert not models.is_error, models.content
    catalog = ModelsResult.model_validate(models.structured_content).model_dump()
    rows = {str(r["host"]): r for r in catalog["rows"]}
    assert rows["beta"]["model_ids"] == BETA_IDS[:100], catalog
    assert rows["beta"]["model_ids_cut"] == 39_901
    assert rows["alpha"]["model_ids"] == [], rows["alpha"]
    assert not down.is_error, down.content
    [crc] = [
        s for s in OperationResult.model_validate(down.structured_content).sites if s.host == "crc"
    ]
    assert crc.outcome == "failed" and "nests 1000 levels deep" in (crc.reason or "")


async def test_nested_answers_are_each_hosts_own_result_on_the_cli(
    tmp_path: Path, deep_api: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with hostile_network(tmp_path, deep_api) as topology:
        capsys.readouterr()
        code = await asyncio.to_thread(main, ["--topology", str(topology), "--json", "status"])
        status = capsys.readouterr()
        await asyncio.to_thread(main, ["--topology", str(topology), "--json", "models"])
        models = capsys.readouterr()
    assert "Traceback" not in status.err + models.err
    assert code in (0, 3), status.err
    sites = _by_host(json.loads(status.out)["sites"])
    assert set(sites) == {"local", "alpha", "beta", "crc"}
    assert "nests 1000 levels deep" in str(sites["crc"]["state_reason"])
    rows = {r["host"]: r for r in json.loads(models.out)["rows"]}
    assert rows["beta"]["model_ids"] == BETA_IDS[:100]
    assert rows["beta"]["model_ids_cut"] == 39_901
    assert len(models.out) < 64 * 1024  # 40,000 ids were 1 MB of text on every call
