"""Two operations on one topology never interleave, also across processes; the lock file is
never reached through a link."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skupper_mcp.engine.store.lock import lock_path, operation_lock
from skupper_mcp.errors import BusyError, LocalStateError


async def test_a_second_operation_waits_for_the_first(tmp_path: Path) -> None:
    topology = tmp_path / "topology.env"
    order: list[str] = []
    held, waiting, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def first() -> None:
        async with operation_lock(tmp_path, topology, "up", wait=5):
            order.append("up in")
            held.set()
            await release.wait()
            order.append("up out")

    async def blocked(line: str) -> None:
        waiting.set()

    async def second() -> None:
        async with operation_lock(tmp_path, topology, "down", wait=5, on_wait=blocked):
            order.append("down in")
        order.append("down out")

    async with asyncio.timeout(10):
        up = asyncio.create_task(first())
        await held.wait()
        down = asyncio.create_task(second())
        await waiting.wait()  # down found the lock taken and waits
        assert order == ["up in"]
        release.set()
        await asyncio.gather(up, down)
    assert order == ["up in", "up out", "down in", "down out"]


@pytest.mark.spawns
def test_another_process_holding_the_lock_makes_us_give_up_with_a_clear_message(
    tmp_path: Path,
) -> None:
    state, topology = str(tmp_path), str(tmp_path / "topology.env")
    program = (
        "import asyncio, sys; from pathlib import Path\n"
        "from skupper_mcp.engine.store.lock import operation_lock\n"
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
        # the subject: the 0.5 s wait ends it, not the holder's 30 s (a bound clear of both)
        assert time.monotonic() - started < 15
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


async def test_a_link_planted_at_the_lock_path_is_refused_and_its_target_kept(
    tmp_path: Path,
) -> None:
    topology = tmp_path / "topology.env"
    state = tmp_path / "state"
    path = lock_path(state, topology)
    path.parent.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    path.symlink_to(victim)
    with pytest.raises(LocalStateError, match=r"is a symbolic link.*Remove it") as raised:
        async with operation_lock(state, topology, "up", wait=1):
            pytest.fail("the operation ran through a planted lock link")
    assert raised.value.path == str(path)
    assert victim.read_text() == "precious\n"


async def test_the_lock_file_is_private(tmp_path: Path) -> None:
    topology = tmp_path / "topology.env"
    state = tmp_path / "state"
    async with operation_lock(state, topology, "up", wait=1):
        path = lock_path(state, topology)
        assert path.read_text() == f"{os.getpid()} up\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


async def test_a_plan_reads_while_a_write_holds_the_lock_and_a_write_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan only reads: it answers while another operation holds the lock; the same call
    without ``plan`` waits for the lock."""
    from skupper_mcp.engine import operations as op
    from skupper_mcp.engine.core import Engine
    from skupper_mcp.results import OperationResult
    from skupper_mcp.topology import load_topology
    from topology_samples import SMALL_TOPOLOGY

    path = tmp_path / "topology.env"
    path.write_text(SMALL_TOPOLOGY + f"STATE_DIR={tmp_path / 'state'}\n")
    topology = load_topology(path)

    async def fake_up(sites: object, target: str, *, plan: bool, progress: object) -> object:
        # a whole result: a write's goes into the journal
        return OperationResult(
            operation="up", target=target, ok=True, sites=[], summary="", plan=plan
        )

    monkeypatch.setattr(op.updown, "up", fake_up)
    engine = Engine(topology)
    waited: list[str] = []
    told = asyncio.Event()

    async def on_wait(line: str) -> None:
        waited.append(line)
        told.set()

    async with operation_lock(topology.state_dir, topology.path, "setup", wait=5):
        async with asyncio.timeout(2):
            assert (await engine.up(plan=True)).plan
        assert waited == []
        write = asyncio.ensure_future(engine.up(progress=on_wait))
        async with asyncio.timeout(5):
            await told.wait()
        assert not write.done() and "waiting for another operation" in waited[0]
    assert not (await write).plan
