"""What the lifecycle tests share: preconditions on the network, and the CLI as a user runs it.

Test modules import these from here, never from one another: what a test module holds is its
own tests' business, and a helper renamed or moved with its tests must not break another file.
"""

from __future__ import annotations

import subprocess
import sys

from skupper_mcp.engine.core import Engine
from skupper_mcp.models import OperationResult
from skupper_sandbox.testing import World


async def only_up(engine: Engine, providers: tuple[str, ...]) -> None:
    """Precondition: exactly these providers (and the local site if any) are up."""
    result = await engine.down("all")
    assert result.ok, result.summary
    for provider in providers:
        result = await engine.up(provider)
        assert result.ok, result.summary


def outcomes(result: OperationResult) -> dict[str, str]:
    return {s.host: s.outcome for s in result.sites}


def cli(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skupper_mcp", "--topology", str(world.topology), *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
