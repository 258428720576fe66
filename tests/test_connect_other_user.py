"""``connect`` against a second local user (issue 43, items 3 and 4), driven as the attack was:
a real Unix user made for the test (``useradd``, removed after) watches the victim's home for
backups, plants links at the next backup names in a shared project's group-writable
``.vscode/``, and ships a repository whose ``.vscode/mcp.json`` is a link.

The victim is this process (root): it runs ``skupper-mcp connect`` through the CLI, with
``HOME`` and the current folder of the scenario.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skupper_mcp.cli import main
from skupper_sandbox import real_users

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not Path(real_users.USERADD).exists(),
    reason="makes a second Unix user: needs root and useradd",
)

TOKEN = "ghp_" + "S3cr3tT0k3n" * 3


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    """A directory every user can pass through (pytest's own are 0700), removed after."""
    made = Path(tempfile.mkdtemp(prefix="skmcp-h43-"))
    made.chmod(0o755)
    try:
        yield made
    finally:
        subprocess.run(["rm", "-rf", "--", str(made)], check=False)


@pytest.fixture
def other_user(shared: Path) -> Iterator[real_users.Account]:
    """A throwaway local user (its own group), not a sandbox world's (no ``skXXXXXX-``
    name: a world's down counts those), removed with its processes after."""
    name = f"h43atk{os.getpid() % 100000}"
    account = real_users.create(name, shared / "nohome", "/bin/sh")
    try:
        yield account
    finally:
        real_users.remove(account)


#: The machine's Python, which any user may run: this one may be under a directory others
#: cannot pass (pyenv's in /root, opened only while a sandbox world with users is up).
PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable


def as_user(account: real_users.Account, script: str, *args: str) -> subprocess.Popen[str]:
    """``script`` (Python) run as ``account``, with the machine's interpreter."""
    return subprocess.Popen(
        [PYTHON, "-I", "-c", textwrap.dedent(script), *args],
        user=account.uid,
        group=account.gid,
        extra_groups=[account.gid],
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "TZ": os.environ.get("TZ", "UTC")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


Connect = Callable[[str, Path, Path], int]


@pytest.fixture
def connect(example_path: Path, monkeypatch: pytest.MonkeyPatch) -> Connect:
    """``connect CLIENT`` with the example topology, HOME at ``home``, run in ``cwd``: its
    exit code."""

    def run(client: str, home: Path, cwd: Path) -> int:
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
        monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `claude`: the file is written by us
        monkeypatch.chdir(cwd)
        return main(["connect", client, "--topology", str(example_path)])

    return run


#: How many backups the watcher gets to catch (before, it caught most of 12 of 8 MB)
ATTEMPTS = 8

#: The attacker: list the victim's home over and over; open every backup the moment it is
#: there and say what it read of it.
WATCHER = """
    import os, sys, time
    home, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
    print("ready", flush=True)
    seen = set()
    while time.monotonic() < deadline:
        for name in os.listdir(home):
            if name.endswith(".bak") and name not in seen:
                try:
                    fd = os.open(os.path.join(home, name), os.O_RDONLY)
                except OSError:
                    continue
                seen.add(name)
                data = b""
                while chunk := os.read(fd, 1 << 20):
                    data += chunk
                print("read", name, len(data), b"ghp_" in data, flush=True)
"""


def test_another_user_never_reads_a_backup_of_a_private_file(
    shared: Path, other_user: real_users.Account, connect: Connect
) -> None:
    """~/.claude.json is 0600 and large (project history); its backup is never readable by
    another user, not even while it is being written. Before, it was created 0644 and
    chmod'ed after the copy: the watcher read it in that window (5 of 8, a run of the test on
    the code before)."""
    home = shared / "victim"
    home.mkdir(mode=0o755)  # a home others may pass through and list, as many distributions
    path = home / ".claude.json"
    # 4.4 MB, as the ~/.claude.json read in the attack
    history = {f"/project/{n}": {"history": ["x" * 200] * 10} for n in range(2150)}
    watcher = as_user(other_user, WATCHER, str(home), "120")
    try:
        assert watcher.stdout is not None and watcher.stdout.readline() == "ready\n"
        for attempt in range(ATTEMPTS):
            document = {"theme": f"t{attempt}", "env": {"GITHUB_TOKEN": TOKEN}}
            document["projects"] = history
            path.write_text(json.dumps(document))
            path.chmod(0o600)
            assert connect("claude-code", home, shared) == 0
        time.sleep(0.5)  # a fixed window: the watcher must not read the last backup in it
    finally:
        watcher.kill()
        out, err = watcher.communicate(timeout=30)
    backups = sorted(home.glob(".claude.json.*.bak"))
    assert len(backups) == ATTEMPTS
    assert all(stat.S_IMODE(b.stat().st_mode) == 0o600 for b in backups)
    assert "read" not in out, f"another user read a backup of a 0600 file: {out}{err}"


#: The attacker, in the project's group: a link at each backup name of the next seconds,
#: to the victim's ~/.bash_login (which a login shell runs).
PLANTER = """
    import os, sys, time
    folder, target, now = sys.argv[1], sys.argv[2], time.time()
    for second in range(-2, 60):
        stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now + second))
        for counter in range(4):
            suffix = f"-{counter}" if counter else ""
            os.symlink(target, os.path.join(folder, f"mcp.json.{stamp}{suffix}.bak"))
    print("planted", flush=True)
"""


def test_a_link_planted_at_the_next_backup_name_is_not_written_through(
    shared: Path, other_user: real_users.Account, connect: Connect
) -> None:
    """A shared project whose ``.vscode/`` its group may write: the other user links the
    next backup names to the victim's ~/.bash_login and puts a command in mcp.json. Before,
    ``exists()`` (false for a dangling link) passed the name and the copy wrote mcp.json
    into ~/.bash_login."""
    home = shared / "victim"
    home.mkdir(mode=0o700)
    project = shared / "project"
    vscode = project / ".vscode"
    vscode.mkdir(parents=True)
    os.chown(vscode, 0, other_user.gid)
    vscode.chmod(0o775)  # the project's group writes it
    mcp = vscode / "mcp.json"
    mcp.write_text('{"servers": {}, "x": "touch /tmp/pwned #"}\n')
    os.chown(mcp, other_user.uid, other_user.gid)
    mcp.chmod(0o664)
    bash_login = home / ".bash_login"
    planter = as_user(other_user, PLANTER, str(vscode), str(bash_login))
    out, err = planter.communicate(timeout=60)
    assert planter.returncode == 0 and "planted" in out, err

    assert connect("vscode", home, project) == 0
    assert not os.path.lexists(bash_login), "the backup was written through a planted link"
    links = [p for p in vscode.iterdir() if p.is_symlink()]
    assert len(links) == 62 * 4  # each left as it was
    (backup,) = [p for p in vscode.glob("mcp.json.*.bak") if not p.is_symlink()]
    assert backup.read_text() == '{"servers": {}, "x": "touch /tmp/pwned #"}\n'
    assert stat.S_IMODE(backup.stat().st_mode) == 0o664
    assert "skupper" in json.loads(mcp.read_text())["servers"]


def _cloned(shared: Path, other_user: real_users.Account) -> tuple[Path, Path]:
    """The victim's home with a ~/.claude.json holding a token, and a repository the other
    user made beside it (a clone of theirs): (home, repository)."""
    home = shared / "victim"
    home.mkdir(mode=0o755)
    (home / ".claude.json").write_text(json.dumps({"env": {"GITHUB_TOKEN": TOKEN}}, indent=2))
    (home / ".claude.json").chmod(0o600)
    repository = shared / "repo"
    subprocess.run(
        ["install", "-d", "-o", str(other_user.uid), "-m", "0755", str(repository)], check=True
    )
    return home, repository


def _plant(other_user: real_users.Account, link: Path, target: str) -> None:
    done = as_user(
        other_user,
        "import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True); "
        "os.symlink(sys.argv[2], sys.argv[1])",
        str(link),
        target,
    )
    _, err = done.communicate(timeout=60)
    assert done.returncode == 0, err


def test_a_repositorys_link_out_of_it_is_followed_and_said_never_copied_in(
    shared: Path,
    other_user: real_users.Account,
    capsys: pytest.CaptureFixture[str],
    connect: Connect,
) -> None:
    """``.vscode/mcp.json -> ../../victim/.claude.json``: before, the whole ~/.claude.json
    (its token) was written into the repository as a plain mcp.json, ready to commit. Now
    the link stays a link, the file it leads to gets our entry and nothing else changes in
    it, and the output names both."""
    home, repository = _cloned(shared, other_user)
    original = (home / ".claude.json").read_text()
    link = repository / ".vscode" / "mcp.json"
    _plant(other_user, link, "../../victim/.claude.json")

    assert connect("vscode", home, repository) == 0
    out = capsys.readouterr().out
    assert link.is_symlink() and os.readlink(link) == "../../victim/.claude.json"
    assert f"{link} is a link" in out and str(home / ".claude.json") in out
    for written in repository.rglob("*"):
        assert written.is_symlink() or not written.is_file() or TOKEN not in written.read_text()
    changed = json.loads((home / ".claude.json").read_text())
    assert changed["env"] == {"GITHUB_TOKEN": TOKEN} and "skupper" in changed["servers"]
    assert (home / ".claude.json").read_text().startswith(original[:-2])
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600
    (backup,) = home.glob(".claude.json.*.bak")
    assert backup.read_text() == original and stat.S_IMODE(backup.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("link", "target"),
    [(".vscode/mcp.json", "../package.json"), (".vscode", "config/editor")],
    ids=["the file", "its directory"],
)
def test_a_repositorys_link_into_itself_is_refused_and_named(
    link: str,
    target: str,
    shared: Path,
    other_user: real_users.Account,
    capsys: pytest.CaptureFixture[str],
    connect: Connect,
) -> None:
    home, repository = _cloned(shared, other_user)
    package = repository / "package.json"
    editor = repository / "config" / "editor"
    editor.mkdir(parents=True)
    for made in (package, editor / "mcp.json"):
        made.write_text('{"name": "theirs"}\n')
    _plant(other_user, repository / link, target)
    before = {p: p.read_text() for p in (package, editor / "mcp.json")}

    assert connect("vscode", home, repository) == 2
    err = capsys.readouterr().err
    assert str(repository / link) in err and "inside the current folder" in err
    assert {p: p.read_text() for p in before} == before
    assert (repository / link).is_symlink()
    assert not list(repository.rglob("*.bak"))


def test_a_link_to_nothing_is_refused(
    shared: Path,
    other_user: real_users.Account,
    capsys: pytest.CaptureFixture[str],
    connect: Connect,
) -> None:
    """A dangling ``.vscode/mcp.json`` to the victim's ~/.bash_login: no file is created
    through a link (before, the link was replaced by a plain file; a link to a file that
    exists was written through)."""
    home, repository = _cloned(shared, other_user)
    link = repository / ".vscode" / "mcp.json"
    _plant(other_user, link, str(home / ".bash_login"))
    assert connect("vscode", home, repository) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not os.path.lexists(home / ".bash_login") and link.is_symlink()


def test_a_repositorys_vscode_folder_linked_out_of_it_is_followed_and_said(
    shared: Path,
    other_user: real_users.Account,
    capsys: pytest.CaptureFixture[str],
    connect: Connect,
) -> None:
    """``.vscode -> ../victim/editor`` (the victim's settings kept elsewhere): the file in
    the linked folder gets our entry, the link stays, and the output says where it went.
    Before, the folder was written through without a word."""
    home, repository = _cloned(shared, other_user)
    editor = home / "editor"
    editor.mkdir()
    original = '{\n  "servers": {\n    "other": {"command": "o"}\n  }\n}\n'
    (editor / "mcp.json").write_text(original)
    _plant(other_user, repository / ".vscode", "../victim/editor")

    assert connect("vscode", home, repository) == 0
    out = capsys.readouterr().out
    assert f"{repository / '.vscode'} is a link" in out and str(editor / "mcp.json") in out
    assert (repository / ".vscode").is_symlink()
    servers = json.loads((editor / "mcp.json").read_text())["servers"]
    assert set(servers) == {"other", "skupper"}
    (backup,) = editor.glob("mcp.json.*.bak")
    assert backup.read_text() == original
