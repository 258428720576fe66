"""The Kubernetes site's findings (crc-secret-type, crc-router-pod-stale) from hand-built
cluster states: what the API returns about Secrets, Links and the router pod."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skupper_mcp.engine.desired.cluster import kube_resources_without_secrets, kube_secret_names
from skupper_mcp.engine.findings import RULES, Network
from skupper_mcp.engine.findings.kube import router_pod_stale, secret_type
from skupper_mcp.engine.readings import ClusterReading, Unread
from skupper_mcp.engine.scope import site_ref
from skupper_mcp.errors import ConnectError
from skupper_mcp.results import Finding
from skupper_mcp.sites import resources as cr
from skupper_mcp.sites.kube import ClusterSite, KubeState
from skupper_mcp.topology import Topology
from skupper_mcp.topology.validation import parse_topology
from topology_samples import SMALL_TOPOLOGY

TOPOLOGY = SMALL_TOPOLOGY + (
    "CRC_SITE_NAME=crc-test\nCRC_ALPHA_PORT=8000\nCRC_BETA_PORT=8001\nCRC_DIRECT_LINKS=beta\n"
)
# base64 of a private key's first bytes: it must never reach a finding
KEY_DATA = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t"
POD_STARTED = "2026-03-02T10:00:00Z"
EARLIER = "2026-03-02T09:59:00Z"
LATER = "2026-03-02T10:00:42Z"


@pytest.fixture
def topology() -> Topology:
    return parse_topology(TOPOLOGY)


def secret(name: str, created: str, type_: str | None = "kubernetes.io/tls") -> dict[str, Any]:
    found: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "creationTimestamp": created, "uid": f"uid-{name}"},
        "data": {"ca.crt": "Y2E=", "tls.crt": "Y3J0", "tls.key": KEY_DATA},
    }
    if type_ is not None:
        found["type"] = type_
    return found


def link(name: str, status: str = "Ready", message: str = "OK") -> dict[str, Any]:
    return {
        "kind": "Link",
        "metadata": {"name": name},
        "spec": {"tlsCredentials": name, "cost": 1},
        "status": {"status": status, "message": message},
    }


def with_status(resource: dict[str, Any], status: str, message: str) -> dict[str, Any]:
    return {**resource, "status": {"status": status, "message": message}}


def pod(name: str, created: str, **metadata: str) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "creationTimestamp": created, **metadata},
        "status": {"phase": "Running"},
    }


def healthy(topology: Topology) -> KubeState:
    """What setup leaves: the resources it writes, every link Ready, the pod after the
    Secrets."""
    held = {cr.key(r): r for r in kube_resources_without_secrets(topology)}
    by_kind = {
        kind: {name: with_status(r, "Ready", "OK") for (k, name), r in held.items() if k == kind}
        for kind in ("Site", "Link", "Listener")
    }
    return KubeState(
        version="v1.31.6",
        site=next(iter(by_kind["Site"].values())),
        links=by_kind["Link"],
        listeners=by_kind["Listener"],
        secrets={n: secret(n, EARLIER) for n in kube_secret_names(topology)},
        router_pods=[pod("skupper-router-bcdfg", POD_STARTED)],
    )


def set_link(state: KubeState, name: str, status: str, message: str = "") -> None:
    state.links[name] = with_status(state.links[name], status, message)


def with_first_secret(
    topology: Topology, created: str, **type_: str | None
) -> tuple[KubeState, str]:
    """A healthy cluster whose first link Secret was created at ``created`` (of ``type_``
    when given), and its name."""
    state = healthy(topology)
    name = kube_secret_names(topology)[0]
    state.secrets[name] = secret(name, created, **type_)
    return state, name


def network(topology: Topology, state: KubeState) -> Network:
    ref = site_ref(topology, "crc")
    site = ClusterSite(api=None, namespace="skupper")  # type: ignore[arg-type]  # never called
    return Network(topology, {"crc": ClusterReading(ref, site, state)})


def findings(topology: Topology, state: KubeState) -> list[Finding]:
    net = network(topology, state)
    return [f for rule in RULES for f in rule(net)]


def no_secret_data(found: Finding) -> None:
    text = found.model_dump_json()
    assert KEY_DATA not in text and "Y3J0" not in text, text


def test_a_healthy_cluster_has_no_finding(topology: Topology) -> None:
    assert findings(topology, healthy(topology)) == []


def test_an_opaque_link_secret_is_crc_secret_type_cleared_by_setup(topology: Topology) -> None:
    state, name = with_first_secret(topology, LATER, type_="Opaque")
    set_link(state, name, "Error", f'TLS credentials secret "{name}" is of type Opaque')

    [found] = findings(topology, state)
    assert (found.id, found.host, found.site, found.severity) == (
        "crc-secret-type",
        "crc",
        "crc-test",
        "error",
    )
    assert found.evidence == [
        f"Secret {name}: type Opaque, created {LATER}",
        f'Link {name}: Error: TLS credentials secret "{name}" is of type Opaque',
        f"router pod skupper-router-bcdfg: created {POD_STARTED}, 42 s before the Secret {name}",
        "the cluster's Skupper release is not known (no kube-adaptor image tag): 2.2.x "
        "ignores a Secret that is not kubernetes.io/tls (#2518), 2.1.x takes any type; taken "
        "as the cause because a Link using the Secret is not connected",
    ]
    assert [(s.kind, s.tool, s.arguments) for s in found.next] == [("tool", "setup", {})]
    assert "kubernetes.io/tls" in found.cause and "setup" in found.fix
    no_secret_data(found)


def test_a_secret_without_a_type_is_opaque_as_the_api_defaults_it(topology: Topology) -> None:
    state = healthy(topology)
    name = kube_secret_names(topology)[-1]
    state.secrets[name] = secret(name, EARLIER, type_=None)
    set_link(state, name, "Pending", "Not operational")
    [found] = secret_type(network(topology, state))
    assert found.evidence[0] == f"Secret {name}: type Opaque, created {EARLIER}"
    assert found.evidence[-2].endswith(f"60 s after the Secret {name}")


def test_a_release_not_known_is_no_reason_without_a_link_that_does_not_connect(
    topology: Topology,
) -> None:
    """Without the cluster's release the type alone says nothing (2.1.x takes any type):
    an Opaque Secret whose Link is Ready is no finding."""
    state, _ = with_first_secret(topology, EARLIER, type_="Opaque")
    assert list(secret_type(network(topology, state))) == []


def with_adaptor(state: KubeState, image: str) -> KubeState:
    """The router pods with the kube-adaptor container Skupper runs beside the router
    (``internal/kube/site/resources/skupper-router-deployment.yaml@2.2.1:134-137``)."""
    for p in state.router_pods:
        p["spec"] = {
            "containers": [
                {"name": "router", "image": "quay.io/skupper/skupper-router:3.5.1"},
                {"name": "kube-adaptor", "image": image},
            ]
        }
    return state


def test_crc_secret_type_only_where_the_release_ignores_opaque_secrets(topology: Topology) -> None:
    """skupper #2518: the check that takes only kubernetes.io/tls Secrets first shipped in
    2.2.0 (#2395; internal/kube/secrets/sync.go@2.2.1:158-159), 2.1.x takes any type
    (sync.go@2.1.4:120-131), and only main has the fix (#2524): the 2.2 branch, and so a
    2.2.2, still has the check. A Ready Link: the release alone decides."""
    name = kube_secret_names(topology)[0]
    for image, fires in (
        ("quay.io/skupper/kube-adaptor:2.2.1", True),
        ("quay.io/skupper/kube-adaptor:2.2.0", True),
        ("quay.io/skupper/kube-adaptor:2.2.2", True),
        ("quay.io/skupper/kube-adaptor:2.1.3", False),
        ("quay.io/skupper/kube-adaptor:2.1.4", False),
        ("quay.io/skupper/kube-adaptor:2.3.0", False),
        ("quay.io/skupper/kube-adaptor@sha256:0123", False),  # by digest: release unknown
    ):
        state = with_adaptor(healthy(topology), image)
        state.secrets[name] = secret(name, LATER, "Opaque")
        found = list(secret_type(network(topology, state)))
        assert bool(found) is fires, image
        if found:
            assert found[0].evidence[-1].startswith(f"kube-adaptor {image.rpartition(':')[2]}")


def test_a_secret_newer_than_the_router_pod_with_its_link_down_is_crc_router_pod_stale(
    topology: Topology,
) -> None:
    state, name = with_first_secret(topology, LATER)
    set_link(state, name, "Pending", "Not operational")

    [found] = findings(topology, state)
    assert (found.id, found.host, found.severity) == ("crc-router-pod-stale", "crc", "error")
    assert found.evidence == [
        f"router pod skupper-router-bcdfg: created {POD_STARTED}",
        f"Secret {name}: created {LATER}",
        f"Link {name}: Pending: Not operational",
    ]
    assert [(s.kind, s.tool, s.arguments) for s in found.next] == [
        ("tool", "up", {"target": "crc"})
    ]
    assert found.next[0].text == "up(target='crc')"
    no_secret_data(found)


def test_every_stale_secret_is_evidence_of_one_finding(topology: Topology) -> None:
    state = healthy(topology)
    names = kube_secret_names(topology)
    for name in names:
        state.secrets[name] = secret(name, LATER)
        set_link(state, name, "Error", "not mounted")
    [found] = router_pod_stale(network(topology, state))
    assert [line for line in found.evidence if line.startswith("Secret ")] == [
        f"Secret {n}: created {LATER}" for n in names
    ]


@pytest.mark.parametrize(
    ("created", "status", "why"),
    [
        (LATER, "Ready", "the link connected: the adaptor has the Secret after all"),
        (POD_STARTED, "Pending", "the pod's own second: the Secret may well be mounted"),
        (EARLIER, "Pending", "the pod started with the Secret: something else is wrong"),
    ],
)
def test_no_stale_pod_unless_the_secret_is_strictly_newer_and_its_link_down(
    topology: Topology, created: str, status: str, why: str
) -> None:
    state, name = with_first_secret(topology, created)
    set_link(state, name, status)
    assert list(router_pod_stale(network(topology, state))) == [], why


def test_a_link_the_controller_has_not_reported_on_yet_is_no_evidence(
    topology: Topology,
) -> None:
    state, name = with_first_secret(topology, LATER)
    state.links[name] = {k: v for k, v in state.links[name].items() if k != "status"}
    assert list(router_pod_stale(network(topology, state))) == []


def test_an_opaque_secret_newer_than_the_pod_is_only_a_type_problem(topology: Topology) -> None:
    """A new pod would not mount it either: deleting the pod is not the fix."""
    state, name = with_first_secret(topology, LATER, type_="Opaque")
    set_link(state, name, "Error", "wrong type")
    assert [f.id for f in findings(topology, state)] == ["crc-secret-type"]


def test_the_pod_compared_is_the_newest_one_not_being_deleted(topology: Topology) -> None:
    # the Secret's time as the client returns it
    state, name = with_first_secret(topology, "2026-03-02T10:00:10+00:00")
    set_link(state, name, "Pending", "Not operational")
    replacement = pod("skupper-router-hjklm", "2026-03-02T10:00:20+00:00")
    terminating = pod("skupper-router-bcdfg", POD_STARTED, deletionTimestamp=LATER)
    state.router_pods = [terminating, replacement]
    assert list(router_pod_stale(network(topology, state))) == []

    state.router_pods = [terminating]  # the Deployment has not made the new one yet
    assert list(router_pod_stale(network(topology, state))) == []
    state.router_pods = [pod("skupper-router-bcdfg", POD_STARTED), replacement]
    assert list(router_pod_stale(network(topology, state))) == []


def test_only_the_link_secrets_of_the_topology_count(topology: Topology) -> None:
    state = healthy(topology)
    state.secrets["someone-elses"] = secret("someone-elses", LATER, "Opaque")
    state.links["someone-elses"] = link("someone-elses", "Error", "x")
    assert findings(topology, state) == []


def test_no_cluster_state_no_kube_finding(topology: Topology) -> None:
    unread = Unread(site_ref(topology, "crc"), ConnectError("crc", "API unreachable"))
    net = Network(topology, {"crc": unread})
    assert list(secret_type(net)) == [] and list(router_pod_stale(net)) == []


def test_the_cluster_needs_setup_only_for_what_setup_builds(
    topology: Topology, tmp_path: Path
) -> None:
    """up refuses a torn-down cluster (no Site) instead of half-building it; the links that
    down removed (their Secrets kept) are up's to make again, not drift."""
    from skupper_mcp.connectors.pool import ConnectorPool
    from skupper_mcp.engine.desired.needs import setup_needed
    from skupper_mcp.engine.operations.updown import setup_problem
    from skupper_mcp.engine.sitemap import SiteMap

    ref = site_ref(topology, "crc")
    site = ClusterSite(api=None, namespace="skupper")  # type: ignore[arg-type]  # never called
    topo = topology.model_copy(update={"state_dir": tmp_path})
    sites = SiteMap(topo, ConnectorPool(topo.ssh.options()), None)
    assert setup_needed(topo, ClusterReading(ref, site, healthy(topo))) == []
    torn_down = KubeState(version="v1.31.6", site=None)
    refused = setup_problem(sites, ClusterReading(ref, site, torn_down, "teardown"))
    assert refused is not None and "run setup first" in refused and "Site/crc-test" in refused
    taken_down = healthy(topo)
    taken_down.links.clear()  # what down does; the Secrets stay
    assert setup_needed(topo, ClusterReading(ref, site, taken_down, "down")) == []
    assert setup_needed(topo, ClusterReading(ref, site, taken_down, "up")) == []
    taken_down.secrets.clear()  # never linked: setup's to build
    needed = setup_needed(topo, ClusterReading(ref, site, taken_down, "up")) or []
    assert needed and all(line.startswith("Link/link-") for line in needed), needed
