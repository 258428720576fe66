"""A noisy world (issue 32): the hosts carry what real ones do. rhel-ai's podman prints
libpod's warnings on stderr, rhtevan-work's login shell is fish, the local site logs to
the journal (``podman logs`` prints nothing) under zsh and runs Skupper 2.2.1 beside a 2.1.x
provider. setup, status, down, up, diagnose, logs and teardown say what they say on the quiet
lifecycle world (``conftest``): the quirks change nothing a user sees.

Then, before teardown, the same tools without the ``kubernetes`` extra (its import made to
fail, as in an install without it): the cluster's site is skipped by each, saying how to add
the extra for pip, pipx and uv, and the podman sites go on.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from product import PODMAN_KINDS, podman_kind
from skupper_mcp.engine.core import Engine
from skupper_mcp.results import CheckResult, OperationResult
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

from .conftest import NS, ROOT_HOSTS

QUIRKS = {
    "rhel-ai": ("podman-warns",),
    "rhtevan-work": ("shell=fish",),
    "local": ("journald", "shell=zsh"),
}
VERSIONS = {"rhel-ai": "2.2.1", "rhtevan-work": "2.1.3", "local": "2.2.1"}
PODMAN_SITES = ("rhel-ai", "rhtevan-work", "local")
ALL = (*PODMAN_SITES, "crc")
INSTALL_WORDS = (
    "pip install 'skupper-mcp[kubernetes]'",
    "pipx inject skupper-mcp kubernetes",
    "uv tool install --with kubernetes skupper-mcp",
)


@dataclass
class Seen:
    """What each tool returned on the noisy world, in the order they ran."""

    setup: OperationResult | None = None
    status_up: dict[str, str | None] = field(default_factory=dict)
    summary_up: str = ""
    down: OperationResult | None = None
    status_down: dict[str, str | None] = field(default_factory=dict)
    up: OperationResult | None = None
    status_again: dict[str, str | None] = field(default_factory=dict)
    findings: list[tuple[str, str, str]] = field(default_factory=list)
    logs: dict[str, tuple[bool, int, str]] = field(default_factory=dict)
    without_extra: dict[str, object] = field(default_factory=dict)
    teardown: OperationResult | None = None
    status_after: dict[str, str | None] = field(default_factory=dict)


def _outcomes(result: OperationResult | None) -> dict[str, str]:
    assert result is not None
    return {s.host: s.outcome for s in result.sites}


async def _states(engine: Engine) -> tuple[dict[str, str | None], str]:
    status = await engine.status()
    return {s.host: s.state for s in status.sites}, status.summary


def _engine(world: World) -> Engine:
    return Engine(load_topology(world.topology))


async def _without_kubernetes(world: World, seen: Seen) -> None:
    """Each tool on a fresh engine (nothing of the client cached), with ``import kubernetes``
    failing as it does in an install without the extra."""
    saved = {
        name: module
        for name, module in sys.modules.items()
        if name == "kubernetes" or name.startswith("kubernetes.")
    }
    for name in saved:
        del sys.modules[name]
    sys.modules["kubernetes"] = None  # type: ignore[assignment]
    try:
        async with _engine(world) as engine:
            seen.without_extra["check"] = await engine.check()
        async with _engine(world) as engine:
            seen.without_extra["setup"] = await engine.setup()
        async with _engine(world) as engine:
            seen.without_extra["status"] = await engine.status()
        async with _engine(world) as engine:
            seen.without_extra["down"] = await engine.down("all")
        async with _engine(world) as engine:
            seen.without_extra["up"] = await engine.up("all")
        async with _engine(world) as engine:
            seen.without_extra["diagnose"] = await engine.diagnose()
        async with _engine(world) as engine:
            try:
                seen.without_extra["logs"] = await engine.logs("crc")
            except Exception as exc:  # the tool's own error, as MCP would say it
                seen.without_extra["logs"] = exc
    finally:
        del sys.modules["kubernetes"]
        sys.modules.update(saved)


async def _run(world: World) -> Seen:
    seen = Seen()
    async with _engine(world) as engine:
        setup = await engine.setup()
        assert isinstance(setup, OperationResult)
        seen.setup = setup
        seen.status_up, seen.summary_up = await _states(engine)
        seen.down = await engine.down("rhel-ai")
        seen.status_down, _ = await _states(engine)
        seen.up = await engine.up("rhel-ai")
        seen.status_again, _ = await _states(engine)
        diagnose = await engine.diagnose()
        seen.findings = [(f.host, f.id, f.severity) for f in diagnose.findings]
        for host in ALL:
            logs = await engine.logs(host)
            seen.logs[host] = (logs.found, len(logs.lines), logs.via or "")
    await _without_kubernetes(world, seen)
    async with _engine(world) as engine:
        await engine.up("all")  # what the extra-less down stopped
        seen.teardown = await engine.teardown()
        seen.status_after, _ = await _states(engine)
    return seen


@pytest.fixture(scope="module", params=PODMAN_KINDS)
def seen(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Seen]:
    """The noisy world on each podman kind: the emulation, and this machine's real podman
    (skipped where it cannot run a container), whose journald host keeps the emulation
    (docs/sandbox.md 4a)."""
    kind = podman_kind(request)
    spec = WorldSpec(
        providers=2,
        skupper_versions=VERSIONS,
        namespace=NS,
        root_hosts=ROOT_HOSTS,
        host_quirks=QUIRKS,
        podman=kind,
    )
    with running_world(tmp_path_factory.mktemp(f"noisy-{kind}"), spec) as world:
        yield asyncio.run(_run(world))


def test_setup_sets_up_every_site_as_on_a_quiet_world(seen: Seen) -> None:
    assert seen.setup is not None and seen.setup.ok, seen.setup
    assert set(_outcomes(seen.setup).values()) == {"up"}, _outcomes(seen.setup)


def test_status_reads_every_site_up_through_the_noise(seen: Seen) -> None:
    """podman's warnings on stderr no longer make rhel-ai's containers read absent."""
    assert seen.status_up == dict.fromkeys(ALL, "up"), seen.summary_up
    assert seen.summary_up.startswith("running: rhel-ai, rhtevan-work, local, crc;")


def test_down_and_up_of_the_warning_provider(seen: Seen) -> None:
    assert _outcomes(seen.down)["rhel-ai"] == "down", seen.down
    assert seen.status_down == {**dict.fromkeys(ALL, "up"), "rhel-ai": "stopped"}
    assert _outcomes(seen.up)["rhel-ai"] == "up", seen.up
    assert seen.status_again == dict.fromkeys(ALL, "up")


def test_diagnose_finds_nothing_wrong(seen: Seen) -> None:
    """Only what the quiet world says too: the releases differ (an info, by design here)."""
    assert [f for f in seen.findings if f[2] != "info"] == [], seen.findings
    assert {f[1] for f in seen.findings} <= {"version-mismatch"}, seen.findings


@pytest.mark.parametrize("host", ["rhel-ai", "rhtevan-work", "crc"])
def test_logs_return_the_routers_lines(seen: Seen, host: str) -> None:
    found, count, _ = seen.logs[host]
    assert found and count > 0, seen.logs[host]


def test_logs_on_the_journald_host_return_its_lines(seen: Seen) -> None:
    found, count, via = seen.logs["local"]
    assert found and count > 0, seen.logs["local"]
    assert via == "journal", seen.logs["local"]  # podman logs printed nothing there


def test_without_the_extra_the_precheck_warns_and_setup_sets_up_the_others(seen: Seen) -> None:
    check = seen.without_extra["check"]
    assert isinstance(check, CheckResult)
    crc = [c for c in check.checks if c.site == "crc"]
    assert [(c.name, c.status) for c in crc] == [("kubernetes", "warn")], crc
    assert all(words in (crc[0].hint or "") for words in INSTALL_WORDS), crc[0].hint
    setup = seen.without_extra["setup"]
    assert isinstance(setup, OperationResult)
    outcomes = _outcomes(setup)
    assert {h: outcomes[h] for h in PODMAN_SITES} == dict.fromkeys(PODMAN_SITES, "up"), setup
    assert outcomes["crc"] == "skipped"


@pytest.mark.parametrize("tool", ["setup", "down", "up"])
def test_without_the_extra_each_operation_skips_the_cluster_saying_how_to_add_it(
    seen: Seen, tool: str
) -> None:
    result = seen.without_extra[tool]
    assert isinstance(result, OperationResult)
    crc = next(s for s in result.sites if s.host == "crc")
    assert crc.outcome == "skipped" and crc.reason is not None
    assert all(words in crc.reason for words in INSTALL_WORDS), crc.reason
    others = {s.host: s.outcome for s in result.sites if s.host != "crc"}
    expected = "down" if tool == "down" else "up"
    assert others == dict.fromkeys(PODMAN_SITES, expected), result


def test_without_the_extra_status_and_diagnose_say_so_for_the_cluster_alone(seen: Seen) -> None:
    status = seen.without_extra["status"]
    by_host = {s.host: s for s in status.sites}  # type: ignore[attr-defined]
    assert {h: by_host[h].state for h in PODMAN_SITES} == dict.fromkeys(PODMAN_SITES, "up")
    assert "pipx inject skupper-mcp kubernetes" in by_host["crc"].model_dump_json()
    diagnose = seen.without_extra["diagnose"]
    found = [(f.host, f.id, f.severity) for f in diagnose.findings]  # type: ignore[attr-defined]
    assert [f for f in found if f[2] != "info"] == [("crc", "extra-missing", "warning")], found
    logs = seen.without_extra["logs"]
    assert "pipx inject skupper-mcp kubernetes" in str(
        logs if isinstance(logs, Exception) else logs.model_dump_json()  # type: ignore[attr-defined]
    )


def test_teardown_leaves_nothing_set_up(seen: Seen) -> None:
    assert seen.teardown is not None and seen.teardown.ok, seen.teardown
    assert set(seen.status_after.values()) == {"not-set-up"}, seen.status_after
