"""The command server and its compiled client: an emulated tool behaves as a real process.

A host's ``podman``, ``skupper``, ``curl``, ... is the compiled client; the world's command
server runs the emulation. Whatever the product (and its kill-on-cancel path) can observe of
a process must be the same: exit status, output streams, stdin, working directory,
environment, the signal it dies of, and that killing its process group ends it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostkit import HostKit, make_host
from polling import wait_for
from skupper_sandbox import hostenv
from skupper_sandbox.commands.server import CommandServer, socket_name
from skupper_sandbox.emulated.podman import containers
from skupper_sandbox.shims import COMMAND_CLIENT
from sshkit import free_port


@contextlib.contextmanager
def silent_listener(address: str) -> Iterator[int]:
    """A port that accepts connections and never answers (a hung model API)."""
    server = socket.create_server((address, 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def connectable(name: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect("\0" + name)
        except OSError:
            return False
    return True


@pytest.fixture
def served(tmp_path: Path) -> Iterator[HostKit]:
    kit = make_host(tmp_path, "cmd", "127.219.1.2", compiled=True)
    client = kit.world_dir / "bin" / COMMAND_CLIENT
    assert client.exists(), "the command client did not compile: `make hostdeps` installs gcc"
    name = socket_name(kit.info.world_id)
    stats = tmp_path / "commands.stats"
    server = subprocess.Popen(
        [sys.executable, "-m", "skupper_sandbox.commands.server", name, str(stats)],
        env={**os.environ, hostenv.WORLD_ID_VAR: kit.info.world_id},  # as the world daemon's
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: connectable(name), timeout=20, what="the command server")
        yield kit
    finally:
        server.terminate()
        server.wait(10)
        kit.cleanup()


def served_count(kit: HostKit) -> int:
    stats = Path(kit.world_dir).parent / "commands.stats"
    return len(stats.read_text().splitlines()) if stats.exists() else 0


def test_status_streams_and_stdin_pass_through(served: HostKit) -> None:
    refused = served.sh("curl -sS http://127.0.0.1:1/; echo rc=$?")
    assert refused.stdout.strip().endswith("rc=7")  # curl's "could not connect"
    assert "Failed to connect" in refused.stderr
    table = served.sh("skupper version -p kubernetes")
    assert table.returncode == 0 and table.stdout.startswith("COMPONENT")
    site = "apiVersion: skupper.io/v2alpha1\\nkind: Site\\nmetadata:\\n  name: s1\\n"
    fed = served.sh(f"printf '{site}' | skupper system apply -f - -p podman")
    assert fed.returncode == 0 and "Site s1 added" in fed.stdout, fed.stdout + fed.stderr
    resources = served.home / ".local/share/skupper/namespaces/default/input/resources"
    assert (resources / "Site-s1.yaml").is_file()
    # all three ran in the server, none in a fresh Python
    wait_for(lambda: served_count(served) == 3, timeout=30, what="the server's record of 3")


def test_working_directory_and_environment_are_the_callers(served: HostKit) -> None:
    (served.home / "work").mkdir()
    wrote = served.sh("cd work && curl -sS -o got.txt file:///etc/hostname && echo done")
    assert wrote.stdout == "done\n", wrote.stderr
    assert (served.home / "work" / "got.txt").read_text() == Path("/etc/hostname").read_text()
    # the platform comes from the caller's environment: kubernetes has no `system` verbs
    kube = served.sh("SKUPPER_PLATFORM=kubernetes skupper system start")
    assert kube.stdout.strip() == "This command does not support kubernetes platforms."


def test_a_signal_to_the_client_reaches_the_command_and_its_status(served: HostKit) -> None:
    with silent_listener(served.info.address) as port:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", f"exec curl -s http://{served.info.address}:{port}/"],
            env=served.env(),
            start_new_session=True,
        )
        wait_for(lambda: curls_to(port), timeout=10, what="the command to start")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == -signal.SIGTERM  # the client died of the command's signal
        wait_for(lambda: not curls_to(port), timeout=30, what="the command to end")


def test_killing_the_callers_process_group_ends_the_command(served: HostKit) -> None:
    with silent_listener(served.info.address) as port:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", f"curl -s http://{served.info.address}:{port}/; echo never"],
            env=served.env(),
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        wait_for(lambda: curls_to(port), timeout=10, what="the command to start")
        os.killpg(proc.pid, signal.SIGKILL)  # what the product does to a timed-out command
        proc.wait(10)
        assert proc.stdout is not None and proc.stdout.read() == b""
        wait_for(lambda: not curls_to(port), timeout=30, what="the command to end")


def test_without_a_server_the_client_runs_the_emulation_itself(tmp_path: Path) -> None:
    kit = make_host(tmp_path, "alone", "127.219.1.3", compiled=True)
    try:
        table = kit.sh("skupper version -p kubernetes")
        assert table.returncode == 0 and table.stdout.startswith("COMPONENT")
    finally:
        kit.cleanup()


def curls_to(port: int) -> list[int]:
    """Pids of real curl processes talking to ``port`` (what the emulated curl runs)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if argv[0].endswith(b"/curl") and f":{port}/".encode() in b" ".join(argv):
                found.append(int(entry.name))
    return found


def test_a_command_that_ends_as_its_client_goes_is_served_on(tmp_path: Path) -> None:
    """The end of a command and the end of its client's stream ready in one batch of events:
    handling the first closes the client, and the second must not take the server down
    (at 32 providers this lost every command in flight)."""
    server = CommandServer(f"skmcp-commands-test-{os.getpid()}")
    try:
        ours, theirs = socket.socketpair()
        pid = os.posix_spawn("/bin/true", ["true"], {})
        server.track(pid, ours, "podman")
        pidfd = server.running[pid].pidfd
        assert select.select([pidfd], [], [], 10)[0], "the command did not end"
        theirs.close()  # the client's end of stream after the command's end
        server.serve_once(timeout=1)
        server.serve_once(timeout=0)
        assert server.running == {}
        assert ours.fileno() == -1
        assert len(server.selector.get_map()) == 1  # only the listener is left
    finally:
        server.listener.close()


def stat_of(pid: int) -> list[str]:
    """``/proc/PID/stat`` after the command name: state, ppid, pgrp, session..."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def parent_of(pid: int) -> int:
    return int(stat_of(pid)[1])


def session_of(pid: int) -> int:
    return int(stat_of(pid)[3])


def test_a_containers_monitor_is_served_and_records_how_it_ends(served: HostKit) -> None:
    """podman starts its conmon, a C binary, for each container; the host's `conmon` is the
    command client, so the monitor is the server's child (no new Python), outlives `podman
    run`, and records the container's end as before."""
    started = served.sh("podman run -d --name m busybox sleep 60")
    assert started.returncode == 0, started.stderr
    c = containers.get(served.home, "m")
    assert c is not None and containers.running(c) and c.conmon_pid
    server = parent_of(c.conmon_pid)
    assert b"skupper_sandbox.commands.server" in Path(f"/proc/{server}/cmdline").read_bytes()
    assert served.sh("podman stop -t 5 m").returncode == 0
    ended = containers.get(served.home, "m")
    assert ended is not None and ended.status == "exited" and ended.exit_code == 143
    stats = Path(served.world_dir).parent / "commands.stats"
    wait_for(
        lambda: any(line.startswith("conmon ") for line in stats.read_text().splitlines()),
        timeout=10,
        what="the server's record of the monitor's end",
    )


@pytest.mark.parametrize(("signal_name", "code"), [("TERM", 143), ("INT", 130)])
def test_an_image_program_is_forked_by_its_monitor_and_lives_and_ends_as_its_own(
    served: HostKit, signal_name: str, code: int
) -> None:
    """The sandbox's own image programs (here the model server) start as a fork of their
    conmon, which has their modules imported: no new Python, but the process a new one
    would be: its own session, the program's name, its log, its port, its signals (SIGINT
    ends a Python program by KeyboardInterrupt, 130; SIGTERM by default, 143)."""
    image = "localhost/skupper-mcp-sandbox/model-server:latest"
    port = free_port(served.info.address)
    run = f"podman run -d --name ms -e PORT={port} -e MODEL_ID=forked-model {image}"
    assert served.sh(run).returncode == 0
    c = containers.get(served.home, "ms")
    assert c is not None and c.pid and c.conmon_pid
    assert parent_of(c.pid) == c.conmon_pid and session_of(c.pid) == c.pid
    assert Path(f"/proc/{c.pid}/comm").read_text().strip() == "model-server"
    cmdline = Path(f"/proc/{c.pid}/cmdline").read_bytes()
    assert b"skupper_sandbox.commands.server" in cmdline  # forked, not a new interpreter
    models = f"curl -fsS http://127.0.0.1:{port}/v1/models"
    answer = wait_for(
        lambda: (r := served.sh(models)).returncode == 0 and r.stdout,
        timeout=10,
        what="the model server to answer",
    )
    assert isinstance(answer, str)
    assert "forked-model" in answer
    assert served.sh(f"podman kill -s {signal_name} ms").returncode == 0

    def ended() -> containers.Container | None:
        found = containers.get(served.home, "ms")
        return found if found is not None and found.status == "exited" else None

    last = wait_for(ended, timeout=10, what=f"the container to end on SIG{signal_name}")
    assert last.exit_code == code
    logs = served.sh("podman logs ms 2>&1").stdout
    assert f"listening on {served.info.address}:{port}" in logs
