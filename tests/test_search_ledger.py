"""The search bit a real-user world gives the directories above it (``o+x``) is the
machine's: written to a ledger with the world that needs each directory, and taken back by
that world's down, unless another live world still holds it (issue 45 item 8: a down
closed another world's directories and root's home)."""

from __future__ import annotations

import pwd
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from skupper_sandbox import real_users

WORLD_A, WORLD_B = "4c208aa66754", "9d1e77f0c3a2"


def _other_bits(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode) & 0o007


def _passwd(*names: str) -> list[pwd.struct_passwd]:
    return [pwd.struct_passwd((n, "*", 2000, 2000, "", "/", "/bin/sh")) for n in names]


def _users(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Sets which worlds have users on the machine (which are live)."""

    def live(*worlds: str) -> None:
        names = ["root", "skipper", *(real_users.user_name(w, "rhel-ai") for w in worlds)]
        monkeypatch.setattr(pwd, "getpwall", lambda: _passwd(*names))

    return live


@pytest.fixture
def closed_dir(tmp_path: Path) -> Path:
    closed = tmp_path / "closed"
    (closed / "world").mkdir(parents=True)
    closed.chmod(0o700)
    return closed


def test_a_worlds_down_takes_back_what_it_opened(
    closed_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _users(monkeypatch)
    ledger = tmp_path / "run" / "opened-for-search"
    live(WORLD_A)
    opened = real_users.open_for_search(WORLD_A, [closed_dir / "world"], ledger)
    assert opened[-1] == closed_dir.resolve()  # and pytest's own 0700 directories above
    assert _other_bits(closed_dir) == 0o001
    # opened again by the same world: nothing more
    assert real_users.open_for_search(WORLD_A, [closed_dir / "world"], ledger) == []

    live()
    assert real_users.close_for_search(WORLD_A, ledger) == opened
    assert [_other_bits(d) for d in opened] == [0] * len(opened)
    assert ledger.read_text() == ""
    assert real_users.close_for_search(WORLD_A, ledger) == []


def _two_worlds(tmp_path: Path, ledger: Path) -> tuple[Path, Path, Path, list[Path]]:
    """World A under shared/a, world B under shared/b, every directory 0700 before:
    (shared, a, b, what A opened)."""
    shared = tmp_path / "shared"
    for own in ("a", "b"):
        (shared / own / "world").mkdir(parents=True)
        (shared / own).chmod(0o700)
    shared.chmod(0o700)
    opened_a = real_users.open_for_search(WORLD_A, [shared / "a" / "world"], ledger)
    opened_b = real_users.open_for_search(WORLD_B, [shared / "b" / "world"], ledger)
    assert opened_b == [(shared / "b").resolve()]  # the rest A had opened
    return shared.resolve(), (shared / "a").resolve(), (shared / "b").resolve(), opened_a


def test_a_down_keeps_open_what_another_live_world_still_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _users(monkeypatch)
    ledger = tmp_path / "opened-for-search"
    live(WORLD_A, WORLD_B)
    shared, a, b, opened_a = _two_worlds(tmp_path, ledger)

    live(WORLD_B)  # A's down removed A's users
    assert real_users.close_for_search(WORLD_A, ledger) == [a]
    assert _other_bits(a) == 0
    assert _other_bits(shared) == _other_bits(b) == 0o001  # B's users pass through them

    live()  # B's down
    closed = real_users.close_for_search(WORLD_B, ledger)
    assert set(closed) == {b, *opened_a} - {a}
    assert _other_bits(shared) == _other_bits(b) == 0
    assert ledger.read_text() == ""


def test_a_down_never_closes_another_worlds_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B's users are gone but B never went down (its entries stay): A's down closes what A
    needed (the shared directories too: no live world holds them), never B's own."""
    live = _users(monkeypatch)
    ledger = tmp_path / "opened-for-search"
    live(WORLD_A, WORLD_B)
    shared, a, b, opened_a = _two_worlds(tmp_path, ledger)

    live()
    assert set(real_users.close_for_search(WORLD_A, ledger)) == set(opened_a)
    assert _other_bits(a) == _other_bits(shared) == 0
    assert _other_bits(b) == 0o001
    assert ledger.read_text() == f"{WORLD_B}\t{b}\n"


def test_a_ledger_written_before_worlds_were_recorded_is_no_worlds(
    closed_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line without a world (an older sandbox's) is nobody's: a world that finds its
    directory open holds it, and its down closes it."""
    live = _users(monkeypatch)
    ledger = tmp_path / "opened-for-search"
    closed_dir.chmod(0o701)
    ledger.write_text(f"{closed_dir.resolve()}\n")
    live(WORLD_A)
    assert closed_dir.resolve() not in real_users.open_for_search(
        WORLD_A, [closed_dir / "world"], ledger
    )
    live()
    assert closed_dir.resolve() in real_users.close_for_search(WORLD_A, ledger)
    assert _other_bits(closed_dir) == 0
    assert ledger.read_text() == ""


def test_a_directory_gone_since_is_skipped_and_the_rest_closed(
    closed_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "opened-for-search"
    gone = tmp_path / "gone"
    (gone / "x").mkdir(parents=True)
    gone.chmod(0o700)
    opened = real_users.open_for_search(WORLD_A, [gone / "x", closed_dir / "world"], ledger)
    (gone / "x").rmdir()
    gone.rmdir()
    _users(monkeypatch)()
    assert real_users.close_for_search(WORLD_A, ledger) == [
        d for d in opened if d != gone.resolve()
    ]
    assert _other_bits(closed_dir) == 0
