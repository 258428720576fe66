"""A world made with ``--podman real``: its root host's podman is this machine's, with a
store of its own, and the Skupper CLI's router there is a real container running the
imitation router from the machine's filesystem; ``sandbox down`` leaves no container,
store, mount or process. Skipped where real podman cannot run a container (no podman)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skupper_sandbox import real_podman
from skupper_sandbox.cli import world_processes
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

SITE = "apiVersion: skupper.io/v2alpha1\nkind: Site\nmetadata:\n  name: hub\n"
GO_ZERO_TIME = -62135596800


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    why_not = real_podman.probe()
    if why_not is not None:
        pytest.skip(f"real podman cannot run here: {why_not}")
    spec = WorldSpec(providers=1, kubernetes=False, root_hosts=frozenset({"local"}), podman="real")
    root = tmp_path_factory.mktemp("real-podman")
    with running_world(root, spec) as made:
        yield made
    _assert_nothing_left(made)


def _assert_nothing_left(world: World) -> None:
    store = real_podman.host_store(world.host_dir("local"))
    assert not store.root.exists() and not store.runroot.exists()
    assert world_processes(world.info.id) == []
    mounts = Path("/proc/self/mountinfo").read_text()
    assert str(world.dir) not in mounts


def _exited(pid: int) -> bool:
    """Whether ``pid`` is gone or a zombie (its monitor has not reaped it yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _within(seconds: float, check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _router_pid(world: World) -> int:
    out = _ok(world, "local", "podman ps -a --format json")
    rows = [r for r in json.loads(out) if r["Names"] == ["default-skupper-router"]]
    return int(rows[0]["Pid"]) if rows and rows[0]["State"] == "running" else 0


def _conmons(container_id: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"conmon") and container_id.encode() in b" ".join(argv):
            found.append(int(proc.name))
    return found


def _ok(world: World, host: str, command: str) -> str:
    code, out, err = world.ssh(host, command)
    assert code == 0, f"{command}: {out}{err}"
    return out


def test_the_root_host_runs_this_machines_podman_and_the_other_the_emulation(
    world: World,
) -> None:
    assert world.info.podman == "real"
    assert _ok(world, "local", "podman --version").startswith("podman version 4.")
    assert _ok(world, "local", "id -u") == "0\n"
    # a non-root host keeps the emulation (keep-id needs a real user: real_hosts)
    assert _ok(world, "rhel-ai", "podman --version") != _ok(world, "local", "podman --version")


def test_a_site_router_is_a_real_container_listed_by_its_own_host_only(world: World) -> None:
    env = "SKUPPER_PLATFORM=podman"
    _ok(world, "local", f"{env} skupper system apply -f - -n default <<'EOF'\n{SITE}EOF")
    _ok(world, "local", f"systemctl enable --now podman.socket; {env} skupper system start")
    try:
        [row] = json.loads(_ok(world, "local", "podman ps -a --format json"))
        assert row["Names"] == ["default-skupper-router"]
        assert row["State"] == "running" and row["ExitedAt"] == GO_ZERO_TIME
        assert row["Image"].startswith("quay.io/skupper/skupper-router:")
        assert row["Labels"]["application"] == "skupper-v2"
        # conmon and the router are this machine's processes, under real podman
        assert row["Pid"] > 0 and Path(f"/proc/{row['Pid']}").exists()
        listed = json.loads(_ok(world, "rhel-ai", "podman ps -a --format json") or "[]")
        assert "default-skupper-router" not in [n for r in listed for n in r["Names"]]
        status = json.loads(world.sandbox("status", "--json").stdout)
        [local] = [h for h in status["hosts"] if h["name"] == "local"]
        assert local["running"] == ["default-skupper-router"]
        # a router crash, as `fault kill-router` makes one: the real process dies by SIGKILL
        conmons = _conmons(row["Id"])
        assert conmons, "no conmon monitors the router"
        world.fault("local", "kill-router")
        assert _within(10.0, lambda: _exited(row["Pid"]))
        # Skupper's --restart always: conmon's exit command (podman container cleanup)
        # starts it again, with no systemd
        restarted = _within(20.0, lambda: _router_pid(world) not in (0, row["Pid"]))
        events = (world.host_dir("local") / "podman/events.log").read_text()[-3000:]
        assert restarted, (conmons, _conmons(row["Id"]), events)
        code, _, err = world.ssh("local", "podman logs nosuch")
        assert code == 125 and "no such container" in err
    finally:
        _ok(world, "local", f"{env} skupper system stop")
    assert json.loads(_ok(world, "local", "podman ps -a --format json")) == []
