"""Building shell commands safely: quoting, validation, and the remote prelude.

Every value that reaches a remote shell is validated with ``safe_token`` (so a bad
topology value is a configuration error before anything runs) and still quoted with
``quote`` (so validation is never the only line of defence).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from skupper_mcp.errors import ConfigError

__all__ = ["ENV_PRELUDE", "join", "quote", "safe_token", "script"]

_SAFE_TOKEN = re.compile(r"[A-Za-z0-9._:/@=+,-]+")

#: The first line of every remote command. A non-PAM SSH login does not set
#: XDG_RUNTIME_DIR, and without it (and the session bus address) ``systemctl --user``
#: fails with "Failed to connect to bus". Values already set by the login win.
ENV_PRELUDE = (
    'export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}" '
    'DBUS_SESSION_BUS_ADDRESS="${DBUS_SESSION_BUS_ADDRESS:-unix:path='
    '${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/bus}" '
    'SKUPPER_PLATFORM="${SKUPPER_PLATFORM:-podman}";'
)


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


def script(*lines: str) -> str:
    """One shell script: the environment prelude followed by ``lines``, newline-joined."""
    return "\n".join((ENV_PRELUDE, *lines))
