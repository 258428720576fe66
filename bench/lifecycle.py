"""Time setup, up and down on sandbox worlds of 2 and 8 providers.

    .venv/bin/python bench/lifecycle.py [--providers 2 8] [--rounds 3]

For each operation it prints the wall time and the slowest single site's own work (the sum
of its step times), and their ratio: sites run in parallel, so the wall time should stay
within a small multiple of the slowest site, not grow with the number of sites.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from skupper_mcp.engine.core import Engine
from skupper_mcp.results import OperationResult
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import running_world


def slowest_site(result: OperationResult) -> float:
    return max((sum(step.seconds for step in site.steps) for site in result.sites), default=0.0)


async def measure(topology: Path, rounds: int) -> list[tuple[str, float, float]]:
    rows: list[tuple[str, float, float]] = []
    async with Engine(load_topology(topology)) as engine:
        started = time.monotonic()
        setup = await engine.setup()
        assert isinstance(setup, OperationResult) and setup.ok, setup.summary
        rows.append(("setup (first)", time.monotonic() - started, slowest_site(setup)))
        started = time.monotonic()
        again = await engine.setup()
        assert isinstance(again, OperationResult)
        rows.append(("setup (no change)", time.monotonic() - started, slowest_site(again)))
        for _ in range(rounds):
            await engine.down()
            started = time.monotonic()
            up = await engine.up()
            assert up.ok, up.summary
            rows.append(("up", time.monotonic() - started, slowest_site(up)))
            started = time.monotonic()
            down = await engine.down()
            assert down.ok, down.summary
            rows.append(("down", time.monotonic() - started, slowest_site(down)))
        started = time.monotonic()
        await engine.status()
        rows.append(("status", time.monotonic() - started, 0.0))
    return rows


def report(providers: int, rows: list[tuple[str, float, float]]) -> None:
    print(f"\n{providers} providers")
    print(f"{'operation':<20}{'wall s':>8}{'slowest site s':>16}{'ratio':>8}")
    for name in dict.fromkeys(r[0] for r in rows):
        walls = [r[1] for r in rows if r[0] == name]
        sites = [r[2] for r in rows if r[0] == name]
        wall, site = statistics.median(walls), statistics.median(sites)
        ratio = f"{wall / site:.2f}" if site else "-"
        print(f"{name:<20}{wall:>8.2f}{site:>16.2f}{ratio:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--providers", type=int, nargs="+", default=[2, 8])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for providers in args.providers:
        with tempfile.TemporaryDirectory(prefix="skupper-mcp-bench-") as tmp:
            started = time.monotonic()
            with running_world(
                Path(tmp), WorldSpec(providers=providers, kubernetes=False)
            ) as world:
                print(f"sandbox up with {providers} providers: {time.monotonic() - started:.1f}s")
                report(providers, asyncio.run(measure(world.topology, args.rounds)))


if __name__ == "__main__":
    main()
