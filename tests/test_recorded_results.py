"""The recorded results (``results/*.json``) are what the engine answers today.

The view's, the renderers' and the CLI's tests read them; each is produced again here, in
memory, by the same run of the operations over the recorded site states
(``record_results.py``), and must equal the committed file: a change to what ``status``,
``diagnose``, ``up`` or ``down`` answer fails here until the results are recorded again.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from record_results import RERECORD, RESULTS, SCENARIOS, Scenario, path_of, produce


def differences(recorded: Any, produced: Any, where: str = "") -> list[str]:
    """Where two JSON values differ, as paths (the first few)."""
    if isinstance(recorded, dict) and isinstance(produced, dict):
        found = []
        for key in dict.fromkeys([*recorded, *produced]):
            if key not in produced:
                found.append(f"{where}.{key}: no longer answered")
            elif key not in recorded:
                found.append(f"{where}.{key}: new")
            else:
                found += differences(recorded[key], produced[key], f"{where}.{key}")
        return found
    if isinstance(recorded, list) and isinstance(produced, list):
        if len(recorded) != len(produced):
            return [f"{where}: {len(recorded)} items recorded, {len(produced)} now"]
        return [
            d
            for i, (a, b) in enumerate(zip(recorded, produced, strict=True))
            for d in differences(a, b, f"{where}[{i}]")
        ]
    if recorded != produced:
        return [f"{where}: recorded {recorded!r}, now {produced!r}"]
    return []


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_the_recorded_results_are_what_the_engine_answers(scenario: Scenario) -> None:
    path = path_of(scenario.name)
    assert path.is_file(), f"{path.name} is not recorded: run {RERECORD}"
    recorded = json.loads(path.read_text())
    produced = produce(scenario)
    found = differences(recorded, produced)
    assert not found, (
        f"the engine's answers for {scenario.name} changed; if that is intended, record "
        f"them again with {RERECORD} (and commit tests/results/):\n  " + "\n  ".join(found[:12])
    )


def test_every_recorded_result_has_its_scenario() -> None:
    names = {p.stem for p in RESULTS.glob("*.json")}
    assert names == {s.name for s in SCENARIOS}, f"run {RERECORD}: it removes the others"
