"""``skupper_mcp.userfiles``, the one way a user's file is written: its mode from the start
whatever the umask, a replacement only of the file that was read, and nothing left behind
or written through when that fails."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from skupper_mcp import userfiles
from skupper_mcp.errors import ConfigError


@pytest.fixture
def wide_umask() -> Iterator[None]:
    """A umask that would leave a new file readable by everyone (0666 & ~0 = 0666)."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_new_file_and_a_backup_have_their_mode_whatever_the_umask(
    tmp_path: Path, wide_umask: None
) -> None:
    path = tmp_path / "config.json"
    userfiles.write(userfiles.read(path, limit=100), "{}\n", new_mode=0o600)
    assert _mode(path) == 0o600
    backup = userfiles.write(userfiles.read(path, limit=100), '{"a": 1}\n', new_mode=0o644)
    assert backup is not None and _mode(backup) == 0o600 and _mode(path) == 0o600
    assert backup.read_text() == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, backup.name])


def test_a_file_changed_after_it_was_read_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}\n")
    before = userfiles.read(path, limit=100)
    path.write_text('{"saved": "by the client meanwhile"}\n')
    with pytest.raises(ConfigError, match="changed while we wrote it"):
        userfiles.write(before, '{"ours": 1}\n', new_mode=0o600, keep_backup=False)
    assert path.read_text() == '{"saved": "by the client meanwhile"}\n'
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_a_link_put_at_the_name_after_the_read_is_not_written_through(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("theirs\n")
    before = userfiles.read(path, limit=100)  # no file yet
    path.symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="a link was put there"):
        userfiles.write(before, "{}\n", new_mode=0o600)
    assert elsewhere.read_text() == "theirs\n" and path.is_symlink()


def test_every_backup_name_of_the_second_taken_is_refused_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("a: 1\n")
    monkeypatch.setattr(userfiles.time, "time", lambda: 1_800_000_000.0)
    for counter in range(100):
        (tmp_path / userfiles.backup_name(path.name, 1_800_000_000.0, counter)).symlink_to("/x")
    with pytest.raises(ConfigError, match="no free name for a backup"):
        userfiles.write(userfiles.read(path, limit=100), "a: 2\n", new_mode=0o600)
    assert path.read_text() == "a: 1\n"


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    """A FIFO at a client's file name would block a plain open() for ever."""
    path = tmp_path / "config.json"
    os.mkfifo(path)
    with pytest.raises(ConfigError, match="not a regular file"):
        userfiles.read(path, limit=100)


def test_an_export_named_through_a_link_is_written_where_it_leads_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``models --export FMT --output LINK``: before, the file was opened with O_TRUNC
    through the link, and a link to nothing created its target; now the target is replaced
    (the link stays) and said, and a link to nothing is refused."""
    from skupper_mcp.cli import write_export
    from skupper_mcp.results import ModelsResult

    result = ModelsResult(rows=[], summary="0/0 serving")
    target = tmp_path / "dotfiles" / "litellm.yaml"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "litellm.yaml"
    link.symlink_to(target)
    write_export(result, "litellm", include_all=False, path=link)
    assert link.is_symlink() and target.read_text() != "old\n"
    assert f"wrote {target} (through the link {link})" in capsys.readouterr().err

    dangling = tmp_path / "env.sh"
    dangling.symlink_to(tmp_path / ".bash_login")
    with pytest.raises(ConfigError, match="does not exist"):
        write_export(result, "env", include_all=False, path=dangling)
    assert not (tmp_path / ".bash_login").exists()
