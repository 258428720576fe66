"""The input resources of a namespace, loaded and validated as the bootstrap does."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import resources as res
from .failure import CliFailure
from .paths import NamespacePaths

DEFAULT_PORTS = {"inter-router": 55671, "edge": 45671}
#: A MultiKeyListener's strategy kinds.
KINDS = ("priority", "weighted")


@dataclass
class SiteState:
    """One site's definition: the Site and what belongs to it."""

    site: res.Resource
    router_accesses: list[res.Resource] = field(default_factory=list)
    listeners: list[res.Resource] = field(default_factory=list)
    connectors: list[res.Resource] = field(default_factory=list)
    links: list[res.Resource] = field(default_factory=list)
    secrets: dict[str, res.Resource] = field(default_factory=dict)
    others: list[res.Resource] = field(default_factory=list)

    @property
    def name(self) -> str:
        return res.name_of(self.site)

    @property
    def edge(self) -> bool:
        return bool(res.spec(self.site).get("edge"))

    def all_resources(self) -> list[res.Resource]:
        return [
            self.site,
            *self.router_accesses,
            *self.listeners,
            *self.connectors,
            *self.links,
            *self.secrets.values(),
            *self.others,
        ]


def role_port(role: dict[str, object]) -> int:
    """The port a RouterAccess role listens on (0 or absent means the role's default)."""
    port = int(str(role.get("port") or 0))
    return port or DEFAULT_PORTS.get(str(role.get("name")), 0)


def has_explicit_ports(router_access: res.Resource) -> bool:
    return any(int(str(r.get("port") or 0)) for r in res.spec(router_access).get("roles") or [])


def link_roles(router_access: res.Resource) -> list[dict[str, object]]:
    roles = res.spec(router_access).get("roles") or []
    return [r for r in roles if r.get("name") in DEFAULT_PORTS]


# internal/nonkube/common/site_state_validator.go@2.1.2:16-21
RFC1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
RFC1123_ERROR = (
    "a lowercase RFC 1123 name must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def _render_error(message: str) -> CliFailure:
    """A validator error as ``system start|reload`` reports it: the renderer validates, the
    bootstrap wraps it (bootstrap.go@2.1.2 ``failed to render site state``)."""
    return CliFailure(f"failed to render site state: {message}")


def check_rfc1123(kind: str, name: str) -> None:
    """Listener and Connector names (site_state_validator.go@2.1.2:135,159)."""
    if not RFC1123.match(name):
        raise _render_error(
            f"invalid {kind} name: invalid name {json.dumps(name)}: {RFC1123_ERROR}"
        )


def load(
    paths: NamespacePaths, *, multi_key_listeners: bool = False, fixed_strategy: bool = False
) -> SiteState:
    """Load ``input/resources``; fail with the real CLI's messages when it is unusable.
    ``multi_key_listeners``: the 2.2 loader, which knows the kind (2.1's ignores it);
    ``fixed_strategy``: 2.2.1's, which also holds each one's strategy to the running one's."""
    found = res.load_dir(paths.input_resources)
    if not found:
        raise CliFailure(f"No sources found at: {paths.input_resources}")
    for resource in found:
        declared = resource["metadata"].get("namespace")
        if declared and declared != paths.namespace:
            raise CliFailure(
                f'namespace must be "{paths.namespace}", but sources are defined using "{declared}"'
            )
    sites = res.of_kind(found, "Site")
    if not sites:
        raise CliFailure("failed to load site state: no site definition found")
    if len(sites) > 1:
        raise CliFailure("failed to load site state: only one site definition is allowed")
    state = SiteState(site=sites[0])
    for resource in found:
        kind = resource["kind"]
        if kind == "RouterAccess":
            state.router_accesses.append(resource)
        elif kind == "Listener":
            state.listeners.append(resource)
        elif kind == "Connector":
            state.connectors.append(resource)
        elif kind == "Link":
            state.links.append(resource)
        elif kind == "Secret":
            state.secrets[res.name_of(resource)] = resource
        elif kind != "Site":
            state.others.append(resource)
    validate(state)
    if multi_key_listeners:
        running = res.load_dir(paths.runtime_resources) if fixed_strategy else []
        validate_multi_key_listeners(state, running)
    return state


def validate(state: SiteState) -> None:
    """The checks of the real site state validator that a user can trip."""
    if state.links and not state.secrets:
        raise CliFailure(
            "failed to load site state: invalid site state: "
            "unable to process links (no secrets found)"
        )
    for link in state.links:
        secret = res.spec(link).get("tlsCredentials") or res.name_of(link)
        if secret not in state.secrets:
            raise CliFailure(
                "failed to load site state: invalid site state: "
                f'invalid link "{res.name_of(link)}": secret "{secret}" not found'
            )
    seen: dict[tuple[str, int], str] = {}
    for listener in state.listeners:
        spec, name = res.spec(listener), res.name_of(listener)
        check_rfc1123("listener", name)
        if not spec.get("host") or not int(str(spec.get("port") or 0)):
            raise _render_error(f"invalid listener: {name} - host and port are required")
        key = (str(spec["host"]), int(spec["port"]))
        if key in seen:
            raise _render_error(
                f"port {key[1]} is already mapped for host {json.dumps(key[0])} "
                f"(listener: {json.dumps(name)})"
            )
        if not spec.get("routingKey"):
            raise _render_error(f"routingKey is missing for listener: {name}")
        seen[key] = name
    for connector in state.connectors:
        spec, name = res.spec(connector), res.name_of(connector)
        check_rfc1123("connector", name)
        if not spec.get("host") or not int(str(spec.get("port") or 0)):
            raise _render_error(
                f"connector host and port are required (connector: {json.dumps(name)})"
            )
        if not spec.get("routingKey"):
            raise _render_error(f"routingKey is missing for connector: {name}")
    for router_access in state.router_accesses:
        if not link_roles(router_access):
            raise CliFailure(
                "failed to load site state: invalid router access "
                f'"{res.name_of(router_access)}": roles are required'
            )


def validate_multi_key_listeners(state: SiteState, running: Sequence[res.Resource] = ()) -> None:
    """The 2.2 validator's MultiKeyListener checks, those a user can trip: host and port
    required, and no host:port a Listener (or an earlier MultiKeyListener) maps already
    (``validateMultiKeyListeners``, site_state_validator.go@2.2.0:179-230); and from 2.2.1
    the strategy of one the site runs (``running``: its runtime resources) is not changed
    (site_state_validator.go@2.2.1:229-234, against ``LoadCurrentSiteState``)."""
    ran = {
        res.name_of(r): set(res.spec(r).get("strategy") or {})
        for r in running
        if r.get("kind") == "MultiKeyListener"
    }
    taken: dict[str, list[int]] = {}
    for listener in state.listeners:
        spec = res.spec(listener)
        taken.setdefault(str(spec.get("host")), []).append(int(str(spec.get("port") or 0)))
    for mkl in (r for r in state.others if r["kind"] == "MultiKeyListener"):
        spec, name = res.spec(mkl), res.name_of(mkl)
        host, port = str(spec.get("host") or ""), int(str(spec.get("port") or 0))
        if not host or not port:
            raise _render_error(f"invalid multikeylistener: {name} - host and port are required")
        if port in taken.get(host, []):
            raise _render_error(
                f"port {port} is already mapped for host {json.dumps(host)} "
                f"(multikeylistener: {json.dumps(name)})"
            )
        taken.setdefault(host, []).append(port)
        strategy = spec.get("strategy") or {}
        if ("priority" in strategy) == ("weighted" in strategy):
            raise _render_error(
                f"invalid multikeylistener: {name} - either strategy.priority or "
                "strategy.weighted is required"
                if not strategy
                else f"invalid multikeylistener: {name} - only one of strategy.priority or "
                "strategy.weighted must be defined"
            )
        if ran.get(name) and any(k in ran[name] and k not in strategy for k in KINDS):
            raise _render_error(f"invalid multikeylistener: {name} - strategy cannot be changed")
