"""Render the router pod's ``skrouterd.json`` from the namespace's Skupper resources.

Pure: the controller passes the objects and which TLS Secrets the pod has mounted; the
result is the config and, per Link that could not be configured, why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]
Entity = list[Any]  # [entity type, attributes]

CERTS_MOUNT = "/etc/skupper-router-certs"
CONFIG_MOUNT = "/etc/skupper-router/config"
MANAGEMENT_PORT = 5671
SKUPPER_VERSION = "2.1.1"
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
    base = f"${{SSL_PROFILE_BASE_PATH}}/{profile_name(secret_name)}"
    return [
        "sslProfile",
        {
            "name": profile_name(secret_name),
            "caCertFile": f"{base}/ca.crt",
            "certFile": f"{base}/tls.crt",
            "privateKeyFile": f"{base}/tls.key",
        },
    ]


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
    return [
        "connector",
        {
            "name": name,
            "role": "inter-router",
            "host": str(endpoint["host"]),
            "port": str(endpoint["port"]),
            "sslProfile": profile_name(secret),
            "cost": cost,
        },
    ], None


def render(
    *,
    site: Obj,
    pod_name: str,
    links: list[Obj],
    listeners: list[Obj],
    connectors: list[Obj],
    mounted: set[str],
    secret_types: dict[str, str],
) -> RenderedConfig:
    """The router config for a site's pod. ``mounted`` are the TLS Secrets in the pod's
    certs directory; ``secret_types`` maps every Secret of the namespace to its type."""
    meta = site["metadata"]
    metadata = {"id": meta["uid"], "name": meta["name"], "version": SKUPPER_VERSION}
    entities: list[Entity] = [
        [
            "router",
            {
                "id": f"{meta['name']}-{pod_name}",
                "mode": "edge" if _spec(site).get("edge") else "interior",
                "metadata": json.dumps(metadata),
            },
        ],
        [
            "listener",
            {"name": "skupper-local", "role": "normal", "host": "0.0.0.0", "port": MANAGEMENT_PORT},
        ],
    ]
    problems: dict[str, LinkProblem] = {}
    profiles: list[Entity] = []
    link_entities: list[Entity] = []
    for link in links:
        connector, problem = _link_connector(link, mounted, secret_types)
        if problem is not None:
            problems[link["metadata"]["name"]] = problem
        if connector is not None:
            profile = _ssl_profile(str(_spec(link)["tlsCredentials"]))
            if profile not in profiles:
                profiles.append(profile)
            link_entities.append(connector)
    entities += profiles + link_entities
    for listener in listeners:
        spec = _spec(listener)
        if spec.get("routingKey") and spec.get("port"):
            entities.append(
                [
                    "tcpListener",
                    {
                        "name": listener["metadata"]["name"],
                        "host": "0.0.0.0",
                        "port": str(spec["port"]),
                        "address": str(spec["routingKey"]),
                    },
                ]
            )
    for tcp_connector in connectors:
        spec = _spec(tcp_connector)
        if spec.get("routingKey") and spec.get("port") and spec.get("host"):
            entities.append(
                [
                    "tcpConnector",
                    {
                        "name": tcp_connector["metadata"]["name"],
                        "host": str(spec["host"]),
                        "port": str(spec["port"]),
                        "address": str(spec["routingKey"]),
                    },
                ]
            )
    return RenderedConfig(entities, problems)
