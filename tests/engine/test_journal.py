"""The operations journal: private, appended to, rotated at its bound, read back typed; a
repeated refusal counted in its entry, not written again."""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import pytest

from skupper_mcp.engine.store import journal
from skupper_mcp.engine.store.journal import Journal, entry, parse_since
from skupper_mcp.errors import ConfigError
from skupper_mcp.render import history_text
from skupper_mcp.results import OperationResult, Outcome, SiteResult, Step


def _on_gpu1(
    operation: Literal["up", "down"], target: str, outcome: Outcome, **site: Any
) -> OperationResult:
    """The result of ``operation`` that left gpu1's provider site ``outcome``."""
    where: dict[str, Any] = {"host": "gpu1", "site": "hub-gpu1", "role": "provider"}
    ok = outcome != "failed"
    summary = f"{operation}: {'' if ok else 'failed: '}gpu1"
    return OperationResult(
        operation=operation,
        target=target,
        ok=ok,
        sites=[SiteResult(**where, platform="podman", outcome=outcome, **site)],
        summary=summary,
    )


def _result() -> OperationResult:
    return _on_gpu1(
        "up",
        "gpu1",
        "failed",
        changed=True,
        reason="start router failed: password=hunter2 rejected",
        steps=[
            Step(name="start controller", ok=True, changes=True),
            Step(name="verify", ok=True),
            Step(name="start router", ok=False, changes=True),
        ],
    )


def test_an_entry_says_who_did_what_and_redacts_the_hosts_words() -> None:
    token = journal.CALLER.set(("claude-code", "2.1.0"))
    try:
        line = entry("up", {"target": "gpu1"}, datetime(2026, 12, 3, tzinfo=UTC), 1.5, _result())
    finally:
        journal.CALLER.reset(token)
    assert (line.client, line.client_version, line.tool) == ("claude-code", "2.1.0", "up")
    assert line.sites[0].changed_steps == ["start controller"]  # ran and changed the site
    assert "hunter2" not in (line.sites[0].reason or "")
    assert entry("down", {}, datetime.now(UTC), 0.1, error="x").client == "cli"


def test_the_journal_is_private_append_only_and_read_back(tmp_path: Path) -> None:
    book = Journal(tmp_path / "state")
    first = entry("up", {"target": "gpu1"}, datetime.now(UTC) - timedelta(hours=2), 1, _result())
    second = entry("down", {"target": "all"}, datetime.now(UTC), 1, error="busy")
    book.append(first)
    book.append(second)
    assert stat.S_IMODE(book.path.stat().st_mode) == 0o600
    assert [e.tool for e in book.history().entries] == ["up", "down"]
    assert [e.tool for e in book.history(parse_since("1h")).entries] == ["down"]
    with book.path.open("a") as out:
        out.write("not json\n")
    found = book.history()
    assert found.unreadable == 1 and len(found.entries) == 2


def test_the_journal_rotates_at_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "MAX_BYTES", 2000)
    book = Journal(tmp_path)
    for _ in range(15):
        book.append(entry("up", {"target": "gpu1"}, datetime.now(UTC), 1, _result()))
    rotated = tmp_path / journal.ROTATED
    assert rotated.is_file() and book.path.stat().st_size <= 2000
    assert stat.S_IMODE(rotated.stat().st_mode) == 0o600
    assert 0 < len(book.history().entries) < 15  # the oldest went with the file before


def test_since_takes_a_duration_or_a_time() -> None:
    at = datetime(2026, 12, 3, 12, tzinfo=UTC)
    assert parse_since("90m", at=at) == at - timedelta(minutes=90)
    assert parse_since("7d", at=at) == at - timedelta(days=7)
    assert parse_since("2026-12-01") == datetime(2026, 12, 1, tzinfo=UTC)
    assert parse_since("2026-12-01T10:00:00+01:00") == datetime(2026, 12, 1, 9, tzinfo=UTC)
    assert parse_since("") is None
    with pytest.raises(ConfigError, match="neither a duration"):
        parse_since("yesterday")


def _refused() -> OperationResult:
    return _on_gpu1(
        "up", "gpu1", "failed", changed=False, reason="refused: the model is not stopped"
    )


def test_a_refusal_repeated_thousands_of_times_is_one_entry_and_keeps_the_real_down(
    tmp_path: Path,
) -> None:
    # issue 43: 2,600 failing calls of up rotated a real down out of the journal
    book = Journal(tmp_path)
    started = datetime(2026, 12, 3, tzinfo=UTC)
    book.append(entry("down", {"target": "all"}, started, 3.0, _down()))
    for i in range(2600):
        book.append(
            entry("up", {"target": "gpu1"}, started + timedelta(seconds=i + 1), 0.2, _refused())
        )
    book.append(entry("up", {"target": "gpu1"}, started, 0.1, error="Busy: setup is running"))
    found = book.history()
    assert [(e.tool, e.repeated) for e in found.entries] == [("down", 1), ("up", 2600), ("up", 1)]
    assert found.entries[1].last_time == (started + timedelta(seconds=2600)).isoformat(
        timespec="seconds"
    )
    assert book.path.stat().st_size < 4096 and found.dropped == 0
    assert "(2600 times, the last 2026-12-03T00:43:20+00:00)" in history_text(found)


def test_what_rotation_drops_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "MAX_BYTES", 2000)
    book = Journal(tmp_path)
    for i in range(40):
        book.append(entry("up", {"target": f"gpu{i}"}, datetime.now(UTC), 1, _result()))
    found = book.history()
    assert found.dropped > 0 and found.dropped + len(found.entries) == 40
    assert f"dropped by its rotation: {found.dropped}" in history_text(found)


def _down() -> OperationResult:
    steps = [Step(name="stop router", ok=True, changes=True)]
    return _on_gpu1("down", "all", "down", changed=True, steps=steps)
