"""Two operations on one topology never interleave, also across processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skupper_mcp.engine.lock import operation_lock
from skupper_mcp.errors import BusyError


async def test_a_second_operation_waits_for_the_first(tmp_path: Path) -> None:
    order: list[str] = []

    async def op(name: str, hold: float) -> None:
        async with operation_lock(tmp_path, tmp_path / "topology.env", name, wait=5):
            order.append(f"{name} in")
            await asyncio.sleep(hold)
            order.append(f"{name} out")

    first = asyncio.create_task(op("up", 0.3))
    await asyncio.sleep(0.05)
    await op("down", 0)
    await first
    assert order == ["up in", "up out", "down in", "down out"]


def test_another_process_holding_the_lock_makes_us_give_up_with_a_clear_message(
    tmp_path: Path,
) -> None:
    state, topology = str(tmp_path), str(tmp_path / "topology.env")
    program = (
        "import asyncio, sys; from pathlib import Path\n"
        "from skupper_mcp.engine.lock import operation_lock\n"
        "async def main():\n"
        f"    async with operation_lock(Path({state!r}), Path({topology!r}), 'setup'):\n"
        "        print('held', flush=True); await asyncio.sleep(30)\n"
        "asyncio.run(main())"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"

        async def attempt() -> None:
            async with operation_lock(tmp_path, tmp_path / "topology.env", "up", wait=0.5):
                pass

        started = time.monotonic()
        with pytest.raises(BusyError, match="setup, pid"):
            asyncio.run(attempt())
        assert time.monotonic() - started < 3
    finally:
        holder.kill()
        holder.wait()


async def test_a_waiting_operation_says_what_it_waits_for_once(tmp_path: Path) -> None:
    topology = tmp_path / "topology.env"
    said: list[str] = []
    held = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with operation_lock(tmp_path, topology, "setup", wait=5):
            held.set()
            await release.wait()

    async def say(line: str) -> None:
        said.append(line)
        release.set()

    first = asyncio.create_task(holder())
    await held.wait()
    async with operation_lock(tmp_path, topology, "up", wait=5, on_wait=say):
        pass
    await first
    assert len(said) == 1
    assert "waiting for another operation on this topology (setup, pid" in said[0]
