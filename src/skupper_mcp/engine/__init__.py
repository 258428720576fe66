"""The engine: one object per topology that every front end calls."""

from skupper_mcp.engine.core import Engine, Progress

__all__ = ["Engine", "Progress"]
