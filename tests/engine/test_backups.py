"""Teardown's backups: complete or refused, a partial CA never restored, never written
through a link nor readable by anyone else.

The archive is made by the real script through a local shell (with a ``tar`` that fails
where a test needs one), and checked by the pure functions of ``engine/store/backups.py``.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from skupper_mcp.connectors.local import LocalConnector
from skupper_mcp.engine.store.backups import CA_DIR, Backups, check_complete
from skupper_mcp.errors import BackupError, CommandError, LocalStateError
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
    # the tests may run as root: the host's user here is not (it picks the layout)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bin_dir / "id").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
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


def test_a_state_dir_others_can_write_is_refused_and_nothing_is_saved(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(LocalStateError, match=r"writable by other users \(mode 1777\).*chmod 700"):
        Backups(shared).save("gpu-1", "default", tar_gz({"input/x": b"1"}))
    assert list(shared.iterdir()) == []


def test_backup_folders_and_files_are_private(tmp_path: Path) -> None:
    root = tmp_path / "new-state"
    path = Backups(root).save("gpu-1", "default", tar_gz({"input/x": b"1"}))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (root, root / "backups", path.parent.parent, path.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_link_planted_at_the_backups_next_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "gmtime", lambda: time.struct_time((2026, 1, 2, 3, 4, 5, 4, 2, 0)))
    root = tmp_path / "state"
    folder = root / "backups/gpu-1/default"
    folder.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's own text\n")
    victim.chmod(0o644)
    (folder / "20260102T030405Z.tar.gz").symlink_to(victim)
    backups = Backups(root)
    path = backups.save("gpu-1", "default", tar_gz({CA_DIR + n: d for n, d in CA.items()}))
    assert path.name == "20260102T030405Z-2.tar.gz"
    assert victim.read_text() == "the victim's own text\n"
    assert backups.latest("gpu-1", "default") == path  # the link is no backup
    assert backups.latest_ca("gpu-1", "default") == CA
    readable = [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and not p.is_symlink() and p.stat().st_mode & 0o044
    ]
    assert all(CA["tls.key"] not in p.read_bytes() for p in readable), readable


def test_backups_in_the_same_second_keep_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "gmtime", lambda: time.struct_time((2026, 1, 2, 3, 4, 5, 4, 2, 0)))
    backups = Backups(tmp_path / "state")
    for n in range(1, 12):
        saved = backups.save("gpu-1", "default", tar_gz({"input/x": str(n).encode()}))
    assert saved.name == "20260102T030405Z-11.tar.gz"
    assert backups.latest("gpu-1", "default") == saved


def test_a_backup_that_became_a_link_is_not_read(tmp_path: Path) -> None:
    backups = Backups(tmp_path / "state")
    path = backups.save("gpu-1", "default", tar_gz({CA_DIR + n: d for n, d in CA.items()}))
    elsewhere = tmp_path / "elsewhere.tar.gz"
    path.rename(elsewhere)
    path.with_name("99991231T000000Z.tar.gz").symlink_to(elsewhere)
    assert backups.latest("gpu-1", "default") is None


def gzip_bomb(unpacked: int) -> bytes:
    """A tar.gz of one member of ``unpacked`` zero bytes (a multiple of 1 MiB), about a
    thousandth of that packed: a gzip stream may be several members one after another
    (RFC 1952 2.2), so one packed MiB of zeros is repeated instead of packing them all."""
    import gzip

    info = tarfile.TarInfo(CA_DIR + "ca.crt")
    info.size = unpacked
    zeros = gzip.compress(bytes(1 << 20), compresslevel=9)
    return b"".join(
        [gzip.compress(info.tobuf()), zeros * (unpacked >> 20), gzip.compress(bytes(1024))]
    )


def test_a_gzip_bomb_is_refused_without_inflating_it_all() -> None:
    bomb = gzip_bomb(256 << 20)  # four times the bound (plain numbers: this runs on main too)
    assert len(bomb) < 16 * 1024 * 1024  # within what a read may hold
    started = time.thread_time()  # CPU, which load does not stretch: the inflating itself
    with pytest.raises(BackupError, match=r"refused \(it unpacks to more than 67108864 bytes\)"):
        check_complete("gpu-1", bomb, [CA_DIR + "ca.crt"])
    assert time.thread_time() - started < 5  # a quarter of the bomb inflated, no more


def test_an_archive_of_too_many_members_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from skupper_mcp.engine.store import backups

    monkeypatch.setattr(backups, "MAX_MEMBERS", 50)  # 10 000 members take a while to make
    many = tar_gz({f"input/resources/f{i}": b"" for i in range(51)})
    with pytest.raises(BackupError, match=r"more than 50 members"):
        check_complete("gpu-1", many, ["input/resources/f0"])


def test_a_saved_bomb_is_never_inflated_to_restore_a_ca(tmp_path: Path) -> None:
    backups = Backups(tmp_path / "state")
    backups.save("gpu-1", "default", gzip_bomb(128 << 20))
    with pytest.raises(BackupError, match="unpacks to more than"):
        backups.latest_ca("gpu-1", "default")


async def test_the_backup_check_inflates_in_a_worker_thread_not_on_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While the check inflates a bomb, the event loop keeps its ticks: another host's call
    is served meanwhile. Shown by the thread the inflating runs on and the loop's ticks
    meanwhile, not by the gaps between them, which a busy machine stretches either way."""
    import anyio

    from skupper_mcp.engine.store import backups
    from skupper_mcp.engine.store.backups import MAX_UNPACKED_BYTES, checked

    inflating_on: list[int] = []
    inflate = backups.check_complete

    def noted(*args: Any) -> None:
        inflating_on.append(threading.get_ident())
        inflate(*args)

    monkeypatch.setattr(backups, "check_complete", noted)
    bomb = gzip_bomb(MAX_UNPACKED_BYTES - (1 << 20))  # inside the bound: inflated whole
    ticks: list[float] = []
    done = anyio.Event()

    async def tick() -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            await anyio.sleep(0.01)

    async def check() -> None:
        try:
            with pytest.raises(BackupError, match="incomplete"):
                await checked("gpu-1", bomb, ["input/resources/Site-hub.yaml"])
        finally:
            done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        tg.start_soon(check)
    assert inflating_on and threading.get_ident() not in inflating_on, "inflated on the loop"
    assert len(ticks) > 3, "the loop did not tick while the bomb was inflated"
