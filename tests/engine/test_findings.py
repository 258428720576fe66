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
from skupper_mcp.facts.connector_status import ConnectorStatus
from skupper_mcp.facts.private_keys import OpenKey
from skupper_mcp.facts.site_state import SiteState, UnitState, parse_site_state
from skupper_mcp.facts.skupper_version import parse_skupper_version
from skupper_mcp.results import Finding
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.topology import ProviderHost, Topology, load_topology

STATES = Path(__file__).resolve().parent / "site_states"
PODMAN_HOSTS = ("rhel-ai", "rhtevan-work", "local")
TLS_REFUSED = (
    "2026-12-01 05:52:16.486786 +0000 ROUTER (critical) Router start-up failed: Python: CError:"
    " Configuration: Failed to configure TLS caCertFile "
    "'/etc/skupper-router/runtime/certs/skupper-site-server/ca.crt' from sslProfile "
    "'skupper-site-server'"
)
ROUTER_STARTED = (
    "2026-12-01 05:52:15.101010 +0000 ROUTER (info) Router started in Interior mode, area=0"
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


def unanswering_hub(exit_status: int, error: str | None = None) -> SiteState:
    """rhtevan-work whose host's probe of its model port listed no models: curl's exit
    status, and its error when the test gives one."""
    hub = states()["rhtevan-work"]
    hub.served_models = None
    if error is not None:
        hub.models_error = error
    hub.models_exit = exit_status
    return hub


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

    def without_container(p: ProviderHost) -> ProviderHost:
        only = p.endpoints[0].model_copy(update={"model_container": None})
        return p.model_copy(update={"model_container": None, "endpoints": [only]})

    providers = [
        without_container(p) if p.name == "rhtevan-work" else p for p in topology.providers
    ]
    no_container = topology.model_copy(update={"providers": providers})
    hub = unanswering_hub(7, "curl: (7) Failed to connect to 127.0.0.1 port 10000")
    del hub.containers["hosted-model"]
    found = one(network(no_container, {"rhtevan-work": hub}), "model-port-closed")
    assert "rhtevan-work declares no model container (MODEL_CONTAINER empty)" in found.evidence
    assert "container" not in found.cause
    assert not [s for s in found.next if s.kind == "hosted-model-ctl"]
    assert [s.variable for s in found.next if s.kind == "topology"] == ["RHTEVAN_WORK_MODEL_PORT"]


def test_nothing_listening_behind_a_running_container_is_the_port_not_the_container(
    topology: Topology,
) -> None:
    hub = unanswering_hub(7, "curl: (7) Failed to connect to 127.0.0.1 port 10000")
    assert hub.containers["hosted-model"].running
    assert problems(network(topology, {"rhtevan-work": hub})) == {
        "rhtevan-work": {"model-port-closed"}
    }


def test_a_server_that_refuses_the_request_names_the_key_file_variable(
    topology: Topology,
) -> None:
    """vLLM --api-key: the host's probe (no key) gets 401, and so does the listener's."""
    hub = unanswering_hub(22, "curl: (22) The requested URL returned error: 401")
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
    hub = unanswering_hub(22)
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
    hub = states()["rhtevan-work"]
    hub.logs["router"] = [ROUTER_STARTED]
    net = network(topology, {"rhtevan-work": hub}, links=[link])
    found = one(net, "link-port-unreachable")
    assert found.host == "rhtevan-work"
    assert found.next[0].variable == "RHTEVAN_WORK_INTER_ROUTER_PORT"
    assert hub.now is not None
    hub.containers["default-skupper-router"].started_at = hub.now - 3
    assert problems(network(topology, {"rhtevan-work": hub}, links=[link])) == {}


def test_an_unread_router_log_is_no_evidence_of_a_firewall(topology: Topology) -> None:
    """A router whose log could not be read (a journald host whose journal the user cannot
    read) may be a standalone one (tmp-not-writable): its silence shows no listener."""
    hub_address = next(p for p in topology.providers if p.name == "rhtevan-work").public_host
    link = LinkProbe("local", "rhtevan-work", hub_address, 55671, False, "Pending")
    log: list[str] | None
    for log in ([], None):
        hub = states()["rhtevan-work"]
        if log is None:
            hub.logs.pop("router", None)  # podman logs failed: not read at all
        else:
            hub.logs["router"] = log
            hub.logs_unavailable["router"] = "container x logs to the journal; ..."
        found = problems(network(topology, {"rhtevan-work": hub}, links=[link]))
        assert "link-port-unreachable" not in found.get("rhtevan-work", [])
        assert "tmp-not-writable" not in found.get("rhtevan-work", [])


def test_an_unavailable_log_is_said_not_taken_for_a_clean_one(topology: Topology) -> None:
    hub = states()["rhtevan-work"]
    hub.logs["router"] = []
    hub.logs_unavailable["router"] = "container default-skupper-router logs to the journal"
    found = one(network(topology, {"rhtevan-work": hub}), "log-unavailable")
    assert (found.host, found.severity) == ("rhtevan-work", "info")
    assert found.evidence == ["container default-skupper-router logs to the journal"]
    assert "CONTAINER_NAME=default-skupper-router" in found.next[0].text


def test_a_read_that_could_not_be_parsed_names_the_command_and_its_first_line(
    topology: Topology,
) -> None:
    text = (STATES / "up" / "rhel-ai.txt").read_text()
    warned = text.replace(
        "@@section containers\n", "@@section containers\n|WARN[0000] cgroupv1 is deprecated\n", 1
    )
    assert warned != text
    rhel = parse_site_state(warned)
    rhel.now = 2_000_000_000
    found = one(network(topology, {"rhel-ai": rhel}), "read-unparsed")
    assert found.host == "rhel-ai" and found.severity == "warning"
    (unparsed,) = found.unparsed
    assert (unparsed.fact, unparsed.command) == ("containers", "podman ps -a --format json")
    assert unparsed.first_line == "WARN[0000] cgroupv1 is deprecated"
    assert found.next[0].command == "podman ps -a --format json"
    # the site is unknown, not guessed stopped: no finding about its router's state
    assert set(problems(network(topology, {"rhel-ai": rhel})).get("rhel-ai", [])) <= {
        "read-unparsed"
    }


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
    link = LinkProbe("local", "rhel-ai", "rhel-ai.example", 8000, True, "Ready", ready=True)
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


def test_a_host_without_the_skupper_cli_is_told_to_install_it_not_to_upgrade(
    topology: Topology,
) -> None:
    bare = states()["rhel-ai"]
    bare.skupper = parse_skupper_version("sh: 1: eval: skupper: not found\n", 127)
    net = network(topology, {"rhel-ai": bare})
    found = one(net, "skupper-missing")
    assert (found.host, found.severity) == ("rhel-ai", "error")
    assert "install the skupper CLI" in found.fix and "eval" not in " ".join(found.evidence)
    assert "version-mismatch" not in {f.id for f in findings(net) if f.host == "rhel-ai"}


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


def test_a_refused_certificate_is_evidenced_by_the_routers_own_connector_status_first(
    topology: Topology,
) -> None:
    """skrouterd logs a connector's failure once; its management keeps it while it retries:
    with no log line left, the connector status alone is the evidence, and it comes first."""
    local = states()["local"]
    refused = (
        "Connection to 127.0.0.9:8000 failed: amqp:connection:framing-error SSL Failure: "
        "error:0A000086:SSL routines::certificate verify failed"
    )
    local.logs["router"] = []
    local.connectors = [
        ConnectorStatus("link-hub", "inter-router", "127.0.0.9", "8000", "CONNECTING", refused),
        ConnectorStatus("link-other", "inter-router", "127.0.0.8", "8000", "CONNECTING", refused),
    ]
    link = LinkProbe("local", "rhel-ai", "127.0.0.9", 8000, True, "Pending")
    found = one(network(topology, {"local": local}, links=[link]), "link-cert-verify-failed")
    assert found.evidence[0] == (
        f"local router management: connector link-hub to 127.0.0.9:8000 CONNECTING: {refused}"
    )
    assert sum("router management" in e for e in found.evidence) == 1  # this link's only
    local.log_matches["certificate verify failed"] = [f"2026-12-03 SERVER (error) [C4] {refused}"]
    found = one(network(topology, {"local": local}, links=[link]), "link-cert-verify-failed")
    assert "router management" in found.evidence[0] and "router log" in found.evidence[1]
    # a management answer that could not be read is said, and is no evidence of a refusal
    local.connectors, local.connectors_error = None, "skmanage exited 127: Error: crun: ..."
    found = one(network(topology, {"local": local}, links=[link]), "link-cert-verify-failed")
    assert found.evidence[0].startswith("local router log: ")
    assert "local router management not read: skmanage exited 127" in found.evidence[1]
    local.connectors, local.log_matches = [], {}
    assert "link-cert-verify-failed" not in problems(
        network(topology, {"local": local}, links=[link])
    ).get("rhel-ai", set())
    # read between the transport error and the retry, the connector is FAILED
    # (qd_connector.c@3.4.2:401): the same evidence
    local.connectors = [
        ConnectorStatus("link-hub", "inter-router", "127.0.0.9", "8000", "FAILED", refused)
    ]
    found = one(network(topology, {"local": local}, links=[link]), "link-cert-verify-failed")
    assert found.evidence[0] == (
        f"local router management: connector link-hub to 127.0.0.9:8000 FAILED: {refused}"
    )


def test_a_router_stopped_by_down_is_no_stale_status_and_nothing_starts_it_again(
    topology: Topology,
) -> None:
    from skupper_mcp.engine.operations.diagnose import respecting_asked

    hub = states()["rhtevan-work"]
    hub.containers["default-skupper-router"].state = "exited"
    hub.containers[f"{hub.user}-skupper-controller"].state = "exited"
    hub.units["skupper-controller.service"] = UnitState("skupper-controller.service")
    hub.units["skupper-default.service"] = UnitState("skupper-default.service")
    hub.enabled_at_boot.clear()  # down disables them
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


# -- known issues of some releases: each fires on the releases it affects, and only there -----


def on_release(state: SiteState, version: str) -> SiteState:
    state.skupper = parse_skupper_version(version)  # 2.2's bare answer: the version
    return state


def ids_on(net: Network, host: str) -> set[str]:
    return {f.id for f in findings(net) if f.host == host}


def with_cluster(topology: Topology, direct: str) -> Topology:
    """The recorded topology with a cluster site that links to ``direct``."""
    assert isinstance(topology.path, Path)
    text = topology.path.read_text() + (
        f"\nCRC_SITE_NAME=crc-test\nCRC_RHEL_AI_PORT=8100\nCRC_RHTEVAN_WORK_PORT=8101\n"
        f"CRC_DIRECT_LINKS={direct}\n"
    )
    path = topology.path.with_name("with-cluster.env")
    try:
        path.write_text(text)
        return load_topology(path)
    finally:
        path.unlink()


def test_2331_multicast_unaccepted_on_2_1_0_to_2_1_2_hubs_a_cluster_links_to(
    topology: Topology,
) -> None:
    """router_state_handler.go@2.1.2:205 receives mc/sfe.all without accepting it;
    @2.1.3:207-209 accepts: 2.1.3 and later hubs, or hubs the cluster does not link to,
    have nothing to fear."""
    clustered = with_cluster(topology, "rhtevan-work")
    for version, fires in (("2.1.0", True), ("2.1.2", True), ("2.1.3", False), ("2.2.1", False)):
        hub = on_release(states()["rhtevan-work"], version)
        found = ids_on(network(clustered, {"rhtevan-work": hub}), "rhtevan-work")
        assert ("controller-multicast-unaccepted" in found) is fires, version
    # no cluster link to this hub: nothing
    rhel = on_release(states()["rhel-ai"], "2.1.2")
    assert "controller-multicast-unaccepted" not in ids_on(
        network(clustered, {"rhel-ai": rhel}), "rhel-ai"
    )
    assert "controller-multicast-unaccepted" not in ids_on(
        network(topology, {"rhel-ai": rhel}), "rhel-ai"
    )


def test_2193_a_2_1_0_site_ready_with_its_router_gone(topology: Topology) -> None:
    """network_status_handler.go@2.1.1:83-85 sets the Site's Running condition; 2.1.0 has
    no such call: its Site stays Ready with the router removed and the controller running."""
    for version, fires in (("2.1.0", True), ("2.1.1", False), ("2.2.1", False)):
        hub = on_release(states()["rhtevan-work"], version)
        del hub.containers["default-skupper-router"]
        hub.units["skupper-default.service"] = UnitState("skupper-default.service")
        found = ids_on(network(topology, {"rhtevan-work": hub}), "rhtevan-work")
        assert ("site-ready-without-router" in found) is fires, version
    # a running router: nothing wrong on any release
    hub = on_release(states()["rhtevan-work"], "2.1.0")
    assert "site-ready-without-router" not in ids_on(
        network(topology, {"rhtevan-work": hub}), "rhtevan-work"
    )


def _socket_off(state: SiteState, *, controller_installed: bool) -> SiteState:
    state.units["podman.socket"] = UnitState(
        "podman.socket", load_state="loaded", unit_file_state="disabled"
    )
    if not controller_installed:
        state.units["skupper-controller.service"] = UnitState("skupper-controller.service")
    return state


def test_2430_a_2_1_uninstall_leaves_podman_socket_off(topology: Topology) -> None:
    """uninstall.go@2.1.4:78 calls systemdGlobal.Disable (systemd.go@2.1.2:338-351: disable
    and stop podman.socket); 2.2.0 no longer does (#2434)."""
    for version, fires in (("2.1.0", True), ("2.1.4", True), ("2.2.0", False)):
        hub = _socket_off(on_release(states()["rhtevan-work"], version), controller_installed=False)
        net = network(topology, {"rhtevan-work": hub}, asked={"rhtevan-work": "teardown"})
        assert ("uninstall-stopped-podman-socket" in ids_on(net, "rhtevan-work")) is fires
        if fires:
            found = one(net, "uninstall-stopped-podman-socket")
            assert "podman.socket: inactive (disabled)" in found.evidence
            assert found.next[0].command == "systemctl --user enable --now podman.socket"
        # a host never set up (no teardown asked) has its socket off as podman leaves it
        fresh = network(topology, {"rhtevan-work": hub})
        assert "uninstall-stopped-podman-socket" not in ids_on(fresh, "rhtevan-work")


def test_2281_a_teardown_without_podman_socket_would_fail_on_every_2_x(
    topology: Topology,
) -> None:
    """uninstall.go@2.1.2:45-48 and @2.2.1:45-48: no container client, no uninstall (open)."""
    for version in ("2.1.0", "2.1.3", "2.2.1"):
        hub = on_release(states()["rhtevan-work"], version)
        net = network(topology, {"rhtevan-work": _socket_off(hub, controller_installed=True)})
        found = one(net, "uninstall-needs-podman-socket")
        assert found.next[0].command == "systemctl --user enable --now podman.socket"
    # 1.x has no system uninstall; an active socket needs nothing
    old = _socket_off(on_release(states()["rhtevan-work"], "1.8.1"), controller_installed=True)
    assert "uninstall-needs-podman-socket" not in ids_on(
        network(topology, {"rhtevan-work": old}), "rhtevan-work"
    )
    quiet = on_release(states()["rhtevan-work"], "2.2.1")
    assert "uninstall-needs-podman-socket" not in ids_on(
        network(topology, {"rhtevan-work": quiet}), "rhtevan-work"
    )


def test_a_refusal_logged_once_and_gone_from_the_tail_is_found_by_the_search(
    topology: Topology,
) -> None:
    """skrouterd logs a connector's failure only when its message changes
    (qd_connector.c@3.4.2:416-431): after 100 newer lines the tail has none, and the search
    of the whole log (``SiteState.log_matches``) is the evidence."""
    link = LinkProbe("local", "rhel-ai", "rhel-ai.example", 8000, True, "Pending")
    local = states()["local"]
    local.logs["router"] = [ROUTER_STARTED] * 3  # the tail: newer lines only
    assert "link-cert-verify-failed" not in ids_on(
        network(topology, {"local": local}, links=[link]), "rhel-ai"
    )
    local.log_matches["certificate verify failed"] = [VERIFY_REFUSED]
    found = one(network(topology, {"local": local}, links=[link]), "link-cert-verify-failed")
    assert found.evidence[0] == f"local router log: {VERIFY_REFUSED}"
