"""The verbs acting on containers: create, run, start, stop, restart, kill, wait,
rm, logs, exec, rename."""

from __future__ import annotations

import os
import shutil
import sys
from typing import BinaryIO

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.podman import containers
from skupper_sandbox.emulated.podman.containers import Container

from ..dirwatch import SAFETY_TICK, DirectoryWatch, wait_for_change
from .create import NAME_PATTERN, create_container, parse_env
from .errors import PodmanError, no_such_container
from .host import Host, find, locked
from .lifecycle import remove, signal_group, signal_number, start, stop
from .options import CREATE_OPTS, Opt, Parsed, parse_options
from .report import effective_state


def verb_create(host: Host, args: list[str]) -> int:
    parsed = parse_options("create", args, CREATE_OPTS, interspersed=False)
    c = create_container(host, parsed)
    print(c.id)
    return 0


def verb_run(host: Host, args: list[str]) -> int:
    parsed = parse_options("run", args, CREATE_OPTS, interspersed=False)
    c = create_container(host, parsed)
    try:
        start(host, c, keep=not parsed.flag("detach"))
    except PodmanError:
        if c.auto_remove:
            containers.discard(c.dir)
        raise
    if parsed.flag("detach"):
        print(c.id)
        return 0
    code = _follow_log(c, from_start=True)
    if c.auto_remove:
        containers.discard(c.dir)
    return code


def _follow_log(c: Container, *, from_start: bool, discard: bool = False) -> int:
    """Copy the container's output to stdout (``discard``: nowhere) until it exits; its exit
    code."""
    out: BinaryIO | None = None if discard else sys.stdout.buffer
    with open(c.log_path, "rb") as log, DirectoryWatch(c.dir) as watch:
        if not from_start:
            log.seek(0, os.SEEK_END)
        while True:
            current = containers.load(c.dir)
            chunk = log.read()
            if chunk and out is not None:
                out.write(chunk)
                out.flush()
            if current is None or current.status != "running":
                rest = log.read()
                if out is not None:
                    out.write(rest)
                    out.flush()
                return (current.exit_code or 0) if current else 0
            watch.wait(SAFETY_TICK)


def verb_start(host: Host, args: list[str]) -> int:
    parsed = parse_options(
        "start", args, (Opt(("-a", "--attach"), "attach"), Opt(("-i", "--interactive"), "i"))
    )
    if not parsed.positional:
        raise PodmanError("start requires at least one argument")
    for name in parsed.positional:
        start(host, find(host, name))
        print(name)
    return 0


STOP_OPTS = (
    Opt(("-t", "--time", "--timeout"), "time", True),
    Opt(("-a", "--all"), "all"),
    Opt(("-i", "--ignore"), "ignore"),
)


def _timeout(parsed: Parsed) -> float:
    raw = parsed.value("time", "10") or "10"
    try:
        return float(raw)
    except ValueError:
        raise PodmanError(f'invalid argument "{raw}" for "-t, --time" flag') from None


def _targets(host: Host, parsed: Parsed, *, ignore: bool) -> list[tuple[str, Container]]:
    if parsed.flag("all"):
        return [(c.name, c) for c in containers.list_all(host.home)]
    found: list[tuple[str, Container]] = []
    for name in parsed.positional:
        c = containers.get(host.home, name)
        if c is None:
            if ignore:
                continue
            raise no_such_container(name)
        found.append((name, c))
    return found


def verb_stop(host: Host, args: list[str]) -> int:
    parsed = parse_options("stop", args, STOP_OPTS)
    for name, c in _targets(host, parsed, ignore=parsed.flag("ignore")):
        stop(c, _timeout(parsed))
        print(name)
    return 0


def verb_restart(host: Host, args: list[str]) -> int:
    parsed = parse_options("restart", args, STOP_OPTS)
    for name, c in _targets(host, parsed, ignore=False):
        stop(c, _timeout(parsed))
        start(host, c)
        print(name)
    return 0


def verb_kill(host: Host, args: list[str]) -> int:
    parsed = parse_options("kill", args, (Opt(("-s", "--signal"), "signal", True),))
    sig = signal_number(parsed.value("signal", "KILL") or "KILL")
    for name in parsed.positional:
        c = find(host, name)
        if not containers.running(c):
            raise PodmanError(
                f"can only kill running containers. {c.id} is in state "
                f"{effective_state(c)}: container state improper"
            )
        c.mark_stopped_by_user()  # libpod `Container.Kill`: no restart after this
        signal_group(c, sig)
        print(name)
    return 0


def verb_wait(host: Host, args: list[str]) -> int:
    parsed = parse_options(
        "wait",
        args,
        (Opt(("--condition",), "condition", True, True), Opt(("-i", "--interval"), "iv", True)),
    )
    conditions = parsed.many("condition") or ["stopped"]
    for name in parsed.positional:
        c = find(host, name)
        latest: list[Container] = [c]

        def reached(c: Container = c, latest: list[Container] = latest) -> bool:
            now = containers.load(c.dir)
            if now is None:
                return True
            latest[0] = now
            state = effective_state(now)
            if "running" in conditions and state == "running":
                return True
            stopped = any(cond in ("stopped", "exited") for cond in conditions)
            # Restarted by its policy meanwhile: the run waited on has ended (real podman
            # wait follows conmon's exit, so it never misses one).
            return stopped and (state == "exited" or now.restart_count > c.restart_count)

        while not wait_for_change(c.dir, reached, 3600):
            pass
        if containers.load(c.dir) is None and latest[0].status == "running":
            raise no_such_container(name)
        now = latest[0]
        code = now.exit_code if now.status == "exited" else now.last_exit_code
        print(code if code is not None else -1)
    return 0


def verb_rm(host: Host, args: list[str]) -> int:
    parsed = parse_options(
        "rm",
        args,
        (
            Opt(("-f", "--force"), "force"),
            Opt(("-a", "--all"), "all"),
            Opt(("-i", "--ignore"), "ignore"),
            Opt(("-v", "--volumes"), "volumes"),
            Opt(("-t", "--time"), "time", True),
            Opt(("--depend",), "depend"),
        ),
    )
    # --force implies --ignore (cmd/podman/containers/rm.go@v5.2.0 rm; v4.3.1 drops the
    # no-such-container errors of a forced removal the same way)
    ignore = parsed.flag("ignore") or parsed.flag("force")
    for name in parsed.positional:
        if containers.get(host.home, name) is None and not ignore:
            raise PodmanError(f'no container with name or ID "{name}" found: no such container', 1)
    for name, c in _targets(host, parsed, ignore=True):
        remove(host, c, force=parsed.flag("force"))
        print(name if not parsed.flag("all") else c.id)
    return 0


def verb_logs(host: Host, args: list[str]) -> int:
    """``podman logs``: a container's output, all of it or its last ``--tail`` lines.

    As ``cmd/podman/containers/logs.go`` parses them: ``-n`` is ``--names`` (not a line
    count), flags end at the first container (``SetInterspersed(false)``), and ``--tail`` is
    an integer (-1, the default: every line). Every container is looked up before anything
    is printed; with several, each line starts with the container's short id (its name with
    ``--names``), as libpod's ``LogLine.String`` does. **Adapted**: the container's stdout
    and stderr share one log and both come out on stdout; real podman records each line's
    stream and writes stderr lines to stderr (``LogLine.Write``): ``2>&1`` reads the same.
    """
    parsed = parse_options(
        "logs",
        args,
        (
            Opt(("--tail",), "tail", True),
            Opt(("-f", "--follow"), "follow"),
            Opt(("-t", "--timestamps"), "timestamps"),
            Opt(("--since",), "since", True),
            Opt(("--until",), "until", True),
            Opt(("-n", "--names"), "names"),
            Opt(("--color",), "color"),
        ),
        interspersed=False,
    )
    raw_tail = parsed.value("tail", "-1")
    try:
        tail = int(raw_tail or "")
    except ValueError:
        raise PodmanError(
            f'invalid argument "{raw_tail}" for "--tail" flag: strconv.ParseInt: parsing '
            f'"{raw_tail}": invalid syntax'
        ) from None
    if not parsed.positional:
        raise PodmanError("specify at least one container name or ID to log")
    targets = [find(host, name) for name in parsed.positional]
    if host.info.quirks.journald:
        # following the journal needs the container's events in it too (podman #10323):
        # without the journald events backend it is refused before anything is read
        # (libpod/container_log_linux.go@v5.8.2:36-39, the same @v4.3.1:51-52)
        if parsed.flag("follow") and host.events_logger != "journald":
            raise PodmanError(
                "using --follow with the journald --log-driver but without the journald "
                f"--events-backend ({host.events_logger}) is not supported"
            )
        # The journald log driver reads the journal; where the user cannot read it, podman
        # finds no entry and prints nothing, successfully (podman #26910, #24088;
        # libpod/container_log_linux.go@v5.8.2 readFromJournal: no entry is no error; it
        # matches CONTAINER_ID_FULL and the user's _UID, from v4.4.0, never the name)
        if parsed.flag("follow") and len(targets) == 1 and containers.running(targets[0]):
            _follow_log(targets[0], from_start=False, discard=True)
        return 0
    out = sys.stdout.buffer
    for c in targets:
        try:
            data = c.log_path.read_bytes()
        except FileNotFoundError:
            data = b""
        lines = _lines(data)
        if tail >= 0:
            lines = lines[-tail:] if tail else []
        if len(targets) > 1:
            prefix = (c.name if parsed.flag("names") else c.id[:12]).encode() + b" "
            lines = [prefix + line for line in lines]
        out.write(b"".join(lines))
        out.flush()
    if parsed.flag("follow") and len(targets) == 1 and containers.running(targets[0]):
        _follow_log(targets[0], from_start=False)
    return 0


def _lines(data: bytes) -> list[bytes]:
    """Lines as conmon splits a log: at newlines only (a carriage return stays in its line)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def verb_exec(host: Host, args: list[str]) -> int:
    parsed = parse_options(
        "exec",
        args,
        (
            Opt(("-i", "--interactive"), "interactive"),
            Opt(("-t", "--tty"), "tty"),
            Opt(("-d", "--detach"), "detach"),
            Opt(("-e", "--env"), "env", True, True),
            Opt(("--env-file",), "env_file", True, True),
            Opt(("-u", "--user"), "user", True),
            Opt(("-w", "--workdir"), "workdir", True),
            Opt(("--privileged",), "privileged"),
        ),
        interspersed=False,
    )
    if len(parsed.positional) < 2:
        raise PodmanError("exec requires the name or ID of a container and a command")
    name, *command = parsed.positional
    c = find(host, name)
    if not containers.running(c):
        raise PodmanError(
            "can only create exec sessions on running containers: container state improper",
            255,
        )
    from skupper_sandbox.emulated.podman.conmon import container_environment

    env = {**container_environment(c, host.dir), **parse_env(parsed)}
    executable = command[0] if "/" in command[0] else shutil.which(command[0], path=env["PATH"])
    if executable is None:
        raise PodmanError(
            f"crun: executable file `{command[0]}` not found in $PATH: No such file or "
            "directory: OCI runtime attempted to invoke a command that was not found",
            127,
        )
    workdir = parsed.value("workdir")
    cwd = hostenv.container_path(workdir, env) if workdir else c.dir
    os.chdir(cwd)
    os.execve(executable, [command[0], *command[1:]], env)
    return 0  # not reached


def verb_rename(host: Host, args: list[str]) -> int:
    parsed = parse_options("rename", args, ())
    if len(parsed.positional) != 2:
        raise PodmanError(f"accepts 2 arg(s), received {len(parsed.positional)}")
    old, new = parsed.positional
    c = find(host, old)
    if not NAME_PATTERN.match(new):
        raise PodmanError("names must match [a-zA-Z0-9][a-zA-Z0-9_.-]*: invalid argument")
    with locked(c):
        target = c.dir.parent / new
        if target.exists():
            raise PodmanError(
                f'renaming container {c.name}: the container name "{new}" is already in use'
            )
        os.rename(c.dir, target)
        c.dir = target
        c.name = new
        containers.save_config(c)
    return 0
