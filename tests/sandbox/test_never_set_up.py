"""What a stranger meets first: a world whose sites were never set up. ``down --plan`` and
``teardown --plan`` through the CLI say of each site what ``status`` says (not set up, and
why: ``engine/condition.py``'s one judgement), never "already stopped" or "removed", ask
for no model to be stopped, and exit 3 (nothing failed, something was skipped)."""

from __future__ import annotations

import json

import pytest

from product import cli
from skupper_sandbox.testing import World

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]


def _json(world: World, *args: str) -> tuple[int, dict]:
    done = cli(world.topology, "--json", *args)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("verb", ["down", "teardown"])
def test_a_plan_on_sites_never_set_up_says_what_status_says(unset_world: World, verb: str) -> None:
    _, shown = _json(unset_world, "status")
    status = {row["host"]: row for row in shown["sites"]}
    assert {h: row["state"] for h, row in status.items()} == {
        "rhel-ai": "not-set-up",
        "local": "not-set-up",
    }
    code, planned = _json(unset_world, verb, "--plan")
    assert code == 3, planned["summary"]
    for site in planned["sites"]:
        why = status[site["host"]]["state_reason"]
        assert (site["outcome"], site["reason"]) == ("skipped", f"not set up: {why}")
        assert [step["detail"] for step in site["steps"]] == ["not set up: nothing to do"]
    assert planned["model_actions"] == []
    words = json.dumps(planned)
    assert "already stopped" not in words and "removed" not in words
