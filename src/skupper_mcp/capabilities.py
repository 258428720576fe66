"""What the server tells a client it does, decided in one place.

A capability is claimed only when the server does it. The server sends no change
notification: its tools, prompts and resources are fixed when it starts (a topology edit
changes what the tools answer, never their list or descriptions), and it does not watch the
VAN for changes between calls. So it claims neither ``listChanged`` nor
``resources.subscribe``, in either protocol era:

- handshake era (initialize, <= 2025-11-25): MCPServer derives ``subscribe`` from a
  ``resources/subscribe`` handler (none is registered) and ``listChanged`` from
  notification options (none are set);
- 2026-07-28 (``server/discover``): the SDK claims every ``listChanged`` and ``subscribe``
  as soon as it serves ``subscriptions/listen``, so that method is not served.

A capability or extension the server adds (the MCP Apps ``ui`` extension) goes through
``server_options`` too.
"""

from __future__ import annotations

from typing import Any


def server_options(*, extensions: list[Any] | None = None) -> dict[str, Any]:
    """The keyword arguments of ``MCPServer`` that decide the advertised capabilities, with
    the extensions the server serves (the MCP Apps ``ui`` extension, ``mcp_apps``)."""
    return {"subscriptions": False, "extensions": list(extensions or [])}
