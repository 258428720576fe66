"""The model pool the unit tests read, decide and export: ``chat`` on :9100, bound and
serving over the backends a test gives; a test names only what its case changes. One
copy here, so a field PoolStatus gains is given once."""

from __future__ import annotations

from typing import Any

from skupper_mcp.results import PoolBackend, PoolStatus


def chat_pool(backends: list[PoolBackend], **fields: Any) -> PoolStatus:
    """The pool ``chat`` over ``backends``, ``fields`` in place of its defaults."""
    values: dict[str, Any] = {
        "name": "chat",
        "strategy": "any",
        "site": "local-test",
        "port": 9100,
        "routing_key": "model-pool-chat",
        "bound": True,
        "state": "serving",
        "backends": backends,
        **fields,
    }
    return PoolStatus(**values)
