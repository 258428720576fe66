"""Emulated `systemctl` (systemd 252 output and exit codes).

`systemctl --user` talks to the host's user manager (the `systemd` package) on
`$XDG_RUNTIME_DIR/bus`; on a root host, plain `systemctl` talks to its system manager
(`/run/systemd/private`, `hostenv.manager_bus`), which has no user manager beside it. Enable
and disable manage the `.wants/` links on disk, as the real one does, then reload the manager.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.systemd.bus import (
    BUILTIN_SOCKET_PATH,
    BUS_NAME,
    connect_unix,
    normalize_unit,
)

EXIT_FAILURE = 1
EXIT_NOT_ACTIVE = 3
EXIT_NO_SUCH_UNIT = 4
EXIT_NOT_FOUND = 5
ENABLED_STATES = {"enabled", "enabled-runtime", "static", "alias", "indirect", "generated"}


class BusError(Exception):
    """systemctl could not reach the manager."""


@dataclass
class Args:
    verb: str = "list-units"
    units: list[str] = field(default_factory=list)
    user: bool = False
    properties: list[str] = field(default_factory=list)
    value: bool = False
    now: bool = False
    quiet: bool = False
    all: bool = False
    signal: str = "SIGTERM"
    lines: int = 10
    unit_type: str = ""


VALUE_OPTIONS = {"-p", "--property", "-s", "--signal", "-t", "--type", "-n", "--lines", "--state"}


def parse_args(argv: list[str]) -> Args:
    args = Args()
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name, eq, inline = arg.partition("=")
        if name in VALUE_OPTIONS:
            if not eq:
                if i >= len(argv):
                    raise SystemExit(f"systemctl: option '{name}' requires an argument")
                inline = argv[i]
                i += 1
            if name in ("-p", "--property"):
                args.properties.extend(p for p in inline.split(",") if p)
            elif name in ("-s", "--signal"):
                args.signal = inline
            elif name in ("-t", "--type"):
                args.unit_type = inline
            elif name in ("-n", "--lines"):
                args.lines = int(inline)
        elif arg == "--user":
            args.user = True
        elif arg == "--system":
            args.user = False
        elif arg == "--value":
            args.value = True
        elif arg == "--now":
            args.now = True
        elif arg in ("-q", "--quiet"):
            args.quiet = True
        elif arg in ("-a", "--all"):
            args.all = True
        elif arg.startswith("-"):
            continue  # --no-pager, --no-block, -l, --full, --no-legend, --plain ...
        else:
            positional.append(arg)
    if positional:
        args.verb, *args.units = positional
    args.units = [normalize_unit(u) for u in args.units]
    return args


def err(text: str) -> None:
    print(text, file=sys.stderr)


class Bus:
    """One request per connection to the host's user manager."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with connect_unix(path, timeout=5):
            pass

    def call(self, op: str, units: list[str] | None = None, **extra: Any) -> dict[str, Any]:
        try:
            sock = connect_unix(self.path)
        except OSError as exc:
            raise BusError(f"Failed to connect to bus: {exc.strerror}") from exc
        with sock:
            sock.sendall(json.dumps({"op": op, "units": units or [], **extra}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        if not data:
            raise BusError("Failed to connect to bus: Connection reset by peer")
        answer: dict[str, Any] = json.loads(data)
        return answer

    def show(self, units: list[str]) -> list[dict[str, str]]:
        shown: list[dict[str, str]] = self.call("show", units)["units"]
        return shown


def open_bus(env: dict[str, str]) -> Bus:
    try:
        runtime = hostenv.runtime_dir(env)
    except FileNotFoundError:
        raise BusError("Failed to connect to bus: No medium found") from None
    except hostenv.NotOnSandboxHost:
        raise BusError("Failed to connect to bus: No medium found") from None
    try:
        return Bus(runtime / BUS_NAME)
    except FileNotFoundError:
        raise BusError("Failed to connect to bus: No such file or directory") from None
    except ConnectionRefusedError:
        raise BusError("Failed to connect to bus: Connection refused") from None
    except OSError as exc:
        raise BusError(f"Failed to connect to bus: {exc.strerror}") from None


def open_system_bus(host: hostenv.HostInfo) -> Bus:
    try:
        return Bus(hostenv.manager_bus(host))
    except FileNotFoundError:
        raise BusError("Failed to connect to bus: No such file or directory") from None
    except OSError as exc:
        raise BusError(f"Failed to connect to bus: {exc.strerror}") from None


# --------------------------------------------------------------------------- verbs


_JOB_VERBS = {
    "start": "start",
    "stop": "stop",
    "restart": "restart",
    "try-restart": "try-restart",
    "reload-or-restart": "reload-or-restart",
    "condrestart": "try-restart",
    "force-reload": "try-restart",
}


def run_jobs(bus: Bus, verb: str, units: list[str]) -> int:
    if not units:
        err("Too few arguments.")
        return EXIT_FAILURE
    answer = bus.call(_JOB_VERBS[verb], units)
    code = 0
    for unit, result in zip(units, answer["results"], strict=True):
        outcome = result["outcome"]
        if outcome == "not-found":
            err(f"Failed to {verb} {unit}: Unit {unit} not found.")
            code = code or EXIT_NOT_FOUND
        elif outcome == "not-loaded":
            err(f"Failed to {verb} {unit}: Unit {unit} not loaded.")
            code = code or EXIT_NOT_FOUND
        elif outcome in ("failed", "start-limit"):
            why = (
                "the start of the service was attempted too often"
                if outcome == "start-limit"
                else "the control process exited with error code"
            )
            err(f"Job for {unit} failed because {why}.")
            err(
                f'See "systemctl --user status {unit}" and '
                f'"journalctl --user -xeu {unit}" for details.'
            )
            if outcome == "start-limit":
                err(f'To force a start use "systemctl --user reset-failed {unit}"')
                err(f'followed by "systemctl --user start {unit}" again.')
            code = code or EXIT_FAILURE
    return code


def _shown_active(props: dict[str, str]) -> str:
    return props["ActiveState"]


def verb_is_active(bus: Bus, args: Args) -> int:
    states = [_shown_active(p) for p in bus.show(args.units)]
    if not args.quiet:
        for state in states:
            print(state)
    return 0 if states and all(s == "active" for s in states) else EXIT_NOT_ACTIVE


def verb_is_failed(bus: Bus, args: Args) -> int:
    states = [_shown_active(p) for p in bus.show(args.units)]
    if not args.quiet:
        for state in states:
            print(state)
    return 0 if any(s == "failed" for s in states) else EXIT_FAILURE


def verb_is_enabled(bus: Bus, args: Args) -> int:
    code = EXIT_FAILURE
    for unit, props in zip(args.units, bus.show(args.units), strict=True):
        if props["LoadState"] != "loaded":
            err(f"Failed to get unit file state for {unit}: No such file or directory")
            return EXIT_FAILURE
        if not args.quiet:
            print(props["UnitFileState"])
        if props["UnitFileState"] in ENABLED_STATES:
            code = 0
    return code


def verb_show(bus: Bus, args: Args) -> int:
    blocks = []
    for props in bus.show(args.units):
        keys = args.properties or list(props)
        if args.value:
            blocks.append("\n".join(props.get(k, "") for k in keys))
        else:
            blocks.append("\n".join(f"{k}={props[k]}" for k in keys if k in props))
    print("\n\n".join(blocks))
    return 0


def verb_status(bus: Bus, args: Args) -> int:
    code = 0
    for index, props in enumerate(bus.show(args.units)):
        unit = props["Id"]
        if props["LoadState"] != "loaded":
            err(f"Unit {unit} could not be found.")
            code = EXIT_NO_SUCH_UNIT
            continue
        if index:
            print()
        active, sub = props["ActiveState"], props["SubState"]
        mark = {"active": "●", "failed": "\u00d7"}.get(active, "○")
        print(f"{mark} {unit} - {props['Description']}")
        print(
            f"     Loaded: loaded ({props['FragmentPath']}; {props['UnitFileState']}; "
            "preset: enabled)"
        )
        if active == "failed":
            when = props["InactiveEnterTimestamp"]
            print(f"     Active: failed (Result: {props['Result']}) since {when}")
        elif active in ("inactive",):
            print(f"     Active: inactive ({sub})")
        else:
            since = props["ActiveEnterTimestamp"] or props["StateChangeTimestamp"]
            print(f"     Active: {active} ({sub}) since {since}")
        if props["MainPID"] != "0":
            print(f"   Main PID: {props['MainPID']}")
        elif props["ExecMainPID"] != "0":
            how = "exited" if props["ExecMainCode"] == "1" else "killed"
            status = props["ExecMainStatus"]
            if how == "killed":
                status = signal.Signals(int(status)).name.removeprefix("SIG")
            print(
                f"    Process: {props['ExecMainPID']} ExecStart={props['ExecStart']} "
                f"(code={how}, status={status})"
            )
        journal = bus.call("journal", [unit], lines=args.lines)["lines"]
        if journal:
            print()
            for line in journal:
                print(line)
        if active != "active" and code == 0:
            code = EXIT_NOT_ACTIVE
    return code


def _unit_dir(env: dict[str, str]) -> Path:
    info = hostenv.current_host(env)
    if info.is_root:
        return hostenv.system_path(info, "/etc/systemd/system")
    return Path(env["HOME"]) / ".config" / "systemd" / "user"


def verb_enable(bus: Bus, args: Args, env: dict[str, str]) -> int:
    unit_dir = _unit_dir(env)
    for unit, props in zip(args.units, bus.show(args.units), strict=True):
        if props["LoadState"] != "loaded":
            err(f"Failed to enable unit: Unit file {unit} does not exist.")
            return EXIT_FAILURE
        targets = props["WantedBy"].split()
        if not targets:
            err(
                "The unit files have no installation config (WantedBy=, RequiredBy=, Also=,\n"
                "Alias= settings in the [Install] section, and DefaultInstance= for template\n"
                "units). This means they are not meant to be enabled or disabled using systemctl."
            )
            continue
        source = props["FragmentPath"] or BUILTIN_SOCKET_PATH
        for target in targets:
            link = unit_dir / f"{target}.wants" / unit
            if link.is_symlink():
                continue
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(source, link)
            err(f"Created symlink {link} → {source}.")
    bus.call("daemon-reload")
    if args.now:
        return run_jobs(bus, "start", args.units)
    return 0


def verb_disable(bus: Bus, args: Args, env: dict[str, str]) -> int:
    unit_dir = _unit_dir(env)
    for unit, props in zip(args.units, bus.show(args.units), strict=True):
        if props["LoadState"] != "loaded":
            err(f"Failed to disable unit: Unit file {unit} does not exist.")
            return EXIT_FAILURE
        # not glob("*.wants/<unit>"): it skips a dangling link (the built-in podman.socket's
        # target, /usr/lib/systemd/user/podman.socket, need not exist here)
        wants = sorted(unit_dir.glob("*.wants")) if unit_dir.is_dir() else []
        for link in [w / unit for w in wants if (w / unit).is_symlink() or (w / unit).exists()]:
            link.unlink()
            err(f'Removed "{link}".')
    bus.call("daemon-reload")
    if args.now:
        return run_jobs(bus, "stop", args.units)
    return 0


def verb_kill(bus: Bus, args: Args) -> int:
    name = args.signal.upper()
    try:
        number = (
            int(name)
            if name.isdigit()
            else int(signal.Signals[name if name.startswith("SIG") else "SIG" + name])
        )
    except KeyError:
        err(f"Failed to parse signal string {args.signal}.")
        return EXIT_FAILURE
    return run_jobs_simple(bus, "kill", args.units, signal=number)


def run_jobs_simple(bus: Bus, op: str, units: list[str], **extra: Any) -> int:
    bus.call(op, units, **extra)
    return 0


def verb_reset_failed(bus: Bus, args: Args) -> int:
    units = args.units
    if not units:
        units = [u["unit"] for u in bus.call("list-units", all=True)["units"]]
    return run_jobs_simple(bus, "reset-failed", units)


def verb_list_units(bus: Bus, args: Args) -> int:
    units = bus.call("list-units", all=args.all)["units"]
    if args.unit_type:
        units = [u for u in units if u["unit"].endswith("." + args.unit_type)]
    rows = [["UNIT", "LOAD", "ACTIVE", "SUB", "DESCRIPTION"]]
    rows += [[u["unit"], u["load"], u["active"], u["sub"], u["description"]] for u in units]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print(
            "  " + " ".join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True)) + " " + row[4]
        )
    print()
    print("LOAD   = Reflects whether the unit definition was properly loaded.")
    print("ACTIVE = The high-level unit activation state, i.e. generalization of SUB.")
    print("SUB    = The low-level unit activation state, values depend on unit type.")
    print(f"{len(units)} loaded units listed.")
    return 0


def dispatch(bus: Bus, args: Args, env: dict[str, str]) -> int:
    simple: dict[str, Callable[[Bus, Args], int]] = {
        "is-active": verb_is_active,
        "is-failed": verb_is_failed,
        "is-enabled": verb_is_enabled,
        "show": verb_show,
        "status": verb_status,
        "kill": verb_kill,
        "reset-failed": verb_reset_failed,
        "list-units": verb_list_units,
    }
    if args.verb in _JOB_VERBS:
        return run_jobs(bus, args.verb, args.units)
    if args.verb in simple:
        return simple[args.verb](bus, args)
    if args.verb == "enable":
        return verb_enable(bus, args, env)
    if args.verb == "disable":
        return verb_disable(bus, args, env)
    if args.verb == "daemon-reload":
        bus.call("daemon-reload")
        return 0
    err(f"Unknown command verb {args.verb}.")
    return EXIT_FAILURE


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    env = dict(os.environ)
    try:
        host = hostenv.current_host(env)
    except hostenv.NotOnSandboxHost:
        host = None
    system = not args.user and host is not None and host.is_root
    if not args.user and not system:
        err("System has not been booted with systemd as init system (PID 1). Can't operate.")
        err("Failed to connect to bus: Host is down")
        return EXIT_FAILURE
    try:
        bus = open_system_bus(host) if system and host is not None else open_bus(env)
        return dispatch(bus, args, env)
    except BusError as exc:
        err(str(exc))
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
