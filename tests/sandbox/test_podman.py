"""The emulated podman (and the curl shim), used as a user on the host would."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostkit import HostKit, running_host, wait_for, world_pids
from skupper_sandbox.emulated.podman import conmon, containers


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostKit]:
    with running_host(tmp_path, address="127.201.0.20") as kit:
        yield kit


def test_a_container_runs_stops_with_143_and_is_removed(host: HostKit) -> None:
    run = host.sh(
        "podman run -d --name web -l app=demo -e GREETING=hi busybox "
        "sh -c 'echo $GREETING from $container; sleep 60'"
    )
    assert run.returncode == 0, run.stderr
    listed = json.loads(host.sh("podman ps --format json").stdout)
    assert [(c["Names"], c["State"], c["Labels"]) for c in listed] == [
        (["web"], "running", {"app": "demo"})
    ]
    assert listed[0]["Id"] == run.stdout.strip()
    [inspected] = json.loads(host.sh("podman inspect web").stdout)
    assert inspected["State"]["Running"] is True
    assert "GREETING=hi" in inspected["Config"]["Env"]
    assert wait_for(
        lambda: "hi from podman" in host.sh("podman logs web").stdout,
        timeout=30,
        what="web's greeting in its log",
    )

    assert host.sh("podman stop web").stdout == "web\n"
    assert host.sh("podman wait web").stdout == "143\n"
    assert host.sh("podman ps -a --format '{{.Names}} {{.State}}'").stdout == "web exited\n"
    assert host.sh("podman ps -q").stdout == ""

    assert host.sh("podman rm web").returncode == 0
    missing = host.sh("podman rm web")
    assert missing.returncode == 1
    assert missing.stderr == 'Error: no container with name or ID "web" found: no such container\n'
    assert host.sh("podman rm -f -i web").returncode == 0


def _podman_waiting(host: HostKit) -> bool:
    """Whether a ``podman wait`` of this host's world sits in its wait (it holds the inotify
    descriptor it sleeps on)."""
    for pid in world_pids(host.info.world_id):
        try:
            if b"wait" not in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                continue
            targets = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue
        if any("inotify" in target for target in targets):
            return True
    return False


def _inspect(host: HostKit, name: str, fmt: str) -> str:
    return host.sh(f"podman inspect --format '{fmt}' {name}").stdout.strip()


def test_a_crashed_container_is_restarted_by_its_restart_policy(host: HostKit) -> None:
    # libpod: conmon's exit command (`podman container cleanup`) -> handleRestartPolicy.
    assert host.sh("podman run -d --restart always --name r busybox sleep 60").returncode == 0
    c = containers.get(host.home, "r")
    assert c is not None and containers.running(c) and c.pid
    # waiting from before the crash: a `podman wait` started after the restart would wait
    # for the next run's end (as real podman's does)
    waiting = subprocess.Popen(
        ["/bin/sh", "-c", "podman wait r"], env=host.env(), stdout=subprocess.PIPE, text=True
    )
    wait_for(lambda: _podman_waiting(host), timeout=10, what="podman wait to be waiting")
    os.kill(c.pid, signal.SIGKILL)

    out, _ = waiting.communicate(timeout=30)
    assert out == "137\n"

    def restarted() -> bool:
        return _inspect(host, "r", "{{.State.Status}} {{.RestartCount}}") == "running 1"

    assert wait_for(restarted, timeout=30, what="podman to restart the container")
    now = containers.get(host.home, "r")
    assert now is not None and now.pid not in (None, c.pid)


@pytest.mark.parametrize("how", ["podman stop -t 1 r", "podman kill r"])
def test_a_container_stopped_by_the_user_is_not_restarted(host: HostKit, how: str) -> None:
    assert host.sh("podman run -d --restart always --name r busybox sleep 60").returncode == 0
    assert host.sh(how).returncode == 0
    assert host.sh("podman wait r").returncode == 0
    time.sleep(0.6)  # a fixed window: a restart, if podman wrongly did one, would be by now
    assert _inspect(host, "r", "{{.State.Status}} {{.RestartCount}}") == "exited 0"
    # A start undoes the stop: the policy applies again to the next crash.
    assert host.sh("podman start r").returncode == 0
    c = containers.get(host.home, "r")
    assert c is not None and c.pid
    os.kill(c.pid, signal.SIGKILL)
    assert wait_for(
        lambda: _inspect(host, "r", "{{.RestartCount}}") == "1",
        timeout=30,
        what="a RestartCount of 1 after the kill",
    )


def test_on_failure_restarts_only_a_failed_exit_and_counts_retries(host: HostKit) -> None:
    assert host.sh("podman run -d --restart on-failure:2 --name f busybox false").returncode == 0
    assert host.sh("podman run -d --restart on-failure --name ok busybox true").returncode == 0
    assert wait_for(
        lambda: _inspect(host, "f", "{{.RestartCount}}") == "2",
        timeout=30,
        what="a RestartCount of 2 (on-failure, max 2)",
    )
    time.sleep(0.6)  # a fixed window: a third restart, if wrongly made, would be by now
    assert _inspect(host, "f", "{{.State.Status}} {{.RestartCount}}") == "exited 2"
    assert _inspect(host, "ok", "{{.State.Status}} {{.RestartCount}}") == "exited 0"


def test_without_its_monitor_a_crashed_container_is_not_restarted(host: HostKit) -> None:
    assert host.sh("podman run -d --restart always --name r busybox sleep 60").returncode == 0
    c = containers.get(host.home, "r")
    assert c is not None and c.pid and c.conmon_pid
    os.kill(c.conmon_pid, signal.SIGKILL)
    os.kill(c.pid, signal.SIGKILL)
    time.sleep(0.6)  # a fixed window: a restart, if something wrongly made one, would be by now
    assert _inspect(host, "r", "{{.State.Status}} {{.RestartCount}}") == "exited 0"


def test_a_second_container_with_the_same_name_is_refused(host: HostKit) -> None:
    assert host.sh("podman create --name dup busybox sleep 1").returncode == 0
    again = host.sh("podman run -d --name dup busybox sleep 1")
    assert again.returncode == 125
    assert again.stderr.startswith(
        'Error: creating container storage: the container name "dup" is already in use'
    )
    assert host.sh("podman run -d --replace --name dup busybox sleep 30").returncode == 0


def test_tmpfs_is_recorded_and_visible_to_the_process(host: HostKit) -> None:
    run = host.sh(
        "podman run -d --name t --tmpfs /tmp:rw,size=10M,mode=1777 busybox "
        "sh -c 'echo \"$SKMCP_SANDBOX_TMPFS\"; sleep 60'"
    )
    assert run.returncode == 0, run.stderr
    tmpfs = host.sh("podman inspect --format '{{json .HostConfig.Tmpfs}}' t").stdout
    assert json.loads(tmpfs) == {"/tmp": "rw,size=10M,mode=1777"}
    assert wait_for(
        lambda: '["/tmp"]' in host.sh("podman logs t").stdout,
        timeout=30,
        what="the private /tmp in t's log",
    )
    [inspected] = json.loads(host.sh("podman inspect t").stdout)
    private_tmp = {m["Destination"]: m["Source"] for m in inspected["Mounts"]}["/tmp"]
    assert Path(private_tmp).is_dir()


def test_unknown_image_fails_like_a_failed_pull(host: HostKit) -> None:
    result = host.sh("podman run -d --name x quay.io/nobody/nothing:1.0")
    assert result.returncode == 125
    assert result.stderr == (
        "Error: initializing source docker://quay.io/nobody/nothing:1.0: "
        "reading manifest 1.0 in quay.io/nobody/nothing: manifest unknown\n"
    )
    assert host.sh("podman container exists x").returncode == 1


def test_attached_run_returns_the_exit_code_and_output(host: HostKit) -> None:
    result = host.sh("podman run --rm busybox sh -c 'echo out; exit 7'")
    assert (result.returncode, result.stdout) == (7, "out\n")
    assert host.sh("podman ps -a -q").stdout == ""


def test_curl_on_the_host_reaches_the_hosts_own_port(host: HostKit) -> None:
    port = 18080
    serve = (
        f"podman run -d --name http busybox python3 -m http.server "
        f"--bind {host.info.address} {port}"
    )
    assert host.sh(serve).returncode == 0
    fetch = f"curl -s -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{port}/"
    assert wait_for(
        lambda: host.sh(fetch).stdout == "200", timeout=10, what="the published port to answer 200"
    )


def test_logs_tail_and_flags_read_as_podman_parses_them(host: HostKit) -> None:
    """``podman logs`` (cmd/podman/containers/logs.go): the container's stdout and stderr in
    the order written, ``--tail N`` the last N lines (a final line without a newline counts),
    ``-n`` is ``--names``, and flags end at the first container name."""
    script = "for i in 1 2 3; do echo out $i; echo err $i >&2; done; printf partial; sleep 60"
    assert host.sh(f"podman run -d --name chatty busybox sh -c '{script}'").returncode == 0
    assert host.sh("podman run -d --name quiet busybox sh -c 'echo hush; sleep 60'").returncode == 0
    wait_for(
        lambda: host.sh("podman logs chatty").stdout.endswith("partial"),
        timeout=30,
        what="chatty's partial line in its log",
    )
    wait_for(
        lambda: host.sh("podman logs quiet").stdout == "hush\n",
        timeout=30,
        what="quiet's line in its log",
    )

    assert host.sh("podman logs chatty").stdout == (
        "out 1\nerr 1\nout 2\nerr 2\nout 3\nerr 3\npartial"
    )
    assert host.sh("podman logs --tail 3 chatty").stdout == "out 3\nerr 3\npartial"
    assert host.sh("podman logs --tail=1 chatty 2>&1").stdout == "partial"
    assert host.sh("podman logs --tail 0 chatty").stdout == ""
    assert host.sh("podman logs -n --tail 2 quiet").stdout == "hush\n"
    both = host.sh("podman logs --names --tail 1 quiet chatty").stdout
    assert both == "quiet hush\nchatty partial"

    bad = host.sh("podman logs --tail x chatty")
    assert (bad.returncode, bad.stdout) == (125, "")
    assert bad.stderr == (
        'Error: invalid argument "x" for "--tail" flag: strconv.ParseInt: parsing "x": '
        "invalid syntax\n"
    )
    late = host.sh("podman logs chatty --tail 1")
    assert (late.returncode, late.stdout) == (125, "")
    assert late.stderr == 'Error: no container with name or ID "--tail" found: no such container\n'


def _write_until(directory: Path, done: threading.Event, writing: threading.Event) -> None:
    """What a monitor recording a container's end, or a `.lock` opened by another podman
    command, does: make files in the container's directory."""
    n = 0
    while not done.is_set():
        with contextlib.suppress(FileNotFoundError):
            (directory / f".state.json.{n}.tmp").write_text("{}")
        n += 1
        writing.set()


def test_a_removed_name_is_free_while_something_still_writes_into_the_container(
    host: HostKit,
) -> None:
    """libpod frees a name in one database step when it removes the container; files written
    into the container meanwhile must not keep the name taken (a `skupper system reload`
    renames the router to `*-backup` and needs that name free)."""
    for round_ in range(10):
        assert host.sh("podman create --name web busybox true").returncode == 0
        [c] = containers.list_all(host.info.home)
        done, writing = threading.Event(), threading.Event()
        thread = threading.Thread(target=_write_until, args=(c.dir, done, writing))
        thread.start()
        try:
            writing.wait(5)
            removed = host.sh("podman rm -f web")
        finally:
            done.set()
            thread.join()
        assert removed.returncode == 0, removed.stderr
        assert containers.get(host.info.home, "web") is None
        created = host.sh("podman create --name web busybox true")
        assert created.returncode == 0, f"round {round_}: {created.stderr}"
        renamed = host.sh("podman create --name other busybox true && podman rename other web")
        assert "already in use" in renamed.stderr
        assert host.sh("podman rm -f web other").returncode == 0


def _processes_with(host: HostKit, needle: bytes) -> list[int]:
    found = []
    for pid in world_pids(host.info.world_id):
        with contextlib.suppress(OSError):
            if needle in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


def _flock_waiters() -> int:
    """Processes blocked waiting for a flock (``/proc/locks`` marks them ``->``)."""
    return sum(
        "->" in line and "FLOCK" in line for line in Path("/proc/locks").read_text().splitlines()
    )


def test_a_container_removed_while_its_restart_is_pending_never_runs_again(
    host: HostKit,
) -> None:
    """libpod's cleanup restarts a crashed container under the container's lock, and removal
    holds that lock: a restart that waited for a removal finds nothing to start, and no
    process of the removed container is left behind."""
    assert host.sh("podman create --restart always --name r busybox sleep 60").returncode == 0
    c = containers.get(host.home, "r")
    assert c is not None
    c.status, c.exit_code = "exited", 1  # as its monitor records a crash
    containers.save_state(c)
    waiting = _flock_waiters()
    with containers.lock(c.dir):  # what `podman rm` holds while it removes
        conmon.spawn_monitor(c.dir, str(host.host_dir), "pending-restart", lock=True)
        wait_for(lambda: _flock_waiters() > waiting, timeout=10, what="the restart to wait")
        containers.discard(c.dir)
    wait_for(
        lambda: not _processes_with(host, b"pending-restart"),
        timeout=10,
        what="the restart's monitor to give up",
    )
    assert _processes_with(host, b"sleep\x0060") == []
    assert containers.get(host.home, "r") is None


def test_ps_json_gives_a_time_that_never_happened_as_gos_zero_time(host: HostKit) -> None:
    # pkg/ps/ps.go@v5.8.2: ExitedAt/StartedAt are time.Time.Unix() of the zero time
    assert host.sh("podman create --name idle busybox sleep 60").returncode == 0
    assert host.sh("podman run -d --name busy busybox sleep 60").returncode == 0
    rows = {c["Names"][0]: c for c in json.loads(host.sh("podman ps -a --format json").stdout)}
    assert (rows["idle"]["StartedAt"], rows["idle"]["ExitedAt"]) == (-62135596800, -62135596800)
    assert rows["busy"]["StartedAt"] > 0 and rows["busy"]["ExitedAt"] == -62135596800
    assert host.sh("podman stop -t 0 busy").returncode == 0
    [busy] = json.loads(host.sh("podman ps -a --filter name=busy --format json").stdout)
    assert busy["ExitedAt"] >= busy["StartedAt"] > 0
