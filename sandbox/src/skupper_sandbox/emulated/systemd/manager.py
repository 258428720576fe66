"""The user manager: the units of one host and the bus `systemctl --user` talks to."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import Any

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.systemd.bus import (
    BUILTIN_SOCKET,
    bind_unix,
    normalize_unit,
)

from .unit import JobResult, Unit

#: How often a manager that may not run yet looks again (a user's linger or session)
MAY_RUN_POLL = 0.2


class Manager:
    """The user manager: its units and the bus that `systemctl --user` talks to."""

    def __init__(self, host_dir: Path) -> None:
        self.info = hostenv.load_host_info(host_dir)
        self.units: dict[str, Unit] = {}
        self.stopping = asyncio.Event()

    @property
    def unit_dir(self) -> Path:
        """A root host's manager is the system manager (``/etc/systemd/system``)."""
        if self.info.is_root:
            return hostenv.system_path(self.info, "/etc/systemd/system")
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
            await unit.close_socket()
            if unit.restart_task is not None:
                unit.restart_task.cancel()
            if unit.proc is not None:
                unit.kill_group(unit.proc.pid, signal.SIGTERM)
        await asyncio.sleep(0.2)
        for unit in self.units.values():
            if unit.proc is not None:
                unit.kill_group(unit.proc.pid, signal.SIGKILL)

    async def _until_it_may_run(self) -> bool:
        """Wait while the user neither lingers nor has a session (after a reboot without
        linger: logind starts ``user@UID.service`` at enable-linger or a login, never
        before); False when told to stop meanwhile."""
        while not hostenv.manager_may_run(self.info):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), MAY_RUN_POLL)
            if self.stopping.is_set():
                return False
        return True

    def wanted_at_start(self) -> list[str]:
        """The units ``default.target`` pulls in: the links ``enable`` made in
        ``sockets.target.wants/`` (sockets.target comes before: basic.target) and in
        ``default.target.wants/``. A unit never enabled is not among them."""
        found: list[str] = []
        for target in ("sockets.target", "default.target"):
            wants = self.unit_dir / f"{target}.wants"
            if wants.is_dir():
                found += sorted(p.name for p in wants.iterdir() if "." in p.name)
        return found

    async def boot(self) -> None:
        """Start what the manager starts when it comes up: ``default.target``'s wants."""
        for name in self.wanted_at_start():
            result = await self.unit(name).start(manual=False)
            print(f"default.target wants {name}: {result.outcome}", file=sys.stderr)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stopping.set)
        if not await self._until_it_may_run():
            return
        bus = hostenv.manager_bus(self.info)
        bus.parent.mkdir(parents=True, exist_ok=True)
        listener = bind_unix(bus)
        server = await asyncio.start_unix_server(self.serve_client, sock=listener)
        kind = "system manager" if self.info.is_root else "user manager"
        print(f"{kind} of {self.info.name} listening on {bus}", file=sys.stderr)
        try:
            await self.boot()
            await self.stopping.wait()
        finally:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                bus.unlink()
            await self.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="systemd --user")
    parser.add_argument("--host-dir", required=True, type=Path)
    args = parser.parse_args(argv)
    asyncio.run(Manager(args.host_dir).run())
    return 0
