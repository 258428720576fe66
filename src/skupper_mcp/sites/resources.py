"""The Skupper resources (skupper.io/v2alpha1 CRs) each site should have. Pure.

Names are chosen so several hubs can link into one site without clashing: a hub's
RouterAccess is ``<site>-public``; the Secret and Link that reach it from elsewhere are
both ``link-<site>``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

# read from facts (the only code that reads a status word); here for the sites' callers
from ..facts.resource_status import ResourceStatus as ResourceStatus
from ..facts.resource_status import resource_status as resource_status

API_VERSION = "skupper.io/v2alpha1"

Resource = dict[str, Any]


@dataclass(frozen=True)
class ClientCert:
    """A hub's client certificate (from runtime/certs/client-<RouterAccess>/): what a peer
    needs to link to it. Holds a private key: never log or return it."""

    ca_crt: bytes
    tls_crt: bytes
    tls_key: bytes

    def __repr__(self) -> str:
        return "ClientCert(<redacted>)"

    def secret_data(self) -> dict[str, str]:
        raw = {"ca.crt": self.ca_crt, "tls.crt": self.tls_crt, "tls.key": self.tls_key}
        return {k: base64.b64encode(v).decode() for k, v in raw.items()}


@dataclass(frozen=True)
class LinkTarget:
    """Where a link goes: the peer's site name and public endpoints."""

    site: str
    host: str
    inter_router_port: int
    edge_port: int


def router_access_name(site: str) -> str:
    return f"{site}-public"


def link_name(site: str) -> str:
    return f"link-{site}"


def client_cert_dir(site: str) -> str:
    """runtime/certs/<dir> holding the client certificate peers use to link to ``site``."""
    return f"client-{router_access_name(site)}"


def _cr(kind: str, name: str, spec: dict[str, Any]) -> Resource:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}, "spec": spec}


def site(name: str) -> Resource:
    return _cr("Site", name, {})


def router_access(
    site_name: str, inter_router_port: int, edge_port: int, sans: list[str]
) -> Resource:
    name = router_access_name(site_name)
    return _cr(
        "RouterAccess",
        name,
        {
            "roles": [
                {"name": "inter-router", "port": inter_router_port},
                {"name": "edge", "port": edge_port},
            ],
            "tlsCredentials": name,
            "subjectAlternativeNames": list(sans),
        },
    )


def connector(routing_key: str, host: str, port: int) -> Resource:
    return _cr("Connector", routing_key, {"routingKey": routing_key, "host": host, "port": port})


def listener(name: str, routing_key: str, host: str, port: int) -> Resource:
    return _cr("Listener", name, {"routingKey": routing_key, "host": host, "port": port})


def multi_key_listener(
    name: str, host: str, port: int, strategy: str, keys: list[tuple[str, int]]
) -> Resource:
    """A MultiKeyListener (Skupper 2.2+, config/samples/skupper_v2alpha1_multikeylistener.yaml
    @2.2.0): ``priority`` lists the keys, the first preferred; ``weighted`` maps each to its
    weight."""
    routing: list[str] | dict[str, int] = (
        [k for k, _ in keys] if strategy == "priority" else dict(keys)
    )
    return _cr(
        "MultiKeyListener",
        name,
        {"host": host, "port": port, "strategy": {strategy: {"routingKeys": routing}}},
    )


def link_secret(target: LinkTarget, cert: ClientCert) -> Resource:
    """The Secret a Link presents: type kubernetes.io/tls, the three keys in ``data``
    (the podman loader reads only ``data``; the kube-adaptor mounts only TLS secrets)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"name": link_name(target.site)},
        "data": cert.secret_data(),
    }


def link(target: LinkTarget) -> Resource:
    """A Link built by hand (``link generate`` prints the wrong host on podman)."""
    name = link_name(target.site)
    return _cr(
        "Link",
        name,
        {
            "tlsCredentials": name,
            "cost": 1,
            "endpoints": [
                {
                    "name": "inter-router",
                    "host": target.host,
                    "port": str(target.inter_router_port),
                },
                {"name": "edge", "host": target.host, "port": str(target.edge_port)},
            ],
        },
    )


def key(resource: Resource) -> tuple[str, str]:
    return str(resource.get("kind", "")), str(resource.get("metadata", {}).get("name", ""))


def same(desired: Resource, actual: Resource | None) -> bool:
    """Whether ``actual`` already says what ``desired`` says (status and metadata noise
    ignored). For link Secrets only the CA matters: a hub re-issues its client certificate
    from the same CA on every reload, and copies issued before stay valid."""
    if actual is None:
        return False
    if desired.get("kind") == "Secret":
        if desired.get("type") != actual.get("type"):
            return False
        want = desired.get("data", {})
        have = actual.get("data", {}) or {}
        return set(want) <= set(have) and want.get("ca.crt") == have.get("ca.crt")
    return normal(desired.get("spec")) == normal(actual.get("spec"))


def other_strategy(desired: Resource, actual: Resource | None) -> bool:
    """Whether ``actual`` is the MultiKeyListener ``desired`` names with the other strategy
    (priority for weighted or back), which is not changed in place: the CRD holds it
    immutable (config/crd/bases/skupper_multikeylistener_crd.yaml@2.2.0) and the 2.2.1
    system validator refuses it against the running state ("strategy cannot be changed",
    internal/nonkube/common/site_state_validator.go@2.2.1:229-234)."""
    if desired.get("kind") != "MultiKeyListener" or not isinstance(actual, dict):
        return False
    spec = actual.get("spec")
    strategy = spec.get("strategy") if isinstance(spec, dict) else None
    have = set(strategy) if isinstance(strategy, dict) else set()
    return bool(have) and have != set(desired["spec"]["strategy"])


def normal(value: Any) -> Any:
    """Compare ports as strings and ignore empty optional fields."""
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    return value
