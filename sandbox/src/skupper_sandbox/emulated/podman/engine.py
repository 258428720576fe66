"""The verbs about images and podman itself: pull, image, version, info."""

from __future__ import annotations

import json
import sys
from typing import Any

from skupper_sandbox.emulated import images
from skupper_sandbox.emulated.podman import containers

from .errors import PodmanError
from .gotemplate import render_template
from .host import Host
from .options import Opt, parse_options
from .report import effective_state, images_id

VERSION = "4.9.4"
API_VERSION = "4.9.4"
GO_VERSION = "go1.21.9"


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
                "path": "/run/podman/podman.sock"
                if host.info.is_root
                else f"/run/user/{host.info.uid}/podman/podman.sock",
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
