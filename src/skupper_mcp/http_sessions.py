"""How many Streamable HTTP sessions may be open at once, and how long one may idle.

The server has one token, so the sessions its holders may keep open at once are the
server's: ``session_limits`` caps them (``--max-sessions``, else
``SKUPPER_MCP_HTTP_MAX_SESSIONS``, else ``DEFAULT_MAX_SESSIONS``). The SDK's session manager
enforces it: past the cap a request that would open a session gets 503 with a JSON-RPC error
body ("Too many open sessions"), and a session counts until its client deletes it or it has
been idle for the idle timeout (``--session-idle-timeout``, else
``SKUPPER_MCP_HTTP_SESSION_IDLE``, else the SDK's 30 minutes). Without the cap a holder of
the token could open sessions until the server ran out of memory (the SDK's own default cap
is 10 000). The SDK is not imported here: the CLI's help names these defaults without
paying for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from skupper_mcp.errors import ConfigError

SESSIONS_VARIABLE = "SKUPPER_MCP_HTTP_MAX_SESSIONS"
IDLE_VARIABLE = "SKUPPER_MCP_HTTP_SESSION_IDLE"
#: Sessions open at once: a client holds one, and one that reconnects without closing its
#: last session leaves it until it is idle for the idle timeout; a few agents fit with room.
DEFAULT_MAX_SESSIONS = 32
#: The SDK's own default (``streamable_http_manager.DEFAULT_SESSION_IDLE_TIMEOUT``).
DEFAULT_SESSION_IDLE = 30 * 60.0


@dataclass(frozen=True)
class SessionLimits:
    """How many Streamable HTTP sessions may be open at once, and after how many seconds
    without a request one is closed."""

    max_sessions: int
    idle_timeout: float


def session_limits(max_sessions: int | None, idle_timeout: float | None) -> SessionLimits:
    """The limits from the flags (None: not given), else the variables, else the defaults;
    a ConfigError for a value that is not a positive number."""
    sessions = _positive(max_sessions, "--max-sessions", SESSIONS_VARIABLE, int)
    idle = _positive(idle_timeout, "--session-idle-timeout", IDLE_VARIABLE, float)
    return SessionLimits(
        int(sessions) if sessions is not None else DEFAULT_MAX_SESSIONS,
        float(idle) if idle is not None else DEFAULT_SESSION_IDLE,
    )


def _positive(
    given: float | None, flag: str, variable: str, kind: type[int] | type[float]
) -> float | None:
    where, value = (flag, given) if given is not None else (variable, os.environ.get(variable))
    if value is None:
        return None
    try:
        number = kind(value)
    except ValueError:
        number = 0
    if not (0 < number < float("inf")):
        unit = "a whole number of sessions" if kind is int else "a number of seconds"
        raise ConfigError(f"{where} must be {unit} above 0, not {value!r}")
    return number
