"""Service unit files: their sections, directives, specifiers and enablement."""

from __future__ import annotations

import re
import shlex
import signal
from dataclasses import dataclass, field
from pathlib import Path

from skupper_sandbox import hostenv


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
        "t": "/run" if info.is_root else f"/run/user/{info.uid}",
        "H": info.name,
        "%": "%",
    }
    return re.sub(r"%(.)", lambda m: table.get(m.group(1), m.group(0)), text)


def expand_env(words: list[str], env: dict[str, str]) -> list[str]:
    out: list[str] = []
    for word in words:
        whole = re.fullmatch(r"\$(\w+)", word)
        if whole:
            out.extend(env.get(whole.group(1), "").split())
            continue
        # `$$` is a literal `$` (systemd.service(5), "Command lines").
        out.append(
            re.sub(
                r"\$\$|\$\{(\w+)\}",
                lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), ""),
                word,
            )
        )
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
