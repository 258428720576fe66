"""The subset of ``skrouterd.json`` the sandbox router honours, as typed values.

``skrouterd.json`` is a JSON list of ``[entityType, attributes]`` pairs. Parsing is pure;
``expand`` mirrors what the router image's ``launch.sh`` does to the copied file and
``check_ssl_profiles`` refuses files the real router could not load.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import RouterConfigError

_VARIABLE = re.compile(r"\$(?:(\w+)|\{([^}]*)\})")


@dataclass(frozen=True)
class RouterIdentity:
    """The ``router`` entity: the router's id and the site it belongs to."""

    id: str
    mode: str
    site_name: str
    site_id: str
    # how long a lost router's link state (and the addresses behind it) is kept
    remote_ls_max_age: float = 60.0
    # 3.5.0's unreachableHoldoffSeconds as configured (None: not set; router.release)
    unreachable_holdoff: float | None = None


@dataclass(frozen=True)
class SslProfile:
    name: str
    ca_cert_file: str
    cert_file: str
    private_key_file: str

    def files(self) -> dict[str, str]:
        return {
            "caCertFile": self.ca_cert_file,
            "certFile": self.cert_file,
            "privateKeyFile": self.private_key_file,
        }


@dataclass(frozen=True)
class Listener:
    """A ``listener``: ``inter-router`` / ``edge`` accept links, ``normal`` is management."""

    name: str
    role: str
    host: str
    port: int
    ssl_profile: str | None
    authenticate_peer: bool


@dataclass(frozen=True)
class Connector:
    """A ``connector``: a Link this router dials."""

    name: str
    role: str
    host: str
    port: int
    ssl_profile: str | None
    cost: int
    verify_hostname: bool


@dataclass(frozen=True)
class TcpEndpoint:
    """A ``tcpListener`` or ``tcpConnector``: a port tied to a routing key (``address``)."""

    name: str
    host: str
    port: int
    address: str
    #: ``none``, or a multi-address listener's ``priority`` / ``weighted``
    strategy: str = "none"
    #: a multi-address listener's (address, value) from its ``listenerAddress`` entities
    addresses: tuple[tuple[str, int], ...] = ()

    def routing_keys(self) -> list[str]:
        """The routing keys it serves: its address, or each of its listenerAddresses."""
        return [a for a, _ in self.addresses] if self.strategy != "none" else [self.address]


@dataclass(frozen=True)
class RouterConfig:
    router: RouterIdentity
    ssl_profiles: dict[str, SslProfile] = field(default_factory=dict)
    listeners: list[Listener] = field(default_factory=list)
    connectors: list[Connector] = field(default_factory=list)
    tcp_listeners: list[TcpEndpoint] = field(default_factory=list)
    tcp_connectors: list[TcpEndpoint] = field(default_factory=list)


def expand(text: str, env: Mapping[str, str] | None = None) -> str:
    """Expand ``$VAR`` / ``${VAR}`` like ``os.path.expandvars`` (what the image's launch.sh
    uses): a variable that is not set stays as written."""
    env = os.environ if env is None else env

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, match.group(0))

    return _VARIABLE.sub(replace, text)


def parse(text: str, source: str = "skrouterd.json") -> RouterConfig:
    """Parse the router configuration text; raise ``RouterConfigError`` naming what is wrong."""
    try:
        entities = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RouterConfigError(f"not valid JSON: {exc}", path=source) from exc
    if not isinstance(entities, list):
        raise RouterConfigError("expected a list of [entityType, attributes]", path=source)
    identity: RouterIdentity | None = None
    profiles: dict[str, SslProfile] = {}
    listeners: list[Listener] = []
    connectors: list[Connector] = []
    tcp_listeners: list[TcpEndpoint] = []
    tcp_connectors: list[TcpEndpoint] = []
    addresses: dict[str, list[tuple[str, int]]] = {}
    for entry in entities:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict)):
            raise RouterConfigError(f"bad entity {entry!r}", path=source)
        kind, attrs = entry[0], entry[1]
        try:
            if kind == "router":
                identity = _router(attrs)
            elif kind == "sslProfile":
                profile = _ssl_profile(attrs)
                profiles[profile.name] = profile
            elif kind == "listener":
                listeners.append(_listener(attrs))
            elif kind == "connector":
                connectors.append(_connector(attrs))
            elif kind == "tcpListener":
                tcp_listeners.append(_tcp(attrs))
            elif kind == "tcpConnector":
                tcp_connectors.append(_tcp(attrs))
            elif kind == "listenerAddress":
                owner = addresses.setdefault(_str(attrs, "listener"), [])
                owner.append((_str(attrs, "address"), int(attrs["value"])))
        except (KeyError, ValueError, TypeError) as exc:
            raise RouterConfigError(
                f"{kind} {attrs.get('name', '')!r}: {exc}", path=source
            ) from exc
    if identity is None:
        raise RouterConfigError("no router entity", path=source)
    tcp_listeners = [_with_addresses(t, addresses.pop(t.name, []), source) for t in tcp_listeners]
    if addresses:  # the sandbox's own check: Skupper renders none without its listener
        raise RouterConfigError(
            f"listenerAddress of unknown tcpListener {next(iter(addresses))!r}", path=source
        )
    named: list[Listener | Connector] = [*listeners, *connectors]
    for item in named:
        if item.ssl_profile and item.ssl_profile not in profiles:
            raise RouterConfigError(
                f"{item.name!r} names sslProfile {item.ssl_profile!r}, which is not defined",
                path=source,
            )
    return RouterConfig(identity, profiles, listeners, connectors, tcp_listeners, tcp_connectors)


def check_ssl_profiles(config: RouterConfig, resolve: Callable[[str], Path]) -> None:
    """Refuse, as skrouterd 3.4.2 does, a profile a listener or connector uses whose PEM files
    do not load: only the first bad file is named, and the certificate names a bad key too
    (skrouterd loads them as one chain). A profile nothing uses is never loaded."""
    used = [item.ssl_profile for item in config.listeners]
    used += [item.ssl_profile for item in config.connectors]
    for name in dict.fromkeys(n for n in used if n):
        profile = config.ssl_profiles.get(name)
        if profile is None:
            continue
        for attribute, path in (
            ("caCertFile", profile.ca_cert_file),
            ("certFile", profile.cert_file),
        ):
            if not _pem_loads(profile, attribute, resolve):
                raise RouterConfigError(
                    "Python: CError: Configuration: Failed to configure TLS"
                    f" {attribute} '{resolve(path)}' from sslProfile '{profile.name}'"
                )


def _pem_loads(profile: SslProfile, attribute: str, resolve: Callable[[str], Path]) -> bool:
    import ssl

    try:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if attribute == "caCertFile":
            context.load_verify_locations(cafile=resolve(profile.ca_cert_file))
        else:
            context.load_cert_chain(resolve(profile.cert_file), resolve(profile.private_key_file))
    except (ssl.SSLError, OSError):
        return False
    return True


def _str(attrs: Mapping[str, Any], key: str, default: str = "") -> str:
    value = attrs.get(key, default)
    return "" if value is None else str(value)


def _bool(attrs: Mapping[str, Any], key: str, default: bool) -> bool:
    value = attrs.get(key, default)
    if isinstance(value, str):
        return value.strip().lower() in {"true", "yes", "1"}
    return bool(value)


def _port(attrs: Mapping[str, Any]) -> int:
    port = int(str(attrs["port"]))
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is out of range")
    return port


def _router(attrs: Mapping[str, Any]) -> RouterIdentity:
    metadata: dict[str, Any] = {}
    raw = attrs.get("metadata")
    if isinstance(raw, str) and raw.strip():
        try:
            loaded = json.loads(raw)
        except json.JSONDecodeError:
            loaded = {}
        metadata = loaded if isinstance(loaded, dict) else {}
    router_id = _str(attrs, "id")
    return RouterIdentity(
        id=router_id,
        mode=_str(attrs, "mode", "interior"),
        site_name=str(metadata.get("name") or router_id),
        site_id=str(metadata.get("id") or ""),
        remote_ls_max_age=_float(attrs, "remoteLsMaxAgeSeconds", 60.0),
        unreachable_holdoff=(
            _float(attrs, "unreachableHoldoffSeconds", 1.0)
            if "unreachableHoldoffSeconds" in attrs
            else None
        ),
    )


def _float(attrs: Mapping[str, Any], key: str, default: float) -> float:
    try:
        return float(attrs.get(key, default))
    except (TypeError, ValueError):
        return default


def _ssl_profile(attrs: Mapping[str, Any]) -> SslProfile:
    return SslProfile(
        name=_str(attrs, "name"),
        ca_cert_file=_str(attrs, "caCertFile"),
        cert_file=_str(attrs, "certFile"),
        private_key_file=_str(attrs, "privateKeyFile"),
    )


def _listener(attrs: Mapping[str, Any]) -> Listener:
    return Listener(
        name=_str(attrs, "name"),
        role=_str(attrs, "role", "normal"),
        host=_str(attrs, "host"),
        port=_port(attrs),
        ssl_profile=_str(attrs, "sslProfile") or None,
        authenticate_peer=_bool(attrs, "authenticatePeer", False),
    )


def _connector(attrs: Mapping[str, Any]) -> Connector:
    return Connector(
        name=_str(attrs, "name"),
        role=_str(attrs, "role", "inter-router"),
        host=_str(attrs, "host"),
        port=_port(attrs),
        ssl_profile=_str(attrs, "sslProfile") or None,
        cost=max(1, int(str(attrs.get("cost", 1)))),
        verify_hostname=_bool(attrs, "verifyHostname", True),
    )


def _tcp(attrs: Mapping[str, Any]) -> TcpEndpoint:
    strategy = _str(attrs, "multiAddressStrategy", "none")
    if strategy not in ("none", "priority", "weighted"):
        raise ValueError(f"multiAddressStrategy {strategy!r}: none, priority or weighted")
    address = _str(attrs, "address")
    if (strategy == "none") == (not address):  # tcp_adaptor.c@3.5.1:2444
        raise ValueError("Exactly one of the 'address' or 'multiAddressStrategy' field must be set")
    return TcpEndpoint(
        name=_str(attrs, "name"),
        host=_str(attrs, "host"),
        port=_port(attrs),
        address=address,
        strategy=strategy,
    )


def _with_addresses(
    listener: TcpEndpoint, addresses: list[tuple[str, int]], source: str
) -> TcpEndpoint:
    if addresses and listener.strategy == "none":  # the sandbox's own check: a config bug
        raise RouterConfigError(
            f"listenerAddress for tcpListener {listener.name!r}, which has no multiAddressStrategy",
            path=source,
        )
    return replace(listener, addresses=tuple(addresses))
