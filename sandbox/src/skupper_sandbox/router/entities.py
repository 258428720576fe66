"""The one builder of ``skrouterd.json`` entities, for every renderer in the sandbox.

``skrouterd.json`` is a JSON list of ``[entityType, attributes]`` pairs. Emulated ``skupper``
on a podman host (``emulated/skupper/render.py``) and the Kubernetes controller
(``kube/routerconfig.py``) render it from different resources, but each entity has one
shape, built here, with its attributes in the order Skupper writes them (the rendered text
is compared, so the order is part of the shape). Pure: nothing here reads or writes files.
"""

from __future__ import annotations

import json
from typing import Any

Entity = list[Any]  # [entity type, attributes]

#: The variable the router image sets and ``configure.sh`` expands in sslProfile paths.
SSL_BASE = "${SSL_PROFILE_BASE_PATH}"
#: The files of a TLS credential directory (a Secret's keys), in the profile's order.
_PROFILE_FILES = (("caCertFile", "ca.crt"), ("certFile", "tls.crt"), ("privateKeyFile", "tls.key"))


def router(
    router_id: str, mode: str, metadata: dict[str, str], hello_max_age: str | None = None
) -> Entity:
    """The ``router`` entity: ``metadata`` (the site's id, name and version) as JSON text."""
    attributes: dict[str, Any] = {"id": router_id, "mode": mode}
    if hello_max_age is not None:
        attributes["helloMaxAgeSeconds"] = hello_max_age
    attributes["metadata"] = json.dumps(metadata)
    return ["router", attributes]


def ssl_profile(name: str, directory: str) -> Entity:
    """An ``sslProfile`` on the ``ca.crt``, ``tls.crt`` and ``tls.key`` in ``directory``."""
    return [
        "sslProfile",
        {"name": name, **{key: f"{directory}/{file}" for key, file in _PROFILE_FILES}},
    ]


def listener(name: str, role: str, host: str, port: int, ssl_profile: str | None = None) -> Entity:
    """A ``listener``; with an sslProfile its peers authenticate by their client certificate
    (SASL EXTERNAL), as every TLS listener Skupper renders does."""
    attributes: dict[str, Any] = {"name": name, "role": role, "host": host, "port": port}
    if ssl_profile is not None:
        attributes |= {
            "sslProfile": ssl_profile,
            "saslMechanisms": "EXTERNAL",
            "authenticatePeer": True,
        }
    return ["listener", attributes]


def connector(name: str, role: str, host: str, port: str, ssl_profile: str, cost: int) -> Entity:
    """A link's ``connector`` (``inter-router`` or ``edge``)."""
    return [
        "connector",
        {
            "name": name,
            "role": role,
            "host": host,
            "port": port,
            "sslProfile": ssl_profile,
            "cost": cost,
        },
    ]


def tcp_listener(
    name: str, host: str, port: str, address: str, site_id: str | None = None
) -> Entity:
    return ["tcpListener", _tcp(name, host, port, address, site_id)]


def tcp_connector(
    name: str, host: str, port: str, address: str, site_id: str | None = None
) -> Entity:
    return ["tcpConnector", _tcp(name, host, port, address, site_id)]


def multi_address_listener(
    name: str, host: str, port: str, strategy: str, site_id: str | None = None
) -> Entity:
    """A ``tcpListener`` with ``multiAddressStrategy`` and no ``address``: its addresses are
    ``listenerAddress`` entities (internal/site/multikeylistener.go@2.2.0)."""
    attributes = {"name": name, "host": host, "port": port}
    if site_id is not None:
        attributes["siteId"] = site_id
    attributes["multiAddressStrategy"] = strategy
    return ["tcpListener", attributes]


def multi_key_listener(
    name: str, host: str, port: str, strategy: dict[str, Any], site_id: str | None = None
) -> list[Entity]:
    """A MultiKeyListener's entities, on a podman site and in a Kubernetes router pod alike:
    a multi-address tcpListener ``multiAddress/<name>`` and a listenerAddress ``<name>/<key>``
    per key; priority values count down from the first key (the highest, the preferred),
    weighted ones are the weights (internal/site/multikeylistener.go@2.2.0:27-67)."""
    listener = f"multiAddress/{name}"
    kind = "priority" if "priority" in strategy else "weighted"
    keys = (strategy.get(kind) or {}).get("routingKeys") or []
    if kind == "priority":
        values = {str(k): len(keys) - 1 - i for i, k in enumerate(keys)}
    else:
        values = {str(k): int(v) for k, v in dict(keys).items()}
    return [multi_address_listener(listener, host, port, kind, site_id)] + [
        listener_address(f"{name}/{key}", key, value, listener) for key, value in values.items()
    ]


def listener_address(name: str, address: str, value: int, listener: str) -> Entity:
    return [
        "listenerAddress",
        {"name": name, "address": address, "value": value, "listener": listener},
    ]


def _tcp(name: str, host: str, port: str, address: str, site_id: str | None) -> dict[str, str]:
    attributes = {"name": name, "host": host, "port": port, "address": address}
    if site_id is not None:
        attributes["siteId"] = site_id
    return attributes


def add_once(entities: list[Entity], entity: Entity) -> None:
    """Append ``entity`` unless an equal one is there: Links sharing a Secret share one
    sslProfile, since skrouterd refuses a duplicate name and does not start."""
    if entity not in entities:
        entities.append(entity)
