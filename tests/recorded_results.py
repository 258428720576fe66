"""Results as the engine answered them, for the renderers', the view's and the CLI's tests.

Each is read from ``results/<scenario>.json``, which ``record_results.py`` records by running
the operations over the recorded site states (never written by hand;
``test_recorded_results.py`` holds them to what the engine answers today). The scenarios are
``record_results.SCENARIOS``.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from skupper_mcp.results import DiagnoseResult, OperationResult, StatusResult

#: The scenario ``recorded_status`` gives by default: a network a stranger finds, with
#: something of everything (a killed router, an unreachable host, a silent cluster).
STRANGER = "stranger"


@cache
def _recorded(scenario: str) -> dict[str, Any]:
    from record_results import path_of

    loaded: dict[str, Any] = json.loads(path_of(scenario).read_text())
    return loaded


def recorded(scenario: str, read: str) -> dict[str, Any]:
    """One recorded result as JSON (``status``, ``diagnose``, ``up-plan``, ``down-plan``,
    or the operation that made the scenario, e.g. ``down``); a fresh copy each time."""
    copy: dict[str, Any] = json.loads(json.dumps(_recorded(scenario)[read]))
    return copy


def recorded_status(scenario: str = STRANGER) -> StatusResult:
    """``status`` of a scenario (by default a stranger's network: rhel-ai's router killed,
    rhtevan-work unreachable with a long reason, the cluster's API silent)."""
    return StatusResult.model_validate(recorded(scenario, "status"))


def recorded_diagnose(scenario: str = STRANGER) -> DiagnoseResult:
    return DiagnoseResult.model_validate(recorded(scenario, "diagnose"))


def recorded_operation(scenario: str, read: str) -> OperationResult:
    """A plan (``up-plan``, ``down-plan``) or the operation that made the scenario."""
    return OperationResult.model_validate(recorded(scenario, read))
