"""A sandbox world as the product and a user see it: topology, SSH hosts, models, lifecycle."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest

from polling import wait_for
from skupper_sandbox import layout
from skupper_sandbox.cli import world_processes
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, reachable_dir, running_world, sandbox_command

pytestmark = pytest.mark.sandbox

SSH_HOSTS = ("local", "rhel-ai", "rhtevan-work")


def _parse_env(text: str) -> dict[str, str]:
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key] = value.strip('"')
    return values


def test_up_prints_the_topology_path_last(world: World) -> None:
    last = world.stdout.strip().splitlines()[-1]
    assert Path(last) == world.dir / "topology.env"
    assert Path(last).is_absolute() and Path(last).is_file()


def test_topology_uses_the_example_names_and_the_world_values(world: World) -> None:
    from skupper_mcp.topology import parse_topology

    text = world.topology.read_text()
    parsed = parse_topology(text, world.topology)  # the product accepts every variable
    assert [p.name for p in parsed.providers] == ["rhel-ai", "rhtevan-work"]
    values = _parse_env(text)
    rhel, rhtevan, local = (world.hosts[n] for n in ("rhel-ai", "rhtevan-work", "local"))
    assert values["PROVIDER_HOSTS"] == "rhel-ai rhtevan-work"
    assert values["RHEL_AI_SSH_HOST"] == rhel.address
    assert values["RHEL_AI_INTER_ROUTER_PORT"] == "8000"
    assert values["RHEL_AI_MODEL_PORT"] == "9000"
    assert values["RHEL_AI_TMPFS_WORKAROUND"] == "true"
    assert values["RHEL_AI_DEFAULT_PROFILE"] == "g8b-fp8-spec-128k"
    assert values["RHTEVAN_WORK_PUBLIC_HOST"] == rhtevan.address
    assert values["RHTEVAN_WORK_MODEL_PORT"] == "10000"
    assert values["RHTEVAN_WORK_TMPFS_WORKAROUND"] == "false"
    assert values["LOCAL_SSH_HOST"] == local.address
    assert values["LOCAL_SITE_NAME"] == "local-sandbox"
    assert values["CRC_KUBECONFIG"] == str(world.dir / "kube" / "kubeconfig")
    assert values["CRC_ROUTING_KEY"] == "model-api-rhel-ai"
    assert Path(values["SSH_IDENTITY"]).is_file()
    known_hosts = Path(values["SSH_KNOWN_HOSTS"]).read_text()
    assert f"[{rhel.address}]:2222 ssh-ed25519 " in known_hosts


@pytest.mark.parametrize("host", SSH_HOSTS)
def test_ssh_commands_run_in_the_host_environment(world: World, host: str) -> None:
    script = 'echo "$HOME|$PATH|$SKMCP_SANDBOX_HOST|${XDG_RUNTIME_DIR-unset}|$(pwd)"; cat'
    status, out, err = world.ssh(host, script, input="from stdin\n")
    home, path, host_var, xdg, cwd = out.splitlines()[0].split("|")
    host_dir = world.host_dir(host)
    assert status == 0, err
    assert home == cwd == str(host_dir / "home")
    assert path.split(":")[0] == str(world.dir / "bin")
    assert host_var == str(host_dir)
    assert xdg == "unset"
    assert out.splitlines()[1] == "from stdin"


def test_ssh_passes_exit_status_and_stderr_through(world: World) -> None:
    assert world.ssh("local", "echo oops >&2; exit 7") == (7, "", "oops\n")


def test_unknown_client_keys_are_refused(world: World, tmp_path: Path) -> None:
    import asyncio

    import asyncssh

    stranger = asyncssh.generate_private_key("ssh-ed25519")
    local = world.hosts["local"]

    async def attempt() -> None:
        async with asyncssh.connect(
            local.address,
            port=2222,
            username="root",
            client_keys=[stranger],
            known_hosts=str(world.layout.known_hosts),
            connect_timeout=5,
        ):
            pass

    with pytest.raises(asyncssh.PermissionDenied):
        asyncio.run(attempt())


@pytest.mark.parametrize("host", SSH_HOSTS)
def test_skupper_answers_on_every_host(world: World, host: str) -> None:
    status, out, err = world.ssh(host, "skupper version")
    assert status == 0, err
    assert "2.1.3" in out


@pytest.mark.parametrize("host", ["rhel-ai", "rhtevan-work"])
def test_each_model_server_serves_its_default_model(world: World, host: str) -> None:
    entry = world.hosts[host]
    base = f"http://{entry.address}:{entry.ports['model']}"
    assert httpx.get(f"{base}/health", timeout=5).status_code == 200
    models = httpx.get(f"{base}/v1/models", timeout=5).json()
    assert [m["id"] for m in models["data"]] == [entry.default_model_id]


def test_systemctl_user_needs_xdg_runtime_dir(world: World) -> None:
    check = "systemctl --user daemon-reload && systemctl --user is-active no-such.service"
    with_it = world.ssh("rhel-ai", f"export XDG_RUNTIME_DIR=/run/user/$(id -u); {check}")
    without = world.ssh("rhel-ai", check)
    assert with_it[:2] == (3, "inactive\n"), with_it
    assert without[0] != 0
    assert "Failed to connect to bus" in without[2]


def test_status_reports_every_host(world: World) -> None:
    result = world.sandbox("status", "--json")
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["running"] is True
    hosts = {h["name"]: h for h in status["hosts"]}
    assert set(hosts) == set(SSH_HOSTS)
    assert all(h["ssh_reachable"] for h in hosts.values())
    assert hosts["rhel-ai"]["containers_running"] == 1
    assert status["kube"]["reachable"] is True
    table = world.sandbox("status").stdout
    assert "rhtevan-work" in table and world.hosts["rhel-ai"].address in table


def test_up_refuses_while_a_world_runs_in_the_dir(world: World) -> None:
    result = sandbox_command("up", "--dir", str(world.dir))
    assert result.returncode == 1
    assert f"a sandbox is already running in {world.dir}; run sandbox down first" in result.stderr


def _bindable(address: str, port: int) -> bool:
    with socket.socket() as probe:
        # SO_REUSEADDR ignores TIME_WAIT leftovers but still fails on a live listener.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, port))
        except OSError:
            return False
    return True


def test_two_worlds_run_at_once_and_down_leaves_nothing(tmp_path: Path) -> None:
    with (
        running_world(tmp_path / "a", WorldSpec(providers=1, kubernetes=False)) as first,
        running_world(tmp_path / "b", WorldSpec(providers=1, kubernetes=False)) as second,
    ):
        assert first.info.block != second.info.block
        for w in (first, second):
            assert w.ssh("rhel-ai", "echo $SKMCP_SANDBOX_HOST")[1].strip().startswith(str(w.dir))
        ids = [first.info.id, second.info.id]
        addresses = [
            (h.address, port)
            for w in (first, second)
            for h in w.info.hosts
            for port in (2222, h.ports.get("model", 2222))
        ]
        assert world_processes(first.info.id)
    for world_id in ids:
        assert world_processes(world_id) == []
    assert all(_bindable(a, p) for a, p in addresses)
    assert not (tmp_path / "a" / "ready").exists()
    again = sandbox_command("down", "--dir", str(tmp_path / "a"))
    assert again.returncode == 0


def test_a_failing_start_reports_the_log_and_cleans_up(tmp_path: Path) -> None:
    started = time.monotonic()
    result = sandbox_command(
        "up", "--dir", str(tmp_path), "--providers", "1", "--no-kubernetes",
        "--model-server", "echo model crashed >&2; exit 3",
    )  # fmt: skip
    assert result.returncode == 1
    assert "failed to start" in result.stderr
    assert "model container on rhel-ai exited with 3: model crashed" in result.stderr
    # the subject: at once, not after the 600 s a custom model gets
    assert time.monotonic() - started < 30
    info = layout.WorldLayout(tmp_path).load()
    assert world_processes(info.id) == []


def test_a_model_server_with_a_key_and_no_health_is_up_at_once(tmp_path: Path) -> None:
    """vLLM --api-key answers 401 on /v1/models, Ollama has no /health: sandbox up takes
    both as up (it waited out its 600 s for a /health 200 before)."""
    with reachable_dir("model-key") as shared:  # the model server runs as the host's user
        key_file = shared / "model.key"
        key_file.write_text("world-test-key\n")
        key_file.chmod(0o644)
        _a_keyed_model_server_is_up_at_once(tmp_path, key_file)


def _a_keyed_model_server_is_up_at_once(tmp_path: Path, key_file: Path) -> None:
    server = [sys.executable, "-m", "skupper_sandbox.model_server"]
    command = shlex.join([*server, "--api-key-file", str(key_file), "--no-health"])
    started = time.monotonic()
    spec = WorldSpec(
        providers=1,
        kubernetes=False,
        model_server_command=command,
        model_server_volumes=(str(key_file.parent),),
    )
    with running_world(tmp_path / "world", spec) as world:
        took = time.monotonic() - started
        entry = world.hosts["rhel-ai"]
        url = f"http://{entry.address}:{entry.ports['model']}"
        assert httpx.get(f"{url}/health", timeout=5).status_code == 404
        assert httpx.get(f"{url}/v1/models", timeout=5).status_code == 401
        keyed = httpx.get(
            f"{url}/v1/models", headers={"Authorization": "Bearer world-test-key"}, timeout=5
        )
        assert [m["id"] for m in keyed.json()["data"]] == [entry.default_model_id]
    assert took < 60  # the subject: up at once, not after the 600 s it waited for /health


@pytest.mark.openssh
@pytest.mark.parametrize("host", SSH_HOSTS)
def test_openssh_hosts_run_commands_in_the_host_environment(
    openssh_world: World, host: str
) -> None:
    status, out, err = openssh_world.ssh(
        host,
        'echo "$HOME|$SKMCP_SANDBOX_HOST|${XDG_RUNTIME_DIR-unset}"; cat; exit 4',
        input="through sshd\n",
    )
    host_dir = openssh_world.host_dir(host)
    assert status == 4, err
    assert out.splitlines() == [f"{host_dir / 'home'}|{host_dir}|unset", "through sshd"]


@pytest.mark.openssh
def test_openssh_world_serves_models_and_status(openssh_world: World) -> None:
    entry = openssh_world.hosts["rhtevan-work"]
    health = httpx.get(f"http://{entry.address}:{entry.ports['model']}/health", timeout=5)
    assert health.status_code == 200
    status = json.loads(openssh_world.sandbox("status", "--json").stdout)
    assert status["sshd"] == "openssh"
    assert all(h["ssh_reachable"] for h in status["hosts"])


def test_a_dead_user_manager_is_restarted(world: World) -> None:
    from skupper_sandbox.cli import _cmdline, _environ

    host_dir = str(world.host_dir("local"))

    def manager_pids() -> set[int]:
        return {
            pid
            for pid in world_processes(world.info.id)
            if "sandbox.emulated.systemd" in _cmdline(pid)
            and _environ(pid).get("SKMCP_SANDBOX_HOST") == host_dir
        }

    before = manager_pids()
    assert len(before) == 1
    os.kill(before.pop(), signal.SIGKILL)
    wait_for(
        lambda: (pids := manager_pids()) and pids.isdisjoint(before),
        timeout=10,
        what="the user manager to be restarted",
    )
