"""Ask a router pod for its live state: AMQP management on the real router, one JSON line
on the imitation (``skupper_sandbox.router.query``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skupper_sandbox.router.query import router_state_async


async def query_router(
    host: str, port: int, timeout: float = 2.0, *, world_dir: str | Path
) -> dict[str, Any] | None:
    """The router's state, or None when it does not answer. The pod's management listener
    is plain AMQP (the kube-adaptor's own), so no client certificate."""
    return await router_state_async(host, port, world_dir=world_dir, timeout=timeout)
