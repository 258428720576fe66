"""Issue 46 item 5 on a sandbox world: a site whose certificate ends in 10 days. diagnose
(through the MCP client) warns with the date and the fix the real source allows on its
release (``skupper system reload`` issues the site's certificates anew); status (through the
CLI) shows the date; the site's CA ending is a CA's fix (reload keeps a CA); after the
reload the warning is gone and the certificate ends five years on."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator

import pytest
from mcp import Client

from product import cli, set_up
from skupper_mcp.results import DiagnoseResult, Finding, StatusResult
from skupper_mcp.server import build_server
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.spawns,
    pytest.mark.usefixtures("bounded_mcp_clients"),
]

HOST = "rhel-ai"
RELOAD = "SKUPPER_PLATFORM=podman skupper system reload --namespace default"
#: the hub's server certificate: its RouterAccess's, named after it
SERVER = "hub-rhel-ai-public"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The local site and rhel-ai, set up by the product."""
    spec = WorldSpec(providers=1, kubernetes=False)
    with running_world(tmp_path_factory.mktemp("certificates"), spec) as w:
        set_up(w.topology)
        yield w


async def _findings(world: World) -> list[Finding]:
    async with Client(build_server(world.topology), read_timeout_seconds=60) as client:
        result = await client.call_tool("diagnose", {"target": "all"})
    assert not result.is_error, result.content
    found = DiagnoseResult.model_validate(result.structured_content)
    return [f for f in found.findings if f.id.startswith("certificate-")]


def _in_days(days: float) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(days=days)).strftime("%Y-%m-%d")


async def test_a_certificate_ending_in_10_days_is_warned_with_its_date_and_fix(
    world: World,
) -> None:
    assert await _findings(world) == []  # five years left: nothing to say
    world.fault(HOST, "cert-ends", "10", SERVER)
    ends = _in_days(10)

    [finding] = await _findings(world)
    assert (finding.id, finding.host, finding.severity) == ("certificate-expiring", HOST, "warning")
    assert ends in finding.symptom and SERVER in finding.symptom
    assert any(f"runtime/certs/{SERVER}/tls.crt" in e and ends in e for e in finding.evidence)
    assert RELOAD in finding.fix
    assert [(n.kind, n.command or n.tool) for n in finding.next] == [
        ("host", RELOAD),
        ("tool", "setup"),
    ]

    shown = cli(world.topology, "status")
    assert f"{ends} ({SERVER})" in shown.stdout.replace("\n", " ") or (ends in shown.stdout), (
        shown.stdout
    )
    as_json = StatusResult.model_validate(
        json.loads(cli(world.topology, "status", "--json").stdout)
    )
    row = next(s for s in as_json.sites if s.host == HOST)
    assert row.certificate is not None
    assert (row.certificate.name, row.certificate.kind) == (SERVER, "issued")
    assert row.certificate.ends.startswith(ends) and 9 < row.certificate.days_left <= 10
    local = next(s for s in as_json.sites if s.host == "local")
    assert local.certificate is not None and local.certificate.days_left > 4 * 365

    # the fix named: reload issues the site's certificates anew, five years on
    # (as a person logged in runs it: a login session has its runtime directory)
    status, out, err = world.ssh(HOST, "export XDG_RUNTIME_DIR=/run/user/$(id -u); " + RELOAD)
    assert status == 0, out + err
    left = await _findings(world)
    assert left == [], [(f.symptom, f.evidence) for f in left]


async def test_an_ended_ca_is_an_error_whose_fix_is_a_new_ca(world: World) -> None:
    world.fault(HOST, "cert-ends", "-1", "skupper-site-ca")
    try:
        [finding] = await _findings(world)
        assert (finding.id, finding.severity) == ("certificate-expired", "error")
        assert "skupper-site-ca" in finding.symptom and _in_days(-1) in finding.symptom
        assert "input/issuers/skupper-site-ca" in finding.fix
        assert "keeps the CA" in finding.fix
    finally:
        world.fault(HOST, "cert-ends", str(5 * 365), "skupper-site-ca")
