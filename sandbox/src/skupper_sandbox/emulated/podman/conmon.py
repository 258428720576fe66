"""The container monitor: runs one container's process and records how it ends.

`podman start` launches the host's `conmon --dir CTR_DIR --token T` (this module, run by the
world's command server) in a new session and returns once this monitor has recorded the
process's pid (or its failure to start). The process runs in its own process group with the
container's directory as cwd and its output appended to `ctr.log`; when it ends, the
monitor records its exit code (128 + signal when killed) and kills what is left of the
group, as a container's teardown would.

Then it does what conmon's exit command (`podman container cleanup`) does in libpod
(`Container.Cleanup` -> `handleRestartPolicy`/`shouldRestart`, libpod/container_api.go and
container_internal.go@v4.9.4): a container whose process ended on its own is started again
when its restart policy says so (`always`, `unless-stopped`, `on-failure[:N]` after a
non-zero exit), by a new monitor, with `RestartCount` one higher. A container stopped by
`podman stop` or `podman kill` is not (`StoppedByUser`), and neither is one whose monitor
was killed: nothing is left to run the cleanup.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from fnmatch import fnmatchcase
from pathlib import Path
from types import ModuleType

from skupper_sandbox import hostenv
from skupper_sandbox.become import become, set_name
from skupper_sandbox.emulated import images
from skupper_sandbox.emulated.podman import containers, userns
from skupper_sandbox.emulated.podman.journal import JournalRelay


def container_environment(c: containers.Container, host_dir: str) -> dict[str, str]:
    """The environment a container's process sees (docs/sandbox.md section 4)."""
    host = hostenv.load_host_info(host_dir)
    image_process = images.process_for(c.image, c.command, c.env, c.tmpfs, host)
    return {
        **hostenv.host_env(host_dir),
        "container": "podman",
        "HOSTNAME": c.hostname or c.id[:12],
        **c.env,
        **image_process.env,
        hostenv.MOUNTS_VAR: json.dumps(c.mounts),
        hostenv.TMPFS_VAR: json.dumps(c.tmpfs),
    }


# The journal relay of the container this monitor runs (a ``journald`` host), joined at its end
_RELAYS: list[JournalRelay] = []
# How long the end waits for the last lines (a leftover child may hold the pipe open)
RELAY_DRAIN = 2.0

# How long the cleanup process takes to start a container again (it syncs state, tears
# down and sets up the mounts first); `podman wait` returns the exit code meanwhile.
RESTART_DELAY = 0.2


def spawn_monitor(
    container_dir: Path, host_dir: str, token: str, *, keep: bool = False, lock: bool = False
) -> None:
    """Start a detached monitor for the container in `container_dir`; with `lock`, it takes
    the container's lock until its process runs (a restart: no `podman start` holds it).
    The monitor is the host's `conmon` (`shims.py`): the world's command client where it
    was built (a few ms, as podman's C conmon, instead of a new Python's 100 ms of imports)."""
    subprocess.Popen(
        [
            str(Path(hostenv.load_host_info(host_dir).world_dir) / "bin" / "conmon"),
            "--dir",
            str(container_dir),
            "--host-dir",
            host_dir,
            "--token",
            token,
            *(["--keep"] if keep else []),
            *(["--lock"] if lock else []),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def should_restart(c: containers.Container) -> bool:
    """libpod's `shouldRestart`: the policy applies unless the user stopped the container."""
    if c.stopped_by_user:
        return False
    name, _, retries = c.restart_policy.partition(":")
    if name in ("", "no", "never"):
        return False
    if name == "on-failure":
        if c.exit_code == 0:
            return False
        if retries and int(retries) > 0 and c.restart_count >= int(retries):
            return False
    return True


def _restart(c: containers.Container, host_dir: str) -> None:
    """What the cleanup process does for a policy match: start the container again."""
    time.sleep(RESTART_DELAY)
    here = Path(os.getcwd())  # the container's directory, wherever a rename moved it
    current = containers.load(here)
    if current is None or current.status != "exited" or not should_restart(current):
        return
    current.restart_count += 1
    containers.save_state(current)
    spawn_monitor(here, host_dir, f"restart-{current.restart_count}-{os.getpid()}", lock=True)


def _exit_code(returncode: int) -> int:
    return returncode if returncode >= 0 else 128 - returncode


def _record_start_failure(c: containers.Container, error: str, code: int) -> None:
    c.status = "exited"
    c.pid = None
    c.exit_code = code
    c.start_error = error
    c.finished_at = containers.now()
    containers.save_state(c)


def monitor(
    container_dir: Path, host_dir: str, token: str, *, keep: bool = False, lock: bool = False
) -> int:
    """Run the container to its end; returns the container's exit code."""
    try:
        with containers.lock(container_dir) if lock else contextlib.nullcontext():
            # Under the lock a `podman rm` either saw the container running (and stops it
            # once it runs) or has removed it: then there is nothing here to start.
            c = containers.load(container_dir)
            if c is None:
                print(f"conmon: no container in {container_dir}", file=sys.stderr)
                return 1
            if lock and (c.status != "exited" or not should_restart(c)):
                return 0  # started or stopped by a podman command while this one waited
            started = _start(c, container_dir, host_dir, token)
    except containers.Removed:
        return 1
    if started is None:
        return c.exit_code or 1
    returncode = started.wait()
    for relay in _RELAYS:  # the last lines reach the journal before the exit is recorded
        relay.join(RELAY_DRAIN)
    return _ended(c, started, returncode, host_dir, keep)


def _start(
    c: containers.Container, container_dir: Path, host_dir: str, token: str
) -> subprocess.Popen[bytes] | Forked | None:
    """Start the container's process and record it; None when it could not start."""
    host = hostenv.load_host_info(host_dir)
    # Work relative to the container's directory: a `podman rename` moves the directory
    # under a running container, and the cwd follows the move.
    os.chdir(container_dir)
    c.dir = Path(".")
    c.start_token = token
    c.conmon_pid = os.getpid()
    c.start_error = None
    c.exit_code = None
    c.finished_at = None
    c.private_tmp.mkdir(exist_ok=True)
    env = container_environment(c, host_dir)
    argv = images.process_for(c.image, c.command, c.env, c.tmpfs, host).argv
    if not c.command and fnmatchcase(c.image, images.ROUTER):
        denied = userns.router_unreadable_certificate(c, host)
        if denied:  # skrouterd stops at startup on a certificate it cannot read
            argv = ["/bin/sh", "-c", f"echo {shlex.quote(denied)} >&2; exit 1"]
    executable = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env["PATH"])
    relay = JournalRelay(host, c.id, c.name, c.log_path) if host.quirks.journald else None
    with open(c.log_path, "ab", buffering=0) as log:
        output = relay.write_fd if relay is not None else log.fileno()
        try:
            if executable is None:
                raise FileNotFoundError(argv[0])
            program = images.loaded_program(argv)
            proc: subprocess.Popen[bytes] | Forked
            if program is not None:
                proc = Forked.start(*program, str(c.dir), env, output)
            else:
                proc = subprocess.Popen(
                    [executable, *argv[1:]],
                    cwd=c.dir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            if relay is not None:
                relay.start()
                _RELAYS.append(relay)
        except FileNotFoundError:
            _record_start_failure(
                c,
                f"crun: executable file `{argv[0]}` not found in $PATH: No such file or "
                "directory: OCI runtime attempted to invoke a command that was not found",
                127,
            )
            return None
        except PermissionError:
            _record_start_failure(c, f"crun: open executable: Permission denied: `{argv[0]}`", 126)
            return None
    c.status = "running"
    c.pid = proc.pid
    c.started_at = containers.now()
    containers.save_state(c)
    return proc


class Forked:
    """A container's process forked from this monitor, which has its program's modules
    imported already (``images.loaded_program``): what ``Popen`` of ``python -m program``
    would start, in its own session, with /dev/null as input and the log as output, minus
    the new interpreter's imports (controller 130 ms of CPU, router launcher 80 ms)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    @classmethod
    def start(
        cls, program: str, module: ModuleType, cwd: str, env: dict[str, str], log: int
    ) -> Forked:
        null = os.open(os.devnull, os.O_RDONLY)
        # as exec, the fork reports its pid once the process is the program's: its name
        # taken (a ps or /proc read right after podman run -d sees the program, not conmon)
        named_r, named_w = os.pipe()
        try:
            try:
                pid = os.fork()
            except OSError:
                os.close(named_w)
                raise
            if pid == 0:
                try:
                    os.close(named_r)
                    os.setsid()
                    set_name(images.PROGRAMS[program])
                    os.close(named_w)
                finally:
                    become(
                        module.main,
                        [module.__file__ or program],
                        env,
                        cwd,
                        (null, log, log),
                        python_signals=True,
                        name=images.PROGRAMS[program],
                    )
            os.close(named_w)
            os.read(named_r, 1)  # EOF once the child has its name (or has ended)
        finally:
            os.close(null)
            os.close(named_r)
        return cls(pid)

    def wait(self) -> int:
        """The exit code, or minus the signal that ended it (as ``Popen.wait``)."""
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def _ended(
    c: containers.Container,
    proc: subprocess.Popen[bytes] | Forked,
    returncode: int,
    host_dir: str,
    keep: bool,
) -> int:
    """Record how the process ended, clear its group away, and restart it by its policy."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    c.status = "exited"
    c.pid = None
    c.exit_code = c.last_exit_code = _exit_code(returncode)
    c.finished_at = containers.now()
    if c.auto_remove and not keep:
        containers.discard(Path(os.getcwd()))
        return c.exit_code
    containers.save_state(c)
    if should_restart(c):
        _restart(c, host_dir)
    return c.exit_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="conmon")
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--host-dir", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--keep", action="store_true", help="leave an --rm container")
    parser.add_argument("--lock", action="store_true", help="hold the lock until it runs")
    args = parser.parse_args(argv)
    # A monitor outlives the command that started it; a hangup of that command's
    # terminal or session must not end the container's bookkeeping.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    monitor(args.dir, args.host_dir, args.token, keep=args.keep, lock=args.lock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
