"""The diagnose rules against recorded site states, changed the way each Known Issue shows.

The states are the real output of the site-state script after setup (``site_states/up``);
the log lines are the real skupper-router's (docs/sandbox.md, section 11). The end-to-end
tests (tests/lifecycle/test_62_diagnose.py) cause the issues on a sandbox instead.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fake_connector import FakeConnector
from skupper_mcp.engine.findings import RULES, Network
from skupper_mcp.engine.findings.context import LinkProbe
from skupper_mcp.engine.model_http import ModelsProbe
from skupper_mcp.engine.readings import Asked, PodmanReading, Reading, Unread
from skupper_mcp.engine.scope import sites as all_sites
from skupper_mcp.errors import ConnectError
from skupper_mcp.facts.private_keys import OpenKey
from skupper_mcp.facts.site_state import SiteState, UnitState, parse_site_state
from skupper_mcp.facts.skupper_version import parse_skupper_version
from skupper_mcp.models import Finding
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.topology import Topology, load_topology

STATES = Path(__file__).resolve().parent / "site_states"
PODMAN_HOSTS = ("rhel-ai", "rhtevan-work", "local")
TLS_REFUSED = (
    "2026-12-01 05:52:16.486786 +0000 ROUTER (critical) Router start-up failed: Python: CError:"
    " Configuration: Failed to configure TLS caCertFile "
    "'/etc/skupper-router/runtime/certs/skupper-site-server/ca.crt' from sslProfile "
    "'skupper-site-server'"
)
#: The local router's log line when the hub's certificate lacks the name it dialled.
VERIFY_REFUSED = (
    "2026-12-01 05:52:17.401857 +0000 SERVER (error) [C4] Connection to "
    "rhel-ai.example:8000 failed: amqp:connection:framing-error SSL Failure: "
    "error:0A000086:SSL routines::certificate verify failed"
)


@pytest.fixture(scope="module")
def topology() -> Topology:
    return load_topology(STATES / "topology.env")


def states() -> dict[str, SiteState]:
    found = {}
    for host in PODMAN_HOSTS:
        state = parse_site_state((STATES / "up" / f"{host}.txt").read_text())
        state.now = 2_000_000_000
        for container in state.containers.values():
            container.started_at = state.now - 600 if container.running else None
        found[host] = state
    return found


def network(
    topology: Topology,
    changed: dict[str, SiteState] | None = None,
    *,
    links: list[LinkProbe] | None = None,
    errors: dict[str, BaseException] | None = None,
    asked: dict[str, Asked] | None = None,
) -> Network:
    asked = asked or {}
    views: dict[str, Reading] = {}
    read = {**states(), **(changed or {})}
    for ref in all_sites(topology):
        if ref.platform != "podman":
            continue
        error = (errors or {}).get(ref.host)
        if error is not None:
            views[ref.host] = Unread(ref, error)
        else:
            site = PodmanSite(FakeConnector(ref.host), namespace_of(topology, ref.host))
            views[ref.host] = PodmanReading(ref, site, read[ref.host], asked.get(ref.host))
    return Network(topology, views, links or [])


def namespace_of(topology: Topology, host: str) -> str:
    p = topology.provider(host)
    return p.namespace if p is not None else topology.local.namespace


def findings(net: Network) -> list[Finding]:
    return [f for rule in RULES for f in rule(net)]


def problems(net: Network) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for f in findings(net):
        if f.severity != "info":
            found.setdefault(f.host, set()).add(f.id)
    return found


def one(net: Network, id: str) -> Finding:
    [found] = [f for f in findings(net) if f.id == id]
    return found


def test_a_set_up_network_has_nothing_wrong(topology: Topology) -> None:
    assert problems(network(topology)) == {}


def test_a_hub_that_cannot_write_tmp_names_the_workaround_variable(topology: Topology) -> None:
    rhel = states()["rhel-ai"]
    assert rhel.router is not None
    rhel.router.has_tmpfs = False
    rhel.logs["router"] = [
        "/home/skrouterd/bin/configure.sh: line 38: /tmp/skrouterd.json: Permission denied",
        "2026-12-01 05:52:16.486786 +0000 ROUTER (info) Router started in Standalone mode",
    ]
    net = network(topology, {"rhel-ai": rhel})
    found = one(net, "tmp-not-writable")
    assert found.host == "rhel-ai"
    variable, setup = found.next
    assert (variable.variable, variable.value, setup.tool) == (
        "RHEL_AI_TMPFS_WORKAROUND",
        "true",
        "setup",
    )
    # the same container without the log lines is not this finding (the drift rule names
    # the missing tmpfs instead: the topology asks for it)
    rhel.logs.clear()
    assert "tmp-not-writable" not in problems(network(topology, {"rhel-ai": rhel}))["rhel-ai"]


def test_private_certificates_matter_only_when_the_router_refuses_them(
    topology: Topology,
) -> None:
    local = states()["local"]
    local.certs_private = True
    local.private_certs = ["640 runtime/certs/skupper-site-server/ca.crt"]
    # Skupper's own router runs as the files' owner: 0640 is readable, nothing to say
    assert problems(network(topology, {"local": local})) == {}
    local.logs["router"] = [TLS_REFUSED]
    found = one(network(topology, {"local": local}), "certs-not-readable")
    assert found.host == "local" and TLS_REFUSED.strip() in " ".join(found.evidence)
    assert [s.tool for s in found.next] == ["setup"]


def test_a_private_key_others_may_read_is_a_warning_whose_next_step_is_setup(
    topology: Topology,
) -> None:
    hub = states()["rhtevan-work"]
    assert problems(network(topology, {"rhtevan-work": hub})) == {}
    hub.open_keys = [
        OpenKey(0o640, "runtime/certs/skupper-site-server/tls.key"),
        OpenKey(0o644, "runtime/links/link-skupper-site-server-203.0.113.20.yaml"),
    ]
    net = network(topology, {"rhtevan-work": hub})
    assert problems(net) == {"rhtevan-work": {"private-key-readable"}}
    found = one(net, "private-key-readable")
    assert found.severity == "warning" and found.host == "rhtevan-work"
    assert found.evidence == [
        "mode 640 runtime/certs/skupper-site-server/tls.key",
        "mode 644 runtime/links/link-skupper-site-server-203.0.113.20.yaml",
    ]
    assert "0600" in found.fix
    assert [s.tool for s in found.next] == ["setup"]


def test_a_router_without_ssl_profile_base_path(topology: Topology) -> None:
    hub = states()["rhtevan-work"]
    assert hub.router is not None
    hub.router.has_ssl_base_path = False
    hub.logs["router"] = [TLS_REFUSED.replace("/etc/skupper-router", "${SSL_PROFILE_BASE_PATH}")]
    net = network(topology, {"rhtevan-work": hub})
    assert problems(net) == {"rhtevan-work": {"ssl-profile-base-path"}}
    assert any("SSL_PROFILE_BASE_PATH" in e for e in one(net, "ssl-profile-base-path").evidence)


def test_a_unit_failed_by_a_stop_and_not_by_a_crash(topology: Topology) -> None:
    hub = states()["rhtevan-work"]
    unit = hub.units["skupper-default.service"]
    unit.active_state, unit.result = "failed", "exit-code"
    unit.exec_main_code, unit.exec_main_status = "1", 143
    found = one(network(topology, {"rhtevan-work": hub}), "unit-failed-on-stop")
    assert "ExecMainStatus=143" in found.evidence[0]
    unit.exec_main_status = 1  # a crash: Restart=on-failure's business, not this finding
    assert "unit-failed-on-stop" not in {
        f.id for f in findings(network(topology, {"rhtevan-work": hub}))
    }


def test_skuppers_own_units_and_boot_links(topology: Topology) -> None:
    hub = states()["rhtevan-work"]
    hub.unit_files["skupper-default.service"] = (
        "[Unit]\nDescription=skupper-default.service\n[Service]\nType=simple\n"
        "RemainAfterExit=yes\nExecStart=/bin/bash start.sh\n[Install]\n"
        "WantedBy=default.target\n"
    )
    hub.enabled_at_boot.add("skupper-default.service")
    net = network(topology, {"rhtevan-work": hub})
    assert problems(net) == {"rhtevan-work": {"no-auto-restart", "autostart-at-boot"}}


def test_a_status_that_outlived_its_router(topology: Topology) -> None:
    hub = states()["rhtevan-work"]
    hub.containers["default-skupper-router"].state = "exited"
    hub.containers[f"{hub.user}-skupper-controller"].state = "exited"
    hub.units["skupper-controller.service"] = UnitState("skupper-controller.service")
    hub.units["skupper-default.service"] = UnitState("skupper-default.service")
    net = network(topology, {"rhtevan-work": hub})
    assert problems(net) == {"rhtevan-work": {"stale-status"}}
    [step] = one(net, "stale-status").next
    assert (step.tool, step.arguments) == ("up", {"target": "rhtevan-work"})
    # a controller that still runs writes the status itself: the router is merely down
    hub.containers[f"{hub.user}-skupper-controller"].state = "running"
    assert problems(network(topology, {"rhtevan-work": hub})) == {}


def test_a_model_that_does_not_answer_behind_a_running_router(topology: Topology) -> None:
    hub = states()["rhtevan-work"]
    hub.served_models = None
    hub.models_error = "curl: (7) Failed to connect to 127.0.0.1 port 10000"
    hub.containers["hosted-model"].state = "exited"
    found = one(network(topology, {"rhtevan-work": hub}), "model-container-stopped")
    assert next((s.kind, s.action, s.profile) for s in found.next) == (
        "hosted-model-ctl",
        "start",
        "g3b-16k",
    )
    del hub.containers["hosted-model"]
    found = one(network(topology, {"rhtevan-work": hub}), "model-container-stopped")
    assert [s.action for s in found.next[:2]] == ["setup", "start"]


def test_a_model_served_by_no_container_blames_no_container(topology: Topology) -> None:
    """<PREFIX>_MODEL_CONTAINER= empty: the model runs as a systemd unit, under docker or
    as a bare process, so no container state is evidence and no container is to be set up."""
    providers = [
        p.model_copy(update={"model_container": None}) if p.name == "rhtevan-work" else p
        for p in topology.providers
    ]
    no_container = topology.model_copy(update={"providers": providers})
    hub = states()["rhtevan-work"]
    hub.served_models = None
    hub.models_error = "curl: (7) Failed to connect to 127.0.0.1 port 10000"
    hub.models_exit = 7
    del hub.containers["hosted-model"]
    found = one(network(no_container, {"rhtevan-work": hub}), "model-port-closed")
    assert "rhtevan-work declares no model container (MODEL_CONTAINER empty)" in found.evidence
    assert "container" not in found.cause
    assert not [s for s in found.next if s.kind == "hosted-model-ctl"]
    assert [s.variable for s in found.next if s.kind == "topology"] == ["RHTEVAN_WORK_MODEL_PORT"]


def test_nothing_listening_behind_a_running_container_is_the_port_not_the_container(
    topology: Topology,
) -> None:
    hub = states()["rhtevan-work"]
    hub.served_models = None
    hub.models_error = "curl: (7) Failed to connect to 127.0.0.1 port 10000"
    hub.models_exit = 7
    assert hub.containers["hosted-model"].running
    assert problems(network(topology, {"rhtevan-work": hub})) == {
        "rhtevan-work": {"model-port-closed"}
    }


def test_a_server_that_refuses_the_request_names_the_key_file_variable(
    topology: Topology,
) -> None:
    """vLLM --api-key: the host's probe (no key) gets 401, and so does the listener's."""
    hub = states()["rhtevan-work"]
    hub.served_models = None
    hub.models_error = "curl: (22) The requested URL returned error: 401"
    hub.models_exit = 22
    net = network(topology, {"rhtevan-work": hub})
    net.model_probes["rhtevan-work"] = ModelsProbe(401, None, "/v1/models answered HTTP 401", 2)
    assert problems(net) == {"rhtevan-work": {"model-key-refused"}}
    found = one(net, "model-key-refused")
    assert "RHTEVAN_WORK_MODEL_API_KEY_FILE" in found.fix
    assert [s.variable for s in found.next if s.kind == "topology"] == [
        "RHTEVAN_WORK_MODEL_API_KEY_FILE"
    ]
    assert "container" not in found.cause + found.symptom


def test_a_server_that_lists_its_models_with_the_key_is_no_finding(topology: Topology) -> None:
    """The host's own probe carries no key: the listener's, with it, decides."""
    hub = states()["rhtevan-work"]
    hub.served_models = None
    hub.models_exit = 22
    net = network(topology, {"rhtevan-work": hub})
    net.model_probes["rhtevan-work"] = ModelsProbe(200, ["granite-3b"], None, 2)
    assert problems(net) == {}


def test_drift_lists_each_difference(topology: Topology) -> None:
    hub = states()["rhel-ai"]
    access = hub.input_resources[("RouterAccess", "hub-rhel-ai-public")]
    changed = copy.deepcopy(access)
    changed["spec"]["roles"][0]["port"] = 8100
    hub.input_resources[("RouterAccess", "hub-rhel-ai-public")] = changed
    del hub.input_resources[("Connector", "model-api-rhel-ai")]
    found = one(network(topology, {"rhel-ai": hub}), "drift")
    assert found.evidence == [
        "RouterAccess/hub-rhel-ai-public spec.roles[0].port: the site has 8100, "
        "topology.env says 8000",
        "Connector/model-api-rhel-ai: missing on the site",
    ]


def test_a_firewalled_port_and_a_router_that_just_started(topology: Topology) -> None:
    hub_address = next(p for p in topology.providers if p.name == "rhtevan-work").public_host
    link = LinkProbe("local", "rhtevan-work", hub_address, 55671, False, "Pending")
    net = network(topology, links=[link])
    found = one(net, "link-port-unreachable")
    assert found.host == "rhtevan-work"
    assert found.next[0].variable == "RHTEVAN_WORK_INTER_ROUTER_PORT"
    hub = states()["rhtevan-work"]
    assert hub.now is not None
    hub.containers["default-skupper-router"].started_at = hub.now - 3
    assert problems(network(topology, {"rhtevan-work": hub}, links=[link])) == {}


def test_a_name_missing_from_the_hubs_certificate(topology: Topology) -> None:
    local = states()["local"]
    local.logs["router"] = [VERIFY_REFUSED]
    link = LinkProbe("local", "rhel-ai", "rhel-ai.example", 8000, True, "Pending")
    found = one(network(topology, {"local": local}, links=[link]), "link-cert-verify-failed")
    assert found.host == "rhel-ai"
    sans = found.next[0]
    hub = next(p for p in topology.providers if p.name == "rhel-ai")
    assert (sans.variable, sans.value) == ("RHEL_AI_SANS", " ".join([*hub.sans, "rhel-ai.example"]))


def test_a_link_up_again_is_not_refused_for_failures_left_in_the_log(topology: Topology) -> None:
    """After setup re-issues the hub's certificate the link is Ready, while the dialler's
    log tail may still hold the refusals from before."""
    local = states()["local"]
    local.logs["router"] = [VERIFY_REFUSED]
    link = LinkProbe("local", "rhel-ai", "rhel-ai.example", 8000, True, "Ready")
    net = network(topology, {"local": local}, links=[link])
    assert "link-cert-verify-failed" not in {f.id for f in findings(net)}


def test_versions_below_the_floor_and_mixed_minors(topology: Topology) -> None:
    old = states()["rhel-ai"]
    old.skupper = parse_skupper_version("COMPONENT  VERSION\ncli        2.0.1\n")
    net = network(topology, {"rhel-ai": old})
    found = one(net, "version-mismatch")
    assert (found.host, found.severity) == ("rhel-ai", "error")
    mixed = states()["rhel-ai"]
    mixed.skupper = parse_skupper_version("2.2.1\n")
    [info] = [
        f for f in findings(network(topology, {"rhel-ai": mixed})) if f.id == "version-mismatch"
    ]
    assert info.severity == "info"


def test_an_unreachable_host_is_one_finding(topology: Topology) -> None:
    net = network(topology, errors={"rhel-ai": ConnectError("rhel-ai", "timed out")})
    assert problems(net) == {"rhel-ai": {"site-unreadable"}}


def test_evidence_never_carries_a_key_a_log_line_quoted(topology: Topology) -> None:
    """A router log line quoted as evidence goes through the same redaction as logs."""
    from skupper_mcp.engine.operations.diagnose import redacted

    local = states()["local"]
    key_line = (
        "SERVER (error) [C4] Connection to 127.0.0.9:8000 failed: certificate verify failed "
        "token=abcdef0123456789abcdef"
    )
    local.logs["router"] = [key_line]
    link = LinkProbe("local", "rhel-ai", "127.0.0.9", 8000, True, "Pending")
    found = redacted(
        one(network(topology, {"local": local}, links=[link]), "link-cert-verify-failed")
    )
    assert not any("abcdef0123456789abcdef" in e for e in found.evidence)
    assert any("[REDACTED]" in e for e in found.evidence)


def test_a_router_stopped_by_down_is_no_stale_status_and_nothing_starts_it_again(
    topology: Topology,
) -> None:
    from skupper_mcp.engine.operations.diagnose import respecting_asked

    hub = states()["rhtevan-work"]
    hub.containers["default-skupper-router"].state = "exited"
    hub.containers[f"{hub.user}-skupper-controller"].state = "exited"
    hub.units["skupper-controller.service"] = UnitState("skupper-controller.service")
    hub.units["skupper-default.service"] = UnitState("skupper-default.service")
    assert problems(network(topology, {"rhtevan-work": hub}, asked={"rhtevan-work": "up"})) == {
        "rhtevan-work": {"stale-status"}
    }
    assert problems(network(topology, {"rhtevan-work": hub}, asked={"rhtevan-work": "down"})) == {}
    # a finding on a site the user stopped keeps its evidence, but not a next step that
    # would start the site again; its fix says how to, should the user want it
    hub.unit_files["skupper-default.service"] += "# edited by hand\n"
    net = network(topology, {"rhtevan-work": hub}, asked={"rhtevan-work": "down"})
    found = respecting_asked(one(net, "no-auto-restart"), net)
    assert found.next == []
    assert "last asked to down" in found.fix and "setup()" in found.fix
    other = network(topology, {"rhtevan-work": hub}, asked={"rhel-ai": "down"})
    assert [s.tool for s in respecting_asked(one(other, "no-auto-restart"), other).next] == [
        "setup"
    ]
