"""The engine: one object per topology that every front end calls.

``Engine`` is imported when it is first asked for (PEP 562): the engine's operations are
most of the product's own import time, and a module that needs only the state folder
(``engine.store``) must not pay for them, nor an MCP server before its first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skupper_mcp.engine.core import Engine

__all__ = ["Engine"]


def __getattr__(name: str) -> Any:
    if name == "Engine":
        from skupper_mcp.engine.core import Engine

        return Engine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
