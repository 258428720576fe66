"""A world made with ``--podman real``: every host's podman is this machine's, with a
store of its own, rootful on the root host and rootless on the other, whose user is a real
Unix user made for the world; the Skupper CLI's router is a real container running the
imitation router from the machine's filesystem; each host's ``podman.socket`` is served by
this machine's ``podman system service`` with the host's own store; ``sandbox down`` leaves
no user, container, store, mount or process. Skipped where real podman cannot run a
container (no podman)."""

from __future__ import annotations

import json
import os
import pwd
import select
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from by_hand import stop_by_hand
from polling import wait_for
from skupper_mcp.facts.site_state import SiteState, parse_site_state, site_state_script
from skupper_sandbox import hostenv, real_podman, real_users
from skupper_sandbox.cli import world_processes
from skupper_sandbox.emulated import podman_api
from skupper_sandbox.emulated.router_news import LogFrames
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
    spec = WorldSpec(
        providers=2,  # rhtevan-work: a rootless host whose router can write its /tmp
        kubernetes=False,
        root_hosts=frozenset({"local"}),
        podman="real",
        host_quirks={"rhel-ai": ("shell=bash",)},
    )
    root = tmp_path_factory.mktemp("real-podman")
    with running_world(root, spec) as made:
        yield made
        down = made.sandbox("down")
        assert down.returncode == 0, down.stderr
        _assert_nothing_left(made)


def _assert_nothing_left(world: World) -> None:
    for host in ("local", "rhel-ai", "rhtevan-work"):
        store = real_podman.host_store(world.host_dir(host))
        assert not store.root.exists() and not store.runroot.exists()
    assert world_processes(world.info.id) == []
    mounts = Path("/proc/self/mountinfo").read_text()
    assert str(world.dir) not in mounts
    # the world's users, their processes (rootless podman's pause process among them),
    # runtime directories and subordinate ranges are gone
    user = world.hosts["rhel-ai"]
    assert real_users.world_accounts(world.info.id) == []
    assert real_users.processes_of(user.uid) == []
    assert not Path(f"/run/user/{user.uid}").exists()
    assert real_users.subordinate_ranges(user.user) == {"/etc/subuid": [], "/etc/subgid": []}
    assert [p for p in world.dir.rglob("*") if p.lstat().st_uid == user.uid] == []


def _exited(pid: int) -> bool:
    """Whether ``pid`` is gone or a zombie (its monitor has not reaped it yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _within(seconds: float, check: Callable[[], bool]) -> bool:
    """Whether ``check`` came true within ``seconds`` (the caller's assert says what it
    waited for, with what it found: ``wait_for`` where there is nothing more to say)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _router_pid(world: World, host: str = "local", prefix: str = "") -> int:
    out = _ok(world, host, prefix + "podman ps -a --format json")
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


def test_every_host_runs_this_machines_podman(world: World) -> None:
    assert world.info.podman == "real"
    machine = subprocess.run(
        [real_podman.PODMAN, "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert machine.startswith("podman version ")
    assert _ok(world, "local", "podman --version") == machine
    assert _ok(world, "rhel-ai", "podman --version") == machine


def test_each_host_logs_in_as_a_real_user_of_its_own(world: World) -> None:
    """Root on the root host; on the other a Unix user made for the world, whose passwd
    entry gives the login shell the host's quirk names, its home and its uid."""
    assert _ok(world, "local", "id -u") == "0\n"
    host = world.hosts["rhel-ai"]
    assert host.real_user and host.user.startswith(real_users.world_prefix(world.info.id))
    entry = pwd.getpwnam(host.user)
    assert entry.pw_uid == host.uid != 0
    assert _ok(world, "rhel-ai", "id -u; id -un") == f"{entry.pw_uid}\n{host.user}\n"
    home = world.host_dir("rhel-ai") / "home"
    fields = _ok(world, "rhel-ai", 'getent passwd "$(id -un)"').strip().split(":")
    assert fields[5:] == [str(home), "/bin/bash"]
    # the session's command runs under that shell, with sshd's variables from passwd
    assert _ok(world, "rhel-ai", 'echo "$0 $SHELL $HOME $USER"') == (
        f"bash /bin/bash {home} {host.user}\n"
    )
    assert _ok(world, "rhel-ai", "stat -c '%U %a' ~") == f"{host.user} 750\n"
    ranges = real_users.subordinate_ranges(host.user)
    assert ranges["/etc/subuid"] and ranges["/etc/subgid"]
    topology = world.topology.read_text()
    assert f"RHEL_AI_SSH_USER={host.user}\n" in topology


def test_a_rootless_site_runs_its_router_as_the_hosts_user(world: World) -> None:
    """The emulated skupper runs as the host's user (the command server takes the client's
    uid), so the router it creates is the user's rootless container, with Skupper's
    ``--userns keep-id``, and everything it wrote is the user's."""
    host = world.hosts["rhel-ai"]
    env = "export SKUPPER_PLATFORM=podman XDG_RUNTIME_DIR=/run/user/$(id -u)"
    _ok(world, "rhel-ai", f"{env}; skupper system apply -f - -n default <<'EOF'\n{SITE}EOF")
    _ok(world, "rhel-ai", f"{env}; systemctl --user enable --now podman.socket")
    _ok(world, "rhel-ai", f"{env}; skupper system start")
    try:
        rows = json.loads(_ok(world, "rhel-ai", f"{env}; podman ps -a --format json"))
        [row] = [r for r in rows if r["Names"] == ["default-skupper-router"]]
        assert row["State"] == "running"
        [inspect] = json.loads(_ok(world, "rhel-ai", f"{env}; podman inspect {row['Id']}"))
        # keep-id as real podman shows it: a private user namespace whose mapping puts the
        # user (id 0 of the namespace podman runs in) at the user's own uid
        assert inspect["Config"]["User"] == f"{host.uid}:{host.gid}"
        assert inspect["HostConfig"]["UsernsMode"] == "private"
        assert f"{host.uid}:0:1" in inspect["HostConfig"]["IDMappings"]["UidMap"]
        owner = Path(f"/proc/{row['Pid']}").stat().st_uid
        assert owner == host.uid
        # the root host's podman does not list the user's containers
        listed = json.loads(_ok(world, "local", "podman ps -a --format json") or "[]")
        assert "default-skupper-router" not in [n for r in listed for n in r["Names"]]
        assert _ok(world, "rhel-ai", 'find ~ ! -user "$(id -un)" | head -5') == ""
        # the router image's USER: without Skupper's --user a router runs as uid 10000, a
        # subordinate id on the host (skupper-router's Containerfile)
        image = row["Image"]
        as_image = _ok(world, "rhel-ai", f"{env}; podman run --rm --network host {image} id")
        # and its group is the image's runner group, not 0: rootless podman maps 0 to the
        # user's own group, which may read the 0640 certificates
        assert as_image.split()[:2] == ["uid=10000(runner)", "gid=10000(runner)"]
        # the router image's own tools (skmanage) come first on its PATH, in `podman exec` too
        found = _ok(world, "rhel-ai", f"{env}; podman exec {row['Id']} sh -c 'command -v skmanage'")
        assert found == f"{world.dir}/image-bin/skupper-router/skmanage\n"
        # nothing the host wrote is another user's (podman's layers hold subordinate ids)
        stray = subprocess.run(
            ["find", str(world.host_dir("rhel-ai")), "-path", "*/podman/storage", "-prune",
             "-o", "!", "-user", str(host.uid), "-print"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert stray == ""
        # a crash (`fault kill-router` finds the pid through the user's own podman) and
        # Skupper's --restart always: the user's conmon has podman start it again
        world.fault("rhel-ai", "kill-router")
        wait_for(lambda: _exited(row["Pid"]), timeout=30, every=0.2, what="the router to die")
        restarted = _within(
            60.0, lambda: _router_pid(world, "rhel-ai", env + "; ") not in (0, row["Pid"])
        )
        assert restarted
    finally:
        _ok(world, "rhel-ai", f"{env}; skupper system stop")


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
        wait_for(lambda: _exited(row["Pid"]), timeout=30, every=0.2, what="the router to die")
        # Skupper's --restart always: conmon's exit command (podman container cleanup)
        # starts it again, with no systemd
        restarted = _within(60.0, lambda: _router_pid(world) not in (0, row["Pid"]))
        events = (world.host_dir("local") / "podman/events.log").read_text()[-3000:]
        assert restarted, (conmons, _conmons(row["Id"]), events)
        code, _, err = world.ssh("local", "podman logs nosuch")
        assert code == 125 and "no such container" in err
    finally:
        _ok(world, "local", f"{env} skupper system stop")
    assert json.loads(_ok(world, "local", "podman ps -a --format json")) == []


def test_openssh_logs_in_as_the_real_user(tmp_path: Path) -> None:
    """OpenSSH's own sshd knows the world's users: topology.env names the real user, and
    sshd runs the session (its ForceCommand shim, then the command) as that user under
    its login shell."""
    if real_podman.probe() is not None or not Path("/usr/sbin/sshd").exists():
        pytest.skip("needs real podman and OpenSSH's sshd")
    spec = WorldSpec(
        providers=2,  # rhtevan-work: a rootless host whose router can write its /tmp
        kubernetes=False,
        sshd="openssh",
        podman="real",
        host_quirks={"rhel-ai": ("shell=fish",)},
    )
    with running_world(tmp_path, spec) as world:
        host = world.hosts["rhel-ai"]
        assert f"RHEL_AI_SSH_USER={host.user}\n" in world.topology.read_text()
        # fish: `(...)` is its command substitution, and $0 is not set there
        out = _ok(world, "rhel-ai", "id -u; id -un; echo $SHELL; ps -o uid=,comm= -p %self")
        assert out.split() == [str(host.uid), host.user, "/usr/bin/fish", str(host.uid), "fish"]
        assert world.hosts["local"].uid not in (0, host.uid)


def _api(world: World, host: str) -> podman_api.PodmanApi:
    info = hostenv.load_host_info(world.host_dir(host))
    return podman_api.PodmanApi(podman_api.socket_path(info))


def _answers(api: podman_api.PodmanApi) -> bool:
    try:
        return api.validate().startswith("4.")
    except podman_api.PodmanApiError:
        return False


def _service_pids(world: World, host: str = "local") -> list[int]:
    """The world's ``podman system service`` processes of ``host``'s user (each host has its
    own uid: a root host 0, the others the users made for them)."""
    found = []
    for pid in world_processes(world.info.id):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            uid = Path(f"/proc/{pid}").stat().st_uid
        except OSError:
            continue
        service = argv[:3] == [real_podman.PODMAN.encode(), b"system", b"service"]
        if service and uid == world.hosts[host].uid:
            found.append(pid)
    return found


def test_podman_socket_is_served_by_real_podman_with_the_hosts_own_store(world: World) -> None:
    api = _api(world, "local")
    _ok(world, "local", "systemctl stop podman.socket")
    assert not api.path.exists() and _service_pids(world) == []
    _ok(world, "local", "systemctl enable --now podman.socket")
    assert api.path.is_socket() and _ok(world, "local", "systemctl is-active podman.socket")
    assert api.path.stat().st_mode & 0o777 == 0o660
    assert api.validate().startswith("4.")
    # the host's own store: a container made by its podman is there, by name
    _ok(world, "local", "podman create --name probe localhost/skupper-mcp-sandbox/base:1 true")
    try:
        state = api.inspect("probe")
        assert state is not None and not state.running and state.restart_count == 0
        assert len(state.id) == 64 and not state.tty
        assert api.inspect("nosuch") is None
    finally:
        _ok(world, "local", "podman rm -f probe")
    [service] = _service_pids(world)
    # a service that dies is started again on the socket, as a connection activates it
    os.kill(service, signal.SIGKILL)
    wait_for(
        lambda: _service_pids(world) not in ([], [service]),
        timeout=30,
        every=0.2,
        what="podman's service started again on the socket",
    )
    wait_for(lambda: _answers(api), timeout=30, every=0.2, what=f"podman's API on {api.path}")
    [service] = _service_pids(world)
    # stopping the unit stops podman's service and removes the socket, as systemd does
    _ok(world, "local", "systemctl stop podman.socket")
    wait_for(
        lambda: service not in _service_pids(world),
        timeout=30,
        every=0.2,
        what=f"podman's service {service} to stop with its socket",
    )
    assert not api.path.exists()
    with pytest.raises(podman_api.PodmanApiError):
        api.validate()


def _follow(
    sock: socket.socket, frames: LogFrames, enough: Callable[[list[bytes]], bool], seconds: float
) -> list[bytes]:
    """The lines a followed output gives until ``enough`` says so or the stream ends."""
    lines: list[bytes] = []
    deadline = time.monotonic() + seconds
    while not enough(lines) and not frames.ended:
        ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"no more output within {seconds:g}s: {lines[-3:]}")
        data = sock.recv(65536)
        if not data:
            break
        lines += frames.feed(data)
    return lines


def test_a_running_containers_output_is_followed_through_the_api_until_it_stops(
    world: World,
) -> None:
    """What the controller of a real-podman host reads its router's output by: podman's
    answer to a followed log, read by ``LogFrames``, gives each new line and ends when the
    container stops."""
    api = _api(world, "local")
    _ok(world, "local", "systemctl enable --now podman.socket")
    talk = "i=0; while :; do i=$((i+1)); echo line $i; sleep 0.2; done"
    _ok(world, "local", f"podman run -d --name talker {real_podman.BASE_IMAGE} sh -c '{talk}'")
    try:
        state = api.inspect("talker")
        assert state is not None and state.running
        sock = api.follow_logs(state.id)
        try:
            frames = LogFrames(tty=state.tty)
            lines = _follow(sock, frames, lambda got: len(got) >= 3, 15.0)
            numbers = [int(line.split()[1]) for line in lines]
            assert all(line.startswith(b"line ") for line in lines), lines
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), lines
            _ok(world, "local", "podman stop -t 1 talker")
            _follow(sock, frames, lambda _: False, 20.0)  # ends: no AssertionError
        finally:
            sock.close()
    finally:
        _ok(world, "local", "podman rm -f talker")
        _ok(world, "local", "systemctl stop podman.socket")


def test_a_rootless_hosts_podman_socket_is_served_as_its_user(world: World) -> None:
    """The user's podman.socket (``$XDG_RUNTIME_DIR/podman/podman.sock``) answers podman's
    API from the user's own store, served by a process of the user's uid."""
    runtime = "export XDG_RUNTIME_DIR=/run/user/$(id -u);"
    _ok(world, "rhel-ai", f"{runtime} systemctl --user enable --now podman.socket")
    active = _ok(world, "rhel-ai", f"{runtime} systemctl --user is-active podman.socket")
    assert active == "active\n"
    api = _api(world, "rhel-ai")
    wait_for(lambda: _answers(api), timeout=30, every=0.2, what=f"podman's API on {api.path}")
    assert api.path.stat().st_uid == world.hosts["rhel-ai"].uid
    _ok(world, "rhel-ai", f"{runtime} systemctl --user stop podman.socket")


def _site_running(world: World, host: str) -> tuple[str, str] | None:
    """The Site's Running condition in the runtime resources (status, message), once the
    controller wrote it (the render writes no ``network``)."""
    data = (
        world.host_dir(host) / "sysroot/var/lib/skupper"
        if world.hosts[host].user == "root"
        else world.host_dir(host) / "home/.local/share/skupper"
    )
    path = data / "namespaces/default/runtime/resources/Site-hub.yaml"
    try:
        site = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None
    status = (site or {}).get("status") or {}
    if "network" not in status:
        return None
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Running":
            return str(condition.get("status")), str(condition.get("message"))
    return None


@pytest.mark.parametrize("host", ["local", "rhtevan-work"])
def test_the_controllers_site_status_follows_the_real_router(world: World, host: str) -> None:
    """The controller runs in a real container and asks the host's podman API about the
    router (a real container too), through the socket ``system install`` mounts into it:
    stopped by podman, the Site says "No router pod is ready" (podman's answer: without it
    the router's silence would say "Router is not responding"); started again, it comes
    back. On the root host (rootful podman) and on a rootless one, whose socket is under
    the user's own ``/run/user/<uid>``."""
    env = "SKUPPER_PLATFORM=podman"
    if world.hosts[host].user != "root":
        env = f"export XDG_RUNTIME_DIR=/run/user/$(id -u); {env}"
    _ok(world, host, f"{env} skupper system install")
    _ok(world, host, f"{env} skupper system apply -f - -n default <<'EOF'\n{SITE}EOF")
    _ok(world, host, f"{env} skupper system start")
    try:
        running = [c["Names"][0] for c in json.loads(_ok(world, host, "podman ps --format json"))]
        assert "default-skupper-router" in running
        [controller] = [name for name in running if name.endswith("-skupper-controller")]
        mounts = json.loads(_ok(world, host, f"podman inspect {controller}"))[0]["Mounts"]
        assert "/var/run/podman.sock" in [m["Destination"] for m in mounts]
        ready = ("True", "OK")
        assert _within(60.0, lambda: _site_running(world, host) == ready), _site_running(
            world, host
        )
        _ok(world, host, "podman stop default-skupper-router")
        stopped = ("False", "No router pod is ready")
        assert _within(60.0, lambda: _site_running(world, host) == stopped), _site_running(
            world, host
        )
        _ok(world, host, "podman start default-skupper-router")
        assert _within(60.0, lambda: _site_running(world, host) == ready), _site_running(
            world, host
        )
        # a crash, as the world's fault makes one: podman's restart policy brings it back,
        # and the status follows it there too
        world.fault(host, "kill-router")
        assert _within(60.0, lambda: _site_running(world, host) == ready), _site_running(
            world, host
        )
        assert "podman API" not in _ok(world, host, f"podman logs {controller} 2>&1")
    finally:
        _stop(world, host, env)
        _ok(world, host, f"{env} skupper system uninstall --force")
    left = [c["Names"][0] for c in json.loads(_ok(world, host, "podman ps -a --format json"))]
    assert [name for name in left if "skupper" in name] == []  # a provider's model stays


def _stop(world: World, host: str, env: str, namespace: str = "default") -> None:
    """``skupper system stop``, finished by hand when it lost the race with the controller's
    status write (``stop_by_hand``), so the next test's start finds no namespace left."""
    home = "/var/lib/skupper" if world.hosts[host].user == "root" else "$HOME/.local/share/skupper"
    status, out, err = stop_by_hand(
        lambda command: world.ssh(host, f"{env} {command}"), namespace, f"{home}/namespaces"
    )
    assert status == 0, f"skupper system stop: {out}{err}"


def _read_state(world: World, host: str, script: str) -> tuple[str, SiteState]:
    out = _ok(world, host, "export XDG_RUNTIME_DIR=/run/user/$(id -u); " + script)
    state = parse_site_state(out)
    assert state.complete and not state.refused and not state.parse_errors, out
    return out, state


@pytest.mark.parametrize("host", ["local", "rhtevan-work"])
def test_the_state_read_through_the_podman_api_is_what_podmans_processes_say(
    world: World, host: str
) -> None:
    """Where ``podman.socket`` is served, the product's state read takes the containers and
    the router's inspect from the API (one curl) and starts no podman process; read with the
    processes instead (as a host without the socket is), the state is the same. On the
    root host (rootful, ``/run/podman/podman.sock``) and on a rootless one."""
    env = "SKUPPER_PLATFORM=podman"
    if world.hosts[host].user != "root":
        env = f"export XDG_RUNTIME_DIR=/run/user/$(id -u); {env}"
    _ok(world, host, f"{env} skupper system install")
    _ok(world, host, f"{env} skupper system apply -f - -n default <<'EOF'\n{SITE}EOF")
    _ok(world, host, f"{env} skupper system start")
    try:
        script = site_state_script("default")
        calls = len(real_podman.podman_calls(world.host_dir(host)))
        out, by_api = _read_state(world, host, script)
        assert "@@section podman-api" in out
        # no podman process of the read's (the units may run theirs meanwhile: a start)
        ran = real_podman.podman_calls(world.host_dir(host))[calls:]
        assert "ps" not in ran and "inspect" not in ran, ran
        calls += len(ran)
        out, by_processes = _read_state(world, host, script.replace("skmcp_podman_api ||", ":;"))
        assert "@@section podman-api" not in out
        ran = real_podman.podman_calls(world.host_dir(host))[calls:]
        assert [verb for verb in ran if verb in ("ps", "inspect")] == ["ps", "inspect"], ran
        assert by_api.router is not None and "default-skupper-router" in by_api.containers
        assert by_api.containers == by_processes.containers
        assert by_api.router == by_processes.router
    finally:
        _stop(world, host, env)
