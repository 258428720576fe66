"""What a model engine says of its own readiness and load, parsed from its answers: vLLM's
``/metrics`` and ``/is_sleeping``, llama.cpp's server's ``/health`` (503 ``Loading
model``), ``/props`` and ``/metrics``, Ollama's ``/api/ps``; and which engine answered,
from its ``/v1/models`` list (``owned_by``). Pure: no I/O.

Every answer is the host's text: a metrics page is read a line at a time, only the lines
of the names asked for, within ``METRICS_MAX_LINES``; a value that is not a finite number
>= 0 is not taken. A figure the engine did not give is None, never 0. A JSON answer that
is not the engine's shape raises ``EngineAnswerError`` (unknown, not empty).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import Unparsed
from ..safe_text import safe_text

Engine = Literal["vllm", "llama.cpp", "ollama", "openai"]

#: The most lines of a metrics page that are looked at (vLLM's is a few hundred).
METRICS_MAX_LINES = 20_000
#: The most loaded models an Ollama ``/api/ps`` answer is read for.
MAX_LOADED = 32

VLLM_RUNNING = "vllm:num_requests_running"
VLLM_WAITING = "vllm:num_requests_waiting"
VLLM_KV = "vllm:kv_cache_usage_perc"
VLLM_KV_OLD = "vllm:gpu_cache_usage_perc"
LLAMACPP_RUNNING = "llamacpp:requests_processing"
LLAMACPP_WAITING = "llamacpp:requests_deferred"


#: An engine's answer is not of the shape its engine gives (a parse of host text).
EngineAnswerError = Unparsed


@dataclass(frozen=True)
class EngineLoad:
    """Requests running and waiting, and the KV cache's use (0-1), as the engine tells them
    (None: it did not)."""

    running: int | None = None
    waiting: int | None = None
    kv_cache_used: float | None = None


@dataclass(frozen=True)
class LoadedModel:
    """A model an engine holds in memory, and the share of it in VRAM (None: not told)."""

    name: str
    vram_share: float | None


def engine_of(models_answer: Any, server_header: str | None = None) -> Engine:
    """The engine behind a ``/v1/models`` answer: vLLM's cards are ``owned_by: vllm``,
    llama.cpp's ``llamacpp`` (and its ``Server: llama.cpp`` header), Ollama's ``library``
    or the model's namespace with ``object: model`` and no ``root``; anything else is
    another OpenAI-compatible server."""
    if server_header and server_header.strip().lower().startswith("llama.cpp"):
        return "llama.cpp"
    owners = set()
    if isinstance(models_answer, Mapping) and isinstance(models_answer.get("data"), list):
        for card in models_answer["data"][:100]:
            if isinstance(card, Mapping) and isinstance(card.get("owned_by"), str):
                owners.add(card["owned_by"].strip().lower())
    if "vllm" in owners:
        return "vllm"
    if "llamacpp" in owners:
        return "llama.cpp"
    if "library" in owners or "ollama" in owners:
        return "ollama"
    return "openai"


def metric_values(text: str, names: Iterable[str]) -> dict[str, float]:
    """Each of ``names``' value on a Prometheus text page, summed over its label sets (vLLM
    gives one series per engine of a data-parallel server); a name absent is left out."""
    wanted = set(names)
    found: dict[str, float] = {}
    for count, line in enumerate(text.splitlines()):
        if count >= METRICS_MAX_LINES:
            break
        if not line or line[0] == "#":
            continue
        name_end = min((i for i in (line.find("{"), line.find(" ")) if i >= 0), default=-1)
        if name_end <= 0 or line[:name_end] not in wanted:
            continue
        value = _sample_value(line)
        if value is not None:
            found[line[:name_end]] = found.get(line[:name_end], 0.0) + value
    return found


def _sample_value(line: str) -> float | None:
    """The value of a sample line (after its labels; a timestamp may follow)."""
    rest = line[line.rfind("}") + 1 :] if "}" in line else line.split(" ", 1)[-1]
    parts = rest.split()
    if not parts:
        return None
    try:
        value = float(parts[0])
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _count(value: float | None) -> int | None:
    return None if value is None else round(value)


def _share(value: float | None) -> float | None:
    return None if value is None else round(min(value, 1.0), 4)


def vllm_load(text: str) -> EngineLoad:
    """vLLM's scheduler gauges (``kv_cache_usage_perc``, or ``gpu_cache_usage_perc`` of
    releases before 0.10)."""
    values = metric_values(text, (VLLM_RUNNING, VLLM_WAITING, VLLM_KV, VLLM_KV_OLD))
    kv = values.get(VLLM_KV, values.get(VLLM_KV_OLD))
    return EngineLoad(
        _count(values.get(VLLM_RUNNING)), _count(values.get(VLLM_WAITING)), _share(kv)
    )


def llamacpp_load(text: str) -> EngineLoad:
    """llama.cpp's ``requests_processing`` and ``requests_deferred`` (it has no KV gauge)."""
    values = metric_values(text, (LLAMACPP_RUNNING, LLAMACPP_WAITING))
    return EngineLoad(_count(values.get(LLAMACPP_RUNNING)), _count(values.get(LLAMACPP_WAITING)))


def sleeping_flag(answer: Any) -> bool:
    """``is_sleeping`` of vLLM's ``/is_sleeping`` or llama.cpp's ``/props``."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("is_sleeping"), bool):
        raise Unparsed("the answer has no is_sleeping true or false")
    return bool(answer["is_sleeping"])


def loading_words(status: int | None, answer: Any) -> str | None:
    """llama.cpp's words while it loads: a 503 whose error message is ``Loading model``
    (None for any other answer)."""
    if status != 503 or not isinstance(answer, Mapping):
        return None
    error = answer.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    if isinstance(message, str) and "loading" in message.lower():
        return safe_text(message)[:200]
    return None


def ollama_loaded(answer: Any) -> list[LoadedModel]:
    """The models Ollama's ``/api/ps`` lists as loaded, each with ``size_vram`` / ``size``."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("models"), list):
        raise Unparsed("/api/ps answered no models list")
    loaded = []
    for entry in answer["models"][:MAX_LOADED]:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise Unparsed("/api/ps lists a model without a name")
        size, vram = entry.get("size"), entry.get("size_vram")
        share = None
        if isinstance(size, int) and isinstance(vram, int) and _whole(size) and _whole(vram):
            share = round(min(vram / size, 1.0), 4) if size > 0 else None
        loaded.append(LoadedModel(safe_text(entry["name"])[:200], share))
    return loaded


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
