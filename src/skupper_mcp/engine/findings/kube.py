"""Rules about the Kubernetes site (e.g. CRC): a link Secret the kube-adaptor
never mounts because it is not ``kubernetes.io/tls``, and a router pod that started before
a link Secret it needs existed, so it does not have it mounted.

Matched on what the API returns about the objects: a Secret's ``type`` and metadata, the
pod's and the Secret's ``metadata.creationTimestamp`` (set by the API server when the
object is created, kept by every update) and the Link's status. A Secret's data never
reaches a finding.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from ...results import Finding
from ...sites.kube import KubeState, ready, status_of
from ..desired.cluster import kube_secret_names
from .context import Network, call, finding
from .releases import secret_type_affects

TLS = "kubernetes.io/tls"


def _created(obj: dict[str, Any]) -> dt.datetime | None:
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return None
    try:
        when = dt.datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


def _shown(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("creationTimestamp") or "unknown")


def _type(secret: dict[str, Any]) -> str:
    return str(secret.get("type") or "Opaque")


def _links_using(state: KubeState, secret: str) -> dict[str, dict[str, Any]]:
    return {
        name: link
        for name, link in state.links.items()
        if (link.get("spec") or {}).get("tlsCredentials") == secret
    }


def _router_pod(state: KubeState) -> dict[str, Any] | None:
    """The router pod the Deployment keeps now: the newest one not being deleted."""
    alive = [
        (created, p)
        for p in state.router_pods
        if not (p.get("metadata") or {}).get("deletionTimestamp")
        and (created := _created(p)) is not None
    ]
    return max(alive, key=lambda pair: pair[0], default=(None, None))[1]


def _pod_vs_secret(pod: dict[str, Any] | None, name: str, secret: dict[str, Any]) -> str:
    if pod is None:
        return "no router pod"
    pod_name = pod["metadata"].get("name", "?")
    started, created = _created(pod), _created(secret)
    if started is None or created is None:
        return f"router pod {pod_name}: created {_shown(pod)}"
    seconds = int(abs((created - started).total_seconds()))
    if started == created:
        when = "in the same second as"
    else:
        when = f"{seconds} s {'before' if started < created else 'after'}"
    return f"router pod {pod_name}: created {_shown(pod)}, {when} the Secret {name}"


def _down(link: dict[str, Any]) -> bool:
    """A Link whose status the controller wrote and that is not Ready (one it has not looked
    at yet, just created, proves nothing)."""
    return bool((link.get("status") or {}).get("status")) and not ready(link)


def _link_lines(state: KubeState, secret: str) -> list[str]:
    links = _links_using(state, secret)
    if not links:
        return [f"no Link uses the Secret {secret}"]
    return [f"Link {name}: {status_of(link)}" for name, link in sorted(links.items())]


def secret_type(network: Network) -> Iterator[Finding]:
    found = network.kube_site()
    if found is None:
        return
    ref, state = found
    pod = _router_pod(state)
    # only 2.2.x ignores a Secret of another type (skupper #2518; 2.1.x and main take it)
    buggy, release = secret_type_affects(state)
    if buggy is False:
        return
    for name in kube_secret_names(network.topology):
        secret = state.secrets.get(name)
        if secret is None or _type(secret) == TLS:
            continue
        if buggy is None and not any(_down(link) for link in _links_using(state, name).values()):
            continue  # a release not known is no reason; a Link not connected on it is
        yield finding(
            "crc-secret-type",
            ref,
            "error",
            symptom=f"the link Secret {name} on {ref.site} is of type {_type(secret)}: the "
            "router pod never mounts it, so its link does not connect",
            evidence=[
                f"Secret {name}: type {_type(secret)}, created {_shown(secret)}",
                *_link_lines(state, name),
                _pod_vs_secret(pod, name, secret),
                release
                if buggy
                else f"{release}; taken as the cause because a Link using the Secret is not "
                "connected",
            ],
            cause="the kube-adaptor mounts only kubernetes.io/tls Secrets into the router pod "
            "and ignores the others; a link Secret made with 'oc create secret generic' (or a "
            "YAML without its type) is Opaque",
            fix="run setup: it deletes the Secret and creates it as kubernetes.io/tls from "
            "the peer's client certificate (the API refuses to change a Secret's type in "
            "place), then restarts the router pod so that it mounts it",
            next=[call("setup")],
        )


def router_pod_stale(network: Network) -> Iterator[Finding]:
    found = network.kube_site()
    if found is None:
        return
    ref, state = found
    pod = _router_pod(state)
    started = _created(pod) if pod is not None else None
    if pod is None or started is None:
        return
    evidence: list[str] = []
    for name in kube_secret_names(network.topology):
        secret = state.secrets.get(name)
        # crc-secret-type covers a Secret of another type: a new pod would not mount it either.
        if secret is None or _type(secret) != TLS:
            continue
        created = _created(secret)
        # Timestamps have whole seconds: a Secret of the pod's own second may be mounted, so
        # only a strictly later one counts.
        if created is None or not started < created:
            continue
        waiting = {n: link for n, link in _links_using(state, name).items() if _down(link)}
        if not waiting:
            continue
        evidence += [
            f"Secret {name}: created {_shown(secret)}",
            *(f"Link {n}: {status_of(link)}" for n, link in sorted(waiting.items())),
        ]
    if not evidence:
        return
    pod_name = pod["metadata"].get("name", "?")
    yield finding(
        "crc-router-pod-stale",
        ref,
        "error",
        symptom=f"the router pod of {ref.site} started before the link Secret it needs, so "
        "it does not have it and the link does not connect",
        evidence=[f"router pod {pod_name}: created {_shown(pod)}", *evidence],
        cause="the kube-adaptor mounts the TLS Secrets that exist when the router pod starts; "
        "a link Secret created (or deleted and created again) afterwards, e.g. by re-making "
        "a link by hand, is not mounted into the running pod",
        fix=f"run up on {ref.host}: it re-creates the links that are not connected and "
        "deletes the router pod, whose Deployment starts a new one with the Secret mounted",
        next=[call("up", target=ref.host)],
    )


KUBE_RULES = (secret_type, router_pod_stale)
