"""The engines' own answers, parsed (issue 48): vLLM's and llama.cpp's ``/metrics``,
``/is_sleeping`` and ``/props``, llama.cpp's 503 while it loads, Ollama's ``/api/ps``; and
a served model's readiness decided from them. Recorded answers in each engine's shape;
the metrics page is hostile text like any other."""

from __future__ import annotations

import pytest

from pools import chat_pool
from skupper_mcp.engine.model_http import ModelsProbe
from skupper_mcp.engine.model_reading import EnginePages, decide
from skupper_mcp.engine.pools import pool_readings
from skupper_mcp.facts.engine_reading import (
    EngineAnswerError,
    EngineLoad,
    LoadedModel,
    engine_of,
    llamacpp_load,
    loading_words,
    metric_values,
    ollama_loaded,
    sleeping_flag,
    vllm_load,
)
from skupper_mcp.render import model_rows
from skupper_mcp.results import ModelReading, ModelRow, ModelsResult, PoolBackend, PoolStatus

# vLLM 0.11's page, cut: two engines of a data-parallel server, HELP and TYPE lines
VLLM_METRICS = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="granite"} 2.0
vllm:num_requests_running{engine="1",model_name="granite"} 1.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="granite"} 5.0
vllm:num_requests_waiting{engine="1",model_name="granite"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="granite"} 0.375
vllm:num_requests_running_extra{engine="0"} 99.0
"""
VLLM_OLD = 'vllm:gpu_cache_usage_perc{model_name="m"} 0.5\nvllm:num_requests_waiting 0\n'
LLAMACPP_METRICS = """\
# HELP llamacpp:requests_processing Number of requests processing
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 4
# HELP llamacpp:requests_deferred Number of requests deferred
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 8
"""


def test_vllm_gauges_are_summed_over_its_engines_and_an_older_release_is_read_too() -> None:
    assert vllm_load(VLLM_METRICS) == EngineLoad(running=3, waiting=8, kv_cache_used=0.375)
    assert vllm_load(VLLM_OLD) == EngineLoad(running=None, waiting=0, kv_cache_used=0.5)


def test_a_figure_the_engine_does_not_give_is_null_never_zero() -> None:
    assert vllm_load("") == EngineLoad(None, None, None)
    assert llamacpp_load(LLAMACPP_METRICS) == EngineLoad(running=4, waiting=8)
    assert llamacpp_load(LLAMACPP_METRICS).kv_cache_used is None


@pytest.mark.parametrize(
    "line",
    [
        "vllm:num_requests_waiting NaN",
        "vllm:num_requests_waiting +Inf",
        "vllm:num_requests_waiting -3",
        'vllm:num_requests_waiting{model_name="x"} not-a-number',
        "vllm:num_requests_waiting",
        "vllm:num_requests_waiting{" + "a" * 10_000,
    ],
)
def test_a_hostile_sample_is_not_taken(line: str) -> None:
    assert metric_values(line, ["vllm:num_requests_waiting"]) == {}


def test_a_page_past_its_line_bound_is_not_read_further() -> None:
    page = "junk\n" * 30_000 + "vllm:num_requests_waiting 7\n"
    assert metric_values(page, ["vllm:num_requests_waiting"]) == {}


def test_llamacpp_says_loading_model_in_a_503_and_nothing_else_is_loading() -> None:
    body = {"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}}
    assert loading_words(503, body) == "Loading model"
    assert loading_words(200, body) is None
    assert loading_words(503, {"error": "Service Unavailable"}) is None
    assert loading_words(503, None) is None


def test_sleeping_is_read_from_is_sleeping_and_a_shape_without_it_is_an_error() -> None:
    assert sleeping_flag({"is_sleeping": True}) is True
    assert sleeping_flag({"total_slots": 4, "is_sleeping": False}) is False
    with pytest.raises(EngineAnswerError):
        sleeping_flag({"is_sleeping": "yes"})


def test_ollama_lists_its_loaded_models_with_their_share_in_vram() -> None:
    answer = {
        "models": [
            {"name": "granite3.3:2b", "size": 2000, "size_vram": 1000},
            {"name": "nomic-embed-text:latest", "size": 300, "size_vram": 300},
            {"name": "odd", "size": 0, "size_vram": 0},
        ]
    }
    assert ollama_loaded(answer) == [
        LoadedModel("granite3.3:2b", 0.5),
        LoadedModel("nomic-embed-text:latest", 1.0),
        LoadedModel("odd", None),
    ]
    assert ollama_loaded({"models": []}) == []
    with pytest.raises(EngineAnswerError):
        ollama_loaded({"error": "no"})


@pytest.mark.parametrize(
    ("cards", "engine"),
    [
        ([{"id": "m", "owned_by": "vllm"}], "vllm"),
        ([{"id": "m", "owned_by": "llamacpp"}], "llama.cpp"),
        ([{"id": "m", "owned_by": "library"}], "ollama"),
        ([{"id": "m", "owned_by": "openai"}], "openai"),
        ([{"id": "m"}], "openai"),
    ],
)
def test_the_engine_is_recognised_from_its_model_list(cards: list[dict], engine: str) -> None:
    assert engine_of({"object": "list", "data": cards}) == engine


def _probe(
    ids: list[str] | None, engine: str | None = "vllm", status: int | None = 200
) -> ModelsProbe:
    return ModelsProbe(status, ids, None if ids is not None else "no answer", 1.0, engine)  # type: ignore[arg-type]


def test_a_queue_past_the_threshold_is_saturated_with_its_figure() -> None:
    pages = EnginePages(load=EngineLoad(running=2, waiting=8, kv_cache_used=0.9))
    reading = decide("serving", "ok", _probe(["m"]), pages, True, 4)
    assert (reading.state, reading.waiting, reading.engine) == ("saturated", 8, "vllm")
    assert decide("serving", "ok", _probe(["m"]), pages, True, 9).state == "ready"


def test_a_port_that_answers_nothing_while_its_container_runs_is_loading() -> None:
    probe = ModelsProbe(None, None, "no answer: the connection was closed", 3.0)
    assert decide("route-up-no-model", "no answer", probe, None, True, 4).state == "loading"
    assert decide("route-up-no-model", "no answer", probe, None, False, 4).state == "not-serving"


def test_llamacpps_words_make_it_loading_and_sleep_makes_it_sleeping() -> None:
    probe = ModelsProbe(503, None, "HTTP 503", 2.0, None, "Loading model")
    reading = decide("route-up-no-model", "HTTP 503", probe, None, True, 4)
    assert reading.state == "loading" and "Loading model" in reading.reason
    asleep = decide("serving", "ok", _probe(["m"], "llama.cpp"), EnginePages(True), True, 4)
    assert asleep.state == "sleeping"
    assert asleep.running is None and asleep.waiting is None  # not told: null


def test_ollama_with_nothing_loaded_is_sleeping_and_with_its_model_ready() -> None:
    none = decide("serving", "ok", _probe(["m"], "ollama"), EnginePages(loaded=[]), True, 4)
    assert none.state == "sleeping" and none.loaded_models == []
    some = EnginePages(loaded=[LoadedModel("m", 0.5)])
    ready = decide("serving", "ok", _probe(["m"], "ollama"), some, True, 4)
    assert ready.state == "ready"
    assert ready.loaded_models is not None and ready.loaded_models[0].vram_share == 0.5


def test_the_routes_own_states_are_kept() -> None:
    for state in ("route-down", "provider-stopped", "provider-skipped"):
        assert decide(state, "why", None, None, None, 4).state == state


def _row(
    host: str, reading: ModelReading, ids: list[str], pool: PoolStatus | None = None
) -> ModelRow:
    return ModelRow(
        model_ids=ids,
        host=host,
        profile="p",
        site=host,
        listener_port=9000,
        local_base_url="http://127.0.0.1:9000/v1",
        routing_key=host,
        state="serving",
        reason="ok",
        readiness=reading,
        pool=pool,
    )


def _pool() -> PoolStatus:
    backends = [
        PoolBackend(provider=h, profile="p", routing_key=h, live=True) for h in ("a", "b", "c")
    ]
    return chat_pool(backends, site="local", routing_key="chat")


def test_a_pool_prefers_its_least_loaded_ready_member_and_says_the_loading_one() -> None:
    members = {
        "a": _row("a", ModelReading(state="loading", reason="loading"), []),
        "b": _row("b", ModelReading(state="ready", waiting=3, reason="r"), ["m"]),
        "c": _row("c", ModelReading(state="ready", waiting=1, reason="r"), ["m"]),
    }
    row = pool_readings(
        _row("chat", ModelReading(state="ready", reason="x"), ["m"], _pool()), members
    )
    assert row.prefer == "c"
    assert [(m.host, m.readiness.state) for m in row.members] == [
        ("a", "loading"),
        ("b", "ready"),
        ("c", "ready"),
    ]
    assert row.readiness is not None and "a loading" in row.readiness.reason


def test_a_pool_whose_members_serve_different_ids_says_so_and_none_ready_is_no_preference() -> None:
    members = {
        "a": _row("a", ModelReading(state="sleeping", reason="s"), ["m1"]),
        "b": _row("b", ModelReading(state="loading", reason="l"), ["m2"]),
        "c": _row("c", ModelReading(state="loading", reason="l"), ["m2"]),
    }
    row = pool_readings(
        _row("chat", ModelReading(state="ready", reason="x"), ["m1"], _pool()), members
    )
    assert row.prefer is None
    assert row.readiness is not None and row.readiness.state == "loading"
    assert "different model ids" in row.readiness.reason


def test_a_loading_rows_reason_says_the_503_once_and_a_sleeping_one_keeps_the_routes_words() -> (
    None
):
    probe = ModelsProbe(
        503, None, "/v1/models answered HTTP 503: Loading model", 2.0, None, "Loading model"
    )
    route_words = (
        "the route is up, but the model server: /v1/models answered HTTP 503: Loading model"
    )
    loading = decide("route-up-no-model", route_words, probe, None, True, 4)
    row = _row("gpu", loading, []).model_copy(
        update={"state": "route-up-no-model", "reason": route_words}
    )
    [[*_, reason]] = model_rows(ModelsResult(rows=[row], summary=""))
    assert reason == loading.reason and reason.count("503") == 1
    asleep = decide("serving", "ok", _probe(["m"], "llama.cpp"), EnginePages(True), True, 4)
    [[*_, reason]] = model_rows(ModelsResult(rows=[_row("gpu", asleep, ["m"])], summary=""))
    assert reason == f"{asleep.reason}; ok"
