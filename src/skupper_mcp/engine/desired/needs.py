"""What setup would change at a site, decided once. Pure.

``podman_needs`` and ``cluster_needs`` list what setup must build (resources to apply, the
controller to install, a namespace to render, a router container to re-create, units to
write...), each item with the line that says it. Setup's plan is made from these (plus
starting what is stopped, and the cluster's links that ``down`` removed: bringing a site up is
not setting it up); ``status``'s drift is ``setup_needed``'s lines; ``up`` refuses a site
exactly when the list is not empty. So "setup plans nothing to build" iff "no drift" iff "up
does not refuse for setup" (tests/engine/test_setup_needed.py holds it over the recorded
site states).

Link Secrets are compared only when the caller has the peers' client certificates (setup
reads them; status and up do not): a hub re-issues its certificate from the same CA on every
reload, so what a Secret must match is only known from the hub.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...facts import names
from ...facts.private_keys import reads_as_owner
from ...facts.private_keys import summary as keys_summary
from ...facts.site_state import SiteState
from ...sites import resources as cr
from ...sites import units
from ...sites.kube import KubeState
from ...sites.resources import Resource
from ...topology import Topology
from ...vocabulary import LOCAL_HOST
from ..condition import unparsed_reason
from ..readings import Asked, ClusterReading, PodmanReading, Reading
from .cluster import Certs, base_resources, link_resources, link_targets
from .leftovers import Key, hub_pool_keys, leftover_lines, leftovers, listener_pool_keys
from .podman import hub_resources, local_resources, local_resources_without_secrets

#: What the user asked that leaves a site's links (on the cluster) removed on purpose.
_STOPS: tuple[Asked, ...] = ("down", "teardown")


@dataclass
class PodmanNeeds:
    """What setup must build on a podman site, and the line that says each."""

    lines: list[str] = field(default_factory=list)
    #: the lines a diagnose rule of their own explains (units, certificates, a router
    #: container made by hand): the drift finding leaves them to it
    explained: list[str] = field(default_factory=list)
    install_controller: bool = False
    enable_socket: bool = False
    apply: list[Resource] = field(default_factory=list)
    #: the pools' leftovers to remove (``leftovers``): (kind, name)
    remove: list[tuple[str, str]] = field(default_factory=list)
    #: MultiKeyListeners the site runs with the other strategy: removed and rendered
    #: without before they are applied anew (``resources.other_strategy``)
    replace: list[tuple[str, str]] = field(default_factory=list)
    first_render: bool = False
    reload: bool = False
    leftover: str | None = None
    recreate_tmpfs: bool = False
    close_keys: bool = False
    stale_units: list[str] = field(default_factory=list)
    install_units: bool = False

    @property
    def rendering(self) -> bool:
        return self.first_render or self.reload


def router_reads_as_owner(state: SiteState) -> bool:
    """Whether the router reads the site's keys as their owner (True when unknown)."""
    if state.router is None or state.login_uid is None:
        return True
    return reads_as_owner(state.router.inspect, state.login_uid)


def podman_needs(
    state: SiteState,
    desired: list[Resource],
    *,
    namespace: str,
    tmpfs: bool,
    owned: Mapping[Key, str] | None = None,
) -> PodmanNeeds:
    """Everything setup must build on a podman site, in the seed's order; ``owned`` are
    the pools' resources the site may hold (``leftovers``), those not desired removed."""
    need = PodmanNeeds()

    def say(line: str, explained: bool = False) -> None:
        need.lines.append(line)
        if explained:
            need.explained.append(line)

    podman = state.podman_path or "podman"
    controller = names.controller_container(state.user)
    router = names.router_container(namespace)
    if controller not in state.containers:
        need.install_controller = True
        say(f"system controller: not installed (no container {controller})")
    elif not state.unit(names.PODMAN_SOCKET_UNIT).active:
        need.enable_socket = True
        say(f"{names.PODMAN_SOCKET_UNIT}: not active (skupper reaches podman only through it)")
    need.apply = [r for r in desired if not cr.same(r, state.input_resources.get(cr.key(r)))]
    need.lines += differences(need.apply, lambda r: state.input_resources.get(cr.key(r)))
    need.remove = leftovers(owned or {}, desired, state.input_resources)
    need.lines += leftover_lines(owned or {}, need.remove)
    changed = [r for r in desired if cr.other_strategy(r, state.runtime_resources.get(cr.key(r)))]
    need.replace = [cr.key(r) for r in changed]
    need.apply += [r for r in changed if r not in need.apply]
    need.lines += [
        f"{kind}/{name}: runs another strategy than topology.env's, which is not changed in "
        "place (setup removes it, reloads, and makes it anew)"
        for kind, name in need.replace
    ]
    if not state.rendered:
        need.first_render = True
        say(f"namespace {namespace!r}: not set up (skupper system start never ran)")
    else:
        missing = router not in state.containers
        by_hand = not tmpfs and state.router is not None and not state.router.has_ssl_base_path
        if missing:
            say(f"router container {router}: missing")
        if by_hand:
            say(f"router container {router}: no SSL_PROFILE_BASE_PATH (created by hand)", True)
        # one made by hand as another uid cannot read the 0600 keys: rendered again, it runs
        # as their owner (the tmpfs re-creation then copies that)
        other_uid = not router_reads_as_owner(state)
        if other_uid:
            say(f"router container {router}: runs as another user than the keys' owner", True)
        if need.apply or need.remove or missing or by_hand or other_uid:
            need.reload = True
            leftover = f"{router}-backup"
            if leftover in state.containers:
                need.leftover = leftover
    if tmpfs and (
        need.rendering
        or state.router is None
        or not (state.router.has_tmpfs and state.router.has_ssl_base_path)
    ):
        need.recreate_tmpfs = True
        if not need.rendering and state.router is not None:
            say("router container: no tmpfs /tmp, though the topology asks for the workaround")
    if state.open_keys:
        say(f"private keys others may read: {keys_summary(state.open_keys)}", True)
    need.close_keys = need.rendering or bool(state.open_keys)
    wanted = units.site_units(namespace, state.user, podman)
    for w in wanted:
        have = state.unit_files.get(w.name)
        if need.rendering:
            need.stale_units.append(w.name)  # a render writes Skupper's units over ours
        elif have != w.content:
            need.stale_units.append(w.name)
            what = "not installed" if have is None else "not the unit setup writes"
            say(f"{w.name}: {what}", True)
        elif w.name in state.enabled_at_boot:
            need.stale_units.append(w.name)
            say(f"{w.name}: enabled at boot", True)
    legacy = names.legacy_controller_unit(state.user)
    if state.watch_script != units.watch_script(podman):
        what = "missing" if state.watch_script is None else "differs from what setup writes"
        say(f"~/{names.WATCH_SCRIPT_PATH}: {what}", True)
    if legacy in state.unit_files or legacy in state.enabled_at_boot:
        say(f"{legacy}: an older controller unit is still installed", True)
    need.install_units = bool(need.stale_units) or any(
        (
            state.watch_script != units.watch_script(podman),
            legacy in state.unit_files,
            legacy in state.enabled_at_boot,
        )
    )
    return need


@dataclass
class ClusterNeeds:
    """What setup must build on the cluster: its Site and Listeners, and the links (with
    their Secrets when the certificates are known) that differ from the topology."""

    lines: list[str] = field(default_factory=list)
    base: list[Resource] = field(default_factory=list)
    links: list[Resource] = field(default_factory=list)
    #: the pools' leftovers to remove (``leftovers``): (kind, name)
    remove: list[tuple[str, str]] = field(default_factory=list)


def cluster_needs(
    topology: Topology, state: KubeState, asked: Asked | None, certs: Certs | None = None
) -> ClusterNeeds:
    """The cluster's setup needs. A Link that is absent while its Secret is there, or after
    a ``down`` (or teardown) the user asked for, is not one: ``down`` removes the Links and
    keeps their Secrets, and ``up`` makes them again."""
    need = ClusterNeeds()
    base = base_resources(topology)
    need.base = [r for r in base if not cr.same(r, state.existing(r))]
    owned = listener_pool_keys(topology)
    held = [("Listener", n) for n in state.listeners] + [
        ("MultiKeyListener", n) for n in state.multi_key_listeners
    ]
    need.remove = leftovers(owned, base, held)
    if certs is None:
        wanted = [cr.link(t) for t in link_targets(topology).values()]
    else:
        wanted, _ = link_resources(topology, state, certs)
    stopped = asked in _STOPS

    def taken_down(r: Resource) -> bool:
        """A Link removed by down: up's to make again, not setup's."""
        if r["kind"] != "Link" or state.existing(r) is not None:
            return False
        return stopped or cr.key(r)[1] in state.secrets

    need.links = [
        r
        for r in wanted
        if not cr.same(r, state.existing(r))
        and not taken_down(r)
        and not (stopped and r["kind"] == "Secret")
    ]
    need.lines = (
        leftover_lines(owned, need.remove)
        + differences(need.base, state.existing)
        + differences(need.links, state.existing)
    )
    return need


def reading_needs(
    topology: Topology, reading: PodmanReading, certs: Certs | None = None
) -> PodmanNeeds:
    """A podman site's needs against what the topology says it should hold."""
    host = reading.ref.host
    if host == LOCAL_HOST:
        if certs is None:
            desired = local_resources_without_secrets(topology)
        else:
            desired, _ = local_resources(topology, reading.state, certs)
        return podman_needs(
            reading.state,
            desired,
            namespace=reading.namespace,
            tmpfs=False,
            owned=listener_pool_keys(topology),
        )
    p = topology.provider(host)
    assert p is not None  # a podman reading other than the local site's is a provider's
    return podman_needs(
        reading.state,
        hub_resources(p, topology.pools),
        namespace=reading.namespace,
        tmpfs=p.tmpfs_workaround,
        owned=hub_pool_keys(topology),
    )


def setup_needed(topology: Topology, reading: Reading) -> list[str] | None:
    """What setup would change at the site, one line each (empty: nothing; None: the site
    was not read). Status's drift and up's refusal."""
    match reading:
        case PodmanReading() if unparsed_reason(reading) is not None:
            return None  # its containers or units could not be read: nothing is known
        case PodmanReading():
            return reading_needs(topology, reading).lines
        case ClusterReading():
            return cluster_needs(topology, reading.state, reading.asked).lines
        case _:
            return None


def drift_lines(topology: Topology, reading: Reading) -> list[str]:
    """What the drift finding says: the setup needs that no diagnose rule of their own
    explains (``PodmanNeeds.explained``)."""
    match reading:
        case PodmanReading():
            need = reading_needs(topology, reading)
            return [line for line in need.lines if line not in need.explained]
        case _:
            return setup_needed(topology, reading) or []


def differences(wanted: list[Resource], held: Callable[[Resource], Resource | None]) -> list[str]:
    """One line per difference: a resource missing, or each spec field that differs."""
    lines: list[str] = []
    for resource in wanted:
        kind, name = cr.key(resource)
        actual = held(resource)
        if actual is None:
            lines.append(f"{kind}/{name}: missing on the site")
        elif not cr.same(resource, actual):
            changed = _field_differences(resource.get("spec"), actual.get("spec"), "spec")
            lines += [f"{kind}/{name} {line}" for line in changed] or [
                f"{kind}/{name}: differs from topology.env"
            ]
    return lines


def _field_differences(want: Any, have: Any, path: str) -> list[str]:
    want, have = cr.normal(want), cr.normal(have)
    if isinstance(want, dict) and isinstance(have, dict):
        found: list[str] = []
        for key in sorted(set(want) | set(have)):
            found += _field_differences(want.get(key), have.get(key), f"{path}.{key}")
        return found
    if (
        isinstance(want, list)
        and isinstance(have, list)
        and len(want) == len(have)
        and all(isinstance(v, dict) for v in want + have)
    ):
        found = []
        for index, (w, h) in enumerate(zip(want, have, strict=True)):
            found += _field_differences(w, h, f"{path}[{index}]")
        return found
    if want == have:
        return []
    return [f"{path}: the site has {_show(have)}, topology.env says {_show(want)}"]


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)
