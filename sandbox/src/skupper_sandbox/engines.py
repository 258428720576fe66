"""The model engines the sandbox's model server answers as: vLLM, llama.cpp's server and
Ollama, each as its real source answers at a named release (docs/sandbox.md, section 11,
"Model servers"), beside the plain OpenAI-compatible server it has always been.

Pure: the names, the control a test writes (``Control``) and each engine's answer to a
path (``answer``). The server (``model_server``) does the I/O.

A world chooses a provider's engine with ``skupper-sandbox up --model-engine HOST=ENGINE``
(the container gets ``SKMCP_MODEL_ENGINE``); a test moves a server between states by
writing its control file (``SKMCP_MODEL_CONTROL``: ``skupper-sandbox model HOST ...`` or
``write_control``), which the server reads on each request (and, while it loads, each
``LOAD_POLL``):

- ``load_seconds``: the model takes that long to load after the server starts; a load
  in progress ends as soon as the control gives a shorter one (a test holds a load until
  it has read it, then ends it: a busy machine cannot outrun a fixed one). vLLM binds
  its port before it loads and listens only after (a connection is refused meanwhile);
  llama.cpp's server listens at once and answers every path 503 ``Loading model``;
  Ollama loads a model on its first request, so its server is never "loading";
- ``sleeping``: vLLM's sleep mode (``/is_sleeping`` true), llama.cpp's
  ``--sleep-idle-seconds`` (``/props`` ``is_sleeping`` true), Ollama's unloaded model (no
  longer in ``/api/ps``);
- ``running``, ``waiting``: the requests being processed and queued, as each engine's
  ``/metrics`` (and llama.cpp's ``/slots``) reports them;
- ``kv_cache_used`` (0-1): vLLM's ``kv_cache_usage_perc``; ``vllm_release`` ``old`` names it
  ``gpu_cache_usage_perc`` as releases before 0.10 do;
- ``vram_share`` (0-1): the share of an Ollama model in VRAM (``size_vram`` / ``size``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

OPENAI, VLLM, LLAMACPP, OLLAMA = "openai", "vllm", "llamacpp", "ollama"
ENGINES = (OPENAI, VLLM, LLAMACPP, OLLAMA)
ENGINE_VAR = "SKMCP_MODEL_ENGINE"
CONTROL_VAR = "SKMCP_MODEL_CONTROL"
CONTROL_MAX_BYTES = 4096
#: llama.cpp's server: ``--parallel`` slots (its default is 4 with a unified cache).
LLAMACPP_SLOTS = 4
#: An Ollama model's size in bytes (a 2B model at Q4_K_M, about 1.5 GiB).
OLLAMA_MODEL_SIZE = 1_610_612_736


def control_path(host_dir: Path) -> Path:
    """A provider's control file, in its host's directory of the world."""
    return host_dir / "model-control.json"


class EngineError(ValueError):
    """An engine name, or a control value, the sandbox does not know."""


def check(engine: str) -> str:
    if engine not in ENGINES:
        raise EngineError(f"unknown model engine {engine!r} (known: {', '.join(ENGINES)})")
    return engine


@dataclass(frozen=True)
class Control:
    """What a test asks the model server to be now (module docstring)."""

    load_seconds: float = 0.0
    sleeping: bool = False
    running: int = 0
    waiting: int = 0
    kv_cache_used: float = 0.0
    vram_share: float = 1.0
    vllm_release: str = "new"

    def to_json(self) -> str:
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)})


def parse_control(data: Mapping[str, Any]) -> Control:
    """A control from its JSON; an unknown field or a value of the wrong kind is an error."""
    known = {f.name: f for f in fields(Control)}
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name not in known:
            raise EngineError(f"unknown control {name!r} (known: {', '.join(known)})")
        default = getattr(Control(), name)
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise EngineError(f"{name} must be true or false")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise EngineError(f"{name} must be a whole number >= 0")
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise EngineError(f"{name} must be a number >= 0")
            value = float(value)
        elif not isinstance(value, str):
            raise EngineError(f"{name} must be a string")
        values[name] = value
    return replace(Control(), **values)


def read_control(path: str | None) -> Control:
    """The control file's state (the defaults where there is none yet)."""
    if not path:
        return Control()
    try:
        with open(path, "rb") as file:
            raw = file.read(CONTROL_MAX_BYTES + 1)
    except FileNotFoundError:
        return Control()
    if len(raw) > CONTROL_MAX_BYTES:
        raise EngineError(f"{path} holds more than {CONTROL_MAX_BYTES} bytes")
    data = json.loads(raw) if raw.strip() else {}
    if not isinstance(data, dict):
        raise EngineError(f"{path} holds no JSON object")
    return parse_control(data)


def write_control(path: Path, **values: Any) -> Control:
    """Merge ``values`` into the control file at ``path`` (atomically) and return it."""
    current = read_control(str(path))
    merged = parse_control({**json.loads(current.to_json()), **values})
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(merged.to_json())
    tmp.replace(path)
    return merged


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, content type and body."""

    status: int
    content_type: str
    body: bytes

    @classmethod
    def json(cls, status: int, value: Any) -> Answer:
        return cls(status, "application/json", json.dumps(value).encode())

    @classmethod
    def text(cls, status: int, value: str, content_type: str = "text/plain") -> Answer:
        return cls(status, content_type, value.encode())


def llamacpp_error(status: int, message: str, kind: str) -> Answer:
    """llama.cpp's error body (``tools/server/server-http.cpp``)."""
    return Answer.json(status, {"error": {"message": message, "type": kind, "code": status}})


LOADING = llamacpp_error(503, "Loading model", "unavailable_error")

#: What a model server serves (``SKMCP_MODEL_KIND``; ``--embeddings HOST``'s second server is
#: an embeddings one): chat completions, or embeddings only (vLLM ``--runner pooling``,
#: llama.cpp ``--embeddings``).
CHAT, EMBEDDINGS = "chat", "embeddings"
KINDS = (CHAT, EMBEDDINGS)
KIND_VAR = "SKMCP_MODEL_KIND"
#: The length of an embedding vector (granite-embedding-125m-english's hidden size).
EMBEDDING_SIZE = 768
#: FastAPI's answer for a path no route serves: what vLLM answers where it registered no
#: route (``build_app`` adds the chat and completion routes only for a generating model,
#: the pooling ones only for a pooling model).
FASTAPI_NOT_FOUND = Answer.json(404, {"detail": "Not Found"})


def off_kind(engine: str, kind: str, method: str, path: str) -> Answer | None:
    """A request the server's kind does not serve, answered as its engine does (None: the
    kind serves it, or it is another path). llama.cpp's server answers 501
    ``not_supported_error`` in its own words; vLLM (and the plain server) has no such route."""
    if method != "POST":
        return None
    if kind == EMBEDDINGS and path in ("/v1/chat/completions", "/v1/completions"):
        if engine == LLAMACPP:
            return llamacpp_error(
                501,
                "This server does not support completions. Start it without `--embeddings`",
                "not_supported_error",
            )
        return FASTAPI_NOT_FOUND
    if kind == CHAT and path == "/v1/embeddings":
        if engine == LLAMACPP:
            return llamacpp_error(
                501,
                "This server does not support embeddings. Start it with `--embeddings`",
                "not_supported_error",
            )
        return FASTAPI_NOT_FOUND
    return None


def embedding(text: str) -> list[float]:
    """A deterministic unit-free vector for ``text``: the same text, the same vector."""
    import hashlib

    seed = hashlib.sha256(text.encode()).digest()
    return [
        round((seed[i % len(seed)] - 128) / 128 * (1 + i % 7) / 7, 6) for i in range(EMBEDDING_SIZE)
    ]


def embeddings_answer(model_id: str, body: Any) -> Answer:
    """``POST /v1/embeddings`` of an embeddings server, in the OpenAI shape vLLM answers:
    ``object: list``, ``data`` one ``embedding`` object per input, ``usage``; a body without
    ``input`` (a string or a list of strings) is 400."""
    inputs = body.get("input") if isinstance(body, dict) else None
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs or not all(isinstance(i, str) for i in inputs):
        message = "'input' must be a string or a list of strings"
        return Answer.json(
            400, {"error": {"message": message, "type": "BadRequestError", "code": 400}}
        )
    tokens = sum(len(i.split()) for i in inputs)
    return Answer.json(
        200,
        {
            "id": f"embd-{int(time.time() * 1000):x}",
            "object": "list",
            "created": int(time.time()),
            "model": model_id,
            "data": [
                {"index": n, "object": "embedding", "embedding": embedding(text)}
                for n, text in enumerate(inputs)
            ],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0},
        },
    )


#: llama.cpp's paths its key check leaves open (``get_public_endpoints``).
LLAMACPP_PUBLIC = frozenset({"/health", "/v1/health", "/models", "/v1/models", "/"})


def _prometheus(prefix: str, items: list[tuple[str, str, str, float]], labels: str) -> str:
    lines = []
    for name, kind, help_text, value in items:
        lines += [
            f"# HELP {prefix}{name} {help_text}",
            f"# TYPE {prefix}{name} {kind}",
            f"{prefix}{name}{labels} {value}",
        ]
    return "\n".join(lines) + "\n"


def vllm_metrics(model_id: str, control: Control) -> str:
    """vLLM's ``/metrics`` gauges of its scheduler (``vllm/v1/metrics/loggers.py``): the
    labels are ``model_name`` and ``engine``; values are floats."""
    kv = "gpu_cache_usage_perc" if control.vllm_release == "old" else "kv_cache_usage_perc"
    labels = f'{{engine="0",model_name="{model_id}"}}'
    items = [
        (
            "num_requests_running",
            "gauge",
            "Number of requests in model execution batches.",
            float(control.running),
        ),
        (
            "num_requests_waiting",
            "gauge",
            "Number of requests waiting to be processed.",
            float(control.waiting),
        ),
        (kv, "gauge", "KV-cache usage. 1 means 100 percent usage.", control.kv_cache_used),
        ("num_preemptions_total", "counter", "Cumulative number of preemption.", 0.0),
    ]
    return _prometheus("vllm:", items, labels)


def llamacpp_metrics(control: Control) -> str:
    """llama.cpp's ``/metrics`` (``--metrics``): counters then gauges, no labels."""
    items = [
        ("prompt_tokens_total", "counter", "Number of prompt tokens processed.", 0.0),
        ("tokens_predicted_total", "counter", "Number of generation tokens processed.", 0.0),
        ("prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s", 0.0),
        ("predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s", 0.0),
        ("requests_processing", "gauge", "Number of requests processing", float(control.running)),
        ("requests_deferred", "gauge", "Number of requests deferred", float(control.waiting)),
    ]
    return _prometheus("llamacpp:", items, "")


def llamacpp_slots(control: Control) -> list[dict[str, Any]]:
    busy = min(control.running, LLAMACPP_SLOTS)
    return [
        {"id": i, "n_ctx": 4096, "speculative": False, "is_processing": i < busy}
        for i in range(LLAMACPP_SLOTS)
    ]


def llamacpp_props(model_id: str, control: Control) -> dict[str, Any]:
    return {
        "default_generation_settings": {"n_ctx": 4096, "params": {}},
        "total_slots": LLAMACPP_SLOTS,
        "model_alias": model_id,
        "model_path": f"/models/{model_id}.gguf",
        "modalities": {"vision": False, "audio": False},
        "endpoint_slots": True,
        "endpoint_props": True,
        "endpoint_metrics": True,
        "build_info": "b6500-sandbox",
        "is_sleeping": control.sleeping,
    }


def _ollama_model(model_id: str) -> dict[str, Any]:
    return {
        "name": model_id,
        "model": model_id,
        "size": OLLAMA_MODEL_SIZE,
        "digest": "0" * 64,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "granite",
            "families": ["granite"],
            "parameter_size": "2.5B",
            "quantization_level": "Q4_K_M",
        },
    }


def ollama_ps(model_id: str, control: Control, now: float) -> dict[str, Any]:
    """``GET /api/ps``: the loaded models (none once the model was unloaded), each with its
    ``size_vram`` (``server/routes.go`` ``PsHandler``, ``api/types.go``)."""
    if control.sleeping:
        return {"models": []}
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 300))
    model = {
        **_ollama_model(model_id),
        "expires_at": expires,
        "size_vram": int(OLLAMA_MODEL_SIZE * min(control.vram_share, 1.0)),
        "context_length": 4096,
    }
    return {"models": [model]}


def ollama_tags(model_id: str) -> dict[str, Any]:
    """``GET /api/tags``: the models pulled to the host, loaded or not."""
    return {"models": [{**_ollama_model(model_id), "modified_at": "2026-01-01T00:00:00Z"}]}


def answer(
    engine: str, method: str, path: str, model_id: str, control: Control, *, loading: bool
) -> Answer | None:
    """The engine's own answer to ``path`` (None: the common OpenAI routes answer it).
    ``loading``: the model is still loading (only llama.cpp's server answers then)."""
    if engine == LLAMACPP:
        return _llamacpp(method, path, model_id, control, loading)
    if engine == VLLM:
        return _vllm(method, path, model_id, control)
    if engine == OLLAMA:
        return _ollama(method, path, model_id, control)
    return None


def _vllm(method: str, path: str, model_id: str, control: Control) -> Answer | None:
    if path == "/health":
        return Answer(200, "application/json", b"")
    if path == "/metrics":
        return Answer.text(200, vllm_metrics(model_id, control), "text/plain; version=0.0.4")
    if path == "/is_sleeping":
        return Answer.json(200, {"is_sleeping": control.sleeping})
    return None


def _llamacpp(
    method: str, path: str, model_id: str, control: Control, loading: bool
) -> Answer | None:
    if loading:
        return LOADING
    if path in ("/health", "/v1/health"):
        return Answer.json(200, {"status": "ok"})
    if path == "/props":
        return Answer.json(200, llamacpp_props(model_id, control))
    if path == "/slots":
        return Answer.json(200, llamacpp_slots(control))
    if path == "/metrics":
        return Answer.text(200, llamacpp_metrics(control), "text/plain; version=0.0.4")
    return None


def _ollama(method: str, path: str, model_id: str, control: Control) -> Answer | None:
    if path == "/":
        return Answer.text(200, "Ollama is running")
    if path == "/api/ps":
        return Answer.json(200, ollama_ps(model_id, control, time.time()))
    if path == "/api/tags":
        return Answer.json(200, ollama_tags(model_id))
    if path == "/api/version":
        return Answer.json(200, {"version": "0.32.15"})
    if path == "/health":  # gin's own 404
        return Answer.text(404, "404 page not found")
    return None
