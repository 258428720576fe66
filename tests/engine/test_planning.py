"""Setup, up, down and teardown planning against recorded site states, without a sandbox.

``site_states/<phase>/<host>.txt`` is the real output of the site-state script, read from a
sandbox world (``site_states/topology.env``) after: nothing (``fresh``), ``setup`` (``up``),
``down rhel-ai`` (``rhel-ai-down``), ``down all`` (``down``) and ``up rhel-ai``
(``rhel-ai-up``); the link Secrets' data was replaced by placeholders.
``record_site_states.py`` records them again: do that whenever the site-state script, the
emulation or the units change. Each host's fake connector answers the state read with the
phase the test picks for it, and anything that would change a host raises: a plan only reads.
The tests run the engine's real operations with ``plan=True``, so the scoping rules, skip
reasons and model actions are the ones a user gets.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from fake_connector import Call, FakeConnector, FakeHosts, Reply
from site_replay import cert_reply, recorded, recorded_topology
from skupper_mcp.connectors.pool import ConnectorPool
from skupper_mcp.engine.desired.cluster import base_resources
from skupper_mcp.engine.operations import setup, status, teardown, updown
from skupper_mcp.engine.operations.setup import kube_setup_actions, podman_setup_actions
from skupper_mcp.engine.operations.teardown import kube_teardown_actions
from skupper_mcp.engine.operations.updown import (
    kube_down_actions,
    kube_up_actions,
    podman_down_actions,
    podman_up_actions,
)
from skupper_mcp.engine.readings import PodmanReading
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.engine.sitemap import SiteMap
from skupper_mcp.engine.store.backups import Backups
from skupper_mcp.errors import CommandError
from skupper_mcp.facts.site_state import (
    ContainerState,
    RouterContainer,
    SiteState,
    parse_site_state,
)
from skupper_mcp.results import CheckResult, OperationResult
from skupper_mcp.sites.kube import ClusterSite, KubeState
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.sites.resources import ClientCert
from skupper_mcp.sites.work import RUNS, Script
from skupper_mcp.topology import Topology, load_topology

STATES = Path(__file__).resolve().parent / "site_states"
HOSTS = ("rhel-ai", "rhtevan-work", "local")
READ = "@@section version"  # only the site-state script prints this
CERT = "@@file cert"  # only the client-certificate script prints this
CONTROLLER = "skupper-controller.service"
ROUTER = "skupper-default.service"


def host_answers(host: str, phase: str) -> FakeConnector:
    """A host in a recorded phase: it answers reads, and nothing else."""
    state = recorded(phase, host)
    site = f"hub-{host}"

    def answer(call: Call) -> Reply | None:
        if READ in call.command:
            return Reply(state)
        if CERT in call.command:
            if phase == "fresh":  # no namespace yet: the script's base64 fails
                return Reply("@@file cert ca.crt\n", 1, "base64: No such file or directory")
            return Reply(cert_reply(site))
        return None

    return FakeConnector(host, answer)


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Topology:
    return recorded_topology(tmp_path_factory.mktemp("state"))


@dataclass
class Hosts:
    """The fake hosts of one test and the site map over them."""

    connectors: dict[str, FakeConnector]
    sites: SiteMap

    def changes(self) -> dict[str, list[str]]:
        """Commands other than reads that reached a host (a plan must send none)."""
        return {
            host: [c for c in fake.commands if READ not in c and CERT not in c]
            for host, fake in self.connectors.items()
            if any(READ not in c and CERT not in c for c in fake.commands)
        }


def hosts(topology: Topology, phases: dict[str, str], unreachable: tuple[str, ...] = ()) -> Hosts:
    connectors = {h: host_answers(h, phases[h]) for h in HOSTS}
    for h in unreachable:
        connectors[h].unreachable = "connection refused"
    pool = ConnectorPool(topology.ssh.options(), factory=FakeHosts(connectors))
    return Hosts(connectors, SiteMap(topology, pool, None))


def steps(result: OperationResult) -> dict[str, list[str]]:
    return {s.host: [step.name for step in s.steps] for s in result.sites}


def outcomes(result: OperationResult) -> dict[str, str]:
    return {s.host: s.outcome for s in result.sites}


def models(result: OperationResult) -> list[tuple[str, str, str]]:
    return [(a.host, a.profile, a.action) for a in result.model_actions]


def reasons(result: OperationResult) -> dict[str, str | None]:
    return {s.host: s.reason for s in result.sites if s.reason}


ALL_UP = dict.fromkeys(HOSTS, "up")
ALL_DOWN = dict.fromkeys(HOSTS, "down")
ONLY_RHTEVAN = {"rhel-ai": "down", "rhtevan-work": "up", "local": "up"}
ONLY_RHEL_AI = {"rhel-ai": "up", "rhtevan-work": "down", "local": "up"}
START = ["start controller", "start router"]
STOP = ["stop router", "stop controller", "disable at boot"]
STOP_TMPFS = ["stop router", "podman stop router", "stop controller", "disable at boot"]
FP8 = ("rhel-ai", "g8b-fp8-spec-128k")  # the profile rhel-ai's recorded endpoint serves
G3B = ("rhtevan-work", "g3b-16k")  # rhtevan-work's default (its endpoint serves no profile)


@dataclass(frozen=True)
class Case:
    label: str  # the test id
    operation: str
    target: str
    phases: dict[str, str]
    steps: dict[str, list[str]]
    outcomes: dict[str, str]
    models: list[tuple[str, str, str]]
    unreachable: tuple[str, ...] = ()
    reasons: dict[str, str] | None = None


CASES = [
    Case(
        "T2a", "up", "all", ALL_DOWN,
        {"rhel-ai": START, "rhtevan-work": START, "local": START},
        dict.fromkeys(HOSTS, "up"),
        [(*FP8, "start"), (*G3B, "start")],
    ),
    Case(
        "T2b", "up", "rhel-ai", ONLY_RHTEVAN,
        {"rhel-ai": START, "local": ["up"]},
        {"rhel-ai": "up", "local": "up"},
        [(*FP8, "start")],
    ),
    Case(
        "T2c", "up", "rhtevan-work", ONLY_RHEL_AI,
        {"rhtevan-work": START, "local": ["up"]},
        {"rhtevan-work": "up", "local": "up"},
        [(*G3B, "start")],
    ),
    Case(
        "profile target", "up", "g3b-4k", ALL_DOWN,
        {"rhtevan-work": START, "local": START},
        {"rhtevan-work": "up", "local": "up"},
        [("rhtevan-work", "g3b-4k", "start")],
    ),
    Case(
        "T9a", "up", "all", ALL_DOWN,
        {"rhel-ai": [], "rhtevan-work": START, "local": START},
        {"rhel-ai": "skipped", "rhtevan-work": "up", "local": "up"},
        [(*G3B, "start")],
        unreachable=("rhel-ai",),
        reasons={"rhel-ai": "rhel-ai unreachable: connection refused"},
    ),
    Case(
        "T3a", "down", "all", ALL_UP,
        {"rhel-ai": STOP_TMPFS, "rhtevan-work": STOP, "local": STOP},
        dict.fromkeys(HOSTS, "down"),
        [(*FP8, "stop"), (*G3B, "stop")],
    ),
    Case(
        "T3b", "down", "rhel-ai", ALL_UP,
        {"rhel-ai": STOP_TMPFS, "local": ["keep local site"]},
        {"rhel-ai": "down", "local": "up"},
        [(*FP8, "stop")],
    ),
    Case(
        "T3c", "down", "rhtevan-work", ALL_UP,
        {"rhtevan-work": STOP, "local": ["keep local site"]},
        {"rhtevan-work": "down", "local": "up"},
        [(*G3B, "stop")],
    ),
    Case(
        "T3d", "down", "rhtevan-work", ONLY_RHTEVAN,
        {"rhtevan-work": STOP, "local": STOP},
        {"rhtevan-work": "down", "local": "down"},
        [(*G3B, "stop")],
    ),
    Case(
        "T3e", "down", "rhel-ai", ONLY_RHEL_AI,
        {"rhel-ai": STOP_TMPFS, "local": STOP},
        {"rhel-ai": "down", "local": "down"},
        [(*FP8, "stop")],
    ),
    Case(
        "T9c", "down", "all", ALL_UP,
        {"rhel-ai": STOP_TMPFS, "rhtevan-work": [], "local": STOP},
        {"rhel-ai": "down", "rhtevan-work": "skipped", "local": "down"},
        [(*FP8, "stop")],
        unreachable=("rhtevan-work",),
        reasons={"rhtevan-work": "rhtevan-work unreachable: connection refused"},
    ),
    Case(
        "last host unknown", "down", "rhel-ai", ALL_UP,
        {"rhel-ai": STOP_TMPFS, "local": ["keep local site"]},
        {"rhel-ai": "down", "local": "up"},
        [(*FP8, "stop")],
        unreachable=("rhtevan-work",),
    ),
    Case(
        "down the local site", "down", "local", ALL_UP,
        {"local": STOP},
        {"local": "down"},
        [],
    ),
    Case(
        "already down", "down", "all", ALL_DOWN,
        {"rhel-ai": ["down"], "rhtevan-work": ["down"], "local": ["down"]},
        dict.fromkeys(HOSTS, "down"),
        [(*FP8, "stop"), (*G3B, "stop")],
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
async def test_up_and_down_plans_follow_the_scoping_rules(topology: Topology, case: Case) -> None:
    world = hosts(topology, case.phases, case.unreachable)
    run = updown.up if case.operation == "up" else updown.down
    result = await run(world.sites, case.target, plan=True)
    assert result.plan and result.ok == ("failed" not in outcomes(result).values())
    assert steps(result) == case.steps
    assert outcomes(result) == case.outcomes
    assert models(result) == case.models
    if case.reasons is not None:
        assert reasons(result) == case.reasons
    assert world.changes() == {}
    await world.sites.pool.close()


async def test_a_kept_local_site_says_which_provider_keeps_it(topology: Topology) -> None:
    world = hosts(topology, ALL_UP)
    result = await updown.down(world.sites, "rhel-ai", plan=True)
    local = next(s for s in result.sites if s.host == "local")
    assert [(s.name, s.detail) for s in local.steps] == [
        ("keep local site", "kept: rhtevan-work still active")
    ]
    assert not local.changed
    world = hosts(topology, ALL_UP, unreachable=("rhtevan-work",))
    result = await updown.down(world.sites, "rhel-ai", plan=True)
    local = next(s for s in result.sites if s.host == "local")
    assert local.steps[0].detail == "kept: the state of rhtevan-work is unknown"


async def test_a_plan_step_says_what_would_run(topology: Topology) -> None:
    world = hosts(topology, ONLY_RHEL_AI)
    result = await updown.down(world.sites, "rhel-ai", plan=True)
    details = {(s.host, step.name): step.detail for s in result.sites for step in s.steps}
    assert details == {
        ("rhel-ai", "stop router"): f"would run: systemctl stop {ROUTER}",
        ("rhel-ai", "podman stop router"): "would run: podman stop -t 10 default-skupper-router",
        ("rhel-ai", "stop controller"): f"would run: systemctl stop {CONTROLLER}",
        ("local", "stop router"): f"would run: systemctl stop {ROUTER}",
        ("local", "stop controller"): f"would run: systemctl stop {CONTROLLER}",
        ("rhel-ai", "disable at boot"): f"would run: systemctl disable {ROUTER} {CONTROLLER}",
        ("local", "disable at boot"): f"would run: systemctl disable {ROUTER} {CONTROLLER}",
    }
    assert [s.changed for s in result.sites] == [True, True]


def precheck_passes() -> CheckResult:
    return CheckResult(topology="", checks=[], ok=True, summary="")


async def plan_setup(world: Hosts, tmp_path: Path) -> OperationResult:
    async def precheck() -> CheckResult:
        return precheck_passes()

    return await setup.run(world.sites, Backups(tmp_path), precheck, plan=True)


FRESH_HUB = [
    "pull images",  # Skupper's images, where the host lacks them (issue 46 item 3)
    "install system controller",
    "apply resources",
    "skupper system start",
    "make private keys 0600",
    "install auto-restart units",
    "restart units",
]


async def test_setup_plan_of_fresh_hosts_builds_everything(
    topology: Topology, tmp_path: Path
) -> None:
    world = hosts(topology, dict.fromkeys(HOSTS, "fresh"))
    result = await plan_setup(world, tmp_path)
    assert result.ok and result.plan, result.summary
    rhel_ai = [*FRESH_HUB[:4], "recreate router with tmpfs /tmp", *FRESH_HUB[4:]]
    assert steps(result) == {
        "rhel-ai": rhel_ai,  # the tmpfs host, and only it, gets its router re-created
        "rhtevan-work": FRESH_HUB,
        "local": [
            "link to rhel-ai once it is set up",
            "link to rhtevan-work once it is set up",
            *FRESH_HUB,
        ],
    }
    assert all(s.changed for s in result.sites)
    assert models(result) == [(*FP8, "setup"), (*G3B, "setup")]
    by_step = {(s.host, st.name): st.detail for s in result.sites for st in s.steps}
    assert by_step[("rhel-ai", "apply resources")] == (
        "would run: skupper system apply -n default -f - (Site/hub-rhel-ai, "
        "RouterAccess/hub-rhel-ai-public, Connector/model-api-rhel-ai)"
    )
    assert by_step[("rhel-ai", "pull images")] == (
        "would run: podman pull of system-controller=system-controller:2.1.3, "
        "router=skupper-router:3.4.2 where missing (up to 900 s)"
    )
    assert by_step[("rhel-ai", "recreate router with tmpfs /tmp")].startswith(
        f"would run: systemctl stop {ROUTER}; podman rm -f default-skupper-router;"
    )
    assert "--tmpfs /tmp" in by_step[("rhel-ai", "recreate router with tmpfs /tmp")]
    assert world.changes() == {}


async def test_setup_plan_of_a_built_network_changes_nothing(
    topology: Topology, tmp_path: Path
) -> None:
    world = hosts(topology, ALL_UP)
    result = await plan_setup(world, tmp_path)
    assert result.ok
    assert steps(result) == {h: ["setup"] for h in HOSTS}
    assert not any(s.changed for s in result.sites)
    assert world.changes() == {}


async def test_setup_plan_starts_what_a_down_restarted_nothing_else(
    topology: Topology, tmp_path: Path
) -> None:
    world = hosts(topology, ALL_DOWN)
    result = await plan_setup(world, tmp_path)
    assert steps(result) == {h: ["start units"] for h in HOSTS}
    details = [st.detail for s in result.sites for st in s.steps]
    units = f"{CONTROLLER} {ROUTER}"
    assert (
        details
        == [f"would run: systemctl reset-failed {units}; systemctl enable --now {units}"] * 3
    )


async def test_setup_plan_skips_an_unreachable_host_and_says_why(
    topology: Topology, tmp_path: Path
) -> None:
    world = hosts(topology, ALL_UP, unreachable=("rhtevan-work",))
    result = await plan_setup(world, tmp_path)
    assert outcomes(result) == {"rhel-ai": "up", "rhtevan-work": "skipped", "local": "up"}
    assert reasons(result) == {"rhtevan-work": "rhtevan-work unreachable: connection refused"}
    # The local site keeps the Secret an earlier setup wrote: nothing to change there.
    assert steps(result)["local"] == ["setup"]


async def test_teardown_plan_backs_up_then_removes_every_site(
    topology: Topology, tmp_path: Path
) -> None:
    world = hosts(topology, ONLY_RHEL_AI)
    result = await teardown.run(world.sites, Backups(tmp_path), plan=True)
    assert steps(result) == {h: ["back up inputs and CA", "remove site"] for h in HOSTS}
    assert outcomes(result) == dict.fromkeys(HOSTS, "removed")
    assert models(result) == [(*FP8, "stop"), (*G3B, "stop")]
    remove = next(st for st in result.sites[0].steps if st.name == "remove site")
    assert remove.detail == (
        f"would run: systemctl stop {ROUTER}; skupper system stop; rm default-skupper-router, "
        "its unit, the namespace; if no other namespace holds a site: skupper system "
        f"uninstall, rm {CONTROLLER}"
    )
    assert world.changes() == {}
    fresh = hosts(topology, dict.fromkeys(HOSTS, "fresh"))
    nothing = await teardown.run(fresh.sites, Backups(tmp_path), plan=True)
    # Sites never set up have nothing of Skupper's: a provider's model container is not
    # a reason to tear anything down there. The plan says so as status does (not set up,
    # and why), never "removed", and asks for no model to be stopped.
    assert steps(nothing) == {h: ["teardown"] for h in HOSTS}
    assert not any(s.changed for s in nothing.sites)
    assert outcomes(nothing) == dict.fromkeys(HOSTS, "skipped")
    assert reasons(nothing) == dict.fromkeys(HOSTS, "not set up: setup has not been run here")
    assert models(nothing) == []


async def test_down_plan_on_sites_never_set_up_says_not_set_up_as_status_does(
    topology: Topology,
) -> None:
    fresh = hosts(topology, dict.fromkeys(HOSTS, "fresh"))
    shown = await status.run(fresh.sites)
    planned = await updown.down(fresh.sites, "all", plan=True)
    assert {s.host: s.state for s in shown.sites} == dict.fromkeys(HOSTS, "not-set-up")
    assert outcomes(planned) == dict.fromkeys(HOSTS, "skipped")
    assert reasons(planned) == {s.host: f"not set up: {s.state_reason}" for s in shown.sites}
    assert "already stopped" not in str(planned.model_dump())
    assert models(planned) == []
    assert fresh.changes() == {}


# The planning functions themselves: pure, from a recorded state to the scripts they run.


def site(host: str) -> tuple[PodmanSite, FakeConnector]:
    fake = FakeConnector(host)
    return PodmanSite(fake, "default"), fake


def read_as(podman: PodmanSite, state: SiteState) -> PodmanReading:
    """rhel-ai's reading with ``state``."""
    return PodmanReading(SiteRef("rhel-ai", "hub-rhel-ai", "provider", "podman"), podman, state)


def scripts(actions: list) -> list[str]:
    return [w.text for a in actions for w in a.does if isinstance(w, Script)]


def test_up_never_recreates_the_router_and_setup_does_only_without_tmpfs() -> None:
    podman, fake = site("rhel-ai")
    built = parse_site_state(recorded("up", "rhel-ai"))
    down = parse_site_state(recorded("down", "rhel-ai"))
    assert built.router is not None and built.router.has_tmpfs
    assert [a.name for a in podman_up_actions(read_as(podman, down))] == START
    assert podman_setup_actions(podman, built, [], tmpfs=True, restore_ca=None) == []
    # A router the controller re-rendered without the flags: setup re-creates it, and
    # restarts its unit so the new container runs.
    built.router = RouterContainer(False, False, built.router.inspect)
    redo = podman_setup_actions(podman, built, [], tmpfs=True, restore_ca=None)
    assert [a.name for a in redo] == ["recreate router with tmpfs /tmp", "restart units"]
    assert redo[1].plan_detail == f"would run: systemctl restart {ROUTER}"
    create = redo[0].does[1]
    assert isinstance(create, Script)
    assert re.search(r"podman create .*--tmpfs /tmp:rw,size=10M,mode=1777 ", create.text)
    assert "-e SSL_PROFILE_BASE_PATH=/etc/skupper-router" in create.text
    # Not a tmpfs host: never re-created. Skupper's own container has SSL_PROFILE_BASE_PATH,
    # so one without it was made by hand: a reload renders it again.
    inspect = built.router.inspect
    built.router = RouterContainer(False, True, inspect)
    assert podman_setup_actions(podman, built, [], tmpfs=False, restore_ca=None) == []
    built.router = RouterContainer(False, False, inspect)
    names = [a.name for a in podman_setup_actions(podman, built, [], tmpfs=False, restore_ca=None)]
    assert names[0] == "skupper system reload" and "recreate router with tmpfs /tmp" not in names
    # a backup an earlier reload failed to remove would make this reload fail: it goes first
    leftover = ContainerState("default-skupper-router-backup", "exited")
    built.containers[leftover.name] = leftover
    todo = podman_setup_actions(podman, built, [], tmpfs=False, restore_ca=None)
    assert [a.name for a in todo[:2]] == ["remove leftover backup", "skupper system reload"]
    assert fake.calls == []  # planning ran nothing


def test_down_stops_the_container_too_on_tmpfs_hosts_only() -> None:
    podman, fake = site("rhel-ai")
    up = parse_site_state(recorded("up", "rhel-ai"))
    assert [a.name for a in podman_down_actions(read_as(podman, up), tmpfs=True)] == STOP_TMPFS
    assert [a.name for a in podman_down_actions(read_as(podman, up), tmpfs=False)] == STOP
    down = parse_site_state(recorded("down", "rhel-ai"))
    assert podman_down_actions(read_as(podman, down), tmpfs=True) == []
    assert scripts(podman_down_actions(read_as(podman, up), tmpfs=False))[0].endswith(
        f"$SKMCP_CTL stop {ROUTER}"
    )
    assert fake.calls == []


async def test_the_ca_restore_sends_its_key_on_stdin_and_never_shows_it() -> None:
    podman, fake = site("rhel-ai")
    fresh = parse_site_state(recorded("fresh", "rhel-ai"))
    ca = {"ca.crt": b"the ca", "tls.crt": b"the cert", "tls.key": b"SECRET KEY"}
    todo = podman_setup_actions(podman, fresh, [], tmpfs=False, restore_ca=ca)
    restore = next(a for a in todo if a.name == "restore site CA")
    secret = base64.b64encode(b"SECRET KEY").decode()
    assert secret not in restore.plan_detail and secret not in repr(restore.does)
    assert restore.plan_detail == (
        "would run: write input/issuers/skupper-site-ca (ca.crt, tls.crt, tls.key, from stdin)"
    )
    fake.on(r"input/issuers/skupper-site-ca")
    assert await restore.run() == "restored the site CA from the last backup"
    [call] = fake.calls
    assert call.stdin is not None and secret in call.stdin and secret not in call.command
    assert call.check and call.timeout == 120.0


# The Kubernetes site (the example topology: crc links directly to rhel-ai and to local).

EXAMPLE = Path(__file__).resolve().parents[2] / "topology.env.example"


def cluster() -> ClusterSite:
    return ClusterSite(None, "skupper-models")  # type: ignore[arg-type]  # planning calls nothing


def ready_link(name: str) -> dict:
    return {"metadata": {"name": name}, "status": {"status": "Ready"}}


def test_cluster_plans_apply_what_differs_and_restart_the_router_after_link_changes() -> None:
    example = load_topology(EXAMPLE)
    kube = cluster()
    certs = {"rhel-ai": ClientCert(b"ca", b"crt", b"key"), "local": None}
    empty = KubeState(version="v1.31", site=None)
    todo, problems = kube_setup_actions(example, kube, empty, certs)
    assert problems == ["local"]  # no certificate and no Secret from an earlier setup
    assert [(a.name, a.plan_detail) for a in todo] == [
        (
            "apply site and listeners",
            "would run: apply Site/crc-ezhang; apply Listener/model-listener-rhel-ai; "
            "apply Listener/model-listener-rhtevan-work",
        ),
        ("apply links", "would run: apply Secret/link-hub-rhel-ai; apply Link/link-hub-rhel-ai"),
        ("restart router pod", "would run: delete Pod of Deployment/skupper-router"),
        ("wait for links", "would run: wait for Link/link-hub-rhel-ai Ready"),
    ]
    assert "a2V5" not in repr(todo[1].does)  # the Secret's body stays out of the data's repr
    links = {n: ready_link(n) for n in ("link-hub-rhel-ai", "link-local-ezhang")}
    linked = KubeState(version="v1.31", site=None, links=links)
    assert [a.name for a in kube_down_actions(example, kube, linked)] == ["delete links"]
    assert kube_down_actions(example, kube, empty) == []
    gone = kube_teardown_actions(example, kube, linked)
    assert gone[0].plan_detail == (
        "would run: delete Link/link-hub-rhel-ai; delete Link/link-local-ezhang"
    )


def test_cluster_up_recreates_only_links_to_live_peers() -> None:
    example = load_topology(EXAMPLE)
    kube = cluster()
    base = base_resources(example)
    secrets = {n: {"metadata": {"name": n}} for n in ("link-hub-rhel-ai", "link-local-ezhang")}
    state = KubeState(
        version="v1.31",
        site=base[0] | {"status": {"status": "Ready"}},
        listeners={r["metadata"]["name"]: r for r in base[1:]},
        links={"link-hub-rhel-ai": {"metadata": {"name": "link-hub-rhel-ai"}}},  # not Ready
        secrets=secrets,
    )
    # the cluster keeps its Secrets
    no_certs: dict[str, ClientCert | None] = {"rhel-ai": None, "local": None}
    assert kube_up_actions(example, kube, state, no_certs, live=set()) == []
    todo = kube_up_actions(example, kube, state, no_certs, live={"rhel-ai", "local"})
    assert [(a.name, a.plan_detail) for a in todo] == [
        ("delete stale links", "would run: delete Link/link-hub-rhel-ai"),
        ("create links", "would run: apply Link/link-hub-rhel-ai; apply Link/link-local-ezhang"),
        ("restart router pod", "would run: delete Pod of Deployment/skupper-router"),
        (
            "wait for links",
            "would run: wait for Link/link-hub-rhel-ai Ready;"
            " wait for Link/link-local-ezhang Ready",
        ),
    ]


async def test_a_new_local_site_links_to_built_hubs_and_the_plan_shows_no_key(
    topology: Topology, tmp_path: Path
) -> None:
    world = hosts(topology, {"rhel-ai": "up", "rhtevan-work": "up", "local": "fresh"})
    result = await plan_setup(world, tmp_path)
    local = next(s for s in result.sites if s.host == "local")
    assert [st.name for st in local.steps] == FRESH_HUB
    apply = local.steps[FRESH_HUB.index("apply resources")].detail
    assert apply.startswith("would run: skupper system apply -n default -f - (Site/local-sandbox")
    assert "Secret/link-hub-rhel-ai, Link/link-hub-rhel-ai" in apply
    key = base64.b64encode(b"recorded tls.key of hub-rhel-ai").decode()
    shown = result.model_dump_json()
    assert key not in shown and base64.b64encode(key.encode()).decode() not in shown
    assert world.changes() == {}


RELOAD_RACE = (
    "Failed to bootstrap: failed to remove directory /d/namespaces/default/runtime/resources:"
    " unlinkat /d/namespaces/default/runtime/resources: directory not empty"
)


def answering(*replies: Reply) -> tuple[PodmanSite, FakeConnector]:
    """A site whose host gives these replies in turn, the last one from then on."""
    left = list(replies)
    fake = FakeConnector("rhel-ai", lambda call: left.pop(0) if len(left) > 1 else left[0])
    return PodmanSite(fake, "default"), fake


async def test_a_reload_that_raced_the_controller_runs_again_and_other_failures_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("skupper_mcp.sites.podman.RETRY_PAUSE", 0.0)
    raced = Reply(exit_status=1, stderr=RELOAD_RACE)
    podman, fake = answering(raced, Reply())
    reload = podman.render(first_time=False)
    done = await podman.execute(reload)
    assert (
        done == "skupper system reload (ran 2 times: the earlier runs said 'directory not empty')"
    )
    assert [c.command for c in fake.calls] == [reload.text, reload.text]
    # a race every time: after RUNS runs the step fails in Skupper's own words
    podman, fake = answering(raced)
    with pytest.raises(CommandError, match="directory not empty"):
        await podman.execute(reload)
    assert len(fake.calls) == RUNS
    # any other failure, and a first start (no router to stop, nothing to race), fail at once
    for script, said in ((reload, "no such site"), (podman.render(first_time=True), RELOAD_RACE)):
        podman, fake = answering(Reply(exit_status=1, stderr=said))
        with pytest.raises(CommandError):
            await podman.execute(script)
        assert len(fake.calls) == 1


# podman 4.3.1's words when rm raced conmon's cleanup of the container it stopped
REMOVAL_BUSY_SAID = (
    "Error: removing container ed404e75d2de root filesystem: 1 error occurred:\n"
    "\t* unlinkat /home/u/.local/share/containers/storage/overlay-containers/ed404e75d2de"
    "/userdata/shm: device or resource busy"
)


async def test_a_router_removal_that_found_its_shm_still_mounted_runs_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("skupper_mcp.sites.podman.RETRY_PAUSE", 0.0)
    busy = Reply(exit_status=125, stderr=REMOVAL_BUSY_SAID)
    podman, _ = answering(busy)
    for script in (podman.recreate_router_with_tmpfs(None), podman.remove_container("x")):
        podman, fake = answering(busy, Reply())
        done = await podman.execute(script)
        assert done.endswith("(ran 2 times: the earlier runs said 'device or resource busy')")
        assert [c.command for c in fake.calls] == [script.text, script.text]
        # busy every time: the step fails in podman's own words after RUNS runs
        podman, fake = answering(busy)
        with pytest.raises(CommandError, match="userdata/shm: device or resource busy"):
            await podman.execute(script)
        assert len(fake.calls) == RUNS
