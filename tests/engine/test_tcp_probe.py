"""The listener probe says whether something accepts connections, not how busy the
product's own event loop was: in test_model the probe runs beside the SSH connect to the
provider (one ``asyncio.gather``), whose key exchange and imports hold the loop; on a loaded
machine they held it past the probe's 2 s, and a listener that accepted read as "nothing
accepts connections" (tests/sandbox/test_models_catalog.py, in the e2e half's four
workers, on main and on the perf branch alike)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import pytest

from skupper_mcp.engine.verify import tcp_probe
from sshkit import free_port


@pytest.fixture
def listening() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts (the kernel completes the handshake: no accept
    is needed), closed after."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@pytest.fixture
def closed() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    return free_port("127.0.0.1")


def _work(seconds: float) -> None:
    """CPU work of ``seconds`` without a pause, as a key exchange or an import is."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(1000))


async def _hold_the_loop(seconds: float) -> None:
    """What an SSH key exchange or an import does to the loop: work without an await."""
    await asyncio.sleep(0)
    _work(seconds)


async def test_a_listener_accepts_though_the_loop_is_held_past_the_probes_timeout(
    listening: int,
) -> None:
    accepted, _ = await asyncio.gather(tcp_probe("127.0.0.1", listening, 0.3), _hold_the_loop(0.8))
    assert accepted


async def test_a_closed_port_is_closed_though_the_loop_is_held(closed: int) -> None:
    accepted, _ = await asyncio.gather(tcp_probe("127.0.0.1", closed, 0.3), _hold_the_loop(0.8))
    assert not accepted
