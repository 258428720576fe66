"""Setup-needed is decided once (engine/desired/needs.py): over the recorded site states and
variations of them, "setup plans nothing to build" iff "the list (status's drift) is empty"
iff "up does not refuse for setup". Then the same through the real operations on fake hosts:
a hand-edited router unit file gives the same answer from status, up and setup's plan."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_connector import Call, FakeConnector, FakeHosts, Reply
from site_replay import cert_reply, recorded, recorded_topology
from skupper_mcp.connectors.pool import ConnectorPool
from skupper_mcp.engine.desired.needs import setup_needed
from skupper_mcp.engine.desired.podman import hub_resources, local_resources
from skupper_mcp.engine.operations import setup, status, updown
from skupper_mcp.engine.operations.setup import RUN_STATE_STEPS, podman_setup_actions
from skupper_mcp.engine.operations.updown import setup_problem
from skupper_mcp.engine.readings import PodmanReading
from skupper_mcp.engine.scope import site_ref
from skupper_mcp.engine.sitemap import SiteMap
from skupper_mcp.engine.store.backups import Backups
from skupper_mcp.errors import SiteStateError
from skupper_mcp.facts import names
from skupper_mcp.facts.site_state import SiteState, UnitState, parse_site_state
from skupper_mcp.facts.unparsed import ParseError
from skupper_mcp.results import CheckResult
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.sites.resources import ClientCert
from skupper_mcp.topology import Topology

PHASES = ("fresh", "up", "down", "rhel-ai-down", "rhel-ai-up")
HOSTS = ("rhel-ai", "rhtevan-work", "local")
ROUTER_UNIT = names.router_unit("default")
READ = "@@section version"  # only the site-state script prints this
CERT = "@@file cert"  # only the client-certificate script prints this


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Topology:
    return recorded_topology(tmp_path_factory.mktemp("state"))


def _edit_unit(s: SiteState) -> None:
    if ROUTER_UNIT in s.unit_files:
        s.unit_files[ROUTER_UNIT] += "# edited by hand\n"


def _drop_unit(s: SiteState) -> None:
    s.unit_files.pop(names.controller_unit(), None)


def _boot(s: SiteState) -> None:
    s.enabled_at_boot.add(ROUTER_UNIT)


def _no_watch(s: SiteState) -> None:
    s.watch_script = None


def _drop_resource(s: SiteState) -> None:
    for key in list(s.input_resources):
        if key[0] in ("Connector", "Listener"):
            del s.input_resources[key]
            return


def _change_port(s: SiteState) -> None:
    for key, res in s.input_resources.items():
        if key[0] == "RouterAccess":
            changed = copy.deepcopy(res)
            changed["spec"]["roles"][0]["port"] = 1
            s.input_resources[key] = changed
            return


def _private_certs(s: SiteState) -> None:
    s.certs_private = True


def _no_router(s: SiteState) -> None:
    s.containers.pop(names.router_container("default"), None)


def _router_by_hand(s: SiteState) -> None:
    if s.router is not None:
        s.router.has_ssl_base_path = False


def _no_tmpfs(s: SiteState) -> None:
    if s.router is not None:
        s.router.has_tmpfs = False


def _router_unread(s: SiteState) -> None:
    """The router container listed, its ``podman inspect`` not parsed: the fact unknown."""
    if s.router is not None:
        s.router = None
        s.parse_errors.append(ParseError("router", "podman inspect", "<html>", "not JSON"))


def _socket_off(s: SiteState) -> None:
    s.units[names.PODMAN_SOCKET_UNIT] = UnitState(names.PODMAN_SOCKET_UNIT, "loaded")


def _no_controller(s: SiteState) -> None:
    s.containers.pop(names.controller_container(s.user), None)


def _stopped(s: SiteState) -> None:
    """Stopped (what down does): run-state, never a setup need."""
    for c in s.containers.values():
        if c.name.endswith("skupper-router") or c.name.endswith("skupper-controller"):
            c.state = "exited"
    for unit in (ROUTER_UNIT, names.controller_unit()):
        s.units[unit] = UnitState(unit, "loaded")


VARIATIONS: dict[str, Callable[[SiteState], None]] = {
    f.__name__.strip("_"): f
    for f in (
        _edit_unit,
        _drop_unit,
        _boot,
        _no_watch,
        _drop_resource,
        _change_port,
        _private_certs,
        _no_router,
        _router_by_hand,
        _no_tmpfs,
        _router_unread,
        _socket_off,
        _no_controller,
        _stopped,
    )
}


def certs(topology: Topology, phase: str) -> dict[str, ClientCert | None]:
    """The hubs' client certificates as the recordings' Secrets hold them (none when fresh)."""
    found: dict[str, ClientCert | None] = {}
    for p in topology.providers:
        site = p.site_name
        made = [f"recorded {name} of {site}".encode() for name in ("ca.crt", "tls.crt", "tls.key")]
        found[p.name] = None if phase == "fresh" else ClientCert(*made)
    return found


def build_steps(topology: Topology, reading: PodmanReading, phase: str) -> list[str]:
    """The steps setup's plan takes at the site that build it (not the ones that start it)."""
    host, found = reading.ref.host, reading.state
    p = topology.provider(host)
    if p is not None:
        desired, tmpfs = hub_resources(p, topology.pools), p.tmpfs_workaround
    else:
        desired, _ = local_resources(topology, found, certs(topology, phase))
        tmpfs = False
    todo = podman_setup_actions(reading.site, found, desired, tmpfs=tmpfs, restore_ca=None)
    return [a.name for a in todo if a.name not in RUN_STATE_STEPS]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    phase=st.sampled_from(PHASES),
    host=st.sampled_from(HOSTS),
    changes=st.lists(st.sampled_from(sorted(VARIATIONS)), max_size=3, unique=True),
)
def test_setup_plans_nothing_iff_nothing_is_needed_iff_up_does_not_refuse(
    topology: Topology, phase: str, host: str, changes: list[str]
) -> None:
    found = parse_site_state(recorded(phase, host))
    for change in changes:
        VARIATIONS[change](found)
    ref = site_ref(topology, host)
    reading = PodmanReading(ref, PodmanSite(FakeConnector(host), "default"), found)
    sites = SiteMap(topology, ConnectorPool(topology.ssh.options()), None)
    needed = setup_needed(topology, reading) or []
    build = build_steps(topology, reading, phase)
    refused = setup_problem(sites, reading)
    assert (not needed) == (not build) == (refused is None), (needed, build, refused)
    if changes == ["stopped"] and phase != "fresh":
        assert not needed, needed  # stopping a site never makes it need setup


UNREAD = "router container default-skupper-router: the output of `podman inspect` could not be read"


def test_an_unreadable_router_fact_is_a_need_up_refuses_and_setup_never_recreates(
    topology: Topology,
) -> None:
    """Issue 42: rhel-ai has the tmpfs workaround and its router runs, but its ``podman
    inspect`` did not parse. setup-needed names it, up refuses with that line, and setup's
    plan re-creates nothing (it stopped the running router to re-create it, unsaid)."""
    found = parse_site_state(recorded("up", "rhel-ai"))
    _router_unread(found)
    reading = PodmanReading(
        site_ref(topology, "rhel-ai"), PodmanSite(FakeConnector("rhel-ai"), "default"), found
    )
    needed = setup_needed(topology, reading) or []
    assert len(needed) == 1 and needed[0].startswith(UNREAD), needed
    refused = setup_problem(SiteMap(topology, ConnectorPool(topology.ssh.options()), None), reading)
    assert refused is not None and needed[0] in refused
    todo = podman_setup_actions(reading.site, found, [], tmpfs=True, restore_ca=None)
    assert [a.name for a in todo] == ["refuse to change the site"]


def garbled_inspect(text: str) -> str:
    """A recorded site state whose router ``podman inspect`` printed what is not JSON."""
    head, rest = text.split("@@section router\n", 1)
    return (
        head
        + "@@section router\n|<html>bad gateway</html>\n@@rc 0\n"
        + rest.split("@@rc 0\n", 1)[1]
    )


async def test_a_router_whose_inspect_fails_after_the_stop_is_started_again() -> None:
    """The tmpfs re-creation stops the router, then reads its container afresh: when that
    inspect cannot be read, the router's unit is started again before setup says so (it
    was left stopped)."""
    garbled = garbled_inspect(recorded("up", "rhel-ai"))
    fake = FakeConnector("rhel-ai", lambda call: Reply(garbled if READ in call.command else ""))
    podman = PodmanSite(fake, "default")
    built = parse_site_state(recorded("up", "rhel-ai"))
    assert built.router is not None
    built.router.has_tmpfs = False  # as a reload renders it: the workaround re-creates it
    todo = podman_setup_actions(podman, built, [], tmpfs=True, restore_ca=None)
    recreate = next(a for a in todo if a.name == "recreate router with tmpfs /tmp")
    with pytest.raises(SiteStateError, match="its unit was started again"):
        await recreate.run()
    stop = next(i for i, c in enumerate(fake.commands) if f"stop {ROUTER_UNIT}" in c)
    assert any(f"enable --now {ROUTER_UNIT}" in c for c in fake.commands[stop + 1 :]), fake.commands
    assert not any("podman create" in c for c in fake.commands)


def hand_edited_hosts(topology: Topology, edit: str = "unit") -> SiteMap:
    """The recorded built network, with rhtevan-work's router unit file edited by hand
    (``edit="unit"``), or rhel-ai's router inspect answering what is not JSON
    (``edit="inspect"``)."""

    def host(name: str) -> FakeConnector:
        text = recorded("up", name)
        if name == "rhtevan-work" and edit == "unit":
            marker = f"@@file unit {ROUTER_UNIT}\n"
            assert marker in text
            text = text.replace(marker, marker + "|# edited by hand\n")
        if name == "rhel-ai" and edit == "inspect":
            text = garbled_inspect(text)

        def answer(call: Call) -> Reply | None:
            if READ in call.command:
                return Reply(text)
            if CERT in call.command:
                return Reply(cert_reply(f"hub-{name}"))
            return None

        return FakeConnector(name, answer)

    fakes = {h: host(h) for h in HOSTS}
    pool = ConnectorPool(topology.ssh.options(), factory=FakeHosts(fakes))
    return SiteMap(topology, pool, None)


async def test_a_hand_edited_unit_file_is_the_same_answer_from_status_up_and_setup(
    topology: Topology, tmp_path: Path
) -> None:
    sites = hand_edited_hosts(topology)
    found = await status.run(sites)
    drift = {s.host: s.drift for s in found.sites}
    assert drift == {
        "rhel-ai": [],
        "rhtevan-work": [f"{ROUTER_UNIT}: not the unit setup writes"],
        "local": [],
    }
    assert "setup needed on rhtevan-work" in found.summary
    up = await updown.up(sites, "all", plan=True)
    refused = {s.host: s.reason for s in up.sites if s.outcome == "failed"}
    assert list(refused) == ["rhtevan-work"]
    assert f"{ROUTER_UNIT}: not the unit setup writes" in (refused["rhtevan-work"] or "")
    checked = {c.site: c for c in await setup.needs_checks(sites)}
    assert checked["rhtevan-work"].status == "pass"
    assert checked["rhtevan-work"].detail == (
        f"setup would build: {ROUTER_UNIT}: not the unit setup writes"
    )

    async def precheck() -> CheckResult:
        return CheckResult(topology="", checks=[], ok=True)

    plan = await setup.run(sites, Backups(tmp_path), precheck, plan=True)
    building = {
        s.host: [st.name for st in s.steps if st.name not in RUN_STATE_STEPS] for s in plan.sites
    }
    assert building == {
        "rhel-ai": ["setup"],  # its note: already set up
        "rhtevan-work": ["install auto-restart units", "restart units"],
        "local": ["setup"],
    }


async def test_an_unreadable_router_fact_is_the_same_answer_from_status_up_and_setup(
    topology: Topology, tmp_path: Path
) -> None:
    sites = hand_edited_hosts(topology, edit="inspect")
    found = await status.run(sites)
    drift = {s.host: s.drift for s in found.sites}
    assert drift["rhtevan-work"] == [] and drift["local"] == []
    assert [line[: len(UNREAD)] for line in drift["rhel-ai"] or []] == [UNREAD]
    up = await updown.up(sites, "all", plan=True)
    refused = {s.host: s.reason for s in up.sites if s.outcome == "failed"}
    assert list(refused) == ["rhel-ai"] and UNREAD in (refused["rhel-ai"] or "")

    async def precheck() -> CheckResult:
        return CheckResult(topology="", checks=[], ok=True)

    checked = {c.site: c for c in await setup.needs_checks(sites)}
    assert checked["rhel-ai"].status == "fail" and UNREAD in checked["rhel-ai"].detail
    assert checked["local"].detail == "set up as topology.env says: nothing to build"
    plan = await setup.run(sites, Backups(tmp_path), precheck, plan=True)
    rhel = next(s for s in plan.sites if s.host == "rhel-ai")
    assert rhel.outcome == "failed" and UNREAD in (rhel.reason or ""), rhel
    assert not any(st.changes for st in rhel.steps), rhel.steps
