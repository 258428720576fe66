"""What a Skupper 2.2 controller writes on a MultiKeyListener from the network it sees, on
a system site and on Kubernetes alike. Pure.

The keys with a connector somewhere (``UpdateStatus``, pkg/nonkube/api/site_state.go
@2.2.0:402-416; ``updateMultiKeyListenerDestination``, internal/kube/site/binding_status.go
@2.2.0:87-121) decide ``hasDestination`` and ``strategy.*.routingKeysReachable``: priority
keys in order, weighted ones with their weights. Operational is set only when
``hasDestination`` changes and the reachable keys are written only when they change
(``SetHasDestination``, ``SetRoutingKeysReachable``, pkg/apis/skupper/v2alpha1/
multikeylistener_types.go@2.2.0:214-268), so both are kept from the status written before:
a new listener with no destination keeps the initial "Not Operational". The next release
evaluates Operational on every update (#2498, commit 62dda196 on main), so it reads "No
matching connectors" at once (``report(..., every_update=True)``; no release the sandbox
emulates has it yet).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Report:
    """The Operational condition to write (None: none yet) and the status fields."""

    operational: tuple[bool, str] | None
    fields: dict[str, Any] = field(default_factory=dict)


def report(
    spec: dict[str, Any],
    reachable: Container[str],
    before: dict[str, Any],
    *,
    every_update: bool = False,
) -> Report:
    """The status a MultiKeyListener of ``spec`` gets, its routing keys ``reachable`` now,
    from the status ``before`` it; ``every_update``: Operational is evaluated on every
    update, as after #2498."""
    strategy = spec.get("strategy") or {}
    kind = "priority" if "priority" in strategy else "weighted"
    keys = (strategy.get(kind) or {}).get("routingKeys") or []
    found = [str(k) for k in keys if k in reachable]
    operational: tuple[bool, str] | None
    if every_update or bool(found) != bool(before.get("hasDestination")):
        operational = (True, "OK") if found else (False, "No matching connectors")
    else:
        kept = next(
            (c for c in before.get("conditions") or [] if c.get("type") == "Operational"), None
        )
        operational = (
            None if kept is None else (kept.get("status") == "True", str(kept.get("message")))
        )
    fields: dict[str, Any] = {"hasDestination": True} if found else {}
    if kind == "priority" or found:
        weights = dict(keys) if kind == "weighted" else {}
        reached: Any = found if kind == "priority" else {k: weights[k] for k in found}
        fields["strategy"] = {kind: {"routingKeysReachable": reached}}
    elif "strategy" in before:
        fields["strategy"] = before["strategy"]
    return Report(operational, fields)
