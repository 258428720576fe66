"""Drift: how a site differs from what ``topology.env`` says it should hold. Pure.

The resources compared are the ones setup writes, with setup's own equality (``cr.same``),
so a site that differs here is exactly a site where setup would change something; link
Secrets are left out (a hub re-issues its client certificate on every reload: what matters
is the Link, and setup compares the CA). Resources on a site that the topology no longer
names are not drift: setup does not remove them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...facts.site_state import SiteState
from ...sites import resources as cr
from ...sites.kube import KubeState
from ...sites.resources import Resource
from ...topology import Topology
from ...vocabulary import LOCAL_HOST
from ..sitemap import SiteView
from .cluster import kube_resources_without_secrets
from .podman import hub_resources, local_resources_without_secrets


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


def podman_drift(wanted: list[Resource], state: SiteState, *, tmpfs: bool = False) -> list[str]:
    """How a podman site differs from ``wanted`` (and, where the topology asks for the
    tmpfs workaround, a router container without it)."""
    lines = differences(wanted, lambda r: state.input_resources.get(cr.key(r)))
    if tmpfs and state.router is not None and not state.router.has_tmpfs:
        lines.append("router container: no tmpfs /tmp, though the topology asks for the workaround")
    return lines


def kube_drift(topology: Topology, state: KubeState) -> list[str]:
    return differences(kube_resources_without_secrets(topology), state.existing)


def site_drift(topology: Topology, view: SiteView) -> list[str] | None:
    """How the site differs from topology.env; None when its state was not read."""
    if view.kube_state is not None:
        return kube_drift(topology, view.kube_state)
    if view.state is None:
        return None
    if view.ref.host == LOCAL_HOST:
        return podman_drift(local_resources_without_secrets(topology), view.state)
    p = next(p for p in topology.providers if p.name == view.ref.host)
    return podman_drift(hub_resources(p), view.state, tmpfs=p.tmpfs_workaround)


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
