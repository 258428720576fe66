"""Render the router pod's ``skrouterd.json`` from the namespace's Skupper resources.

Pure: the controller passes the objects and which TLS Secrets the pod has mounted; the
result is the config and, per Link that could not be configured, why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from skupper_sandbox.router import entities
from skupper_sandbox.router.entities import Entity

Obj = dict[str, Any]

CERTS_MOUNT = "/etc/skupper-router-certs"
CONFIG_MOUNT = "/etc/skupper-router/config"
MANAGEMENT_PORT = 5671
NOT_MOUNTED = "TLS credentials secret not mounted; restart the router pod"


@dataclass
class LinkProblem:
    """Why a Link has no connector in the config: status ``Error`` or ``Pending``."""

    status: str
    message: str


@dataclass
class RenderedConfig:
    entities: list[Entity]
    link_problems: dict[str, LinkProblem] = field(default_factory=dict)

    def text(self) -> str:
        return json.dumps(self.entities, indent=2) + "\n"


def profile_name(secret_name: str) -> str:
    """The sslProfile (and certs directory) a TLS Secret becomes in the router."""
    return f"{secret_name}-profile"


def _ssl_profile(secret_name: str) -> Entity:
    name = profile_name(secret_name)
    return entities.ssl_profile(name, f"{entities.SSL_BASE}/{name}")


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _link_connector(
    link: Obj, mounted: set[str], secret_types: dict[str, str]
) -> tuple[Entity | None, LinkProblem | None]:
    spec, name = _spec(link), link["metadata"]["name"]
    endpoint = next(
        (
            e
            for e in spec.get("endpoints") or []
            if isinstance(e, dict) and e.get("name") == "inter-router"
        ),
        None,
    )
    if endpoint is None or not endpoint.get("host") or not endpoint.get("port"):
        return None, LinkProblem("Pending", "No inter-router endpoint")
    secret = spec.get("tlsCredentials") or ""
    if secret not in secret_types:
        return None, LinkProblem("Error", f'TLS credentials secret "{secret}" not found')
    if secret_types[secret] != "kubernetes.io/tls":
        return None, LinkProblem(
            "Error",
            f'TLS credentials secret "{secret}" is of type {secret_types[secret]}; only '
            "kubernetes.io/tls secrets are mounted into the router pod",
        )
    if secret not in mounted:
        return None, LinkProblem("Error", NOT_MOUNTED)
    try:
        cost = max(1, int(spec.get("cost", 1)))
    except (TypeError, ValueError):
        cost = 1
    host, port = str(endpoint["host"]), str(endpoint["port"])
    return entities.connector(name, "inter-router", host, port, profile_name(secret), cost), None


def render(
    *,
    site: Obj,
    pod_name: str,
    links: list[Obj],
    listeners: list[Obj],
    connectors: list[Obj],
    mounted: set[str],
    secret_types: dict[str, str],
    version: str,
    multi_key_listeners: list[Obj] | None = None,
) -> RenderedConfig:
    """The router config for a site's pod. ``mounted`` are the TLS Secrets in the pod's
    certs directory; ``secret_types`` maps every Secret of the namespace to its type;
    ``version`` is the cluster's Skupper release."""
    meta = site["metadata"]
    metadata = {"id": meta["uid"], "name": meta["name"], "version": version}
    mode = "edge" if _spec(site).get("edge") else "interior"
    config: list[Entity] = [
        entities.router(f"{meta['name']}-{pod_name}", mode, metadata),
        entities.listener("skupper-local", "normal", "0.0.0.0", MANAGEMENT_PORT),
    ]
    problems: dict[str, LinkProblem] = {}
    profiles: list[Entity] = []
    link_entities: list[Entity] = []
    for link in links:
        connector, problem = _link_connector(link, mounted, secret_types)
        if problem is not None:
            problems[link["metadata"]["name"]] = problem
        if connector is not None:
            entities.add_once(profiles, _ssl_profile(str(_spec(link)["tlsCredentials"])))
            link_entities.append(connector)
    config += profiles + link_entities
    for listener in listeners:
        spec = _spec(listener)
        if spec.get("routingKey") and spec.get("port"):
            config.append(
                entities.tcp_listener(
                    listener["metadata"]["name"],
                    "0.0.0.0",
                    str(spec["port"]),
                    str(spec["routingKey"]),
                )
            )
    # each on every address at its own port, as the Listeners here (the real controller
    # binds an allocated port the Service targets: internal/kube/site/extended_bindings.go
    # @2.2.0:198-244)
    for mkl in multi_key_listeners or []:
        spec = _spec(mkl)
        strategy = spec.get("strategy")
        if spec.get("port") and isinstance(strategy, dict):
            config += entities.multi_key_listener(
                mkl["metadata"]["name"], "0.0.0.0", str(spec["port"]), strategy
            )
    for tcp_connector in connectors:
        spec = _spec(tcp_connector)
        if spec.get("routingKey") and spec.get("port") and spec.get("host"):
            config.append(
                entities.tcp_connector(
                    tcp_connector["metadata"]["name"],
                    str(spec["host"]),
                    str(spec["port"]),
                    str(spec["routingKey"]),
                )
            )
    return RenderedConfig(config, problems)
