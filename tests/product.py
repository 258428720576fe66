"""The product as the sandbox tests drive it: its command line on a topology, and a world
set up and up through the engine. One copy here, for every test that needs either."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from skupper_mcp.engine.core import Engine
from skupper_mcp.topology import load_topology

#: How long one CLI run may take on a loaded machine (setup of a world is the longest).
CLI_TIMEOUT = 180


def cli(
    topology: Path | None, *args: str, timeout: float = CLI_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """``python -m skupper_mcp [--topology TOPOLOGY] ARGS``, its output captured; never
    raises for its exit status (the test reads it)."""
    where = ["--topology", str(topology)] if topology is not None else []
    return subprocess.run(
        [sys.executable, "-m", "skupper_mcp", *where, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def set_up_and_up(topology: Path) -> None:
    """``setup`` then ``up`` of every site of ``topology`` through the engine, each ok."""

    async def build() -> None:
        async with Engine(load_topology(topology)) as engine:
            assert (await engine.setup()).ok
            assert (await engine.up()).ok

    asyncio.run(build())
