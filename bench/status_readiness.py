"""What reading each model's readiness costs warm status, on one sandbox world, side by side.

    .venv/bin/python bench/status_readiness.py [--providers 2] [--rounds 3]
        [--python OTHER/.venv/bin/python]

On one world (emulated podman; its providers' model servers are vLLM and llama.cpp servers
as the sandbox emulates them, so the engine's own pages are asked too), through one MCP
server over stdio per product, the rounds interleaved call by call so that the machine's
load falls on every column alike:

- ``status``: this checkout's, as a caller asks it by default;
- ``status readiness``: this checkout's ``status(readiness=true)``, each model's listener
  and engine pages asked beside the sites' read;
- ``models``: what an agent that wants readiness called before (a read of its own);
- ``status`` of each ``--python`` checkout (main's, for the issue's "within 10 %").

Medians and least rounds of ``--rounds``. The world is set up as bench/status.py sets up
its own (emulated podman, no cluster site, ``skupper-mcp setup``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from status import set_up  # bench/status.py: this script's own directory

from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import running_world

CALL_TIMEOUT = 600.0
#: The sandbox's engines given to the first providers, in this order.
ENGINES = ("vllm", "llamacpp")
PROVIDER_NAMES = ("rhel-ai", "rhtevan-work")


async def measure(topology: Path, products: list[str], rounds: int) -> dict[str, list[float]]:
    """Warm calls through one stdio server per product, interleaved round by round."""
    found: dict[str, list[float]] = {}
    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for python in products:
            name = "this" if python == sys.executable else checkout_name(python)
            params = StdioServerParameters(
                command=python,
                args=["-m", "skupper_mcp", "--topology", str(topology), "--log-level", "ERROR"],
            )
            client = Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)
            clients[name] = await stack.enter_async_context(client)
        for name, client in clients.items():  # warm: each server's first status
            await _call(client, "status", {})
            found[f"{name} status"] = []
        this = clients["this"]
        found["this status readiness"], found["this models"] = [], []
        for _ in range(rounds):
            for name, client in clients.items():
                found[f"{name} status"].append(await _timed(client, "status", {}))
            found["this status readiness"].append(await _timed(this, "status", {"readiness": True}))
            found["this models"].append(await _timed(this, "models", {}))
    return found


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return dict(result.structured_content or {})


async def _timed(client: Client, tool: str, arguments: dict[str, Any]) -> float:
    started = time.monotonic()
    await _call(client, tool, arguments)
    return time.monotonic() - started


def checkout_name(python: str) -> str:
    """A checkout's name from its interpreter (``CHECKOUT/.venv/bin/python``)."""
    path = Path(python)
    return path.parents[2].name if len(path.parents) > 2 else python


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--providers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", action="append", default=[])
    args = parser.parse_args()
    engines = dict(zip(PROVIDER_NAMES[: args.providers], ENGINES, strict=False))
    spec = WorldSpec(
        providers=args.providers, kubernetes=False, podman="emulated", model_engines=engines
    )
    with tempfile.TemporaryDirectory() as tmp, running_world(Path(tmp), spec) as world:
        set_up(world)
        found = asyncio.run(measure(world.topology, [sys.executable, *args.python], args.rounds))
    print(f"{args.providers} providers, {args.rounds} rounds, engines {engines}")
    print(f"{'call':>34}{'median s':>10}{'least s':>10}")
    for name, values in found.items():
        print(f"{name:>34}{statistics.median(values):>10.3f}{min(values):>10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
