"""Emulated `podman` 4.9: containers as real processes on the sandbox host.

Only what the product and the emulated skupper use, with podman's messages and exit
codes. State lives in the container store (`containers.py`); each started container has
a detached monitor (`conmon.py`). A container whose process dies is not restarted,
whatever its restart policy: the seed observed that podman alone does not do it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from skupper_sandbox import hostenv
from skupper_sandbox.emulated import containers, images
from skupper_sandbox.emulated.containers import Container

VERSION = "4.9.4"
API_VERSION = "4.9.4"
GO_VERSION = "go1.21.9"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")
RESTART_POLICIES = ("no", "always", "on-failure", "unless-stopped")
START_DEADLINE = 15.0
POLL = 0.02
# Real podman stop unmounts and tears down the network after the process has exited;
# a wrapper blocked in `podman wait` therefore sees the exit before `stop` returns
# (the seed's start-watch.sh relies on that order). Keep the same order here.
STOP_CLEANUP_SECONDS = 0.3


class PodmanError(Exception):
    """An error podman reports as `Error: <message>` with an exit code."""

    def __init__(self, message: str, code: int = 125) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def no_such_container(name: str) -> PodmanError:
    return PodmanError(f'no container with name or ID "{name}" found: no such container')


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Opt:
    """One flag of a verb: its names, whether it takes a value, and if it repeats."""

    names: tuple[str, ...]
    dest: str
    takes_value: bool = False
    repeat: bool = False


@dataclass
class Parsed:
    values: dict[str, Any] = field(default_factory=dict)
    positional: list[str] = field(default_factory=list)

    def flag(self, dest: str) -> bool:
        return bool(self.values.get(dest))

    def value(self, dest: str, default: str | None = None) -> str | None:
        found = self.values.get(dest)
        return default if found is None else str(found)

    def many(self, dest: str) -> list[str]:
        return list(self.values.get(dest, []))


def parse_options(
    verb: str, args: Sequence[str], spec: Sequence[Opt], *, interspersed: bool = True
) -> Parsed:
    """Parse podman-style flags. Without `interspersed`, the first positional ends them."""
    by_name = {name: opt for opt in spec for name in opt.names}
    parsed = Parsed()
    i = 0
    args = list(args)

    def store(opt: Opt, value: str | bool) -> None:
        if opt.repeat:
            parsed.values.setdefault(opt.dest, []).append(value)
        else:
            parsed.values[opt.dest] = value

    def unknown(flag: str) -> PodmanError:
        return PodmanError(f"unknown flag: {flag}\nSee 'podman {verb} --help'")

    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            parsed.positional.extend(args[i:])
            break
        if arg.startswith("--") and len(arg) > 2:
            name, eq, inline = arg.partition("=")
            opt = by_name.get(name)
            if opt is None:
                raise unknown(name)
            if opt.takes_value:
                if eq:
                    store(opt, inline)
                elif i < len(args):
                    store(opt, args[i])
                    i += 1
                else:
                    raise PodmanError(f"flag needs an argument: {name}")
            else:
                store(opt, inline.lower() not in ("false", "0") if eq else True)
            continue
        if arg.startswith("-") and len(arg) > 1:
            j = 1
            while j < len(arg):
                opt = by_name.get("-" + arg[j])
                if opt is None:
                    raise unknown(f"-{arg[j]}" if j == 1 else f"shorthand flag: '{arg[j]}'")
                if opt.takes_value:
                    rest = arg[j + 1 :]
                    if rest:
                        store(opt, rest.removeprefix("="))
                    elif i < len(args):
                        store(opt, args[i])
                        i += 1
                    else:
                        raise PodmanError(f"flag needs an argument: 'arg[j]' in -{arg[j]}")
                    break
                store(opt, True)
                j += 1
            continue
        parsed.positional.append(arg)
        if not interspersed:
            parsed.positional.extend(args[i:])
            break
    return parsed


CREATE_OPTS = (
    Opt(("-d", "--detach"), "detach"),
    Opt(("--rm",), "rm"),
    Opt(("--name",), "name", True),
    Opt(("-e", "--env"), "env", True, True),
    Opt(("--env-file",), "env_file", True, True),
    Opt(("-l", "--label"), "label", True, True),
    Opt(("-v", "--volume"), "volume", True, True),
    Opt(("--tmpfs",), "tmpfs", True, True),
    Opt(("--restart",), "restart", True),
    Opt(("--network", "--net"), "network", True),
    Opt(("--userns",), "userns", True),
    Opt(("-u", "--user"), "user", True),
    Opt(("--security-opt",), "security_opt", True, True),
    Opt(("--hostname", "-h"), "hostname", True),
    Opt(("-p", "--publish"), "publish", True, True),
    Opt(("--pull",), "pull", True),
    Opt(("--replace",), "replace"),
    Opt(("--init",), "init"),
    Opt(("-i", "--interactive"), "interactive"),
    Opt(("-t", "--tty"), "tty"),
    Opt(("-w", "--workdir"), "workdir", True),
    Opt(("--entrypoint",), "entrypoint", True),
    Opt(("--ulimit",), "ulimit", True, True),
    Opt(("--cap-add",), "cap_add", True, True),
    Opt(("--cap-drop",), "cap_drop", True, True),
    Opt(("--privileged",), "privileged"),
    Opt(("--log-driver",), "log_driver", True),
    Opt(("--stop-timeout",), "stop_timeout", True),
    Opt(("--pod",), "pod", True),
    Opt(("-q", "--quiet"), "quiet"),
)


# --------------------------------------------------------------------------- host


@dataclass(frozen=True)
class Host:
    info: hostenv.HostInfo
    home: Path

    @property
    def dir(self) -> str:
        return self.info.host_dir


def current_host() -> Host:
    try:
        info = hostenv.current_host()
    except hostenv.NotOnSandboxHost as exc:
        raise PodmanError(str(exc)) from exc
    return Host(info, info.home)


def find(host: Host, name: str) -> Container:
    found = containers.get(host.home, name)
    if found is None:
        raise no_such_container(name)
    return found


@contextmanager
def locked(c: Container) -> Iterator[None]:
    """Serialise state changes of one container between concurrent podman commands."""
    with open(c.dir / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def wait_until(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)


# --------------------------------------------------------------------------- create


def _parse_env(parsed: Parsed) -> dict[str, str]:
    env: dict[str, str] = {}
    for env_file in parsed.many("env_file"):
        try:
            lines = Path(env_file).read_text().splitlines()
        except OSError as exc:
            raise PodmanError(f"open {env_file}: no such file or directory") from exc
        for line in lines:
            line = line.strip()
            if line and not line.startswith("#"):
                key, eq, value = line.partition("=")
                if eq:
                    env[key] = value
                elif key in os.environ:
                    env[key] = os.environ[key]
    for item in parsed.many("env"):
        key, eq, value = item.partition("=")
        if eq:
            env[key] = value
        elif key in os.environ:
            env[key] = os.environ[key]
    return env


def _parse_labels(parsed: Parsed) -> dict[str, str]:
    labels: dict[str, str] = {}
    for item in parsed.many("label"):
        key, _, value = item.partition("=")
        labels[key] = value
    return labels


def _volume_source(host: Host, source: str) -> Path:
    if source.startswith("/"):
        path = Path(source)
        if not path.exists():
            raise PodmanError(f"statfs {source}: no such file or directory")
        return path
    if source.startswith("."):
        raise PodmanError(f"invalid volume name {source!r}: must be an absolute path")
    volume = containers.store_root(host.home).parent / "volumes" / source / "_data"
    volume.mkdir(parents=True, exist_ok=True)
    return volume


def _parse_mounts(host: Host, parsed: Parsed) -> list[list[str]]:
    mounts: list[list[str]] = []
    for item in parsed.many("volume"):
        parts = item.split(":")
        if len(parts) < 2 or not parts[1].startswith("/"):
            raise PodmanError(f"invalid container path {item!r}, must be an absolute path")
        mounts.append([parts[1], str(_volume_source(host, parts[0]))])
    return mounts


def _parse_restart(value: str | None) -> str:
    if value is None or value == "":
        return ""
    name = value.split(":", 1)[0]
    if name not in RESTART_POLICIES:
        raise PodmanError(f"invalid restart policy: {value}")
    return value


def _generated_name(host: Host) -> str:
    adjectives = ("brave", "quiet", "eager", "gentle", "lucid", "nifty", "sharp", "witty")
    nouns = ("turing", "hopper", "lovelace", "ritchie", "thompson", "knuth", "liskov")
    while True:
        name = f"{secrets.choice(adjectives)}_{secrets.choice(nouns)}"
        if containers.get(host.home, name) is None:
            return name


def create_container(host: Host, parsed: Parsed) -> Container:
    """Make a container from `run`/`create` arguments; it is not started."""
    if not parsed.positional:
        raise PodmanError("requires at least 1 arg(s), only received 0")
    image, *command = parsed.positional
    full_image = images.check(image)
    name = parsed.value("name") or _generated_name(host)
    if not NAME_PATTERN.match(name):
        raise PodmanError(
            "running container create option: names must match "
            "[a-zA-Z0-9][a-zA-Z0-9_.-]*: invalid argument"
        )
    env = _parse_env(parsed)
    labels = _parse_labels(parsed)
    mounts = _parse_mounts(host, parsed)
    restart = _parse_restart(parsed.value("restart"))
    if parsed.flag("rm") and restart not in ("", "no"):
        raise PodmanError(
            'the --rm option conflicts with --restart, when the restartPolicy is not "" and "no"'
        )
    if parsed.flag("replace"):
        existing = containers.get(host.home, name)
        if existing is not None and existing.name == name:
            remove(host, existing, force=True)
    root = containers.store_root(host.home)
    root.mkdir(parents=True, exist_ok=True)
    directory = root / name
    try:
        directory.mkdir()
    except FileExistsError:
        owner = containers.get(host.home, name)
        owner_id = owner.id if owner else "another container"
        raise PodmanError(
            f'creating container storage: the container name "{name}" is already in use by '
            f"{owner_id}. You have to remove that container to be able to reuse that name: "
            "that name is already in use"
        ) from None
    (directory / "tmp").mkdir()
    (directory / "tmp").chmod(0o1777)
    tmpfs: list[str] = []
    tmpfs_options: dict[str, str] = {}
    for item in parsed.many("tmpfs"):
        path, _, opts = item.partition(":")
        tmpfs.append(path)
        tmpfs_options[path] = opts or "rw,noexec,nosuid,nodev"
        if path != "/tmp":
            target = directory / "tmpfs" / path.strip("/").replace("/", "_")
            target.mkdir(parents=True, exist_ok=True)
            mounts.append([path, str(target)])
    if not any(inside.rstrip("/") == "/tmp" for inside, _ in mounts):
        mounts.append(["/tmp", str(directory / "tmp")])
    c = Container(
        name=name,
        id=secrets.token_hex(32),
        image=full_image,
        command=command,
        env=env,
        labels=labels,
        mounts=mounts,
        tmpfs=tmpfs,
        restart_policy=restart,
        status="created",
        pid=None,
        exit_code=None,
        started_at=None,
        finished_at=None,
        dir=directory,
        created_at=containers.now(),
        tmpfs_options=tmpfs_options,
        network=parsed.value("network") or "host",
        hostname=parsed.value("hostname") or "",
        user=parsed.value("user") or "",
        auto_remove=parsed.flag("rm"),
    )
    containers.save_config(c)
    containers.save_state(c)
    return c


# --------------------------------------------------------------------------- lifecycle


def start(host: Host, c: Container, *, keep: bool = False) -> None:
    """Start the container's process through a detached monitor; return once it runs.

    `keep` stops the monitor from removing an `--rm` container: an attached `run`
    reads its output and exit code first, then removes it.
    """
    with locked(c):
        current = containers.load(c.dir)
        if current is not None and containers.running(current):
            return
        token = secrets.token_hex(8)
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skupper_sandbox.emulated.conmon",
                "--dir",
                str(c.dir),
                "--host-dir",
                host.dir,
                "--token",
                token,
                *(["--keep"] if keep else []),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        seen: list[Container] = []

        def recorded() -> bool:
            now = containers.load(c.dir)
            if now is None:  # --rm container that already ended
                return True
            if now.start_token == token and now.status in ("running", "exited"):
                seen.append(now)
                return True
            return False

        if not wait_until(recorded, START_DEADLINE):
            raise PodmanError(f'unable to start container "{c.id}": timed out')
    if seen and seen[0].start_error:
        code = 127 if "not found" in seen[0].start_error else 126
        raise PodmanError(f'unable to start container "{c.id}": {seen[0].start_error}', code)


def _signal_group(c: Container, sig: int) -> None:
    if c.pid is None:
        return
    try:
        os.killpg(c.pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        os.kill(c.pid, sig)


def _ended(c: Container) -> Callable[[], bool]:
    def check() -> bool:
        now = containers.load(c.dir)
        return now is None or now.status != "running"

    return check


def stop(c: Container, timeout: float) -> None:
    """SIGTERM to the container's process group, SIGKILL after `timeout` seconds."""
    with locked(c):
        current = containers.load(c.dir)
        if current is None or current.status != "running":
            return
        if not containers.running(current):  # died; its monitor is recording the end
            wait_until(_ended(current), 5.0)
            return
        _signal_group(current, signal.SIGTERM)
        if wait_until(_ended(current), timeout):
            time.sleep(STOP_CLEANUP_SECONDS)
            return
        print(
            f"WARN[{int(timeout):04d}] StopSignal SIGTERM failed to stop container "
            f"{current.name} in {int(timeout)} seconds, resorting to SIGKILL",
            file=sys.stderr,
        )
        _signal_group(current, signal.SIGKILL)
        wait_until(_ended(current), 10.0)
        time.sleep(STOP_CLEANUP_SECONDS)


def remove(host: Host, c: Container, *, force: bool) -> None:
    current = containers.load(c.dir)
    if current is None:
        return
    if containers.running(current):
        if not force:
            raise PodmanError(
                f"cannot remove container {c.id} as it is running - running or paused "
                "containers cannot be removed without force: container state improper",
                2,
            )
        stop(current, 10.0)
    shutil.rmtree(c.dir, ignore_errors=True)


def signal_number(name: str) -> int:
    text = name.upper().removeprefix("SIG")
    if text.isdigit():
        return int(text)
    try:
        return int(signal.Signals["SIG" + text])
    except KeyError:
        raise PodmanError(f'invalid signal "{name}"') from None


# --------------------------------------------------------------------------- formatting


def _age(stamp: str | None) -> float:
    if not stamp:
        return 0.0
    then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return max(0.0, time.time() - then.timestamp())


def human_duration(seconds: float) -> str:
    """Go's units.HumanDuration, as podman prints ages."""
    s = int(seconds)
    if s < 1:
        return "Less than a second"
    if s == 1:
        return "1 second"
    if s < 60:
        return f"{s} seconds"
    minutes = s // 60
    if minutes == 1:
        return "About a minute"
    if minutes < 60:
        return f"{minutes} minutes"
    hours = minutes // 60
    if hours == 1:
        return "About an hour"
    if hours < 48:
        return f"{hours} hours"
    return f"{hours // 24} days"


def effective_state(c: Container) -> str:
    """The state podman reports: what the monitor recorded (`containers.load` already
    turns a container whose monitor vanished into an exited one)."""
    return c.status


def status_text(c: Container) -> str:
    state = effective_state(c)
    if state == "running":
        return f"Up {human_duration(_age(c.started_at))}"
    if state == "exited":
        return f"Exited ({c.exit_code}) {human_duration(_age(c.finished_at))} ago"
    return "Created"


def _unix(stamp: str | None) -> int:
    if not stamp:
        return 0
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())


def ps_json(c: Container) -> dict[str, Any]:
    state = effective_state(c)
    return {
        "AutoRemove": c.auto_remove,
        "Command": c.command or None,
        "Created": _unix(c.created_at),
        "CreatedAt": c.created_at,
        "Exited": state == "exited",
        "ExitedAt": _unix(c.finished_at),
        "ExitCode": c.exit_code or 0,
        "Id": c.id,
        "Image": c.image,
        "ImageID": images_id(c.image),
        "IsInfra": False,
        "Labels": c.labels or None,
        "Mounts": [inside for inside, _ in c.mounts],
        "Names": [c.name],
        "Namespaces": {},
        "Networks": [],
        "Pid": c.pid if state == "running" and c.pid else 0,
        "Pod": "",
        "PodName": "",
        "Ports": None,
        "Restarts": 0,
        "Size": None,
        "StartedAt": _unix(c.started_at),
        "State": state,
        "Status": status_text(c),
    }


def images_id(image: str) -> str:
    """A stable image id for a name (there are no image layers to hash)."""
    return hashlib.sha256(image.encode()).hexdigest()


def inspect_json(host: Host, c: Container) -> dict[str, Any]:
    state = effective_state(c)
    env = {**hostenv.host_env(host.dir), **c.env}
    return {
        "Id": c.id,
        "Created": c.created_at,
        "Path": (c.command or ["/bin/sh"])[0],
        "Args": c.command[1:],
        "State": {
            "OciVersion": "1.1.0",
            "Status": state,
            "Running": state == "running",
            "Paused": False,
            "Restarting": False,
            "OOMKilled": False,
            "Dead": False,
            "Pid": c.pid if state == "running" and c.pid else 0,
            "ConmonPid": c.conmon_pid or 0,
            "ExitCode": c.exit_code or 0,
            "Error": c.start_error or "",
            "StartedAt": c.started_at or "0001-01-01T00:00:00Z",
            "FinishedAt": c.finished_at or "0001-01-01T00:00:00Z",
        },
        "Image": images_id(c.image),
        "ImageName": c.image,
        "Name": c.name,
        "RestartCount": 0,
        "Mounts": [
            {
                "Type": "bind",
                "Source": outside,
                "Destination": inside,
                "Driver": "",
                "Mode": "",
                "Options": ["rbind"],
                "RW": True,
                "Propagation": "rprivate",
            }
            for inside, outside in c.mounts
        ],
        "Config": {
            "Hostname": c.hostname or c.id[:12],
            "User": c.user,
            "Env": [f"{k}={v}" for k, v in env.items()],
            "Cmd": c.command or None,
            "Image": c.image,
            "Labels": c.labels or None,
            "StopSignal": "SIGTERM",
            "StopTimeout": 10,
        },
        "HostConfig": {
            "RestartPolicy": {
                "Name": c.restart_policy.split(":", 1)[0],
                "MaximumRetryCount": int(c.restart_policy.split(":", 1)[1])
                if ":" in c.restart_policy
                else 0,
            },
            "Tmpfs": dict(c.tmpfs_options),
            "NetworkMode": c.network,
            "AutoRemove": c.auto_remove,
            "Binds": [f"{outside}:{inside}" for inside, outside in c.mounts],
        },
        "NetworkSettings": {"Ports": {}},
    }


def go_value(value: Any) -> str:
    """A value as Go's text/template prints it."""
    if value is None:
        return "<no value>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


def _lookup(data: Any, path: str) -> Any:
    value = data
    for part in path.strip(".").split("."):
        if not part:
            continue
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise PodmanError(
                f'template: :1: executing "" at <{path}>: can\'t evaluate field {part}'
            )
    return value


def _evaluate(expr: str, data: Any) -> str:
    words = re.findall(r'"[^"]*"|\S+', expr.replace("|", " | "))
    if "|" in words:  # `.X | json` is `json .X`
        left = words[: words.index("|")]
        right = words[words.index("|") + 1 :]
        words = [*right, *left]
    if words[0] == "json" and len(words) == 2:
        return json.dumps(_lookup(data, words[1]))
    if words[0] == "index" and len(words) == 3:
        container = _lookup(data, words[1]) or {}
        return go_value(container.get(words[2].strip('"'), "<no value>"))
    if words[0] == "upper" and len(words) == 2:
        return go_value(_lookup(data, words[1])).upper()
    if words[0] == "lower" and len(words) == 2:
        return go_value(_lookup(data, words[1])).lower()
    if len(words) == 1 and words[0].startswith("."):
        return go_value(_lookup(data, words[0]))
    raise PodmanError(f'template: :1: function "{words[0]}" not defined')


def render_template(template: str, data: Any) -> str:
    """The subset of Go templates podman users write: fields, json, index, upper, lower."""
    template = template.replace("\\t", "\t").replace("\\n", "\n")
    return _ACTION.sub(lambda m: _evaluate(m.group(1), data), template)


# --------------------------------------------------------------------------- verbs


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
            shutil.rmtree(c.dir, ignore_errors=True)
        raise
    if parsed.flag("detach"):
        print(c.id)
        return 0
    code = _follow_log(c, from_start=True)
    if c.auto_remove:
        shutil.rmtree(c.dir, ignore_errors=True)
    return code


def _follow_log(c: Container, *, from_start: bool) -> int:
    """Copy the container's output to stdout until it exits; its exit code."""
    out = sys.stdout.buffer
    with open(c.log_path, "rb") as log:
        if not from_start:
            log.seek(0, os.SEEK_END)
        while True:
            current = containers.load(c.dir)
            chunk = log.read()
            if chunk:
                out.write(chunk)
                out.flush()
            if current is None or current.status != "running":
                out.write(log.read())
                out.flush()
                return (current.exit_code or 0) if current else 0
            time.sleep(POLL)


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
        _signal_group(c, sig)
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
            return state == "exited" and any(cond in ("stopped", "exited") for cond in conditions)

        while not wait_until(reached, 3600):
            pass
        if containers.load(c.dir) is None and latest[0].status == "running":
            raise no_such_container(name)
        print(latest[0].exit_code if latest[0].exit_code is not None else -1)
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
    ignore = parsed.flag("ignore")
    for name in parsed.positional:
        if containers.get(host.home, name) is None and not ignore:
            raise PodmanError(f'no container with name or ID "{name}" found: no such container', 1)
    for name, c in _targets(host, parsed, ignore=True):
        remove(host, c, force=parsed.flag("force"))
        print(name if not parsed.flag("all") else c.id)
    return 0


def _filters(parsed: Parsed) -> Callable[[Container], bool]:
    groups: dict[str, list[str]] = {}
    for item in parsed.many("filter"):
        key, _, value = item.partition("=")
        groups.setdefault(key, []).append(value)

    def one(key: str, value: str, c: Container) -> bool:
        if key == "name":
            return re.search(value, c.name) is not None
        if key == "id":
            return c.id.startswith(value)
        if key == "label":
            lkey, eq, lvalue = value.partition("=")
            return lkey in c.labels and (not eq or c.labels[lkey] == lvalue)
        if key == "status":
            return effective_state(c) == value
        if key == "ancestor":
            return value in c.image
        if key == "exited":
            return effective_state(c) == "exited" and str(c.exit_code) == value
        raise PodmanError(f"{key} is an invalid filter")

    def matches(c: Container) -> bool:
        for key, values in groups.items():
            if key == "label":  # labels must all match
                if not all(one(key, v, c) for v in values):
                    return False
            elif not any(one(key, v, c) for v in values):
                return False
        return True

    return matches


def _ps_template_data(c: Container) -> dict[str, Any]:
    return {
        "Names": c.name,
        "ID": c.id[:12],
        "Image": c.image,
        "State": effective_state(c),
        "Status": status_text(c),
        "Labels": c.labels,
        "Command": " ".join(c.command),
        "CreatedAt": c.created_at,
        "Pid": c.pid or 0,
        "ExitCode": c.exit_code or 0,
        "Ports": "",
        "Mounts": [inside for inside, _ in c.mounts],
    }


def verb_ps(host: Host, args: list[str]) -> int:
    parsed = parse_options(
        "ps",
        args,
        (
            Opt(("-a", "--all"), "all"),
            Opt(("-q", "--quiet"), "quiet"),
            Opt(("-f", "--filter"), "filter", True, True),
            Opt(("--format",), "format", True),
            Opt(("--no-trunc",), "no_trunc"),
            Opt(("-n", "--last"), "last", True),
            Opt(("-l", "--latest"), "latest"),
            Opt(("-s", "--size"), "size"),
            Opt(("--noheading",), "noheading"),
            Opt(("--sort",), "sort", True),
            Opt(("--external",), "external"),
        ),
    )
    matches = _filters(parsed)
    shown = [
        c
        for c in containers.list_all(host.home)
        if (parsed.flag("all") or effective_state(c) == "running") and matches(c)
    ]
    fmt = parsed.value("format")
    if parsed.flag("quiet"):
        for c in shown:
            print(c.id if parsed.flag("no_trunc") else c.id[:12])
    elif fmt in ("json", "{{json .}}"):
        print(json.dumps([ps_json(c) for c in shown], indent=4))
    elif fmt:
        template = fmt.removeprefix("table").lstrip()
        for c in shown:
            print(render_template(template, _ps_template_data(c)))
    else:
        rows = [["CONTAINER ID", "IMAGE", "COMMAND", "CREATED", "STATUS", "PORTS", "NAMES"]]
        for c in shown:
            command = " ".join(c.command)
            rows.append(
                [
                    c.id[:12],
                    c.image,
                    command if len(command) <= 20 else command[:17] + "...",
                    f"{human_duration(_age(c.created_at))} ago",
                    status_text(c),
                    "",
                    c.name,
                ]
            )
        if parsed.flag("noheading"):
            rows = rows[1:]
        print_table(rows)
    return 0


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def verb_inspect(host: Host, args: list[str]) -> int:
    parsed = parse_options(
        "inspect",
        args,
        (
            Opt(("-f", "--format"), "format", True),
            Opt(("-t", "--type"), "type", True),
            Opt(("-s", "--size"), "size"),
            Opt(("-l", "--latest"), "latest"),
        ),
    )
    if not parsed.positional:
        raise PodmanError("no names or ids specified")
    found: list[dict[str, Any]] = []
    missing: list[str] = []
    for name in parsed.positional:
        c = containers.get(host.home, name)
        if c is None:
            missing.append(name)
        else:
            found.append(inspect_json(host, c))
    fmt = parsed.value("format")
    if fmt and fmt != "json":
        for data in found:
            print(render_template(fmt, data))
    else:
        print(json.dumps(found, indent=4))
    if missing:
        raise PodmanError(f'no such object: "{missing[0]}"')
    return 0


def verb_logs(host: Host, args: list[str]) -> int:
    parsed = parse_options(
        "logs",
        args,
        (
            Opt(("--tail", "-n"), "tail", True),
            Opt(("-f", "--follow"), "follow"),
            Opt(("-t", "--timestamps"), "timestamps"),
            Opt(("--since",), "since", True),
            Opt(("--until",), "until", True),
            Opt(("--names",), "names"),
        ),
    )
    for name in parsed.positional:
        c = find(host, name)
        try:
            data = c.log_path.read_bytes()
        except FileNotFoundError:
            data = b""
        tail = parsed.value("tail")
        if tail is not None and int(tail) >= 0:
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[-int(tail) :]) if int(tail) else b""
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        if parsed.flag("follow") and containers.running(c):
            _follow_log(c, from_start=False)
    return 0


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
    from skupper_sandbox.emulated.conmon import container_environment

    env = {**container_environment(c, host.dir), **_parse_env(parsed)}
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


def verb_container(host: Host, args: list[str]) -> int:
    if not args:
        raise PodmanError("missing command 'podman container COMMAND'")
    sub, *rest = args
    if sub == "exists":
        parsed = parse_options("container exists", rest, ())
        return 0 if parsed.positional and containers.get(host.home, parsed.positional[0]) else 1
    aliases = {"ls": "ps", "list": "ps", "remove": "rm"}
    return dispatch(host, aliases.get(sub, sub), rest, prefix="container ")


def verb_pull(host: Host, args: list[str]) -> int:
    parsed = parse_options("pull", args, (Opt(("-q", "--quiet"), "quiet"),))
    for image in parsed.positional:
        full = images.check(image)
        if not parsed.flag("quiet"):
            print(f"Trying to pull {full}...", file=sys.stderr)
        print(images_id(full))
    return 0


def verb_image(host: Host, args: list[str]) -> int:
    if args and args[0] == "exists":
        return 0 if len(args) > 1 and images.is_known(args[1]) else 1
    if args and args[0] == "pull":
        return verb_pull(host, args[1:])
    raise PodmanError(f"unrecognized command `podman image {' '.join(args[:1])}`")


def _version_data() -> dict[str, Any]:
    client = {
        "APIVersion": API_VERSION,
        "Version": VERSION,
        "GoVersion": GO_VERSION,
        "GitCommit": "",
        "BuiltTime": "Thu Apr 11 00:00:00 2024",
        "Built": 1712793600,
        "OsArch": "linux/amd64",
        "Os": "linux",
    }
    return {"Client": client, "Server": client}


def verb_version(host: Host | None, args: list[str]) -> int:
    parsed = parse_options("version", args, (Opt(("-f", "--format"), "format", True),))
    data = _version_data()
    fmt = parsed.value("format")
    if fmt == "json":
        print(json.dumps(data, indent=4))
    elif fmt:
        print(render_template(fmt, data))
    else:
        c = data["Client"]
        print(f"Client:       Podman Engine\nVersion:      {c['Version']}")
        print(f"API Version:  {c['APIVersion']}\nGo Version:   {c['GoVersion']}")
        print(f"Built:        {c['BuiltTime']}\nOS/Arch:      {c['OsArch']}")
    return 0


def verb_info(host: Host, args: list[str]) -> int:
    parsed = parse_options("info", args, (Opt(("-f", "--format"), "format", True),))
    every = containers.list_all(host.home)
    running_count = sum(1 for c in every if effective_state(c) == "running")
    data = {
        "host": {
            "arch": "amd64",
            "hostname": host.info.name,
            "os": "linux",
            "ociRuntime": {"name": "crun"},
            "security": {"rootless": host.info.uid != 0},
            "remoteSocket": {
                "path": f"/run/user/{host.info.uid}/podman/podman.sock",
                "exists": True,
            },
        },
        "store": {
            "graphRoot": str(containers.store_root(host.home)),
            "containerStore": {
                "number": len(every),
                "running": running_count,
                "stopped": len(every) - running_count,
                "paused": 0,
            },
        },
        "version": _version_data()["Client"],
    }
    fmt = parsed.value("format")
    if fmt == "json":
        print(json.dumps(data, indent=4))
    elif fmt:
        print(render_template(fmt, data))
    else:
        print(f"host:\n  arch: amd64\n  hostname: {host.info.name}\n  os: linux")
        print(f"store:\n  graphRoot: {data['store']['graphRoot']}")
        print(f"version:\n  Version: {VERSION}")
    return 0


VERBS: dict[str, Callable[[Host, list[str]], int]] = {
    "run": verb_run,
    "create": verb_create,
    "start": verb_start,
    "stop": verb_stop,
    "restart": verb_restart,
    "kill": verb_kill,
    "wait": verb_wait,
    "rm": verb_rm,
    "ps": verb_ps,
    "inspect": verb_inspect,
    "logs": verb_logs,
    "exec": verb_exec,
    "rename": verb_rename,
    "container": verb_container,
    "pull": verb_pull,
    "image": verb_image,
    "info": verb_info,
}

GLOBAL_VALUE_FLAGS = {
    "--runtime",
    "--log-level",
    "--root",
    "--runroot",
    "--cgroup-manager",
    "--events-backend",
    "--storage-driver",
    "--tmpdir",
    "--conmon",
    "--network-backend",
}
GLOBAL_BOOL_FLAGS = {"--syslog", "--noout"}


def dispatch(host: Host, verb: str, args: list[str], prefix: str = "") -> int:
    handler = VERBS.get(verb)
    if handler is None:
        raise PodmanError(
            f"unrecognized command `podman {prefix}{verb}`\nTry 'podman --help' for more "
            "information"
        )
    return handler(host, args)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    while args and args[0].startswith("--"):
        name = args[0].split("=", 1)[0]
        if name in GLOBAL_VALUE_FLAGS:
            args = args[1:] if "=" in args[0] else args[2:]
        elif name in GLOBAL_BOOL_FLAGS:
            args = args[1:]
        elif name == "--version":
            print(f"podman version {VERSION}")
            return 0
        else:
            print(f"Error: unknown flag: {name}\nSee 'podman --help'", file=sys.stderr)
            return 125
    if not args:
        print("Error: missing command 'podman COMMAND'", file=sys.stderr)
        return 125
    verb, *rest = args
    try:
        if verb == "version":
            return verb_version(None, rest)
        return dispatch(current_host(), verb, rest)
    except images.UnknownImage as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return 125
    except PodmanError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return exc.code


if __name__ == "__main__":
    sys.exit(main())
