"""What the lifecycle tests share: preconditions on the network, and the CLI as a user runs it.

Test modules import these from here, never from one another: what a test module holds is its
own tests' business, and a helper renamed or moved with its tests must not break another file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from skupper_mcp.engine.core import Engine
from skupper_mcp.results import OperationResult
from skupper_mcp.topology import load_topology
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


@asynccontextmanager
async def faulted(world: World, host: str, fault: str) -> AsyncIterator[Engine]:
    """A new engine (new connections, as a new agent session) while ``host`` has ``fault``;
    the host is restored once the engine is closed."""
    world.fault(host, fault)
    try:
        async with Engine(load_topology(world.topology)) as fresh:
            yield fresh
    finally:
        world.fault(host, "restore")


@contextmanager
def skupper_version(world: World, host: str, version: str) -> Iterator[None]:
    """``host`` says it has Skupper ``version`` (its host.json) until the block ends."""
    path = world.host_dir(host) / "host.json"
    original = path.read_text()
    path.write_text(json.dumps({**json.loads(original), "skupper_version": version}))
    try:
        yield
    finally:
        path.write_text(original)
