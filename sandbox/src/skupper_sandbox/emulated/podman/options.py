"""podman-style command-line flags, and the flags `run`/`create` take."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import PodmanError


@dataclass(frozen=True)
class Opt:
    """One flag of a verb: its names, whether it takes a value, and if it repeats."""

    names: tuple[str, ...]
    dest: str
    takes_value: bool = False
    repeat: bool = False


@dataclass
class Parsed:
    values: dict[str, Any] = field(default_factory=dict)
    positional: list[str] = field(default_factory=list)

    def flag(self, dest: str) -> bool:
        return bool(self.values.get(dest))

    def value(self, dest: str, default: str | None = None) -> str | None:
        found = self.values.get(dest)
        return default if found is None else str(found)

    def many(self, dest: str) -> list[str]:
        return list(self.values.get(dest, []))


def parse_options(
    verb: str, args: Sequence[str], spec: Sequence[Opt], *, interspersed: bool = True
) -> Parsed:
    """Parse podman-style flags. Without `interspersed`, the first positional ends them."""
    by_name = {name: opt for opt in spec for name in opt.names}
    parsed = Parsed()
    i = 0
    args = list(args)

    def store(opt: Opt, value: str | bool) -> None:
        if opt.repeat:
            parsed.values.setdefault(opt.dest, []).append(value)
        else:
            parsed.values[opt.dest] = value

    def unknown(flag: str) -> PodmanError:
        return PodmanError(f"unknown flag: {flag}\nSee 'podman {verb} --help'")

    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            parsed.positional.extend(args[i:])
            break
        if arg.startswith("--") and len(arg) > 2:
            name, eq, inline = arg.partition("=")
            opt = by_name.get(name)
            if opt is None:
                raise unknown(name)
            if opt.takes_value:
                if eq:
                    store(opt, inline)
                elif i < len(args):
                    store(opt, args[i])
                    i += 1
                else:
                    raise PodmanError(f"flag needs an argument: {name}")
            else:
                store(opt, inline.lower() not in ("false", "0") if eq else True)
            continue
        if arg.startswith("-") and len(arg) > 1:
            j = 1
            while j < len(arg):
                opt = by_name.get("-" + arg[j])
                if opt is None:
                    raise unknown(f"-{arg[j]}" if j == 1 else f"shorthand flag: '{arg[j]}'")
                if opt.takes_value:
                    rest = arg[j + 1 :]
                    if rest:
                        store(opt, rest.removeprefix("="))
                    elif i < len(args):
                        store(opt, args[i])
                        i += 1
                    else:
                        raise PodmanError(f"flag needs an argument: 'arg[j]' in -{arg[j]}")
                    break
                store(opt, True)
                j += 1
            continue
        parsed.positional.append(arg)
        if not interspersed:
            parsed.positional.extend(args[i:])
            break
    return parsed


CREATE_OPTS = (
    Opt(("-d", "--detach"), "detach"),
    Opt(("--rm",), "rm"),
    Opt(("--name",), "name", True),
    Opt(("-e", "--env"), "env", True, True),
    Opt(("--env-file",), "env_file", True, True),
    Opt(("-l", "--label"), "label", True, True),
    Opt(("-v", "--volume"), "volume", True, True),
    Opt(("--tmpfs",), "tmpfs", True, True),
    Opt(("--restart",), "restart", True),
    Opt(("--network", "--net"), "network", True),
    Opt(("--userns",), "userns", True),
    Opt(("-u", "--user"), "user", True),
    Opt(("--security-opt",), "security_opt", True, True),
    Opt(("--hostname", "-h"), "hostname", True),
    Opt(("-p", "--publish"), "publish", True, True),
    Opt(("--pull",), "pull", True),
    Opt(("--replace",), "replace"),
    Opt(("--init",), "init"),
    Opt(("-i", "--interactive"), "interactive"),
    Opt(("-t", "--tty"), "tty"),
    Opt(("-w", "--workdir"), "workdir", True),
    Opt(("--entrypoint",), "entrypoint", True),
    Opt(("--ulimit",), "ulimit", True, True),
    Opt(("--cap-add",), "cap_add", True, True),
    Opt(("--cap-drop",), "cap_drop", True, True),
    Opt(("--privileged",), "privileged"),
    Opt(("--log-driver",), "log_driver", True),
    Opt(("--stop-timeout",), "stop_timeout", True),
    Opt(("--pod",), "pod", True),
    Opt(("-q", "--quiet"), "quiet"),
)
