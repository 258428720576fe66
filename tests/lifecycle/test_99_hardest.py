"""The hardest world (issue 44): one host carries every quirk at once, podman's warnings on
stderr, its containers logging to the journal and a fish login shell (rhel-ai, the provider
whose router setup re-creates for its read-only /tmp), beside a 2.2.1 provider and a 2.1.3
local site. setup, status, down, up, diagnose, logs, models and teardown answer what they
answer on the quiet lifecycle world.

Its podman is the lifecycle's (``$SKMCP_LIFECYCLE_PODMAN``, conftest): on real podman the
other hosts' containers are real, and the quirky host keeps the emulated podman where this
machine has no journal (docs/sandbox.md section 4a), as ``sandbox up`` says.

The quiet world's answers are read, not remembered: the same world without the quirks (the
same hosts, releases and podman kind) runs the same calls first, and each tool's answer
on the hardest world is compared with its own there: the sites' outcomes and steps, the
states, diagnose's findings (host, id, severity), the model rows and which logs were found.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field

import pytest

from skupper_mcp.engine.core import Engine
from skupper_mcp.results import LogsResult, ModelRow, ModelsResult, OperationResult
from skupper_mcp.topology import load_topology
from skupper_sandbox import real_hosts
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

QUIRKY = "rhel-ai"
QUIRKS: dict[str, tuple[str, ...]] = {QUIRKY: ("podman-warns", "journald", "shell=fish")}
VERSIONS = {QUIRKY: "2.1.3", "rhtevan-work": "2.2.1", "local": "2.1.3"}
PODMAN_SITES = ("rhel-ai", "rhtevan-work", "local")
ALL = (*PODMAN_SITES, "crc")
WARNING = "cgroups-v1"


@dataclass
class Seen:
    """What each tool returned on one world (the hardest or its quiet twin), in the order
    they ran, and what podman its hosts ran."""

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
    podman: str = ""  # the world's kind
    real: set[str] = field(default_factory=set)  # the hosts whose podman is real
    stderr: str = ""  # what sandbox up said


def _outcomes(result: OperationResult | None) -> dict[str, str]:
    assert result is not None
    return {s.host: s.outcome for s in result.sites}


def _why(result: OperationResult | None) -> list[tuple[str, str, str | None]]:
    assert result is not None
    return [(s.host, s.outcome, s.reason) for s in result.sites]


async def _states(engine: Engine) -> dict[str, str | None]:
    return {s.host: s.state for s in (await engine.status()).sites}


async def _run(world: World) -> Seen:
    seen = Seen(podman=world.info.podman, real=_real_hosts(world), stderr=world.stderr)
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


def _real_hosts(world: World) -> set[str]:
    info = world.info
    return {h.name for h in info.hosts if real_hosts.uses_real_podman(info, h)}


def _spec(quirks: dict[str, tuple[str, ...]]) -> WorldSpec:
    return WorldSpec(
        providers=2,
        skupper_versions=VERSIONS,
        namespace="models",
        host_quirks=quirks,
        podman=os.environ.get("SKMCP_LIFECYCLE_PODMAN") or None,
    )


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Seen]:
    """The quiet twin, then the hardest world, one after the other (one world at a time)."""
    seen: dict[str, Seen] = {}
    for name, quirks in (("quiet", {}), ("hardest", QUIRKS)):
        with running_world(tmp_path_factory.mktemp(name), _spec(quirks)) as world:
            seen[name] = asyncio.run(_run(world))
    return seen


@pytest.fixture(scope="module")
def seen(both: dict[str, Seen]) -> Seen:
    return both["hardest"]


@pytest.fixture(scope="module")
def quiet(both: dict[str, Seen]) -> Seen:
    return both["quiet"]


def _steps(result: OperationResult | None) -> dict[str, tuple[str, bool, list[str]]]:
    assert result is not None
    return {s.host: (s.outcome, s.changed, [step.name for step in s.steps]) for s in result.sites}


def _source(logs: LogsResult) -> str | None:
    """The container, or the router pod without the random suffix its ReplicaSet gave it."""
    if logs.platform == "kubernetes" and logs.source:
        return re.sub(r"-[a-z0-9]{5}$", "", logs.source)
    return logs.source


def _row(row: ModelRow) -> tuple[object, ...]:
    """What a model row says, but where: its local URL holds the world's own address."""
    return (
        row.host,
        row.profile,
        row.site,
        row.listener_port,
        row.routing_key,
        row.state,
        row.model_ids,
        row.api_key_env,
        row.placeholder_ids,
        row.pool,
    )


def test_each_world_runs_on_the_lifecycles_podman(seen: Seen, quiet: Seen) -> None:
    """On real podman every podman host is real, but the quirky one where the machine has no
    journal for its journald quirk: ``sandbox up`` says so."""
    assert seen.podman == quiet.podman
    if quiet.podman != "real":
        assert seen.real == quiet.real == set(), (seen.real, quiet.real)
        return
    assert quiet.real == set(PODMAN_SITES), quiet.real
    if real_hosts.JOURNAL_SOCKET.exists():
        pytest.skip("this machine has a journal: whether the quirky host is real is 4a's")
    assert seen.real == set(PODMAN_SITES) - {QUIRKY}, seen.real
    assert f"podman: emulated on {QUIRKY}: the journald quirk needs a journal" in seen.stderr


def test_setup_sets_up_every_site(seen: Seen, quiet: Seen) -> None:
    assert seen.setup is not None and seen.setup.ok, seen.setup
    assert set(_outcomes(seen.setup).values()) == {"up"}, _why(seen.setup)
    assert _steps(seen.setup) == _steps(quiet.setup), _why(seen.setup)


def test_status_down_and_up_of_the_quirky_provider(seen: Seen, quiet: Seen) -> None:
    assert seen.status_up == dict.fromkeys(ALL, "up"), seen.status_up
    assert _outcomes(seen.down)[QUIRKY] == "down", _why(seen.down)
    assert seen.status_down == {**dict.fromkeys(ALL, "up"), QUIRKY: "stopped"}
    assert _outcomes(seen.up)[QUIRKY] == "up", _why(seen.up)
    assert seen.status_again == dict.fromkeys(ALL, "up")
    for states in ("status_up", "status_down", "status_again", "status_after"):
        assert getattr(seen, states) == getattr(quiet, states), states
    assert _steps(seen.down) == _steps(quiet.down), _why(seen.down)
    assert _steps(seen.up) == _steps(quiet.up), _why(seen.up)


def test_diagnose_finds_what_the_quiet_world_finds(seen: Seen, quiet: Seen) -> None:
    """Nothing wrong: the releases differ (an info, by design here), on both worlds alike."""
    assert [f for f in seen.findings if f[2] != "info"] == [], seen.findings
    assert {f[1] for f in seen.findings} <= {"version-mismatch"}, seen.findings
    assert sorted(seen.findings) == sorted(quiet.findings), (seen.findings, quiet.findings)


def test_logs_of_the_quirky_host_come_from_the_journal_without_podmans_warning(
    seen: Seen, quiet: Seen
) -> None:
    """podman logs printed libpod's warning and nothing of the log there (item 1)."""
    logs = seen.logs[QUIRKY]
    assert logs.found and logs.lines and logs.via == "journal", logs
    assert not any(WARNING in line for line in logs.lines), logs.lines
    assert WARNING in (logs.detail or ""), logs.detail  # said, apart from the log
    calm = quiet.logs[QUIRKY]
    assert calm.found and calm.lines and calm.via != "journal", calm
    assert (_source(logs), logs.component) == (_source(calm), calm.component)


@pytest.mark.parametrize("host", ["rhtevan-work", "local", "crc"])
def test_logs_of_the_quiet_hosts(seen: Seen, quiet: Seen, host: str) -> None:
    logs, calm = seen.logs[host], quiet.logs[host]
    assert logs.found and logs.lines and logs.via != "journal", logs
    assert (logs.found, logs.via, _source(logs), logs.component) == (
        calm.found,
        calm.via,
        _source(calm),
        calm.component,
    )


def test_models_answer_through_the_local_listeners(seen: Seen, quiet: Seen) -> None:
    assert seen.models is not None and quiet.models is not None
    rows = {row.host: row for row in seen.models.rows}
    assert {"rhel-ai", "rhtevan-work"} <= set(rows), seen.models.summary
    for host in ("rhel-ai", "rhtevan-work"):
        assert rows[host].model_ids and rows[host].state == "serving", rows[host]
    assert [_row(r) for r in seen.models.rows] == [_row(r) for r in quiet.models.rows]


def test_teardown_leaves_nothing_set_up(seen: Seen, quiet: Seen) -> None:
    assert seen.teardown is not None and seen.teardown.ok, seen.teardown
    assert set(seen.status_after.values()) == {"not-set-up"}, seen.status_after
    assert _steps(seen.teardown) == _steps(quiet.teardown), _why(seen.teardown)
