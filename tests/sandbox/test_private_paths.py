"""A checkout in a private directory (mode 0700: what ``mktemp -d`` makes, and a home
directory on Debian and Fedora) runs a real-podman world: every command the sandbox runs as
a host's own user gets a working directory that user can enter, and every path it hands the
users (the Python they run, a model server's script) is one they reach, or ``sandbox up``
says which one and why before it starts anything. ``make demo`` leaves no directory behind
when its world does not start."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from skupper_sandbox import real_podman, real_users
from skupper_sandbox.layout import WorldLayout, WorldSpec
from skupper_sandbox.testing import (
    REAL_USERS_BASE,
    SandboxCommandError,
    assert_nothing_left,
    reachable_dir,
    running_world,
    sandbox_command,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

UP_TIMEOUT = 300.0


@pytest.fixture(scope="module")
def real() -> None:
    why_not = real_podman.probe()
    if why_not is not None:
        pytest.skip(f"real podman cannot run here: {why_not}")


@pytest.fixture
def private() -> Iterator[Path]:
    """A directory only root may enter (0700), as a user's ``mktemp -d`` or home is."""
    REAL_USERS_BASE.mkdir(mode=0o711, exist_ok=True)
    made = Path(tempfile.mkdtemp(prefix="private-", dir=REAL_USERS_BASE))
    assert made.stat().st_mode & 0o777 == 0o700
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def _venv_in(directory: Path) -> Path:
    """A Python environment inside ``directory`` that runs this checkout's sandbox, as the
    ``.venv`` of a clone there does: its own prefix, its packages this one's (its
    site-packages a link to them, where the world's containers find them through the link's
    target)."""
    venv = directory / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    site_packages = venv / Path(sysconfig.get_paths()["purelib"]).relative_to(sys.prefix)
    shutil.rmtree(site_packages)
    site_packages.symlink_to(sysconfig.get_paths()["purelib"])
    return venv / "bin" / "python"


def _up(
    python: Path, world_dir: Path, cwd: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "skupper_sandbox.cli", "up", "--dir", str(world_dir), *options],
        capture_output=True,
        text=True,
        timeout=UP_TIMEOUT,
        cwd=cwd,
        check=False,
    )


def _world_dir() -> Path:
    made = Path(tempfile.mkdtemp(prefix="world-", dir=REAL_USERS_BASE))
    made.chmod(0o711)
    return made


def test_a_real_podman_world_starts_from_a_private_directory_holding_its_python(
    real: None, private: Path
) -> None:
    python = _venv_in(private)
    world_dir = _world_dir()
    try:
        up = _up(
            python, world_dir, private, "--podman", "real", "--providers", "1", "--no-kubernetes"
        )
        assert up.returncode == 0, up.stdout + up.stderr
        assert "cannot chdir" not in up.stderr
        status = sandbox_command("status", "--dir", str(world_dir), "--json")
        assert status.returncode == 0, status.stderr
        assert '"user_manager": false' not in status.stdout  # each runs the private Python
    finally:
        down = sandbox_command("down", "--dir", str(world_dir))
        info = WorldLayout(world_dir).load() if (world_dir / "world.json").exists() else None
        if info is not None:
            assert_nothing_left(info.id, down)
        shutil.rmtree(world_dir, ignore_errors=True)


def _script(directory: Path, mode: int) -> Path:
    script = directory / "server.py"
    script.write_text(
        "import runpy\nrunpy.run_module('skupper_sandbox.model_server', run_name='__main__')\n"
    )
    script.chmod(mode)
    return script


def test_a_model_servers_script_is_mounted_without_a_volume_flag(real: None, private: Path) -> None:
    """``--model-server "python /some/dir/server.py"``: the container sees the script at its
    own path (read-only), though its directory is private and no --model-server-volume is
    given."""
    script = _script(private, 0o644)
    spec = WorldSpec(
        providers=1,
        kubernetes=False,
        podman="real",
        model_server_command=shlex.join([sys.executable, str(script)]),
    )
    with running_world(private / "w", spec) as world:
        entry = world.hosts["rhel-ai"]
        models = httpx.get(f"http://{entry.address}:{entry.ports['model']}/v1/models", timeout=10)
        assert [m["id"] for m in models.json()["data"]] == [entry.default_model_id]


def test_a_script_the_hosts_users_cannot_read_fails_up_before_anything_starts(
    real: None, private: Path
) -> None:
    script = _script(private, 0o600)
    spec = WorldSpec(
        providers=1,
        kubernetes=False,
        podman="real",
        model_server_command=shlex.join([sys.executable, str(script)]),
    )
    with pytest.raises(SandboxCommandError) as failed, running_world(private / "w", spec):
        pass
    said = str(failed.value)
    assert f"{script}: others cannot read it (mode 0600, owner root)" in said
    assert "chmod o+r" in said
    # said by the check that runs before any store, image or process of the world
    assert "sandbox: real users: the world's users" in said
    assert "podman import" not in said


def test_a_demo_whose_world_does_not_start_leaves_no_directory(
    tmp_path: Path, demo_that_cannot_start: subprocess.CompletedProcess[str]
) -> None:
    demo = demo_that_cannot_start
    assert demo.returncode == 1
    assert "--podman no-such-kind" in demo.stdout
    assert list(tmp_path.iterdir()) == []


def test_unreachable_says_what_keeps_a_user_out(private: Path) -> None:
    nobody = real_users.lookup("nobody")
    if nobody is None:
        pytest.skip("no user nobody")
    inside = private / "deep"
    inside.mkdir()
    (inside / "f").write_text("x")
    with reachable_dir("link") as shared:
        link = shared / "f"  # on an open way, to a file behind the private directory
        link.symlink_to(inside / "f")
        said = real_users.unreachable(nobody, [inside / "f", Path("/usr/bin"), link])
    why = f"others cannot pass {private} (mode 0700, owner root) and it could not be given"
    assert said == [f"{inside / 'f'}: {why} the search bit", f"{link}: {why} the search bit"]


def test_a_script_named_inside_a_shell_string_fails_up_naming_the_volume_flag(
    real: None, private: Path
) -> None:
    """A path inside ``sh -c '...'`` is no word of COMMAND: not mounted, so the container
    cannot open it, and up's error says what a real container sees and which flag adds a
    directory."""
    script = _script(private, 0o644)
    command = shlex.join(["/bin/sh", "-c", f"exec {shlex.quote(sys.executable)} {script}"])
    spec = WorldSpec(providers=1, kubernetes=False, podman="real", model_server_command=command)
    with pytest.raises(SandboxCommandError) as failed, running_world(private / "w", spec):
        pass
    said = str(failed.value)
    assert "can't open file" in said and str(script) in said
    assert "--model-server-volume DIR" in said


def test_a_world_that_asks_no_podman_is_made_where_real_users_reach_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing asked is ``auto`` (real podman where it runs), so a test run without
    SKMCP_SANDBOX_PODMAN (one file run by hand) makes its world outside pytest's 0700
    temporary root, as ``real`` does: it was made inside, and its hosts' users were denied
    their own podman store (``stat .../storage.conf: permission denied``)."""
    from skupper_sandbox import testing

    monkeypatch.delenv(real_podman.MODE_VAR, raising=False)
    made, outside = testing._world_dir(tmp_path, WorldSpec())
    try:
        assert outside is not None and made.parent == testing.REAL_USERS_BASE
        assert (tmp_path / testing.WORLD_LINK).resolve() == made
    finally:
        shutil.rmtree(made, ignore_errors=True)
    monkeypatch.setenv(real_podman.MODE_VAR, "emulated")
    assert testing._world_dir(tmp_path / "e", WorldSpec()) == ((tmp_path / "e").resolve(), None)
