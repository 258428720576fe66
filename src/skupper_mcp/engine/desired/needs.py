"""What setup would change at a site, decided once. Pure.

``podman_needs`` and ``cluster_needs`` list what setup must build (resources to apply, the
controller to install, a namespace to render, a router container to re-create, units to
write...), each item with the line that says it. On a podman site each is a typed ``Need``
(what, on which site, why) and every flag setup's plan reads (``PodmanNeeds.reload``,
``recreate_tmpfs``...) is derived from that list: a change without its line cannot be
planned. A need setup cannot fulfil (the router's inspect unknown on a tmpfs site) is one
too: status names it, up refuses with it, setup refuses the site. Setup's plan is made
from these (plus starting what is stopped, and the cluster's links that ``down`` removed:
bringing a site up is not setting it up); ``status``'s drift is ``setup_needed``'s lines;
``up`` refuses a site exactly when the list is not empty. So "setup plans nothing to
build" iff "no drift" iff "up does not refuse for setup" (tests/engine/test_setup_needed.py
holds it over the recorded site states).

Link Secrets are compared only when the caller has the peers' client certificates (setup
reads them; status and up do not): a hub re-issues its certificate from the same CA on every
reload, so what a Secret must match is only known from the hub.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ...facts import names
from ...facts.images import controller_drift, release_drift
from ...facts.private_keys import reads_as_owner
from ...facts.private_keys import summary as keys_summary
from ...facts.router_release import image_release
from ...facts.site_state import SiteState
from ...sites import resources as cr
from ...sites import units
from ...sites.kube import KubeState
from ...sites.resources import Resource
from ...topology import Topology
from ...vocabulary import LOCAL_HOST
from ..condition import unparsed_reason
from ..predicates import stopped_as_asked
from ..readings import Asked, ClusterReading, PodmanReading, Reading
from .cluster import Certs, base_resources, link_resources, link_targets
from .leftovers import Key, hub_pool_keys, leftover_lines, leftovers, listener_pool_keys
from .podman import hub_resources, local_resources, local_resources_without_secrets

#: What a podman site's setup changes, one kind per step it takes (or refuses to take):
NeedKind = Literal[
    "install-controller",  # skupper system install
    "controller-release",  # an earlier release's controller removed, then installed again
    "enable-socket",  # podman.socket enabled and started
    "apply",  # a resource applied (missing or differing)
    "remove",  # a pool's leftover removed
    "replace",  # a resource of the other strategy removed, then made anew
    "first-render",  # skupper system start
    "router-missing",  # a reload makes the router container
    "router-by-hand",  # a reload makes it with SSL_PROFILE_BASE_PATH
    "router-other-uid",  # a reload makes it run as the keys' owner
    "router-release",  # a reload re-bootstraps a router an earlier Skupper installed
    "remove-backup",  # a reload's leftover <router>-backup removed before the reload
    "tmpfs",  # the router re-created with a tmpfs /tmp
    "router-unread",  # refused: the router's inspect could not be read, nothing is re-created
    "open-keys",  # private keys made 0600
    "unit",  # a unit file written (and restarted)
    "watch-script",  # the watch script written
    "legacy-unit",  # an older controller unit removed
    "link",  # the cluster: a Link (or its Secret) applied
]

#: The needs a ``skupper system reload`` fulfils (when the namespace is already rendered).
RELOADS: frozenset[NeedKind] = frozenset(
    {
        "apply",
        "remove",
        "replace",
        "router-missing",
        "router-by-hand",
        "router-other-uid",
        "router-release",
    }
)
#: The needs setup cannot fulfil: it refuses the site with their line and changes nothing.
REFUSALS: frozenset[NeedKind] = frozenset({"router-unread"})


@dataclass(frozen=True)
class Need:
    """One change setup plans on a site: what, on which site (``site``: its host), and why
    (``why``: the line status's drift, up's refusal and setup's plan show). ``explained``:
    a diagnose rule of its own explains it (the drift finding leaves it to that rule).
    What the step acts on: ``resources`` to apply, ``keys`` (kind, name) to remove, or
    ``name`` (a unit, a container)."""

    what: NeedKind
    site: str
    why: str
    explained: bool = False
    resources: tuple[Resource, ...] = ()
    keys: tuple[Key, ...] = ()
    name: str | None = None


@dataclass(frozen=True)
class PodmanNeeds:
    """What setup must build on a podman site: its ``needs``, each with its line. Every
    step of setup's plan is read from them (``setup.needs_actions``): a change without a
    ``Need`` cannot be planned. ``tmpfs`` and ``units`` are the topology's (the workaround
    asked for, the units setup writes), not changes."""

    needs: tuple[Need, ...] = ()
    tmpfs: bool = False
    units: tuple[str, ...] = ()

    def of(self, *kinds: NeedKind) -> list[Need]:
        return [n for n in self.needs if n.what in kinds]

    @property
    def lines(self) -> list[str]:
        return [n.why for n in self.needs]

    @property
    def explained(self) -> list[str]:
        """The lines a diagnose rule of their own explains (units, certificates, a router
        container made by hand): the drift finding leaves them to it."""
        return [n.why for n in self.needs if n.explained]

    @property
    def refusals(self) -> list[Need]:
        """What setup cannot do here: it refuses the site with these lines."""
        return [n for n in self.needs if n.what in REFUSALS]

    @property
    def install_controller(self) -> bool:
        return bool(self.of("install-controller", "controller-release"))

    @property
    def replace_controller(self) -> str | None:
        """The controller container of an earlier release, removed before the install."""
        return next((n.name for n in self.of("controller-release")), None)

    @property
    def enable_socket(self) -> bool:
        return bool(self.of("enable-socket"))

    @property
    def apply(self) -> list[Resource]:
        found: list[Resource] = []
        for n in self.of("apply", "replace"):
            found += [r for r in n.resources if not any(r is f for f in found)]
        return found

    @property
    def remove(self) -> list[Key]:
        """The pools' leftovers to remove (``leftovers``): (kind, name)."""
        return [k for n in self.of("remove") for k in n.keys]

    @property
    def replace(self) -> list[Key]:
        """MultiKeyListeners the site runs with the other strategy: removed and rendered
        without before they are applied anew (``resources.other_strategy``)."""
        return [k for n in self.of("replace") for k in n.keys]

    @property
    def first_render(self) -> bool:
        return bool(self.of("first-render"))

    @property
    def reload(self) -> bool:
        return not self.first_render and bool(self.of(*RELOADS))

    @property
    def rendering(self) -> bool:
        return self.first_render or self.reload

    @property
    def leftover(self) -> str | None:
        return next((n.name for n in self.of("remove-backup")), None)

    @property
    def recreate_tmpfs(self) -> bool:
        """A render on a tmpfs site makes a router without the tmpfs: re-created after it."""
        return self.tmpfs and (self.rendering or bool(self.of("tmpfs")))

    @property
    def close_keys(self) -> bool:
        return self.rendering or bool(self.of("open-keys"))

    @property
    def stale_units(self) -> list[str]:
        """The units setup writes and restarts: every one after a render (it writes
        Skupper's units over ours), else those that differ."""
        if self.rendering or self.replace_controller:  # both write Skupper's units over ours
            return list(self.units)
        return [n.name for n in self.of("unit") if n.name is not None]

    @property
    def install_units(self) -> bool:
        return bool(self.stale_units or self.of("watch-script", "legacy-unit"))


def router_reads_as_owner(state: SiteState) -> bool:
    """Whether the router reads the site's keys as their owner (True when unknown)."""
    if state.router is None or state.login_uid is None:
        return True
    return reads_as_owner(state.router.inspect, state.login_uid)


def router_unread(state: SiteState, router: str) -> str | None:
    """Why the router container's ``podman inspect`` is not known although podman lists
    the container (None: it is known, or there is no such container)."""
    if state.router is not None or router not in state.containers:
        return None
    failed = state.unparsed("router")
    if failed is not None:
        return f"the output of `{failed.command}` could not be read ({failed.reason})"
    return "`podman inspect` of it failed"


def podman_needs(
    state: SiteState,
    desired: list[Resource],
    *,
    namespace: str,
    tmpfs: bool,
    owned: Mapping[Key, str] | None = None,
    site: str = "",
) -> PodmanNeeds:
    """Everything setup must build on a podman site (``site``: its host), in the seed's
    order; ``owned`` are the pools' resources the site may hold (``leftovers``), those not
    desired removed."""
    say = _Say(site)
    _controller_needs(say, state)
    _resource_needs(say, state, desired, owned or {})
    if not state.rendered:
        say("first-render", f"namespace {namespace!r}: not set up (skupper system start never ran)")
    else:
        _router_needs(say, state, names.router_container(namespace), tmpfs)
    if state.open_keys:
        say("open-keys", f"private keys others may read: {keys_summary(state.open_keys)}", True)
    podman = state.podman_path or "podman"
    wanted = units.site_units(namespace, state.user, podman)
    if not say.rendering():  # a render writes Skupper's units over ours: all are written
        _unit_needs(say, state, wanted)
    legacy = names.legacy_controller_unit(state.user)
    if state.watch_script != units.watch_script(podman):
        what = "missing" if state.watch_script is None else "differs from what setup writes"
        say("watch-script", f"~/{names.WATCH_SCRIPT_PATH}: {what}", True)
    if legacy in state.unit_files or legacy in state.enabled_at_boot:
        say("legacy-unit", f"{legacy}: an older controller unit is still installed", True)
    return PodmanNeeds(tuple(say.needs), tmpfs, tuple(w.name for w in wanted))


class _Say:
    """The needs of one site as they are found: each one a ``Need`` with its line."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.needs: list[Need] = []

    def __call__(self, what: NeedKind, why: str, explained: bool = False, **on: Any) -> None:
        self.needs.append(Need(what, self.site, why, explained, **on))

    def reloads(self) -> bool:
        return any(n.what in RELOADS for n in self.needs)

    def rendering(self) -> bool:
        return self.reloads() or any(n.what == "first-render" for n in self.needs)


def _controller_needs(say: _Say, state: SiteState) -> None:
    controller = names.controller_container(state.user)
    if controller not in state.containers:
        say("install-controller", f"system controller: not installed (no container {controller})")
        return
    drift = controller_drift(state.skupper.cli, state.containers[controller].image)
    if drift is not None:  # diagnose: release-upgraded
        say("controller-release", drift.line(controller), True, name=controller)
    elif not state.unit(names.PODMAN_SOCKET_UNIT).active:
        say(
            "enable-socket",
            f"{names.PODMAN_SOCKET_UNIT}: not active (skupper reaches podman only through it)",
        )


def _resource_needs(
    say: _Say, state: SiteState, desired: list[Resource], owned: Mapping[Key, str]
) -> None:
    """Resources to apply (one need per line of their difference), the pools' leftovers
    to remove, and MultiKeyListeners of the other strategy to make anew."""

    def held(r: Resource) -> Resource | None:
        return state.input_resources.get(cr.key(r))

    for r in desired:
        if not cr.same(r, held(r)):
            for line in differences([r], held):
                say("apply", line, resources=(r,))
    removed = leftovers(owned, desired, state.input_resources)
    for key, line in zip(removed, leftover_lines(owned, removed), strict=True):
        say("remove", line, keys=(key,))
    for r in desired:
        if cr.other_strategy(r, state.runtime_resources.get(cr.key(r))):
            kind, name = cr.key(r)
            say(
                "replace",
                f"{kind}/{name}: runs another strategy than topology.env's, which is not "
                "changed in place (setup removes it, reloads, and makes it anew)",
                resources=(r,),
                keys=(cr.key(r),),
            )


def _router_needs(say: _Say, state: SiteState, router: str, tmpfs: bool) -> None:
    """A rendered site's router container: missing, made by hand or as another uid (a
    reload makes it again, after a leftover backup is removed), or without the tmpfs the
    workaround asks for; one whose inspect is unknown is refused, never re-created blind."""
    if router not in state.containers:
        say("router-missing", f"router container {router}: missing")
    if not tmpfs and state.router is not None and not state.router.has_ssl_base_path:
        say(
            "router-by-hand",
            f"router container {router}: no SSL_PROFILE_BASE_PATH (created by hand)",
            True,
        )
    # one made by hand as another uid cannot read the 0600 keys: rendered again, it runs
    # as their owner (the tmpfs re-creation then copies that)
    if not router_reads_as_owner(state):
        say(
            "router-other-uid",
            f"router container {router}: runs as another user than the keys' owner",
            True,
        )
    drift = release_drift(
        state.skupper.cli, image_release(state.router.inspect) if state.router else None
    )
    if drift is not None and router in state.containers:  # diagnose: release-upgraded
        say("router-release", drift.line(router), True)
    leftover = f"{router}-backup"
    if say.reloads() and leftover in state.containers:
        say(
            "remove-backup",
            f"container {leftover}: left by an earlier reload (a reload fails while it exists)",
            name=leftover,
        )
    if not tmpfs or say.reloads():
        return  # a render makes the router anew: the tmpfs re-creation follows it
    unread = router_unread(state, router)
    if unread is not None:
        say(
            "router-unread",
            f"router container {router}: {unread}: whether it has the tmpfs /tmp the "
            "topology asks for is not known, so setup does not re-create it",
            # an output that did not parse is read-unparsed's finding, with its first line
            state.unparsed("router") is not None,
        )
    elif state.router is not None and not (
        state.router.has_tmpfs and state.router.has_ssl_base_path
    ):
        say("tmpfs", "router container: no tmpfs /tmp, though the topology asks for the workaround")


def _unit_needs(say: _Say, state: SiteState, wanted: list[units.WatchUnit]) -> None:
    for w in wanted:
        have = state.unit_files.get(w.name)
        if have != w.content:
            what = "not installed" if have is None else "not the unit setup writes"
            say("unit", f"{w.name}: {what}", True, name=w.name)


@dataclass(frozen=True)
class ClusterNeeds:
    """What setup must build on the cluster, each a ``Need`` with its line: the pools'
    leftovers to remove (``remove``), its Site and Listeners (``apply``), and the links, with
    their Secrets when the certificates are known, that differ from the topology
    (``link``). Setup's cluster plan reads only these."""

    needs: tuple[Need, ...] = ()

    @property
    def lines(self) -> list[str]:
        return [n.why for n in self.needs]

    def _resources(self, what: NeedKind) -> list[Resource]:
        found: list[Resource] = []
        for n in self.needs:
            if n.what == what:
                found += [r for r in n.resources if not any(r is f for f in found)]
        return found

    @property
    def base(self) -> list[Resource]:
        return self._resources("apply")

    @property
    def links(self) -> list[Resource]:
        return self._resources("link")

    @property
    def remove(self) -> list[Key]:
        """The pools' leftovers to remove (``leftovers``): (kind, name)."""
        return [k for n in self.needs if n.what == "remove" for k in n.keys]


def cluster_needs(
    topology: Topology, state: KubeState, asked: Asked | None, certs: Certs | None = None
) -> ClusterNeeds:
    """The cluster's setup needs. A Link that is absent while its Secret is there, or after
    a ``down`` (or teardown) the user asked for, is not one: ``down`` removes the Links and
    keeps their Secrets, and ``up`` makes them again."""
    say = _Say(topology.kubernetes.name if topology.kubernetes else "")
    base = base_resources(topology)
    owned = listener_pool_keys(topology)
    held = [("Listener", n) for n in state.listeners] + [
        ("MultiKeyListener", n) for n in state.multi_key_listeners
    ]
    removed = leftovers(owned, base, held)
    for key, line in zip(removed, leftover_lines(owned, removed), strict=True):
        say("remove", line, keys=(key,))
    if certs is None:
        wanted = [cr.link(t) for t in link_targets(topology).values()]
    else:
        wanted, _ = link_resources(topology, state, certs)
    stopped = stopped_as_asked(asked)

    def taken_down(r: Resource) -> bool:
        """A Link removed by down: up's to make again, not setup's."""
        if r["kind"] != "Link" or state.existing(r) is not None:
            return False
        return stopped or cr.key(r)[1] in state.secrets

    links = [
        r
        for r in wanted
        if not cr.same(r, state.existing(r))
        and not taken_down(r)
        and not (stopped and r["kind"] == "Secret")
    ]
    applied: tuple[tuple[NeedKind, list[Resource]], ...] = (("apply", base), ("link", links))
    for what, resources in applied:
        for r in resources:
            if not cr.same(r, state.existing(r)):
                for line in differences([r], state.existing):
                    say(what, line, resources=(r,))
    return ClusterNeeds(tuple(say.needs))


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
            site=host,
        )
    p = topology.provider(host)
    assert p is not None  # a podman reading other than the local site's is a provider's
    return podman_needs(
        reading.state,
        hub_resources(p, topology.pools),
        namespace=reading.namespace,
        tmpfs=p.tmpfs_workaround,
        owned=hub_pool_keys(topology),
        site=host,
    )


def site_needs(topology: Topology, reading: Reading) -> list[Need] | None:
    """What setup would change at the site, each a ``Need`` (empty: nothing; None: the
    site was not read). Status's drift, up's refusal, ``setup --check`` and setup's plan
    all read this list."""
    match reading:
        case PodmanReading() if unparsed_reason(reading) is not None:
            return None  # its containers or units could not be read: nothing is known
        case PodmanReading():
            return list(reading_needs(topology, reading).needs)
        case ClusterReading():
            return list(cluster_needs(topology, reading.state, reading.asked).needs)
        case _:
            return None


def setup_needed(topology: Topology, reading: Reading) -> list[str] | None:
    """The lines of ``site_needs`` (empty: nothing; None: the site was not read)."""
    needs = site_needs(topology, reading)
    return None if needs is None else [n.why for n in needs]


def shown(lines: list[str], most: int = 3) -> str:
    """The first ``most`` lines of a list of needs, and how many more there are."""
    more = f" and {len(lines) - most} more" if len(lines) > most else ""
    return "; ".join(lines[:most]) + more


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
