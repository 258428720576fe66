"""Building shell commands safely: quoting, validation, and the remote prelude.

Every value that reaches a remote shell is validated with ``safe_token`` (so a bad
topology value is a configuration error before anything runs) and still quoted with
``quote`` (so validation is never the only line of defence).
"""

from __future__ import annotations

import base64
import functools
import re
import shlex
from collections.abc import Iterable
from importlib.resources import files

from skupper_mcp.errors import ConfigError, cut

__all__ = [
    "ENV_PRELUDE",
    "LOGIN_NAME",
    "join",
    "login_command",
    "program",
    "quote",
    "safe_token",
    "script",
    "shipped",
    "summary",
]

_SAFE_TOKEN = re.compile(r"[A-Za-z0-9._:/@=+,-]+")

#: The first line of every remote command: the layout Skupper uses for the login's user.
#: For uid 0 Skupper keeps its data in /var/lib/skupper and its units in
#: /etc/systemd/system, driven by the system ``systemctl`` (``pkg/nonkube/api/
#: environment.go``, ``internal/nonkube/common/systemd.go``); any other user has
#: ``${XDG_DATA_HOME:-~/.local/share}/skupper``, ``${XDG_CONFIG_HOME:-~/.config}/systemd/
#: user`` and ``systemctl --user``, which needs XDG_RUNTIME_DIR and the session bus address
#: (a non-PAM SSH login sets neither; values the login set win). The scripts use
#: ``$SKMCP_DATA``, ``$SKMCP_UNITS`` and ``$SKMCP_CTL`` (unquoted: it may be two words), and
#: ``$SKMCP_UID``, the login's uid (asked once: each ``id`` is a process on the host).
ENV_PRELUDE = (
    "SKMCP_UID=$(id -u); "
    'if [ "$SKMCP_UID" = 0 ]; then '
    "SKMCP_DATA=/var/lib/skupper SKMCP_UNITS=/etc/systemd/system SKMCP_CTL=systemctl; "
    "else "
    'export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/run/user/$SKMCP_UID}"; '
    "export DBUS_SESSION_BUS_ADDRESS="
    '"${DBUS_SESSION_BUS_ADDRESS:-unix:path=$XDG_RUNTIME_DIR/bus}"; '
    'SKMCP_DATA="${XDG_DATA_HOME:-$HOME/.local/share}/skupper" '
    'SKMCP_UNITS="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user" '
    'SKMCP_CTL="systemctl --user"; '
    "fi; "
    'export SKUPPER_PLATFORM="${SKUPPER_PLATFORM:-podman}";'
)


#: The name ``sh`` runs a login command under (its ``$0``, which its own messages start with).
LOGIN_NAME = "skupper-mcp"
#: What every command sent to a login is: POSIX sh decoding the script from its first argument.
#: sshd runs an exec request as ``$SHELL -c COMMAND`` (OpenSSH ``session.c`` do_child), and the
#: login shell may be fish or tcsh: this line holds only plain words and one single-quoted word
#: without a backslash, a single quote, a ``!`` or a newline, which bash, dash, zsh, fish and
#: tcsh all pass on unchanged (fish reads ``\\`` and ``\'`` inside single quotes, tcsh refuses a
#: newline in them), and the script travels as base64, plain too. ``exec`` keeps the session's
#: process: ``$$`` in the script is the pid the connector may have to kill. Standard input is
#: left to the script.
_LOGIN_RUNNER = 'exec sh -c \'eval "$(printf %s "$1" | base64 -d)"\''


def login_command(script: str) -> str:
    """The command line a login shell of any kind runs as ``sh`` running ``script``."""
    # ``set --``: the script's arguments are its own, not the payload
    payload = base64.b64encode("\n".join(("set --", script)).encode()).decode("ascii")
    return f"{_LOGIN_RUNNER} {LOGIN_NAME} {payload}"


def quote(value: str | int) -> str:
    """Quote one value for a POSIX shell (``shlex.quote``); ints are stringified."""
    return shlex.quote(str(value))


def join(argv: Iterable[str | int]) -> str:
    """Quote and join an argument vector into one shell command line."""
    return " ".join(quote(arg) for arg in argv)


def safe_token(value: str, what: str) -> str:
    """Return ``value`` if it is a plain token safe to place in a shell command.

    Allowed characters: letters, digits and ``. _ : / @ = + , -``. Anything else (spaces,
    quotes, ``$``, ``;``, newlines, ...) raises ``ConfigError`` naming ``what`` the value is.
    """
    if not isinstance(value, str) or not _SAFE_TOKEN.fullmatch(value):
        raise ConfigError(
            f"{what} {value!r} contains characters that are not allowed; "
            "use only letters, digits and . _ : / @ = + , -"
        )
    return value


#: The shipped scripts that define the functions every script may use: the framing
#: (``skmcp_framed``, ``skmcp_one_line``) and the private-key files (``skmcp_open_keys``).
LIBRARIES = ("framing.sh", "keys.sh")


@functools.cache
def shipped(name: str) -> str:
    """The text of a shell script shipped with the package (``skupper_mcp/scripts/NAME``)."""
    return files("skupper_mcp.scripts").joinpath(name).read_text(encoding="utf-8")


@functools.cache
def runnable(name: str) -> str:
    """A shipped script as it is sent to run: without its comment lines (a line whose first
    character past its indent is ``#``), which are nearly half of the bytes of a state read
    (7 of 15.6 kB) that every warm status sends each site, encrypts, and has each host
    decrypt and its shell parse. The shell skips them alike: none is inside a quoted string
    or a here-document (``tests/test_shell_comments.py`` holds every shipped script to the
    same parse, by bash's own printer, with its comments and without). A file installed on a
    host (the watch script) keeps them: ``shipped``."""
    return "\n".join(
        line for line in shipped(name).splitlines() if not line.lstrip().startswith("#")
    )


def prelude() -> str:
    """What every script starts with: the environment (``ENV_PRELUDE``) and the shell
    functions of ``LIBRARIES``."""
    return "\n".join((ENV_PRELUDE, *(runnable(name).rstrip() for name in LIBRARIES)))


def script(*lines: str) -> str:
    """One shell script: the prelude followed by ``lines``, newline-joined."""
    return "\n".join((prelude(), *lines))


#: The shipped scripts that define functions only some scripts use, by the scripts using
#: them: sent before those scripts only (a status read's scripts stay short).
NEEDS = {
    "connector-status.sh": ("management.sh",),
    "drain.sh": ("management.sh",),
}


def program(name: str, *args: str | int) -> str:
    """The shipped script ``name`` (``scripts/NAME``) after the prelude, with ``args`` as its
    positional parameters: each value quoted here, once, and nowhere else."""
    return script(program_body(name, *args))


def program_body(name: str, *args: str | int) -> str:
    """``program`` without the prelude: for a caller that adds it (``sites.work.Script``).
    The functions the script needs (``NEEDS``) come before it."""
    needed = (runnable(library).rstrip() for library in NEEDS.get(name, ()))
    return "\n".join((*needed, f"# {name}", f"set -- {join(args)}", runnable(name)))


def summary(command: str, limit: int = 80) -> str:
    """What a command does, for an error message: its lines after the prelude and ``set -e``
    (the same in every script, so they say nothing), cut at ``limit``."""
    lines = [
        line.strip()
        for line in command.removeprefix(prelude()).splitlines()
        if line.strip() and line != ENV_PRELUDE and line.strip() != "set -e"
    ]
    return cut("; ".join(lines), limit)
