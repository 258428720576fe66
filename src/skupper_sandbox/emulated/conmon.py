"""The container monitor: runs one container's process and records how it ends.

`podman start` launches `python -m skupper_sandbox.emulated.conmon --dir CTR_DIR
--token T` in a new session and returns once this monitor has recorded the process's pid
(or its failure to start). The process runs in its own process group with the
container's directory as cwd and its output appended to `ctr.log`; when it ends, the
monitor records its exit code (128 + signal when killed) and kills what is left of the
group, as a container's teardown would. A restart policy is recorded, never acted on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from skupper_sandbox import hostenv
from skupper_sandbox.emulated import containers, images


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


def _exit_code(returncode: int) -> int:
    return returncode if returncode >= 0 else 128 - returncode


def _record_start_failure(c: containers.Container, error: str, code: int) -> None:
    c.status = "exited"
    c.pid = None
    c.exit_code = code
    c.start_error = error
    c.finished_at = containers.now()
    containers.save_state(c)


def monitor(container_dir: Path, host_dir: str, token: str, *, keep: bool = False) -> int:
    """Run the container to its end; returns the container's exit code."""
    c = containers.load(container_dir)
    if c is None:
        print(f"conmon: no container in {container_dir}", file=sys.stderr)
        return 1
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
    executable = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env["PATH"])
    with open(c.log_path, "ab", buffering=0) as log:
        try:
            if executable is None:
                raise FileNotFoundError(argv[0])
            proc = subprocess.Popen(
                [executable, *argv[1:]],
                cwd=c.dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except FileNotFoundError:
            _record_start_failure(
                c,
                f"crun: executable file `{argv[0]}` not found in $PATH: No such file or "
                "directory: OCI runtime attempted to invoke a command that was not found",
                127,
            )
            return 127
        except PermissionError:
            _record_start_failure(c, f"crun: open executable: Permission denied: `{argv[0]}`", 126)
            return 126
        c.status = "running"
        c.pid = proc.pid
        c.started_at = containers.now()
        containers.save_state(c)
        returncode = proc.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    c.status = "exited"
    c.pid = None
    c.exit_code = _exit_code(returncode)
    c.finished_at = containers.now()
    if c.auto_remove and not keep:
        shutil.rmtree(os.getcwd(), ignore_errors=True)
    else:
        containers.save_state(c)
    return c.exit_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="conmon")
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--host-dir", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--keep", action="store_true", help="leave an --rm container")
    args = parser.parse_args(argv)
    # A monitor outlives the command that started it; a hangup of that command's
    # terminal or session must not end the container's bookkeeping.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    monitor(args.dir, args.host_dir, args.token, keep=args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
