"""The input resources of a namespace, loaded and validated as the bootstrap does."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import resources as res
from .failure import CliFailure
from .paths import NamespacePaths

DEFAULT_PORTS = {"inter-router": 55671, "edge": 45671}


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


def load(paths: NamespacePaths) -> SiteState:
    """Load ``input/resources``; fail with the real CLI's messages when it is unusable."""
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
        spec = res.spec(listener)
        for required in ("routingKey", "host", "port"):
            if not spec.get(required):
                raise CliFailure(
                    f'failed to load site state: invalid listener "{res.name_of(listener)}": '
                    f"{required} is required"
                )
        key = (str(spec["host"]), int(spec["port"]))
        if key in seen:
            raise CliFailure(
                f'failed to load site state: invalid listener "{res.name_of(listener)}": '
                f'host and port already in use by listener "{seen[key]}"'
            )
        seen[key] = res.name_of(listener)
    for connector in state.connectors:
        spec = res.spec(connector)
        for required in ("routingKey", "port"):
            if not spec.get(required):
                raise CliFailure(
                    f'failed to load site state: invalid connector "{res.name_of(connector)}": '
                    f"{required} is required"
                )
    for router_access in state.router_accesses:
        if not link_roles(router_access):
            raise CliFailure(
                "failed to load site state: invalid router access "
                f'"{res.name_of(router_access)}": roles are required'
            )
