"""The MCP server's engines: one replaced after a topology edit is closed once the calls on
it finish, never while one still runs, and never left open until the server stops."""

from __future__ import annotations

import os
from pathlib import Path

from skupper_mcp.engine import Engine
from skupper_mcp.server import ServerState
from topology_samples import SMALL_TOPOLOGY


def edit(path: Path, text: str) -> None:
    path.write_text(text)
    stamp = path.stat().st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(stamp, stamp))


async def test_a_replaced_engine_closes_when_its_last_call_ends(tmp_path: Path) -> None:
    path = tmp_path / "topology.env"
    edit(path, SMALL_TOPOLOGY + f"STATE_DIR={tmp_path / 'state'}\n")
    held = ServerState(path)
    closed: list[Engine] = []

    def spy(engine: Engine) -> Engine:
        real = engine.close

        async def close() -> None:
            closed.append(engine)
            await real()

        engine.close = close  # type: ignore[method-assign]
        return engine

    held.refresh()
    assert held.engine is not None
    first = spy(held.engine)
    async with held.engine_in_use() as engine:
        assert engine is first
        edit(path, SMALL_TOPOLOGY + f"STATE_DIR={tmp_path / 'state'}\n# edited\n")
        async with held.engine_in_use() as second:  # a call that starts after the edit
            assert second is not first
            spy(second)
        assert closed == []  # the first call still runs on the old engine
    assert closed == [first] and held.retired == []
    async with held.engine_in_use() as again:
        assert again is second
    assert closed == [first]
    await held.close()
    assert closed == [first, second]
