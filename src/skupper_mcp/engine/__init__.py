"""The engine: one object per topology that every front end calls."""

from skupper_mcp.engine.core import Engine

__all__ = ["Engine"]
