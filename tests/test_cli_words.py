"""The CLI's words as a person reads them: summaries without a repeated prefix, plurals
right, every plan printed the same way, and install hints in the host's package manager."""

from __future__ import annotations

import pytest

from recorded_results import recorded_operation
from skupper_mcp.engine.runner import summarize
from skupper_mcp.facts.precheck import distribution_ids, install_command
from skupper_mcp.render import operation_text
from skupper_mcp.results import SiteResult
from skupper_mcp.tools import TOOLS


def site(host: str, outcome: str, changed: bool = True) -> SiteResult:
    return SiteResult.model_validate(
        {
            "host": host,
            "site": f"hub-{host}",
            "role": "provider",
            "platform": "podman",
            "outcome": outcome,
            "changed": changed,
        }
    )


def test_a_summary_names_the_operation_once() -> None:
    assert summarize("down", [site("gpu1", "down"), site("local", "up", False)], False) == (
        "down: gpu1; up: local (changed 1 of 2 sites)"
    )
    assert summarize("up", [site("gpu2", "skipped", False), site("gpu1", "up")], True) == (
        "up (plan): gpu1; skipped: gpu2 (would change 1 of 2 sites)"
    )
    assert summarize("teardown", [site("gpu1", "removed")], True) == (
        "teardown (plan): gpu1 (would change 1 of 1 site)"
    )


def test_a_plan_prints_as_every_operation_prints() -> None:
    plan = recorded_operation("router-killed", "up-plan")
    setup = next(t for t in TOOLS if t.name == "setup")
    assert setup.render(plan, 80) == operation_text(plan, 80)
    assert setup.render(plan, 80).startswith("Host ")


@pytest.mark.parametrize(
    ("os_release", "command"),
    [
        (["ID=debian"], "sudo apt-get install podman"),
        (["ID=ubuntu", "ID_LIKE=debian"], "sudo apt-get install podman"),
        (['ID="rhel"', 'ID_LIKE="fedora"'], "sudo dnf install podman"),
        (["ID=rocky", 'ID_LIKE="rhel centos fedora"'], "sudo dnf install podman"),
        (['ID="opensuse-tumbleweed"', 'ID_LIKE="opensuse suse"'], "sudo zypper install podman"),
        (["ID=arch"], "sudo pacman -S podman"),
        (["ID=endeavouros", "ID_LIKE=arch"], "sudo pacman -S podman"),
        (["ID=nixos"], None),
        ([], None),
    ],
)
def test_the_install_hint_is_the_hosts_own(os_release: list[str], command: str | None) -> None:
    assert install_command(distribution_ids(os_release), "podman") == command


def test_history_is_a_table_that_fits_the_terminal() -> None:
    from datetime import UTC, datetime

    from skupper_mcp.engine.store.journal import entry
    from skupper_mcp.render import history_text
    from skupper_mcp.results import HistoryResult

    done = recorded_operation("router-killed", "up-plan")
    line = entry("up", {"target": "all"}, datetime(2026, 12, 3, 18, tzinfo=UTC), 12.5, done)
    text = history_text(HistoryResult(entries=[line], path="journal.jsonl"), 80)
    assert text.startswith("Time ") and max(map(len, text.splitlines())) <= 80
    assert "2026-12-03T18:00:00+00:00" in text and "up all" in text and "12.5s" in text
    empty = history_text(HistoryResult(entries=[], path="j"), 80)
    assert empty == "no write recorded in j"
