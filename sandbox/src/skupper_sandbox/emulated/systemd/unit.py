"""One unit at runtime: its processes, its start/stop jobs and the state they leave."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.systemd.bus import (
    BUILTIN_SOCKET,
    BUILTIN_SOCKET_PATH,
)

from . import podman_service
from .unitfile import Command, ServiceConfig, expand_env, load_service, unit_file_state

if TYPE_CHECKING:
    from .manager import Manager

CLEAN_SIGNALS = {signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE}
CLD_EXITED, CLD_KILLED = 1, 2
EXIT_EXEC = 203


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
        self.service: podman_service.Service | None = None

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
        if active == "failed" and self.active_state != "failed":
            # what real systemd logs as "Failed with result ...", kept in the manager's own
            # log (the unit's journal is what the product reads)
            print(
                f"{self.name}: failed with result {self.result!r}, main process"
                f" code={self.exec_main_code} status={self.exec_main_status}",
                file=sys.stderr,
                flush=True,
            )
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
        if not info.is_root:  # the system manager sets neither
            env["XDG_RUNTIME_DIR"] = f"/run/user/{info.uid}"
            env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path=/run/user/{info.uid}/bus"
        assert self.config is not None
        env.update(self.config.environment)
        env.update(extra or {})
        return env

    async def spawn(self, command: Command, extra: dict[str, str] | None = None) -> Any:
        env = self.environment(extra)
        argv = expand_env(command.argv, env)
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

    def is_clean(self, code: int, status: int) -> bool:
        """systemd's `is_clean_exit` for the main process (src/basic/exit-status.c).

        An exit is clean with status 0 or a `SuccessExitStatus=` number; a death by a
        signal is clean for a long-running (non-oneshot) main process when the signal is
        SIGHUP, SIGINT, SIGTERM or SIGPIPE, or when `SuccessExitStatus=` names it. A
        signal name never matches an exit status: `SIGTERM` does not make exit 143 clean.
        """
        assert self.config is not None
        if code == CLD_EXITED:
            return status == 0 or status in self.config.success_codes
        daemon = self.config.type != "oneshot"
        return (daemon and status in CLEAN_SIGNALS) or status in self.config.success_signals

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
            return await self._listen()
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
                not self.is_clean(self.exec_main_code, self.exec_main_status)
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

    async def _listen(self) -> JobResult:
        """A socket unit listens; a real-podman host's podman.socket is served by podman."""
        info = self.manager.info
        if self.name == BUILTIN_SOCKET and podman_service.serves_real_podman(info):
            try:
                self.service = await podman_service.start(
                    info, lambda: self.manager.journal(self.name)
                )
            except OSError as exc:
                self.result = "resources"
                self.set_state("failed", "failed")
                return JobResult("failed", f"podman system service: {exc}")
        self.set_state("active", "listening")
        return JobResult()

    async def close_socket(self) -> None:
        service, self.service = self.service, None
        if service is not None:
            await podman_service.stop(service)

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
        clean = command.ignore_failure or self.is_clean(self.exec_main_code, self.exec_main_status)
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
                await self.close_socket()
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
            if proc is not None and not self.exited.is_set():
                self.kill_group(proc.pid, signal.SIGTERM)
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
                clean = self.is_clean(self.exec_main_code, self.exec_main_status)
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
        builtin = BUILTIN_SOCKET_PATH
        if self.manager.info.is_root:  # the system manager's copy of podman.socket
            builtin = builtin.replace("/systemd/user/", "/systemd/system/")
        fragment = (
            builtin
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
