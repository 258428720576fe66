"""The pauses between the reads of a site that an operation waits for, and the probes of
the local listeners that ``up`` waits for."""

import asyncio
import socket
import time
from types import SimpleNamespace

from skupper_mcp.engine.verify import POLL, Pacing, probe_listeners


def test_pauses_start_short_and_grow_to_a_ceiling() -> None:
    pacing = Pacing()
    pauses = [pacing.take(60.0) for _ in range(14)]
    assert pauses[:5] == [POLL] * 5  # a router that starts in 1.5 s is seen at once
    assert pauses == sorted(pauses)
    assert pauses[-1] == 2.0
    # 33 sites read for 25 s: 20 reads each, not the 80 a fixed 0.3 s pause makes
    pacing, spent, reads = Pacing(), 0.0, 1
    while spent < 25.0:
        spent += pacing.take(25.0 - spent)
        reads += 1
    assert reads <= 20


def test_no_pause_goes_past_the_deadline() -> None:
    pacing = Pacing()
    for _ in range(6):
        pacing.take(60.0)
    assert pacing.take(0.4) == 0.4
    assert pacing.take(-1.0) == 0.0


async def test_listener_probes_say_how_long_each_took_and_which_never_bound() -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    open_port = server.sockets[0].getsockname()[1]
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]
    providers = [
        SimpleNamespace(label="bound", local_port=open_port),
        SimpleNamespace(label="silent", local_port=closed_port),
    ]
    async with server:
        found = await probe_listeners("127.0.0.1", providers, time.monotonic() + 1.0)  # type: ignore[arg-type]
    assert found["silent"] is None
    assert found["bound"] is not None and 0.0 <= found["bound"] < 1.0
