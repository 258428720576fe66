"""Teardown's backups: complete or refused, a partial CA never restored, STATE_DIR left alone.

The archive is made by the real script through a local shell (with a ``tar`` that fails
where a test needs one), and checked by the pure functions of ``engine/backups.py``.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from skupper_mcp.connectors.local import LocalConnector
from skupper_mcp.engine.backups import CA_DIR, Backups, check_complete
from skupper_mcp.errors import BackupError, CommandError
from skupper_mcp.sites.podman import PodmanSite

CA = {"ca.crt": b"CA CERT", "tls.crt": b"CA TLS CERT", "tls.key": b"CA KEY"}


def tar_gz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture
def namespace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A host's Skupper namespace 'default' with inputs and a site CA, under a fake HOME."""
    home = tmp_path / "home"
    ns = home / ".local/share/skupper/namespaces/default"
    (ns / "input/resources").mkdir(parents=True)
    (ns / "input/resources/Site-hub.yaml").write_text("kind: Site\n")
    ca = ns / CA_DIR
    ca.mkdir(parents=True)
    for name, data in CA.items():
        (ca / name).write_bytes(data)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return ns


async def test_the_archive_holds_every_file_the_host_has(namespace: Path) -> None:
    found = await PodmanSite(LocalConnector("gpu-1"), "default").backup_archive()
    assert sorted(found.files) == sorted(
        ["input/resources/Site-hub.yaml", *(CA_DIR + name for name in CA)]
    )
    check_complete("gpu-1", found.archive, found.files)


async def test_a_tar_that_fails_is_a_failure_not_a_short_backup(
    namespace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    tar = shims / "tar"
    tar.write_text("#!/bin/sh\necho 'tar: tls.key: Cannot open: Permission denied' >&2\nexit 2\n")
    tar.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    with pytest.raises(CommandError, match="Cannot open"):
        await PodmanSite(LocalConnector("gpu-1"), "default").backup_archive()


def test_an_archive_missing_a_listed_file_is_refused_naming_it() -> None:
    files = [CA_DIR + name for name in CA]
    partial = tar_gz({CA_DIR + "ca.crt": b"x", CA_DIR + "tls.crt": b"y"})
    with pytest.raises(BackupError, match=r"tls\.key missing") as raised:
        check_complete("gpu-1", partial, files)
    assert raised.value.missing == [CA_DIR + "tls.key"]
    with pytest.raises(BackupError):
        check_complete("gpu-1", b"not a tar.gz", files)


def test_a_backup_with_part_of_the_ca_is_never_restored(tmp_path: Path) -> None:
    backups = Backups(tmp_path / "state")
    backups.save("gpu-1", "default", tar_gz({CA_DIR + "ca.crt": b"x", CA_DIR + "tls.crt": b"y"}))
    with pytest.raises(BackupError, match=r"tls\.key missing.*new CA"):
        backups.latest_ca("gpu-1", "default")


def test_a_complete_backup_gives_back_the_ca(tmp_path: Path) -> None:
    backups = Backups(tmp_path / "state")
    backups.save("gpu-1", "default", tar_gz({CA_DIR + n: d for n, d in CA.items()}))
    assert backups.latest_ca("gpu-1", "default") == CA
    assert backups.latest_ca("gpu-2", "default") is None


def test_saving_leaves_a_shared_state_dir_as_it_was(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    path = Backups(shared).save("gpu-1", "default", tar_gz({"input/x": b"1"}))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (shared / "backups", path.parent.parent, path.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_new_state_dir_is_made_private(tmp_path: Path) -> None:
    root = tmp_path / "new-state"
    Backups(root).save("gpu-1", "default", tar_gz({"input/x": b"1"}))
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
