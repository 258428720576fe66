"""diagnose through the MCP client, each finding caused the way it happens on a real host.

Every test starts from the whole network up, causes one Known Issue by what causes it on a
real host (a command run there over SSH, a firewall, a changed topology.env), finds that
id on that site, carries out the finding's ``next`` and shows a second diagnose is clean;
it leaves the network as it found it for the modules after it.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from mcp import Client

from by_hand import reload_by_hand
from polling import eventually
from skupper_mcp.engine.core import Engine
from skupper_mcp.facts.userns import userns_args
from skupper_mcp.results import DiagnoseResult, Finding, OperationResult
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.testing import World

from .conftest import NS, host_file, new_engine, on_host

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

CLIENT_TIMEOUT = 120.0


async def diagnose(topology: Path, target: str = "all") -> DiagnoseResult:
    async with Client(
        build_server(topology), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        result = await client.call_tool("diagnose", {"target": target})
    assert not result.is_error, result.content
    return DiagnoseResult.model_validate(result.structured_content)


async def call(topology: Path, tool: str, arguments: dict[str, object]) -> OperationResult:
    """Carry out a finding's ``next`` tool call through the client, as the agent would."""
    async with Client(
        build_server(topology), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    found = OperationResult.model_validate(result.structured_content)
    assert found.ok, failures(found)
    return found


def failures(result: OperationResult) -> str:
    """The failed sites' reasons and failed steps, for an assertion's message."""
    lines = [result.summary]
    for site in result.sites:
        if site.outcome == "failed":
            lines.append(f"{site.host}: {site.reason}")
            lines += [f"  {s.name}: {s.detail}" for s in site.steps if not s.ok]
    return "\n".join(lines)


def problems(result: DiagnoseResult) -> dict[str, set[str]]:
    """host -> ids of its error and warning findings."""
    found: dict[str, set[str]] = {}
    for f in result.findings:
        if f.severity != "info":
            found.setdefault(f.host, set()).add(f.id)
    return found


def the(result: DiagnoseResult, id: str, host: str) -> Finding:
    [finding] = [f for f in result.findings if f.id == id and f.host == host]
    return finding


async def until(
    topology: Path,
    holds: Callable[[DiagnoseResult], bool],
    *,
    what: str,
    timeout: float = 60,
) -> DiagnoseResult:
    """The first diagnose for which ``holds`` is true; the last one in the error if none."""
    seen: list[DiagnoseResult] = []

    async def check() -> DiagnoseResult | None:
        seen[:] = [await diagnose(topology)]
        return seen[0] if holds(seen[0]) else None

    try:
        return await eventually(check, timeout=timeout, every=2.0, what=what)
    except pytest.fail.Exception:
        last = seen[0].model_dump_json(indent=1) if seen else "no diagnose"
        pytest.fail(f"{what}: not within {timeout:g}s; last diagnose: {last}", pytrace=False)


async def clean(topology: Path) -> DiagnoseResult:
    """A diagnose with no error or warning (the network may need a moment to settle)."""
    return await until(topology, lambda d: d.ok, what="a clean diagnose", timeout=90)


def changed_topology(world: World, name: str, **values: str) -> Path:
    text = world.topology.read_text()
    for variable, value in values.items():
        text, count = re.subn(rf"^{variable}=.*$", f"{variable}={value}", text, flags=re.M)
        assert count == 1, variable
    path = world.dir / f"topology-{name}.env"
    path.write_text(text)
    return path


def variable(world: World, name: str) -> str:
    match = re.search(rf"^{name}=(.*)$", world.topology.read_text(), flags=re.M)
    assert match, name
    return match.group(1).strip().strip('"')


@pytest.fixture
async def everything_up(built: World) -> AsyncIterator[World]:
    """The whole network up before the test, and set up and up again after it."""
    async with new_engine(built) as engine:
        result = await engine.up("all")
        assert result.ok, result.summary
    yield built
    async with new_engine(built) as engine:
        await put_back(engine)


async def put_back(engine: Engine) -> None:
    result = await engine.setup()
    assert isinstance(result, OperationResult) and result.ok, (
        failures(result) if isinstance(result, OperationResult) else result
    )
    result = await engine.up("all")
    assert result.ok, result.summary


def ssh(world: World, host: str, command: str) -> str:
    code, out, err = world.ssh(host, on_host(command))
    assert code == 0, f"{command}: {out}{err}"
    return out


def reload(world: World, host: str) -> None:
    """``skupper system reload`` by hand on the host."""
    code, out, err = reload_by_hand(lambda command: world.ssh(host, on_host(command)), NS)
    assert code == 0, f"skupper system reload on {host}: {out}{err}"


async def test_a_healthy_network_has_nothing_wrong(everything_up: World) -> None:
    found = await clean(everything_up.topology)
    assert {s.host for s in found.sites if s.read} == {"rhel-ai", "rhtevan-work", "local", "crc"}
    # 2.2.1 beside 2.1.x works; it is said, not flagged
    [mixed] = [f for f in found.findings if f.id == "version-mismatch"]
    assert mixed.severity == "info" and "2.1" in mixed.symptom and "2.2" in mixed.symptom


async def test_a_stopped_model_is_model_container_stopped_until_hosted_model_ctl_starts_it(
    everything_up: World,
) -> None:
    world = everything_up
    await clean(world.topology)
    ssh(world, "rhtevan-work", "podman stop hosted-model")
    found = await diagnose(world.topology)
    assert problems(found) == {"rhtevan-work": {"model-container-stopped"}}
    finding = the(found, "model-container-stopped", "rhtevan-work")
    start = finding.next[0]
    assert (start.kind, start.action, start.profile) == ("hosted-model-ctl", "start", "g3b-16k")
    assert any("hosted-model: exited" in e for e in finding.evidence)
    # what hosted-model-ctl start does on the host
    ssh(world, "rhtevan-work", "podman start hosted-model")
    await clean(world.topology)


async def test_a_reload_by_hand_brings_back_skuppers_own_units_until_setup(
    everything_up: World,
) -> None:
    world = everything_up
    await clean(world.topology)
    reload(world, "local")
    found = await diagnose(world.topology)
    # the reload also wrote the keys again as Skupper does, readable beyond their owner
    assert problems(found) == {
        "local": {"no-auto-restart", "autostart-at-boot", "private-key-readable"}
    }
    keys = the(found, "private-key-readable", "local")
    assert any(e.startswith("mode 640 runtime/certs/") for e in keys.evidence), keys.evidence
    restart = the(found, "no-auto-restart", "local")
    assert any(f"skupper-{NS}.service: Skupper's own unit" in e for e in restart.evidence)
    boot = the(found, "autostart-at-boot", "local")
    assert f"default.target.wants/skupper-{NS}.service" in boot.evidence
    [step] = boot.next
    assert (step.kind, step.tool) == ("tool", "setup")
    await call(world.topology, "setup", {})
    await clean(world.topology)


async def test_a_router_started_outside_its_unit_is_no_auto_restart(everything_up: World) -> None:
    world = everything_up
    await clean(world.topology)
    ssh(world, "rhel-ai", f"$SKMCP_CTL stop skupper-{NS}.service")
    ssh(world, "rhel-ai", f"podman start {NS}-skupper-router")
    found = await diagnose(world.topology)
    assert problems(found) == {"rhel-ai": {"no-auto-restart"}}
    finding = the(found, "no-auto-restart", "rhel-ai")
    assert any("a crash would not be restarted" in e for e in finding.evidence)
    [step] = finding.next
    await call(world.topology, step.tool or "", dict(step.arguments))
    await clean(world.topology)


async def test_a_router_stopped_with_its_controller_leaves_a_stale_status_until_up(
    everything_up: World,
) -> None:
    world = everything_up
    await clean(world.topology)
    ssh(
        world,
        "rhtevan-work",
        f"$SKMCP_CTL stop skupper-controller.service && $SKMCP_CTL stop skupper-{NS}.service",
    )
    found = await diagnose(world.topology)
    assert problems(found) == {"rhtevan-work": {"stale-status"}}
    [step] = the(found, "stale-status", "rhtevan-work").next
    assert (step.tool, step.arguments) == ("up", {"target": "rhtevan-work"})
    await call(world.topology, "up", dict(step.arguments))
    await clean(world.topology)


async def test_a_changed_topology_is_drift_in_diagnose_and_status_until_setup(
    everything_up: World,
) -> None:
    world = everything_up
    sans = variable(world, "RHTEVAN_WORK_SANS")
    changed = changed_topology(world, "more-sans", RHTEVAN_WORK_SANS=f'"{sans} models.example"')
    found = await diagnose(changed)
    assert problems(found) == {"rhtevan-work": {"drift"}}
    drift = the(found, "drift", "rhtevan-work")
    assert any("subjectAlternativeNames" in e and "models.example" in e for e in drift.evidence)
    async with Client(
        build_server(changed), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        status = (await client.call_tool("status", {})).structured_content
    assert status is not None
    rows = {row["host"]: row for row in status["sites"]}
    assert rows["rhtevan-work"]["drift"] and rows["local"]["drift"] == []
    assert "setup needed on rhtevan-work" in status["summary"]
    await call(changed, "setup", {})
    await clean(changed)
    # and back: the original topology is now the one that differs
    assert problems(await diagnose(world.topology)) == {"rhtevan-work": {"drift"}}


async def test_a_firewalled_inter_router_port_is_link_port_unreachable_until_it_moves(
    everything_up: World,
) -> None:
    world = everything_up
    port = int(variable(world, "RHTEVAN_WORK_INTER_ROUTER_PORT"))
    await clean(world.topology)
    world.fault("rhtevan-work", "firewall", str(port))
    try:
        # a hub router that has just restarted is given time to listen before its port is
        # blamed on a firewall
        found = await until(world.topology, lambda d: bool(problems(d)), what="a finding")
        assert problems(found) == {"rhtevan-work": {"link-port-unreachable"}}
        finding = the(found, "link-port-unreachable", "rhtevan-work")
        assert any(f":{port} from this machine: failed" in e for e in finding.evidence)
        move, setup = finding.next
        assert (move.kind, move.variable) == ("topology", "RHTEVAN_WORK_INTER_ROUTER_PORT")
        assert (setup.kind, setup.tool) == ("tool", "setup")
        # the port the security group lets through: one the sandbox leaves free
        moved = changed_topology(world, "moved-port", RHTEVAN_WORK_INTER_ROUTER_PORT=str(port + 20))
        await call(moved, "setup", {})
        await clean(moved)
    finally:
        world.fault("rhtevan-work", "restore")


async def test_an_unreachable_provider_is_one_finding_and_the_others_are_diagnosed(
    everything_up: World,
) -> None:
    world = everything_up
    await clean(world.topology)
    world.fault("rhel-ai", "blackhole")
    try:
        started = time.monotonic()
        found = await diagnose(world.topology)
        seconds = time.monotonic() - started
    finally:
        world.fault("rhel-ai", "restore")
    assert problems(found) == {"rhel-ai": {"site-unreadable"}}
    assert {s.host: s.read for s in found.sites} == {
        "rhel-ai": False,
        "rhtevan-work": True,
        "local": True,
        "crc": True,
    }
    # the subject: bounded like status, by the connect timeout (5 s of listening), not the
    # read timeout (30 s): a bound between them, clear of what load adds to the first
    assert seconds < 20, seconds
    assert "unreachable" in the(found, "site-unreadable", "rhel-ai").evidence[0]


async def test_a_router_access_applied_by_hand_without_names_fails_link_verification(
    everything_up: World,
) -> None:
    """A link's "certificate verify failed": a RouterAccess without
    subjectAlternativeNames, applied and reloaded by hand, re-issues the hub's server
    certificate without the name its peers dial."""
    world = everything_up
    hub = next(p for p in load_topology(world.topology).providers if p.name == "rhtevan-work")
    await clean(world.topology)
    access = (
        "apiVersion: skupper.io/v2alpha1\nkind: RouterAccess\n"
        f"metadata:\n  name: {hub.site_name}-public\n"
        f"spec:\n  roles:\n  - name: inter-router\n    port: {hub.inter_router_port}\n"
        f"  - name: edge\n    port: {hub.edge_port}\n"
        f"  tlsCredentials: {hub.site_name}-public\n"
    )
    code, out, err = world.ssh(
        "rhtevan-work", on_host(f"skupper system apply -n {NS} -f -"), input=access
    )
    assert code == 0, out + err
    reload(world, "rhtevan-work")

    def refused_by_management(d: DiagnoseResult) -> bool:
        # the router's own answer, read once the reload settled (a management read that
        # timed out on a loaded machine says so and leaves the log as the evidence)
        if "link-cert-verify-failed" not in problems(d).get("rhtevan-work", set()):
            return False
        evidence = the(d, "link-cert-verify-failed", "rhtevan-work").evidence
        return bool(evidence) and "router management: connector" in evidence[0]

    found = await until(world.topology, refused_by_management, what="the link to be refused")
    # a reload by hand also brings back Skupper's own units, and the names are drift
    assert problems(found) == {
        "rhtevan-work": {
            "link-cert-verify-failed",
            "drift",
            "no-auto-restart",
            "autostart-at-boot",
            "private-key-readable",
        }
    }
    finding = the(found, "link-cert-verify-failed", "rhtevan-work")
    # first the dialling router's own connector status (skmanage in its container: it keeps
    # the failure while the router retries, where the log has it once), then the log
    assert "router management: connector" in finding.evidence[0], finding.evidence
    assert "certificate verify failed" in finding.evidence[0], finding.evidence
    assert any("certificate verify failed" in e and "router log" in e for e in finding.evidence)
    assert [s.tool for s in finding.next] == ["setup"]
    await call(world.topology, "setup", {})
    await clean(world.topology)


def recreate_router_by_hand(world: World, host: str, *, env: bool, user: bool) -> None:
    """What older hand-written scripts and guides did: stop the unit, then remove the router
    container and create it again with ``podman create`` from its ``podman inspect``, here
    without ``SSL_PROFILE_BASE_PATH`` (``env=False``) or without ``--user``/``--userns``
    (``user=False``, so it runs as the image's uid)."""
    name = f"{NS}-skupper-router"
    ssh(world, host, f"$SKMCP_CTL stop skupper-{NS}.service")
    [info] = json.loads(ssh(world, host, f"podman inspect {name}"))
    config = info["Config"]
    args = ["podman", "create", "--name", name, "--network", "host", "--restart", "always"]
    if user and config.get("User"):
        # keep-id as real podman's inspect shows it too (a private namespace's mapping)
        args += ["--user", config["User"], *(userns_args(info) or ["--userns", "keep-id"])]
    for key, value in sorted((config.get("Labels") or {}).items()):
        args += ["--label", f"{key}={value}"]
    for item in config.get("Env") or []:
        variable = item.split("=", 1)[0]
        if variable in ("PATH", "HOSTNAME", "HOME", "container", "TERM"):
            continue
        if variable == "SSL_PROFILE_BASE_PATH" and not env:
            continue
        args += ["-e", item]
    for mount in info.get("Mounts") or []:
        if mount["Destination"] != "/tmp":  # the container's own /tmp goes with it
            args += ["-v", f"{mount['Source']}:{mount['Destination']}:z"]
    args.append(info.get("ImageName") or config["Image"])
    create = " ".join(shlex.quote(a) for a in args)
    ssh(
        world, host, f"podman rm -f {name} >/dev/null && {create} >/dev/null && podman start {name}"
    )


async def test_a_router_made_by_hand_without_ssl_profile_base_path(everything_up: World) -> None:
    world = everything_up
    await clean(world.topology)
    recreate_router_by_hand(world, "local", env=False, user=True)
    found = await until(
        world.topology,
        lambda d: any(
            f.id == "ssl-profile-base-path" and "Failed to configure TLS" in " ".join(f.evidence)
            for f in d.findings
        ),
        what="the router to refuse its profiles",
    )
    assert set(problems(found)) == {"local"}
    assert problems(found)["local"] <= {"ssl-profile-base-path", "no-auto-restart"}
    finding = the(found, "ssl-profile-base-path", "local")
    assert any("${SSL_PROFILE_BASE_PATH}" in e for e in finding.evidence), finding.evidence
    assert [s.tool for s in finding.next] == ["setup"]
    await call(world.topology, "setup", {})
    await clean(world.topology)


async def test_a_router_made_by_hand_as_another_uid_cannot_read_fresh_certificates(
    everything_up: World,
) -> None:
    """Certificate files the router cannot read: a reload writes the certificates 0640, and a
    router container created by hand without --user runs as the image's uid."""
    world = everything_up
    await clean(world.topology)
    reload(world, "local")
    recreate_router_by_hand(world, "local", env=True, user=False)
    found = await until(
        world.topology,
        lambda d: (
            "certs-not-readable" in problems(d).get("local", set())
            and "stale-status" not in problems(d).get("local", set())
        ),
        what="the router to refuse its certificates",
    )
    assert set(problems(found)) == {"local"}
    assert problems(found)["local"] <= {
        "certs-not-readable",
        "private-key-readable",
        "no-auto-restart",
        "autostart-at-boot",
    }
    finding = the(found, "certs-not-readable", "local")
    assert any("Failed to configure TLS" in e for e in finding.evidence), finding.evidence
    assert any(e.startswith("mode 640 runtime/certs/") for e in finding.evidence)
    await call(world.topology, "setup", {})
    await clean(world.topology)


async def test_a_skupper_cli_below_2_1_is_version_mismatch_until_it_is_upgraded(
    everything_up: World,
) -> None:
    """The host's skupper CLI replaced by a 2.0 one (an older package installed over it)."""
    world = everything_up
    await clean(world.topology)
    path = host_file(world, "rhtevan-work")
    original = path.read_text()
    info = json.loads(original)
    info["skupper_version"] = "2.0.1"
    path.write_text(json.dumps(info))
    try:
        found = await diagnose(world.topology)
    finally:
        # the finding's next step: the CLI upgraded back to what the host ran
        path.write_text(original)
    assert problems(found) == {"rhtevan-work": {"version-mismatch"}}
    finding = the(found, "version-mismatch", "rhtevan-work")
    assert finding.severity == "error" and "2.0.1" in finding.symptom
    upgrade, setup = finding.next
    assert (upgrade.kind, setup.tool) == ("host", "setup")
    assert "2.1.0 or later" in (upgrade.command or "")
    await clean(world.topology)
