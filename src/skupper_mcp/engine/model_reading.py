"""Each served model's readiness and load, read through its route: one typed reading
(``models.ModelReading``) per row, decided here once, which ``models``, ``test_model``,
the Markdown resource and the VAN view show.

The engine is recognised from the ``/v1/models`` answer the row already has
(``ModelsProbe.engine``); then, only where the route answered, the engine's own pages are
asked through the same listener with the same key, each bounded in time and size
(``exchange``): vLLM's ``/metrics`` and ``/is_sleeping``, llama.cpp's ``/props`` and
``/metrics``, Ollama's ``/api/ps``. A page that does not answer leaves its figures null.

``decide`` is pure: the row's route state, the probe, whether the model container runs on
its host, what the engine's pages said and the topology's threshold give the state.
The keys of the reading are the row's listener (one endpoint of a provider): a provider
with several endpoints gets one reading per endpoint the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import host_json
from ..errors import CheckFailed
from ..facts.engine_reading import (
    EngineAnswerError,
    EngineLoad,
    LoadedModel,
    llamacpp_load,
    ollama_loaded,
    sleeping_flag,
    vllm_load,
)
from ..results import LoadedModelInfo, ModelReading, ModelState, ReadinessState
from .model_http import ApiKey, ModelsProbe, exchange

#: How long one engine page may take, and how much of it is read.
PAGE_TIMEOUT = 3.0
PAGE_MAX_BYTES = 512 * 1024


@dataclass(frozen=True)
class EnginePages:
    """What the engine's own pages said (None: not asked, or no answer)."""

    sleeping: bool | None = None
    load: EngineLoad = field(default_factory=EngineLoad)
    loaded: list[LoadedModel] | None = None
    notes: tuple[str, ...] = ()


async def _page(http: Any, url: str, key: ApiKey) -> tuple[int | None, bytes]:
    import httpx

    try:
        return await exchange(http, "GET", url, PAGE_TIMEOUT, PAGE_MAX_BYTES, headers=key.headers())
    except (CheckFailed, httpx.HTTPError, OSError):
        return None, b""


def _json(body: bytes) -> Any:
    try:
        return host_json.loads(body)
    except ValueError:
        return None


#: Where an engine says it sleeps, and the reader of its ``/metrics``: vLLM's
#: ``/is_sleeping``, llama.cpp's ``/props`` (``is_sleeping``).
_SLEEP_AND_LOAD: dict[str, tuple[str, Callable[[str], EngineLoad]]] = {
    "vllm": ("/is_sleeping", vllm_load),
    "llama.cpp": ("/props", llamacpp_load),
}


async def read_pages(http: Any, base: str, key: ApiKey, probe: ModelsProbe) -> EnginePages:
    """The engine's own pages under ``base`` (the listener's URL), asked at once."""
    engine = probe.engine
    if engine in _SLEEP_AND_LOAD:
        flag_path, load = _SLEEP_AND_LOAD[engine]
        (fs, flag), (ms, metrics) = await asyncio.gather(
            _page(http, f"{base}{flag_path}", key), _page(http, f"{base}/metrics", key)
        )
        return EnginePages(
            _flag(fs, flag),
            load(metrics.decode("utf-8", "replace")) if ms == 200 else EngineLoad(),
        )
    if engine == "ollama":
        status, body = await _page(http, f"{base}/api/ps", key)
        if status != 200:
            return EnginePages()
        try:
            return EnginePages(loaded=ollama_loaded(_json(body)))
        except EngineAnswerError as error:
            return EnginePages(notes=(f"/api/ps: {error}",))
    return EnginePages()


def _flag(status: int | None, body: bytes) -> bool | None:
    if status != 200:
        return None
    try:
        return sleeping_flag(_json(body))
    except EngineAnswerError:
        return None


#: The states in which a model answers but a call now waits: a summary names them.
NOT_READY_TO_CALL: tuple[ReadinessState, ...] = ("loading", "sleeping", "saturated")


def route_state(state: ModelState) -> ReadinessState | None:
    """The row's state when it keeps the model from being asked (its route's)."""
    if state == "route-down":
        return "route-down"
    if state == "provider-stopped":
        return "provider-stopped"
    if state == "provider-skipped":
        return "provider-skipped"
    return None


def decide(
    row_state: ModelState,
    row_reason: str | None,
    probe: ModelsProbe | None,
    pages: EnginePages | None,
    container_running: bool | None,
    saturated_waiting: int,
) -> ModelReading:
    """The reading's state and figures (module docstring)."""
    route = route_state(row_state)
    if route is not None:
        return ModelReading(state=route, reason=row_reason or route)
    if probe is None:
        return ModelReading(state="provider-skipped", reason="the route was not probed")
    if probe.loading is not None:
        return ModelReading(
            state="loading",
            engine="llama.cpp",
            reason=f"the engine answers HTTP 503 {probe.loading!r}: it is loading the model",
        )
    if probe.ids is None:
        return _no_list(probe, row_reason, container_running)
    if not probe.ids:
        return ModelReading(
            state="not-serving", engine=probe.engine, reason="the server lists no model"
        )
    return _answered(probe, probe.ids, pages or EnginePages(), saturated_waiting)


def _no_list(
    probe: ModelsProbe, row_reason: str | None, container_running: bool | None
) -> ModelReading:
    if probe.status is None and container_running:
        return ModelReading(
            state="loading",
            reason="the model's container runs but nothing answers on its port yet: the "
            "engine is still loading the model (vLLM listens only once it is loaded)",
        )
    return ModelReading(state="not-serving", reason=row_reason or (probe.error or "no answer"))


def _answered(
    probe: ModelsProbe, ids: list[str], pages: EnginePages, saturated_waiting: int
) -> ModelReading:
    load = pages.load
    loaded = (
        [LoadedModelInfo(name=m.name, vram_share=m.vram_share) for m in pages.loaded]
        if pages.loaded is not None
        else None
    )
    figures: dict[str, Any] = {
        "engine": probe.engine,
        "running": load.running,
        "waiting": load.waiting,
        "kv_cache_used": load.kv_cache_used,
        "loaded_models": loaded,
    }
    notes = "".join(f"; {n}" for n in pages.notes)
    if pages.sleeping:
        return ModelReading(
            state="sleeping",
            reason=f"{probe.engine} says is_sleeping: the model is not in memory; the next "
            f"request waits for it to wake{notes}",
            **figures,
        )
    if loaded is not None and not loaded:
        return ModelReading(
            state="sleeping",
            reason=f"ollama lists no loaded model in /api/ps: it loads {ids[0]!r} on "
            f"the next request, which waits for it{notes}",
            **figures,
        )
    if load.waiting is not None and load.waiting >= saturated_waiting:
        return ModelReading(
            state="saturated",
            reason=f"{load.waiting} request(s) waiting (MODEL_SATURATED_WAITING is "
            f"{saturated_waiting}): prefer another model server{notes}",
            **figures,
        )
    told = [
        f"{name} {value}"
        for name, value in (("running", load.running), ("waiting", load.waiting))
        if value is not None
    ]
    load_words = f" ({', '.join(told)})" if told else ""
    return ModelReading(
        state="ready",
        reason=f"{probe.engine} answers with {len(ids)} model(s){load_words}{notes}",
        **figures,
    )


def load_rank(reading: ModelReading) -> tuple[int, float]:
    """How busy a ready model is, for choosing the least loaded: waiting, then running,
    then the KV cache's use (a figure not told counts as neither busy nor idle: 0)."""
    return (
        (reading.waiting or 0),
        (reading.running or 0) + (reading.kv_cache_used or 0.0),
    )


async def read_listener(
    host: str, port: int, key: ApiKey, container_running: bool | None, saturated_waiting: int
) -> ModelReading:
    """One listener's reading on its own (``test_model``): its ``/v1/models``, then its
    engine's pages, decided as a catalog row's."""
    import httpx

    from .model_http import base_url, probe_models
    from .verify import tcp_probe

    address = base_url(host, port)
    if not await tcp_probe(host, port, 2.0):
        return decide("route-down", f"nothing accepts on {address}", None, None, None, 0)
    async with httpx.AsyncClient(trust_env=False) as http:
        probe = await probe_models(http, key, f"{address}/v1/models")
        pages = await read_pages(http, address, key, probe) if probe.ids else None
    state: ModelState = "serving" if probe.ids else "route-up-no-model"
    return decide(state, probe.error, probe, pages, container_running, saturated_waiting)
