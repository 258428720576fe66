"""Entry point of the emulated `skupper` CLI (`python -m skupper_sandbox.emulated.skupper`)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ... import hostenv
from .commands import Commands, default_sans
from .failure import VALIDATION_ERROR, CliFailure
from .legacy import LegacySystem
from .paths import DEFAULT_NAMESPACE, NamespacePaths, data_home
from .system import System, read_source
from .version import docker_warning, is_v20, is_v22, version_table

PLATFORMS = ("kubernetes", "podman", "docker", "linux")
KUBE_CONFIG_ERROR = (
    "invalid configuration: no configuration has been provided, "
    "try setting KUBERNETES_MASTER environment variable"
)
KUBE_SYSTEM_MESSAGE = "This command does not support kubernetes platforms."
_GLOBAL_VALUE_FLAGS = {
    "-n": "namespace",
    "--namespace": "namespace",
    "-p": "platform",
    "--platform": "platform",
    "-c": "context",
    "--context": "context",
    "--kubeconfig": "kubeconfig",
}


class _Parser(argparse.ArgumentParser):
    """argparse that fails like cobra: a message on stderr and exit status 1."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"Error: {message}\nSee '{self.prog} --help' for usage.\n")


def split_global_flags(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Take the persistent flags (-n, -p, ...) from anywhere in argv, as cobra allows."""
    found: dict[str, str] = {}
    rest: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        arg = items[i]
        key, _, inline = arg.partition("=")
        if key in _GLOBAL_VALUE_FLAGS:
            if inline or "=" in arg:
                found[_GLOBAL_VALUE_FLAGS[key]] = inline
            elif i + 1 < len(items):
                found[_GLOBAL_VALUE_FLAGS[key]] = items[i + 1]
                i += 1
            else:
                raise CliFailure(f"flag needs an argument: {arg}")
        else:
            rest.append(arg)
        i += 1
    return found, rest


def build_parser(v20: bool, v22: bool = False) -> argparse.ArgumentParser:
    root = _Parser(prog="skupper")
    verbs = root.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    version = verbs.add_parser("version")
    version.add_argument("-o", "--output")

    site = verbs.add_parser("site").add_subparsers(dest="action", required=True)
    create = site.add_parser("create")
    create.add_argument("name")
    create.add_argument("--enable-link-access", action="store_true")
    delete = site.add_parser("delete")
    delete.add_argument("name", nargs="?")
    status = site.add_parser("status")
    status.add_argument("name", nargs="?")
    status.add_argument("-o", "--output")

    for kind in ("listener", "connector"):
        group = verbs.add_parser(kind).add_subparsers(dest="action", required=True)
        create = group.add_parser("create")
        create.add_argument("name")
        create.add_argument("port")
        create.add_argument("--routing-key")
        create.add_argument("--host")
        create.add_argument("--tls-credentials")
        delete = group.add_parser("delete")
        delete.add_argument("name")
        status = group.add_parser("status")
        status.add_argument("name", nargs="?")
        status.add_argument("-o", "--output")

    link = verbs.add_parser("link").add_subparsers(dest="action", required=True)
    status = link.add_parser("status")
    status.add_argument("name", nargs="?")
    status.add_argument("-o", "--output")
    generate = link.add_parser("generate")
    generate.add_argument("--name")
    generate.add_argument("--host")

    system = verbs.add_parser("system").add_subparsers(dest="action", required=True)
    if v20:
        setup = system.add_parser("setup")
        setup.add_argument("-f", "--force", action="store_true")
        setup.add_argument("--path")
        for action in ("reload", "start", "stop", "teardown", "install", "uninstall"):
            system.add_parser(action)
    else:
        install = system.add_parser("install")
        if v22:  # --reload-type came with 2.2.0 (system_install.go@2.2.0)
            install.add_argument("--reload-type", choices=("manual", "auto"), default="manual")
        uninstall = system.add_parser("uninstall")
        uninstall.add_argument("-f", "--force", action="store_true")
        for action in ("start", "reload", "stop"):
            system.add_parser(action)
        for action in ("apply", "delete"):
            sub = system.add_parser(action)
            sub.add_argument("-f", "--file", required=True)
    return root


def resolve_platform(flags: dict[str, str]) -> str:
    """Flag, then SKUPPER_PLATFORM, then kubernetes (unknown values become kubernetes)."""
    value = flags.get("platform") or os.environ.get("SKUPPER_PLATFORM") or "kubernetes"
    if "platform" in flags and value not in PLATFORMS:
        raise CliFailure(f'platform "{value}" not supported')
    return value if value in PLATFORMS else "kubernetes"


def run(argv: Sequence[str]) -> int:
    flags, rest = split_global_flags(argv)
    host = hostenv.current_host()
    cli_version = host.skupper_version
    args = parser_for(is_v20(cli_version), is_v22(cli_version)).parse_args(rest)
    platform = resolve_platform(flags)
    namespace = flags.get("namespace") or DEFAULT_NAMESPACE
    kube = platform == "kubernetes"

    if args.verb == "version":
        return _version(cli_version, kube, flags.get("namespace") or "")
    if args.verb == "system":
        if kube:
            print(KUBE_SYSTEM_MESSAGE)
            return 0
        if is_v20(cli_version):
            LegacySystem(os.environ, cli_version, platform).run(args.action, namespace, args)
        else:
            _run_system(System(os.environ, cli_version, platform), args, namespace)
        return 0
    if kube:
        raise CliFailure(KUBE_CONFIG_ERROR)
    commands = Commands(NamespacePaths(data_home(), namespace))
    out = _dispatch_resource(commands, args, host)
    if out:
        print(out, end="")
    return 0


@functools.cache
def parser_for(v20: bool, v22: bool) -> argparse.ArgumentParser:
    return build_parser(v20, v22)


def prewarm() -> None:
    """Make the parsers before the command server forks its commands: argparse looks on
    disk for translations of every text of every parser it makes (~4 ms a command)."""
    for v20, v22 in ((False, False), (True, False), (False, True)):
        parser_for(v20, v22)


def _version(cli_version: str, kube: bool, namespace: str) -> int:
    """``skupper version``. 2.2.x prints the bare CLI version whatever the platform
    (internal/cmd/skupper/version/version.go@2.2.0). 2.0.1-2.1.4 print the component table;
    on podman/docker/linux only when ``namespaces/<ns>`` exists (no ``-n``: ``default``),
    else a validation error naming the namespace as given, ``""`` without ``-n``
    (internal/cmd/skupper/version/nonkube/version.go@2.1.2:57-59). The kubernetes variant
    has no such check and, without a usable kubeconfig, asks no cluster
    (version/kube/version.go@2.1.2: NewClient's error is ignored)."""
    if is_v22(cli_version):
        print(cli_version)
        return 0
    if not kube and not NamespacePaths(data_home(), namespace or DEFAULT_NAMESPACE).home.is_dir():
        raise CliFailure(
            f"there is no definition for namespace {json.dumps(namespace)}", VALIDATION_ERROR
        )
    warning = docker_warning()
    if warning:
        print(warning, file=sys.stderr)
    print(version_table(cli_version, kube), end="")
    return 0


def _run_system(system: System, args: argparse.Namespace, namespace: str) -> None:
    actions: dict[str, Callable[[], None]] = {
        "install": lambda: system.install(getattr(args, "reload_type", None)),
        "uninstall": lambda: system.uninstall(args.force),
        "start": lambda: system.start(namespace),
        "reload": lambda: system.reload(namespace),
        "stop": lambda: system.stop(namespace),
        "apply": lambda: system.apply(namespace, *read_source(args.file)),
        "delete": lambda: system.delete(namespace, *read_source(args.file)),
    }
    actions[args.action]()


def _dispatch_resource(
    commands: Commands, args: argparse.Namespace, host: hostenv.HostInfo
) -> str | None:
    verb, action = args.verb, args.action
    if verb == "site":
        if action == "create":
            commands.site_create(
                args.name, args.enable_link_access, default_sans(host.name, host.address)
            )
            return None
        if action == "delete":
            commands.site_delete(args.name)
            return None
        return commands.site_status(args.output)
    if verb in ("listener", "connector"):
        kind = verb.capitalize()
        if action == "create":
            create = commands.listener_create if verb == "listener" else commands.connector_create
            create(args.name, args.port, args.routing_key, args.host)
            return None
        if action == "delete":
            commands.delete(kind, args.name)
            return None
        if verb == "listener":
            return commands.listener_status(args.name, args.output)
        return commands.connector_status(args.name, args.output)
    if action == "status":
        return commands.link_status(args.name, args.output)
    return commands.link_generate(args.name, args.host)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except CliFailure as exc:
        # the real CLI prints its errors on stdout (utils/handle_error.go@2.1.2:23)
        print(str(exc).rstrip("\n"))
        return exc.code
    except hostenv.NotOnSandboxHost as exc:
        print(str(exc), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
