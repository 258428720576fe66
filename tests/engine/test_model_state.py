"""A model row's state from the typed site and listener conditions and the probe."""

from __future__ import annotations

import pytest

from pools import chat_pool
from skupper_mcp.engine.model_http import ModelsProbe
from skupper_mcp.engine.model_state import (
    model_condition,
    needs_probe,
    pool_model_condition,
    pool_needs_probe,
)
from skupper_mcp.results import PoolBackend, PoolStatus

ADDRESS = "http://127.0.0.1:9000"
LISTED = ModelsProbe(200, ["granite-3b"], None, 3.0)
NO_MODEL = ModelsProbe(200, [], None, 1.0)


def state(site: str, listener: str, probe: ModelsProbe | None, key: str | None = None) -> str:
    found, _ = model_condition(site, "why", listener, "detail", ADDRESS, probe, key)  # type: ignore[arg-type]
    return found


@pytest.mark.parametrize(
    ("site", "listener", "probe", "expected"),
    [
        ("up", "serving", LISTED, "serving"),
        ("degraded", "serving", LISTED, "serving"),
        ("up", "serving", ModelsProbe(200, [], None, 1.0), "route-up-no-model"),
        ("up", "serving", ModelsProbe(401, None, "HTTP 401", 1.0), "route-up-no-model"),
        ("up", "serving", ModelsProbe(None, None, "reset", 1.0), "route-up-no-model"),
        ("up", "closed", None, "route-down"),
        ("stopped", "closing", None, "provider-stopped"),
        ("stopped", "closed", None, "provider-stopped"),
        ("stale", "closing", None, "provider-stopped"),
        ("not-set-up", "closed", None, "provider-stopped"),
        ("unreachable", "unknown", None, "provider-skipped"),
        ("unknown", "serving", None, "provider-skipped"),
        ("up", "unknown", None, "provider-skipped"),
    ],
)
def test_each_condition_gives_its_state(
    site: str, listener: str, probe: ModelsProbe | None, expected: str
) -> None:
    assert state(site, listener, probe) == expected


def test_only_an_up_route_is_probed() -> None:
    assert needs_probe("up", "serving") and needs_probe("degraded", "serving")
    for site, listener in [("up", "closed"), ("stopped", "closing"), ("unknown", "serving")]:
        assert not needs_probe(site, listener)  # type: ignore[arg-type]


def test_a_refusal_says_a_key_is_needed_and_why_ours_was_not_read() -> None:
    refused = ModelsProbe(401, None, "/v1/models answered HTTP 401", 2.0)
    _, reason = model_condition(
        "up", "", "serving", None, ADDRESS, refused, "GPU_MODEL_API_KEY_FILE: no such file"
    )
    assert "HTTP 401" in reason and "API key" in reason
    assert "GPU_MODEL_API_KEY_FILE" in reason


def _pool(bound: bool | None, state: str, live: tuple[bool, bool]) -> PoolStatus:
    backends = [
        PoolBackend(provider=name, profile="granite", routing_key="model-pool-chat", live=is_live)
        for name, is_live in zip(("alpha", "beta"), live, strict=True)
    ]
    preferred = next((b.provider for b in backends if b.live), None)
    return chat_pool(backends, strategy="priority", bound=bound, state=state, preferred=preferred)


@pytest.mark.parametrize(
    ("pool", "probe", "expected"),
    [
        (_pool(True, "serving", (True, True)), LISTED, "serving"),
        (_pool(True, "degraded", (False, True)), LISTED, "serving"),
        (_pool(True, "degraded", (False, True)), NO_MODEL, "route-up-no-model"),
        (_pool(False, "serving", (True, True)), None, "route-down"),
        (_pool(True, "down", (False, False)), None, "provider-stopped"),
        (_pool(None, "unknown", (True, True)), None, "provider-skipped"),
    ],
)
def test_a_pool_row_reads_its_port_and_the_pools_own_backend_judgement(
    pool: PoolStatus, probe: ModelsProbe | None, expected: str
) -> None:
    found, _ = pool_model_condition(pool, "http://127.0.0.1:9100", probe)
    assert found == expected


def test_a_pool_is_probed_only_when_its_port_accepts_and_a_backend_may_be_live() -> None:
    assert pool_needs_probe(_pool(True, "degraded", (False, True)))
    assert pool_needs_probe(_pool(True, "unknown", (True, True)))
    assert not pool_needs_probe(_pool(False, "serving", (True, True)))
    assert not pool_needs_probe(_pool(True, "down", (False, False)))
    _, why = pool_model_condition(_pool(True, "down", (False, False)), "http://x:1", None)
    assert "no backend of pool chat is live" in why


def test_a_pool_whose_port_closed_a_request_while_a_member_serves_is_serving_and_says_why() -> None:
    """Issue 48: for the minute a router holds a stopped member, some connections through the
    pool's port close unanswered; the pool is not ``route-up-no-model`` while a member
    serves through its own route (exports written then keep it)."""
    reset = ModelsProbe(None, None, "Server disconnected without sending a response", 2.0)
    pool = _pool(True, "degraded", (False, True))
    found, why = pool_model_condition(pool, "http://127.0.0.1:9100", reset, None, ["b"])
    assert found == "serving"
    assert "b serve(s) the pool" in why and "Server disconnected" in why
    assert "63 s" in why
    # no member serves: the pool's port is what there is
    found, _ = pool_model_condition(pool, "http://127.0.0.1:9100", reset, None, [])
    assert found == "route-up-no-model"
    # an HTTP answer without a model is the server's, whoever else serves
    found, _ = pool_model_condition(pool, "http://127.0.0.1:9100", NO_MODEL, None, ["b"])
    assert found == "route-up-no-model"
