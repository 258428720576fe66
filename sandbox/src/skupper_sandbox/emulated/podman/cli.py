"""podman's command line: global flags, verb dispatch, errors to exit codes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from skupper_sandbox.emulated import images, pulls
from skupper_sandbox.emulated.podman import containers

from .alive import check_boot_id
from .container_verbs import (
    verb_create,
    verb_exec,
    verb_kill,
    verb_logs,
    verb_rename,
    verb_restart,
    verb_rm,
    verb_run,
    verb_start,
    verb_stop,
    verb_wait,
)
from .engine import VERSION, verb_image, verb_info, verb_pull, verb_version
from .errors import PodmanError
from .host import Host, current_host
from .listing import verb_inspect, verb_ps
from .options import parse_options
from .warnings import runtime_warnings


def verb_container(host: Host, args: list[str]) -> int:
    if not args:
        raise PodmanError("missing command 'podman container COMMAND'")
    sub, *rest = args
    if sub == "exists":
        parsed = parse_options("container exists", rest, ())
        return 0 if parsed.positional and containers.get(host.home, parsed.positional[0]) else 1
    aliases = {"ls": "ps", "list": "ps", "remove": "rm"}
    return dispatch(host, aliases.get(sub, sub), rest, prefix="container ")


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
    log_level = "warn"
    events_backend = ""
    while args and args[0].startswith("--"):
        name = args[0].split("=", 1)[0]
        if name in GLOBAL_VALUE_FLAGS:
            value = args[0].split("=", 1)[1] if "=" in args[0] else "".join(args[1:2])
            if name == "--log-level":
                log_level = value
            elif name == "--events-backend":
                events_backend = value
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
        host = current_host(events_backend)
        for line in runtime_warnings(host.info, log_level, os.environ):
            print(line, file=sys.stderr, flush=True)
        check_boot_id(host.info)  # podman 5.1+ only (quirk podman-release=RELEASE)
        pulled = pulls.podman_main([verb, *rest])  # a host whose images are not pulled yet
        if pulled is not None:
            return pulled
        return dispatch(host, verb, rest)
    except images.UnknownImage as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return 125
    except PodmanError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return exc.code
