"""Status objects in the Skupper shape (reference section 2.1): ``status.status``,
``status.message`` and metav1 conditions whose Ready is the AND of the kind's own ones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Check:
    """One condition's outcome: ``state`` is Ready, Pending or Error."""

    type: str
    state: str
    message: str = "OK"

    @property
    def ok(self) -> bool:
        return self.state == "Ready"


def _transition_time(previous: Obj | None, type_: str, status: str, now: str) -> str:
    for condition in (previous or {}).get("conditions") or []:
        if condition.get("type") == type_ and condition.get("status") == status:
            return str(condition.get("lastTransitionTime") or now)
    return now


def build(
    checks: list[Check],
    *,
    generation: int,
    previous: Obj | None,
    now: str,
    required: tuple[str, ...] = (),
    ready_condition: bool = True,
    **extra: Any,
) -> Obj:
    """The status for an object: its conditions, Ready, and the summary fields.

    ``required``: the conditions Ready needs, in order, one that is not there yet reading
    ``Pending: Not <type>`` (``readyState``, pkg/apis/skupper/v2alpha1/types.go@2.2.0:70-84);
    else every check is. ``ready_condition`` false: no Ready condition among the conditions
    (a MultiKeyListener's ``setReady`` sets only status and message,
    multikeylistener_types.go@2.2.0:162-174). A condition keeps its lastTransitionTime
    while its status does not change, so writing the same status twice is no change at all.
    """
    by_type = {c.type: c for c in checks}
    order = [by_type.get(t) or Check(t, "Pending", f"Not {t}") for t in required] or checks
    failing = next((c for c in order if not c.ok), None)
    ready = Check("Ready", failing.state, failing.message) if failing else Check("Ready", "Ready")
    conditions = []
    for check in [*checks, ready] if ready_condition else checks:
        status = "True" if check.ok else "False"
        conditions.append(
            {
                "type": check.type,
                "status": status,
                "reason": check.state,
                "message": check.message,
                "observedGeneration": generation,
                "lastTransitionTime": _transition_time(previous, check.type, status, now),
            }
        )
    return {"status": ready.state, "message": ready.message, "conditions": conditions, **extra}
