"""The search bit a real-user world gives the directories above it (``o+x``) is the
machine's: written to a ledger when set, and taken back by the down of the last world whose
users pass through them, whichever world set it."""

from __future__ import annotations

import pwd
import stat
from pathlib import Path

import pytest

from skupper_sandbox import real_users


def _other_bits(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode) & 0o007


def _passwd(*names: str) -> list[pwd.struct_passwd]:
    return [pwd.struct_passwd((n, "*", 2000, 2000, "", "/", "/bin/sh")) for n in names]


@pytest.fixture
def closed_dir(tmp_path: Path) -> Path:
    closed = tmp_path / "closed"
    (closed / "world").mkdir(parents=True)
    closed.chmod(0o700)
    return closed


def test_the_last_worlds_down_takes_back_what_any_world_opened(
    closed_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "run" / "opened-for-search"
    opened = real_users.open_for_search([closed_dir / "world"], ledger)
    assert opened[-1] == closed_dir.resolve()  # and pytest's own 0700 directories above
    assert _other_bits(closed_dir) == 0o001
    # a second world finds it open and opens nothing
    assert real_users.open_for_search([closed_dir / "world"], ledger) == []

    monkeypatch.setattr(pwd, "getpwall", lambda: _passwd("root", "skab12cd-rhel-ai"))
    assert real_users.close_for_search(ledger) == []  # another world's user still passes
    assert _other_bits(closed_dir) == 0o001

    monkeypatch.setattr(pwd, "getpwall", lambda: _passwd("root", "skipper", "sk12-x"))
    assert real_users.close_for_search(ledger) == opened
    assert [_other_bits(d) for d in opened] == [0] * len(opened)
    assert ledger.read_text() == ""
    assert real_users.close_for_search(ledger) == []


def test_a_directory_gone_since_is_skipped_and_the_rest_closed(
    closed_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "opened-for-search"
    gone = tmp_path / "gone"
    (gone / "x").mkdir(parents=True)
    gone.chmod(0o700)
    opened = real_users.open_for_search([gone / "x", closed_dir / "world"], ledger)
    (gone / "x").rmdir()
    gone.rmdir()
    monkeypatch.setattr(pwd, "getpwall", lambda: _passwd("root"))
    assert real_users.close_for_search(ledger) == [d for d in opened if d != gone.resolve()]
    assert _other_bits(closed_dir) == 0
