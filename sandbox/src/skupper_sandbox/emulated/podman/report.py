"""What podman reports about a container: status text, `ps` and `inspect` JSON."""

from __future__ import annotations

import hashlib
import time
from datetime import datetime
from typing import Any

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.podman.containers import Container

from .host import Host


def age(stamp: str | None) -> float:
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
        return f"Up {human_duration(age(c.started_at))}"
    if state == "exited":
        return f"Exited ({c.exit_code}) {human_duration(age(c.finished_at))} ago"
    return "Created"


# Go's zero time.Time as unix seconds: what `podman ps --format json` gives a time that never
# happened (pkg/ps/ps.go@v5.8.2:183-214, 291, 307: ``exitedTime.Unix()`` of a zero
# ``FinishedTime``, ``startedTime.Unix()`` of a zero ``StartedTime``)
GO_ZERO_UNIX = -62135596800


def _unix(stamp: str | None) -> int:
    if not stamp:
        return GO_ZERO_UNIX
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
        "Restarts": c.restart_count,
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
        "RestartCount": c.restart_count,
        "Mounts": [
            inspect_mount(inside, outside, c.mount_options.get(inside, ""))
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
            "UsernsMode": c.userns,
            "AutoRemove": c.auto_remove,
            "Binds": [f"{outside}:{inside}" for inside, outside in c.mounts],
            # libpod/container_inspect.go@v5.8.2:490-496: the container's log driver and path
            # (a journald container has no log file of its own to name)
            "LogConfig": _log_config(host, c),
        },
        "NetworkSettings": {"Ports": {}},
    }


def _log_config(host: Host, c: Container) -> dict[str, Any]:
    journald = host.info.quirks.journald
    return {
        "Type": "journald" if journald else "k8s-file",
        "Config": None,
        "Path": "" if journald else str(c.log_path),
        "Tag": "",
        "Size": "0B",
    }


_PROPAGATIONS = ("shared", "slave", "private", "rshared", "rslave", "rprivate", "unbindable")


def inspect_mount(inside: str, outside: str, options: str) -> dict[str, Any]:
    """A bind mount as inspect reports it, its ``-v`` options split as podman splits them
    (``parseMountOptionsForInspect``, libpod/container_inspect.go@v5.8.2:339-370): ``ro``
    is ``RW`` false, ``z``/``Z`` the ``Mode``, a propagation its own field (``rprivate``
    when none was asked), the rest ``Options`` after podman's own ``rbind``."""
    rw, mode, propagation, rest = True, "", "rprivate", ["rbind"]
    for option in (o for o in options.split(",") if o):
        if option == "ro":
            rw = False
        elif option == "rw":
            continue
        elif option in _PROPAGATIONS or option == "runbindable":
            propagation = option
        elif option in ("z", "Z"):
            mode = option
        elif option not in rest:
            rest.append(option)
    return {
        "Type": "bind",
        "Source": outside,
        "Destination": inside,
        "Driver": "",
        "Mode": mode,
        "Options": rest,
        "RW": rw,
        "Propagation": propagation,
    }
