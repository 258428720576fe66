"""Emulated ``journalctl``: a host's journal, as far as scripts read it.

Two kinds of entries are there: each line a unit's processes printed (the user manager
keeps them in ``HOST_DIR/journal/<unit>.log``), with ``_SYSTEMD_USER_UNIT`` (a root host's:
``_SYSTEMD_UNIT``) and ``SYSLOG_IDENTIFIER`` the name of the unit's executable, as journald's
stdout stream gives them; and, on a ``journald`` host, each line a container printed, with
conmon's fields (``emulated.podman.journal``).

What it answers, after systemd's journalctl (src/journal/journalctl.c ``parse_argv``,
journalctl-filter.c ``add_units``/``add_syslog_identifier``/``add_matches``,
journalctl-show.c ``action_show``, read on systemd/systemd main): ``FIELD=VALUE`` matches
(one field: any of its values; several fields: all), ``-u/--unit`` (a user unit's entries
with ``--user``, a system unit's without), ``--user-unit``, ``-t/--identifier``,
``-n/--lines[=N]`` (the last N; no N: 10), ``-e`` (``-n 1000`` unless given), ``-r``,
``-q``, ``-o short|short-iso|cat|json``, and ``--user``, ``--system``, ``-b``,
``--no-pager``, ``-x``, ``-a``, ``-l``, ``--no-hostname`` (accepted). Nothing matched
prints ``-- No entries --`` unless ``-q``; the exit is 0 either way. ``--since``,
``--until`` and ``-f`` are not emulated: they fail saying so. **Adapted**: a unit's lines
carry no time of their own here; they are stamped with the time of the unit log's last
write.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.podman.journal import journal_path
from skupper_sandbox.emulated.systemd.bus import normalize_unit
from skupper_sandbox.emulated.systemd.unitfile import parse_unit_text

Entry = dict[str, str]

_OUTPUTS = ("short", "short-iso", "cat", "json")
_ACCEPTED = {"--user", "--system", "--no-pager", "-x", "--catalog", "-a", "--all"}
_ACCEPTED |= {"-l", "--full", "--no-hostname", "-b", "--boot", "--merge", "-m"}
_NOT_EMULATED = {"--since", "-S", "--until", "-U", "-f", "--follow"}


class Usage(Exception):
    """A command line journalctl refuses."""


class Query:
    def __init__(self) -> None:
        self.user = False
        self.matches: dict[str, list[str]] = {}
        self.lines: int | None = None
        self.pager_end = False
        self.reverse = False
        self.quiet = False
        self.output = "short"
        self.no_hostname = False

    def match(self, field: str, value: str) -> None:
        self.matches.setdefault(field, []).append(value)

    def selects(self, entry: Entry) -> bool:
        return all(entry.get(field) in values for field, values in self.matches.items())


def parse(argv: list[str]) -> Query:
    query = Query()
    units: list[str] = []
    user_units: list[str] = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if len(arg) > 2 and arg[:2] in ("-n", "-u", "-t", "-o") and not arg.startswith("--"):
            args.insert(0, arg[2:])  # getopt: a short option's value may follow it directly
            arg = arg[:2]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")

        def value(name: str = name, eq: str = eq, inline: str = inline) -> str:
            if eq:
                return inline
            if not args:
                raise Usage(f"option '{name}' requires an argument")
            return args.pop(0)

        if name in _NOT_EMULATED or any(arg.startswith(f"{o}=") for o in _NOT_EMULATED):
            raise Usage(f"{name} is not emulated by the sandbox's journalctl")
        if name == "--user":
            query.user = True
        elif name == "--system":
            query.user = False
        elif name in _ACCEPTED:
            if name == "--no-hostname":
                query.no_hostname = True
        elif name in ("-u", "--unit"):
            units.append(value())
        elif name == "--user-unit":
            user_units.append(value())
        elif name in ("-t", "--identifier"):
            query.match("SYSLOG_IDENTIFIER", value())
        elif name in ("-n", "--lines"):
            raw = inline if eq else (args.pop(0) if args and args[0].isdigit() else "10")
            if not raw.isdigit():
                raise Usage(f'Failed to parse lines "{raw}"')
            query.lines = int(raw)
        elif name in ("-e", "--pager-end"):
            query.pager_end = True
        elif name in ("-r", "--reverse"):
            query.reverse = True
        elif name in ("-q", "--quiet"):
            query.quiet = True
        elif name in ("-o", "--output"):
            query.output = value()
            if query.output not in _OUTPUTS:
                raise Usage(f"Unknown output format '{query.output}'.")
        elif arg.startswith("-"):
            raise Usage(f"unrecognized option '{arg}'")
        elif "=" in arg and arg.split("=", 1)[0].isupper():
            field, _, wanted = arg.partition("=")
            query.match(field, wanted)
        else:
            raise Usage(f"Failed to add match '{arg}': Invalid argument")
    for unit in units:
        query.match("_SYSTEMD_USER_UNIT" if query.user else "_SYSTEMD_UNIT", normalize_unit(unit))
    for unit in user_units:
        query.match("_SYSTEMD_USER_UNIT", normalize_unit(unit))
    if query.pager_end and query.lines is None:
        query.lines = 1000
    return query


def _unit_dir(info: hostenv.HostInfo) -> Path:
    if info.is_root:
        return hostenv.system_path(info, "/etc/systemd/system")
    return info.home / ".config" / "systemd" / "user"


def _identifier(info: hostenv.HostInfo, unit: str) -> str:
    """The name journald gives a unit's output: its ``SyslogIdentifier=``, else the name of
    its ExecStart's executable (systemd's stdout stream identifier)."""
    try:
        service = parse_unit_text((_unit_dir(info) / unit).read_text()).get("Service", [])
    except OSError:
        return unit.rsplit(".", 1)[0]
    values = dict(service)
    if values.get("SyslogIdentifier"):
        return values["SyslogIdentifier"]
    words = shlex.split(values.get("ExecStart", "")) or [unit]
    return words[0].lstrip("-@:+!").rsplit("/", 1)[-1]


def _unit_entries(info: hostenv.HostInfo) -> Iterable[Entry]:
    directory = Path(info.host_dir) / "journal"
    if not directory.is_dir():
        return
    field = "_SYSTEMD_UNIT" if info.is_root else "_SYSTEMD_USER_UNIT"
    for path in sorted(directory.glob("*.log")):
        unit = path.name[: -len(".log")]
        stamp = str(int(path.stat().st_mtime * 1_000_000))
        ident = _identifier(info, unit)
        for line in path.read_text(errors="replace").splitlines():
            yield {
                "MESSAGE": line,
                field: unit,
                "SYSLOG_IDENTIFIER": ident,
                "_UID": str(info.uid),
                "_HOSTNAME": info.name,
                "_TRANSPORT": "stdout",
                "__REALTIME_TIMESTAMP": stamp,
            }


def _container_entries(info: hostenv.HostInfo) -> Iterable[Entry]:
    try:
        text = journal_path(info.host_dir).read_text(errors="replace")
    except FileNotFoundError:
        return
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written as this one reads
        if isinstance(entry, dict):
            yield {str(k): str(v) for k, v in entry.items()}


def entries(info: hostenv.HostInfo) -> list[Entry]:
    """Every entry of the host's journal, oldest first."""
    found = [*_unit_entries(info), *_container_entries(info)]
    return sorted(found, key=lambda e: int(e.get("__REALTIME_TIMESTAMP", "0")))


def render(entry: Entry, output: str, *, no_hostname: bool = False) -> str:
    if output == "cat":
        return entry.get("MESSAGE", "")
    if output == "json":
        return json.dumps(entry, sort_keys=True)
    seconds = int(entry.get("__REALTIME_TIMESTAMP", "0")) / 1_000_000
    local = time.localtime(seconds)
    if output == "short-iso":
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", local)
    else:
        stamp = time.strftime("%b %d %H:%M:%S", local)
    ident = entry.get("SYSLOG_IDENTIFIER") or entry.get("_COMM", "unknown")
    pid = entry.get("_PID")
    who = f"{ident}[{pid}]" if pid else ident
    host = "" if no_hostname else f" {entry.get('_HOSTNAME', '')}"
    return f"{stamp}{host} {who}: {entry.get('MESSAGE', '')}"


def main(argv: list[str] | None = None) -> int:
    try:
        query = parse(list(sys.argv[1:] if argv is None else argv))
        info = hostenv.current_host()
    except Usage as exc:
        print(f"journalctl: {exc}", file=sys.stderr)
        return 1
    except hostenv.NotOnSandboxHost as exc:
        print(f"journalctl: {exc}", file=sys.stderr)
        return 1
    shown = [e for e in entries(info) if query.selects(e)]
    if query.lines is not None:
        shown = shown[-query.lines :] if query.lines else []
    if query.reverse:
        shown.reverse()
    out = sys.stdout
    for entry in shown:
        out.write(render(entry, query.output, no_hostname=query.no_hostname) + "\n")
    if not shown and not query.quiet:
        out.write("-- No entries --\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
