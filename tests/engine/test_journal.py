"""The operations journal: private, append-only, rotated at its bound, read back typed."""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from skupper_mcp.engine.store import journal
from skupper_mcp.engine.store.journal import Journal, entry, parse_since
from skupper_mcp.errors import ConfigError
from skupper_mcp.models import OperationResult, SiteResult, Step


def _result() -> OperationResult:
    site = SiteResult(
        host="gpu1",
        site="hub-gpu1",
        role="provider",
        platform="podman",
        outcome="failed",
        changed=True,
        reason="start router failed: password=hunter2 rejected",
        steps=[
            Step(name="start controller", ok=True, changes=True),
            Step(name="verify", ok=True),
            Step(name="start router", ok=False, changes=True),
        ],
    )
    return OperationResult(
        operation="up", target="gpu1", ok=False, sites=[site], summary="up: failed: gpu1"
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
