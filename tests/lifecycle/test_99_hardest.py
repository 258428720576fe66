"""The hardest world (issue 44): one host carries every quirk at once, podman's warnings on
stderr, its containers logging to the journal and a fish login shell (rhel-ai, the provider
whose router setup re-creates for its read-only /tmp), beside a 2.2.1 provider and a 2.1.3
local site. setup, status, down, up, diagnose, logs, models and teardown answer what they
answer on the quiet lifecycle world.

Its podman is the emulation's: the journald and podman-warns quirks are the emulated
podman's (docs/sandbox.md section 4a: no journald for real podman here); on real podman this
world waits for the quirks to reach real hosts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from skupper_mcp.engine.core import Engine
from skupper_mcp.models import LogsResult, ModelsResult, OperationResult
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

QUIRKY = "rhel-ai"
QUIRKS = {QUIRKY: ("podman-warns", "journald", "shell=fish")}
VERSIONS = {QUIRKY: "2.1.3", "rhtevan-work": "2.2.1", "local": "2.1.3"}
PODMAN_SITES = ("rhel-ai", "rhtevan-work", "local")
ALL = (*PODMAN_SITES, "crc")
WARNING = "cgroups-v1"


@dataclass
class Seen:
    """What each tool returned on the hardest world, in the order they ran."""

    setup: OperationResult | None = None
    status_up: dict[str, str | None] = field(default_factory=dict)
    down: OperationResult | None = None
    status_down: dict[str, str | None] = field(default_factory=dict)
    up: OperationResult | None = None
    status_again: dict[str, str | None] = field(default_factory=dict)
    findings: list[tuple[str, str, str]] = field(default_factory=list)
    logs: dict[str, LogsResult] = field(default_factory=dict)
    models: ModelsResult | None = None
    teardown: OperationResult | None = None
    status_after: dict[str, str | None] = field(default_factory=dict)


def _outcomes(result: OperationResult | None) -> dict[str, str]:
    assert result is not None
    return {s.host: s.outcome for s in result.sites}


def _why(result: OperationResult | None) -> list[tuple[str, str, str | None]]:
    assert result is not None
    return [(s.host, s.outcome, s.reason) for s in result.sites]


async def _states(engine: Engine) -> dict[str, str | None]:
    return {s.host: s.state for s in (await engine.status()).sites}


async def _run(world: World) -> Seen:
    seen = Seen()
    async with Engine(load_topology(world.topology)) as engine:
        setup = await engine.setup()
        assert isinstance(setup, OperationResult)  # not a plan's precheck
        seen.setup = setup
        seen.status_up = await _states(engine)
        seen.down = await engine.down(QUIRKY)
        seen.status_down = await _states(engine)
        seen.up = await engine.up(QUIRKY)
        seen.status_again = await _states(engine)
        diagnose = await engine.diagnose()
        seen.findings = [(f.host, f.id, f.severity) for f in diagnose.findings]
        for host in ALL:
            seen.logs[host] = await engine.logs(host)
        seen.models = await engine.models()
        seen.teardown = await engine.teardown()
        seen.status_after = await _states(engine)
    return seen


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seen]:
    spec = WorldSpec(
        providers=2,
        skupper_versions=VERSIONS,
        namespace="models",
        host_quirks=QUIRKS,
        podman="emulated",
    )
    with running_world(tmp_path_factory.mktemp("hardest"), spec) as world:
        yield asyncio.run(_run(world))


def test_setup_sets_up_every_site(seen: Seen) -> None:
    assert seen.setup is not None and seen.setup.ok, seen.setup
    assert set(_outcomes(seen.setup).values()) == {"up"}, _why(seen.setup)


def test_status_down_and_up_of_the_quirky_provider(seen: Seen) -> None:
    assert seen.status_up == dict.fromkeys(ALL, "up"), seen.status_up
    assert _outcomes(seen.down)[QUIRKY] == "down", _why(seen.down)
    assert seen.status_down == {**dict.fromkeys(ALL, "up"), QUIRKY: "stopped"}
    assert _outcomes(seen.up)[QUIRKY] == "up", _why(seen.up)
    assert seen.status_again == dict.fromkeys(ALL, "up")


def test_diagnose_finds_nothing_wrong(seen: Seen) -> None:
    """Only what the quiet world says too: the releases differ (an info, by design here)."""
    assert [f for f in seen.findings if f[2] != "info"] == [], seen.findings
    assert {f[1] for f in seen.findings} <= {"version-mismatch"}, seen.findings


def test_logs_of_the_quirky_host_come_from_the_journal_without_podmans_warning(
    seen: Seen,
) -> None:
    """podman logs printed libpod's warning and nothing of the log there (item 1)."""
    logs = seen.logs[QUIRKY]
    assert logs.found and logs.lines and logs.via == "journal", logs
    assert not any(WARNING in line for line in logs.lines), logs.lines
    assert WARNING in (logs.detail or ""), logs.detail  # said, apart from the log


@pytest.mark.parametrize("host", ["rhtevan-work", "local", "crc"])
def test_logs_of_the_quiet_hosts(seen: Seen, host: str) -> None:
    logs = seen.logs[host]
    assert logs.found and logs.lines and logs.via != "journal", logs


def test_models_answer_through_the_local_listeners(seen: Seen) -> None:
    assert seen.models is not None
    rows = {row.host: row for row in seen.models.rows}
    assert {"rhel-ai", "rhtevan-work"} <= set(rows), seen.models.summary
    for host in ("rhel-ai", "rhtevan-work"):
        assert rows[host].model_ids, rows[host]


def test_teardown_leaves_nothing_set_up(seen: Seen) -> None:
    assert seen.teardown is not None and seen.teardown.ok, seen.teardown
    assert set(seen.status_after.values()) == {"not-set-up"}, seen.status_after
