"""STATE_DIR cannot be redirected: every folder of ours is a real directory, ours, 0700."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from skupper_mcp.engine.store.statedir import existing_private_dir, private_dir
from skupper_mcp.errors import LocalStateError


def enter(root: Path, *parts: str) -> None:
    with private_dir(root, *parts):
        pass


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_new_state_dir_and_its_folders_are_made_0700(tmp_path: Path) -> None:
    root = tmp_path / "a" / "state"
    with private_dir(root, "backups", "gpu-1"):
        pass
    assert [mode(p) for p in (root, root / "backups", root / "backups/gpu-1")] == [0o700] * 3


def test_an_existing_0755_state_dir_of_ours_is_tightened_to_0700(tmp_path: Path) -> None:
    root = tmp_path / "state"
    (root / "locks").mkdir(parents=True)
    root.chmod(0o755)
    (root / "locks").chmod(0o755)
    with private_dir(root, "locks"):
        pass
    assert mode(root) == 0o700
    assert mode(root / "locks") == 0o700


def test_a_symlinked_state_dir_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    root = tmp_path / "state"
    root.symlink_to(target)
    with pytest.raises(LocalStateError, match=r"is a symbolic link.*set STATE_DIR") as raised:
        enter(root, "locks")
    assert raised.value.path == str(root)
    assert list(target.iterdir()) == []
    assert mode(target) == 0o755


def test_a_symlinked_folder_inside_the_state_dir_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    target.mkdir()
    (root / "backups").symlink_to(target)
    with pytest.raises(LocalStateError, match="is a symbolic link") as raised:
        enter(root, "backups", "gpu-1")
    assert raised.value.path == str(root / "backups")
    assert list(target.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another uid needs root")
def test_a_state_dir_owned_by_another_uid_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    os.chown(root, 4321, 4321)
    with pytest.raises(LocalStateError, match=r"belongs to uid 4321, not to you \(uid 0\)"):
        enter(root, "locks")
    assert list(root.iterdir()) == []
    with (
        pytest.raises(LocalStateError, match="belongs to uid 4321"),
        existing_private_dir(root, "backups"),
    ):
        pytest.fail("a folder of another uid was opened")


def test_a_state_dir_writable_by_its_group_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir()
    root.chmod(0o770)
    with pytest.raises(LocalStateError, match=r"writable by other users \(mode 0770\)"):
        enter(root, "locks")
    assert mode(root) == 0o770


def test_a_state_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.write_text("")
    with pytest.raises(LocalStateError, match="is not a directory"):
        enter(root, "locks")


@pytest.mark.parametrize("name", ["..", "a/b", "", "."])
def test_a_folder_name_that_climbs_or_nests_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(LocalStateError, match="not a plain name"):
        enter(tmp_path / "state", "backups", name)
    assert not (tmp_path / "state").exists()


def test_reading_makes_nothing(tmp_path: Path) -> None:
    with existing_private_dir(tmp_path / "state", "backups") as fd:
        assert fd is None
    assert not (tmp_path / "state").exists()
