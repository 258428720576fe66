"""The verbs that list and describe containers: ps (with filters) and inspect."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from skupper_sandbox.emulated.podman import containers
from skupper_sandbox.emulated.podman.containers import Container

from .errors import PodmanError
from .gotemplate import render_template
from .host import Host
from .options import Opt, Parsed, parse_options
from .report import age, effective_state, human_duration, inspect_json, ps_json, status_text


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
                    f"{human_duration(age(c.created_at))} ago",
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
