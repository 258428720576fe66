"""Emulated systemd user manager of one sandbox host.

    python -m skupper_sandbox.emulated.systemd --host-dir H

Runs in the foreground (the world supervises it), listens on `H/run/bus` (what
`/run/user/<uid>/bus` is on the host) and answers `systemctl --user` (`systemctl.py`)
with one JSON request and one JSON answer per connection. Units are the files in
`~/.config/systemd/user/*.service` plus the built-in `podman.socket`, with systemd's
documented semantics for the directives services use here (see docs/sandbox.md §3).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.systemctl import (
    BUILTIN_SOCKET,
    BUILTIN_SOCKET_PATH,
    BUS_NAME,
    bind_unix,
    normalize_unit,
)

CLEAN_SIGNALS = {signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE}
CLD_EXITED, CLD_KILLED = 1, 2
EXIT_EXEC = 203


# --------------------------------------------------------------------------- unit files


def parse_unit_text(text: str) -> dict[str, list[tuple[str, str]]]:
    """Sections of a unit file as ordered (key, value) pairs; continuation lines joined."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        if current is not None and "=" in line:
            key, _, value = line.partition("=")
            current.append((key.strip(), value.strip()))
    return sections


def parse_timespan(text: str, default: float) -> float:
    """A systemd time span ("100ms", "5", "1min 30s", "infinity") in seconds."""
    text = text.strip()
    if not text:
        return default
    if text == "infinity":
        return float("inf")
    units = {
        "us": 1e-6,
        "usec": 1e-6,
        "ms": 1e-3,
        "msec": 1e-3,
        "s": 1,
        "sec": 1,
        "second": 1,
        "seconds": 1,
        "m": 60,
        "min": 60,
        "minute": 60,
        "minutes": 60,
        "h": 3600,
        "hr": 3600,
        "hour": 3600,
        "hours": 3600,
    }
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)\s*([a-z]*)", text):
        if unit not in units and unit:
            return default
        total += float(number) * units.get(unit, 1)
    return total


@dataclass(frozen=True)
class Command:
    """One Exec*= line: its argv (specifiers expanded) and its `-` (ignore failure) flag."""

    argv: list[str]
    ignore_failure: bool
    line: str


@dataclass
class ServiceConfig:
    """What a service unit file asks for."""

    description: str = ""
    type: str = "simple"
    exec_start: list[Command] = field(default_factory=list)
    exec_stop: list[Command] = field(default_factory=list)
    remain_after_exit: bool = False
    restart: str = "no"
    restart_sec: float = 0.1
    timeout_stop_sec: float = 90.0
    success_codes: set[int] = field(default_factory=set)
    success_signals: set[int] = field(default_factory=set)
    environment: dict[str, str] = field(default_factory=dict)
    working_directory: str = ""
    start_limit_burst: int = 5
    start_limit_interval: float = 10.0
    wanted_by: list[str] = field(default_factory=list)
    has_install: bool = False


def _bool(value: str) -> bool:
    return value.strip().lower() in ("yes", "true", "on", "1")


def expand_specifiers(text: str, unit: str, info: hostenv.HostInfo) -> str:
    """systemd's %-specifiers that user units use."""
    prefix = unit.rsplit(".", 1)[0]
    table = {
        "h": str(info.home),
        "u": info.user,
        "U": str(info.uid),
        "n": unit,
        "N": prefix,
        "p": prefix.split("@", 1)[0],
        "i": prefix.split("@", 1)[1] if "@" in prefix else "",
        "t": f"/run/user/{info.uid}",
        "H": info.name,
        "%": "%",
    }
    return re.sub(r"%(.)", lambda m: table.get(m.group(1), m.group(0)), text)


def _expand_env(words: list[str], env: dict[str, str]) -> list[str]:
    out: list[str] = []
    for word in words:
        whole = re.fullmatch(r"\$(\w+)", word)
        if whole:
            out.extend(env.get(whole.group(1), "").split())
            continue
        out.append(re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), word))
    return out


def parse_command(value: str, unit: str, info: hostenv.HostInfo) -> Command | None:
    line = value
    ignore = False
    while value and value[0] in "-@:+!":
        ignore = ignore or value[0] == "-"
        value = value[1:]
    try:
        argv = shlex.split(expand_specifiers(value, unit, info))
    except ValueError:
        return None
    return Command(argv, ignore, line) if argv else None


def _signal_or_code(token: str) -> tuple[str, int] | None:
    if token.isdigit():
        return "code", int(token)
    name = token.upper() if token.upper().startswith("SIG") else "SIG" + token.upper()
    try:
        return "signal", int(signal.Signals[name])
    except KeyError:
        return None


def load_service(text: str, unit: str, info: hostenv.HostInfo) -> ServiceConfig:
    sections = parse_unit_text(text)
    config = ServiceConfig(has_install="Install" in sections)
    for key, value in sections.get("Unit", []):
        if key == "Description":
            config.description = value
        elif key == "StartLimitBurst":
            config.start_limit_burst = int(value or 5)
        elif key == "StartLimitIntervalSec":
            config.start_limit_interval = parse_timespan(value, 10.0)
    for key, value in sections.get("Service", []):
        if key in ("ExecStart", "ExecStop"):
            target = config.exec_start if key == "ExecStart" else config.exec_stop
            if not value:
                target.clear()
            elif (command := parse_command(value, unit, info)) is not None:
                target.append(command)
        elif key == "Type":
            config.type = value
        elif key == "RemainAfterExit":
            config.remain_after_exit = _bool(value)
        elif key == "Restart":
            config.restart = value or "no"
        elif key == "RestartSec":
            config.restart_sec = parse_timespan(value, 0.1)
        elif key in ("TimeoutStopSec", "TimeoutSec"):
            config.timeout_stop_sec = parse_timespan(value, 90.0)
        elif key == "SuccessExitStatus":
            if not value:
                config.success_codes.clear()
                config.success_signals.clear()
            for token in value.split():
                parsed = _signal_or_code(token)
                if parsed and parsed[0] == "code":
                    config.success_codes.add(parsed[1])
                elif parsed:
                    config.success_signals.add(parsed[1])
        elif key == "Environment":
            if not value:
                config.environment.clear()
            for item in shlex.split(expand_specifiers(value, unit, info)):
                name, eq, val = item.partition("=")
                if eq:
                    config.environment[name] = val
        elif key == "WorkingDirectory":
            config.working_directory = expand_specifiers(value, unit, info)
        elif key == "StartLimitBurst":
            config.start_limit_burst = int(value or 5)
        elif key == "StartLimitIntervalSec":
            config.start_limit_interval = parse_timespan(value, 10.0)
    for key, value in sections.get("Install", []):
        if key == "WantedBy":
            config.wanted_by.extend(value.split())
    return config


def unit_file_state(unit_dir: Path, unit: str, has_install: bool, fragment: Path | None) -> str:
    """enabled | disabled | static | linked, from the `.wants` links on disk."""
    if unit_dir.is_dir():
        for wants in unit_dir.glob("*.wants"):
            if (wants / unit).is_symlink() or (wants / unit).exists():
                return "enabled"
    if fragment is not None and fragment.is_symlink():
        return "linked"
    return "disabled" if has_install else "static"


# --------------------------------------------------------------------------- runtime


def _now_text() -> str:
    return time.strftime("%a %Y-%m-%d %H:%M:%S %Z")


@dataclass
class JobResult:
    """How a job ended: "done", or why it failed (systemctl words the message)."""

    outcome: str = "done"  # done | failed | start-limit | not-found | not-loaded
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"outcome": self.outcome, "detail": self.detail}


class Unit:
    """One unit's configuration and runtime state, driven by its jobs."""

    def __init__(self, manager: Manager, name: str) -> None:
        self.manager = manager
        self.name = name
        self.config: ServiceConfig | None = None
        self.fragment: Path | None = None
        self.fragment_mtime = 0.0
        self.load_state = "not-found"
        self.active_state = "inactive"
        self.sub_state = "dead"
        self.result = "success"
        self.main_pid = 0
        self.exec_main_pid = 0
        self.exec_main_code = 0
        self.exec_main_status = 0
        self.n_restarts = 0
        self.state_change = ""
        self.active_enter = ""
        self.inactive_enter = ""
        self.starts: collections.deque[float] = collections.deque()
        self.proc: asyncio.subprocess.Process | None = None
        self.exited = asyncio.Event()
        self.stopping = False
        self.lock = asyncio.Lock()
        self.restart_task: asyncio.Task[None] | None = None
        self.is_socket = name.endswith(".socket")

    # ---- loading

    def load(self) -> None:
        if self.name == BUILTIN_SOCKET:
            self.load_state = "loaded"
            self.config = ServiceConfig(
                description="Podman API Socket", has_install=True, wanted_by=["sockets.target"]
            )
            return
        path = self.manager.unit_dir / self.name
        if not self.name.endswith(".service") or not path.is_file():
            if self.active_state == "inactive":
                self.load_state, self.config, self.fragment = "not-found", None, None
            return
        self.fragment = path
        self.fragment_mtime = path.stat().st_mtime
        self.config = load_service(path.read_text(), self.name, self.manager.info)
        self.load_state = "loaded"

    def need_reload(self) -> bool:
        if self.fragment is None:
            return False
        try:
            return self.fragment.stat().st_mtime != self.fragment_mtime
        except FileNotFoundError:
            return True

    def set_state(self, active: str, sub: str) -> None:
        if active != self.active_state:
            stamp = _now_text()
            self.state_change = stamp
            if active == "active":
                self.active_enter = stamp
            elif active in ("inactive", "failed"):
                self.inactive_enter = stamp
        self.active_state, self.sub_state = active, sub

    # ---- processes

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        info = self.manager.info
        env = hostenv.host_env(info.host_dir)
        env["XDG_RUNTIME_DIR"] = f"/run/user/{info.uid}"
        env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path=/run/user/{info.uid}/bus"
        assert self.config is not None
        env.update(self.config.environment)
        env.update(extra or {})
        return env

    async def spawn(self, command: Command, extra: dict[str, str] | None = None) -> Any:
        env = self.environment(extra)
        argv = _expand_env(command.argv, env)
        executable = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env["PATH"])
        if executable is None:
            raise FileNotFoundError(argv[0])
        assert self.config is not None
        cwd = self.config.working_directory.lstrip("-") or str(self.manager.info.home)
        if cwd == "~":
            cwd = str(self.manager.info.home)
        journal = self.manager.journal(self.name)
        try:
            return await asyncio.create_subprocess_exec(
                executable,
                *argv[1:],
                env=env,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=journal,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            journal.close()

    def kill_group(self, pid: int, sig: int) -> None:
        if pid <= 0:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)

    def is_clean(self, code: int, status: int, *, stop_signal_sent: bool) -> bool:
        assert self.config is not None
        if code == CLD_EXITED:
            if status == 0 or status in self.config.success_codes:
                return True
            # The seed relies on SuccessExitStatus=SIGTERM making a wrapper's exit 143
            # (128 + SIGTERM, as `podman wait` reports it) a success.
            return status == 128 + signal.SIGTERM and signal.SIGTERM in self.config.success_signals
        if stop_signal_sent and status in (signal.SIGTERM, signal.SIGKILL):
            return True
        return status in CLEAN_SIGNALS or status in self.config.success_signals

    # ---- jobs

    async def start(self, *, manual: bool = True) -> JobResult:
        async with self.lock:
            if self.load_state != "loaded" or self.config is None:
                return JobResult("not-found")
            if self.sub_state == "auto-restart" and self.restart_task is not None:
                self.restart_task.cancel()
                self.restart_task = None
            elif self.active_state in ("active", "activating", "reloading"):
                return JobResult()
            if manual:
                self.n_restarts = 0
            return await self._start()

    async def _start(self) -> JobResult:
        assert self.config is not None
        config = self.config
        now = time.monotonic()
        while self.starts and now - self.starts[0] > config.start_limit_interval:
            self.starts.popleft()
        if config.start_limit_interval > 0 and len(self.starts) >= config.start_limit_burst:
            self.result = "start-limit-hit"
            self.set_state("failed", "failed")
            return JobResult("start-limit")
        self.starts.append(now)
        self.result = "success"
        if self.is_socket:
            self.set_state("active", "listening")
            return JobResult()
        if not config.exec_start:
            self.result = "exit-code"
            self.set_state("failed", "failed")
            return JobResult("failed", "Unit has no ExecStart= setting")
        command = config.exec_start[0]
        self.exited = asyncio.Event()
        try:
            proc = await self.spawn(command)
        except OSError:
            self.exec_main_code, self.exec_main_status = CLD_EXITED, EXIT_EXEC
            self.result = "exit-code"
            self.main_pid = 0
            self.set_state("failed", "failed")
            return JobResult("failed", f"{command.argv[0]}: not found")
        self.proc = proc
        self.main_pid = self.exec_main_pid = proc.pid
        self.exec_main_code = self.exec_main_status = 0
        if config.type == "oneshot":
            self.set_state("activating", "start")
            returncode = await proc.wait()
            self._record_exit(returncode)
            if (
                not self.is_clean(
                    self.exec_main_code, self.exec_main_status, stop_signal_sent=False
                )
                and not command.ignore_failure
            ):
                self.result = "exit-code" if returncode >= 0 else "signal"
                self.set_state("failed", "failed")
                return JobResult("failed")
            if config.remain_after_exit:
                self.set_state("active", "exited")
            else:
                self.set_state("inactive", "dead")
            return JobResult()
        self.set_state("active", "running")
        asyncio.get_running_loop().create_task(self._watch(proc, command))
        return JobResult()

    def _record_exit(self, returncode: int) -> None:
        if returncode >= 0:
            self.exec_main_code, self.exec_main_status = CLD_EXITED, returncode
        else:
            self.exec_main_code, self.exec_main_status = CLD_KILLED, -returncode
        self.main_pid = 0

    async def _watch(self, proc: asyncio.subprocess.Process, command: Command) -> None:
        returncode = await proc.wait()
        if proc is not self.proc:
            return
        self._record_exit(returncode)
        self.exited.set()
        if self.stopping:
            return  # the stop job decides the outcome
        self.proc = None
        self.kill_group(proc.pid, signal.SIGTERM)
        assert self.config is not None
        config = self.config
        clean = command.ignore_failure or self.is_clean(
            self.exec_main_code, self.exec_main_status, stop_signal_sent=False
        )
        if not clean:
            self.result = "exit-code" if self.exec_main_code == CLD_EXITED else "signal"
        restart = config.restart == "always" or (
            not clean and config.restart in ("on-failure", "on-abnormal", "on-abort")
        )
        if restart:
            self.set_state("activating", "auto-restart")
            self.restart_task = asyncio.get_running_loop().create_task(self._auto_restart())
        elif clean and config.remain_after_exit:
            self.set_state("active", "exited")
        elif clean:
            self.set_state("inactive", "dead")
        else:
            self.set_state("failed", "failed")

    async def _auto_restart(self) -> None:
        assert self.config is not None
        await asyncio.sleep(self.config.restart_sec)
        async with self.lock:
            if self.sub_state != "auto-restart":
                return
            self.restart_task = None
            self.n_restarts += 1
            await self._start()

    async def stop(self) -> JobResult:
        async with self.lock:
            if self.load_state != "loaded" and self.active_state == "inactive":
                return JobResult("not-loaded")
            if self.sub_state == "auto-restart":
                if self.restart_task is not None:
                    self.restart_task.cancel()
                    self.restart_task = None
                self.set_state("inactive", "dead")
                return JobResult()
            if self.active_state in ("inactive", "failed"):
                return JobResult()
            if self.is_socket:
                self.set_state("inactive", "dead")
                return JobResult()
            await self._stop()
            return JobResult()

    async def _stop(self) -> None:
        assert self.config is not None
        config = self.config
        self.stopping = True
        self.set_state("deactivating", "stop")
        deadline = time.monotonic() + config.timeout_stop_sec
        timed_out = False
        proc = self.proc
        try:
            for command in config.exec_stop:
                try:
                    stopper = await self.spawn(command, {"MAINPID": str(self.main_pid or "")})
                except OSError:
                    continue
                try:
                    await asyncio.wait_for(stopper.wait(), max(0.0, deadline - time.monotonic()))
                except TimeoutError:
                    self.kill_group(stopper.pid, signal.SIGKILL)
                    await stopper.wait()
                    timed_out = True
            signal_sent = False
            if proc is not None and not self.exited.is_set():
                self.kill_group(proc.pid, signal.SIGTERM)
                signal_sent = True
                try:
                    await asyncio.wait_for(
                        self.exited.wait(), max(0.0, deadline - time.monotonic())
                    )
                except TimeoutError:
                    timed_out = True
                    self.kill_group(proc.pid, signal.SIGKILL)
                    await self.exited.wait()
            if proc is not None:
                self.kill_group(proc.pid, signal.SIGKILL)
                clean = self.is_clean(
                    self.exec_main_code, self.exec_main_status, stop_signal_sent=signal_sent
                )
                if not clean and self.result == "success":
                    self.result = "exit-code" if self.exec_main_code == CLD_EXITED else "signal"
            if timed_out:
                self.result = "timeout"
        finally:
            self.proc = None
            self.main_pid = 0
            self.stopping = False
        if self.result == "success":
            self.set_state("inactive", "dead")
        else:
            self.set_state("failed", "failed")

    async def kill(self, sig: int) -> JobResult:
        if self.proc is not None:
            self.kill_group(self.proc.pid, sig)
        return JobResult()

    def reset_failed(self) -> None:
        self.starts.clear()
        if self.active_state == "failed":
            self.result = "success"
            self.set_state("inactive", "dead")

    # ---- introspection

    def properties(self) -> dict[str, str]:
        config = self.config or ServiceConfig()
        unit_dir = self.manager.unit_dir
        file_state = (
            unit_file_state(unit_dir, self.name, config.has_install, self.fragment)
            if self.load_state == "loaded"
            else ""
        )
        fragment = (
            BUILTIN_SOCKET_PATH
            if self.name == BUILTIN_SOCKET
            else (str(self.fragment) if self.fragment else "")
        )
        return {
            "Type": config.type if not self.is_socket else "",
            "Restart": config.restart,
            "RestartUSec": _usec(config.restart_sec),
            "TimeoutStopUSec": _usec(config.timeout_stop_sec),
            "RemainAfterExit": "yes" if config.remain_after_exit else "no",
            "MainPID": str(self.main_pid),
            "ExecMainPID": str(self.exec_main_pid),
            "ExecMainCode": str(self.exec_main_code),
            "ExecMainStatus": str(self.exec_main_status),
            "NRestarts": str(self.n_restarts),
            "Result": self.result,
            "Id": self.name,
            "Names": self.name,
            "Description": config.description or self.name,
            "LoadState": self.load_state,
            "ActiveState": self.active_state,
            "SubState": self.sub_state,
            "FragmentPath": fragment,
            "UnitFileState": file_state,
            "UnitFilePreset": "enabled" if self.load_state == "loaded" else "",
            "WantedBy": " ".join(config.wanted_by),
            "StateChangeTimestamp": self.state_change,
            "ActiveEnterTimestamp": self.active_enter,
            "InactiveEnterTimestamp": self.inactive_enter,
            "NeedDaemonReload": "yes" if self.need_reload() else "no",
            "StartLimitBurst": str(config.start_limit_burst),
            "StartLimitIntervalUSec": _usec(config.start_limit_interval),
            "ExecStart": "; ".join(c.line for c in config.exec_start),
            "ExecStop": "; ".join(c.line for c in config.exec_stop),
        }


def _usec(seconds: float) -> str:
    if seconds == float("inf"):
        return "infinity"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)}min"
    if seconds >= 1 and float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"


# --------------------------------------------------------------------------- manager


class Manager:
    """The user manager: its units and the bus that `systemctl --user` talks to."""

    def __init__(self, host_dir: Path) -> None:
        self.info = hostenv.load_host_info(host_dir)
        self.units: dict[str, Unit] = {}
        self.stopping = asyncio.Event()

    @property
    def unit_dir(self) -> Path:
        return self.info.home / ".config" / "systemd" / "user"

    def journal(self, unit: str) -> Any:
        directory = Path(self.info.host_dir) / "journal"
        directory.mkdir(exist_ok=True)
        return open(directory / f"{unit}.log", "ab")  # closed by spawn()

    def unit(self, name: str) -> Unit:
        """The unit, loaded from disk on first use (and again while it is inactive)."""
        name = normalize_unit(name)
        unit = self.units.get(name)
        if unit is None:
            unit = Unit(self, name)
            self.units[name] = unit
        if unit.active_state == "inactive" and unit.sub_state == "dead":
            unit.load()
        return unit

    def daemon_reload(self) -> None:
        on_disk = (
            {p.name for p in self.unit_dir.glob("*.service")} if self.unit_dir.is_dir() else set()
        )
        for name in on_disk:
            self.units.setdefault(name, Unit(self, name)).load()
        for name, unit in list(self.units.items()):
            if name not in on_disk and name != BUILTIN_SOCKET:
                if unit.active_state == "inactive":
                    del self.units[name]
                else:
                    unit.load_state = "not-found"

    def list_units(self, include_all: bool) -> list[dict[str, str]]:
        if self.unit_dir.is_dir():
            for path in self.unit_dir.glob("*.service"):
                self.unit(path.name)
        self.unit(BUILTIN_SOCKET)
        shown = []
        for name in sorted(self.units):
            unit = self.units[name]
            if include_all or unit.active_state != "inactive":
                shown.append(
                    {
                        "unit": name,
                        "load": unit.load_state,
                        "active": unit.active_state,
                        "sub": unit.sub_state,
                        "description": (unit.config.description if unit.config else "") or name,
                    }
                )
        return shown

    async def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op", "")
        names: list[str] = list(request.get("units", []))
        if op == "daemon-reload":
            self.daemon_reload()
            return {"ok": True}
        if op == "list-units":
            return {"ok": True, "units": self.list_units(bool(request.get("all")))}
        if op == "show":
            return {"ok": True, "units": [self.unit(n).properties() for n in names]}
        if op == "journal":
            path = Path(self.info.host_dir) / "journal" / f"{normalize_unit(names[0])}.log"
            lines = path.read_text(errors="replace").splitlines() if path.exists() else []
            return {"ok": True, "lines": lines[-int(request.get("lines", 10)) :]}
        results = []
        for name in names:
            unit = self.unit(name)
            results.append((await self._job(op, unit, request)).to_json())
        return {"ok": True, "results": results}

    async def _job(self, op: str, unit: Unit, request: dict[str, Any]) -> JobResult:
        if op == "start":
            return await unit.start()
        if op == "stop":
            return await unit.stop()
        if op == "restart" or op == "reload-or-restart":
            if unit.load_state != "loaded":
                return JobResult("not-found")
            await unit.stop()
            unit.load()
            return await unit.start()
        if op == "try-restart":
            if unit.active_state not in ("active", "activating"):
                return JobResult()
            await unit.stop()
            return await unit.start()
        if op == "kill":
            return await unit.kill(int(request.get("signal", signal.SIGTERM)))
        if op == "reset-failed":
            unit.reset_failed()
            return JobResult()
        return JobResult("failed", f"unknown operation {op}")

    async def serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            line = await reader.readline()
            try:
                request = json.loads(line)
                answer = await self.handle(request)
            except (ValueError, KeyError, TypeError) as exc:
                answer = {"ok": False, "error": f"bad request: {exc}"}
            writer.write(json.dumps(answer).encode() + b"\n")
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def shutdown(self) -> None:
        """Kill every running unit's process group (as the manager's end does)."""
        for unit in self.units.values():
            if unit.restart_task is not None:
                unit.restart_task.cancel()
            if unit.proc is not None:
                unit.kill_group(unit.proc.pid, signal.SIGTERM)
        await asyncio.sleep(0.2)
        for unit in self.units.values():
            if unit.proc is not None:
                unit.kill_group(unit.proc.pid, signal.SIGKILL)

    async def run(self) -> None:
        run_dir = self.info.run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        listener = bind_unix(run_dir / BUS_NAME)
        server = await asyncio.start_unix_server(self.serve_client, sock=listener)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stopping.set)
        print(
            f"user manager of {self.info.name} listening on {run_dir / BUS_NAME}", file=sys.stderr
        )
        try:
            await self.stopping.wait()
        finally:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                (run_dir / BUS_NAME).unlink()
            await self.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="systemd --user")
    parser.add_argument("--host-dir", required=True, type=Path)
    args = parser.parse_args(argv)
    asyncio.run(Manager(args.host_dir).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
