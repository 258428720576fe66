"""What a model endpoint serves (chat, embeddings or completions), decided once: from the
topology where ``<PREFIX>_MODEL_KIND`` declares it, else from what the server answers.

A model list does not say what a model does (vLLM's and llama.cpp's cards carry an id, an
owner and a context length), so undeclared, the ids decide where they name an embeddings
model (``granite-embedding-125m-english``, ``nomic-embed-text``, ``bge-m3``) and chat is
assumed otherwise. ``test_model`` learns more: an embeddings server refuses a chat request
in its engine's words (``refusal_words``), and then its ``/v1/embeddings`` is checked.

What the engines answer to a chat request on an embeddings model (docs/sandbox.md):

- vLLM ``--runner pooling`` (``--task embed`` before): newer releases register the chat
  routes only for a generating model (``build_app``: ``"generate" in supported_tasks``), so
  the route is absent: 404 ``{"detail":"Not Found"}``; older ones answer the route with the
  error object ``"The model does not support Chat Completions API"`` (type
  ``BadRequestError``, code 400) as the route's value, which FastAPI sends with HTTP 200.
- llama.cpp's server with ``--embeddings``: 501 ``{"error":{"code":501,"message":"This
  server does not support completions. Start it without `--embeddings`","type":
  "not_supported_error"}}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .. import host_json
from ..safe_text import safe_text
from ..vocabulary import KindFrom, ModelKind

#: An id that names an embeddings model: "embed" anywhere (granite-embedding, nomic-embed,
#: text-embedding-3, Qwen3-Embedding), or a family of embeddings models as a word of it.
_EMBEDDING_ID = re.compile(
    r"embed|(?:^|[/_.:-])(?:bge|e5|gte|minilm|mpnet)(?:[/_.:-]|$)", re.IGNORECASE
)
#: The most of a refusal's body read for its words.
REFUSAL_BYTES = 4096
#: What the engines say when a chat request reaches an embeddings server (module doc).
_REFUSALS = (
    ("does not support chat completions api", "vLLM serves a pooling model"),
    ("start it without `--embeddings`", "llama.cpp's server runs with --embeddings"),
    ("does not support completions", "the server serves no completions"),
)


@dataclass(frozen=True)
class KindReading:
    """A model endpoint's kind and where it was learnt (``how``: our words)."""

    kind: ModelKind
    source: KindFrom
    how: str


def kind_of(declared: ModelKind | None, model_ids: list[str]) -> KindReading:
    """The endpoint's kind: declared, else embeddings when an id names an embeddings model,
    else chat (assumed: what an OpenAI-compatible server serves most)."""
    if declared is not None:
        return KindReading(declared, "topology", "declared in the topology (MODEL_KIND)")
    named = next((i for i in model_ids if _EMBEDDING_ID.search(i)), None)
    if named is not None:
        return KindReading(
            "embeddings", "model id", f"its model id {safe_text(named)[:80]!r} names one"
        )
    return KindReading("chat", "default", "assumed: nothing declares or says otherwise")


def refusal_words(status: int, body: bytes) -> str | None:
    """The engine's words when it refused a chat request because it serves embeddings (our
    summary, then its message cut to 160 characters), or None when the answer is no such
    refusal. A 200 counts too: older vLLM sends its error object with HTTP 200."""
    text = body[:REFUSAL_BYTES].decode("utf-8", errors="replace")
    lowered = text.lower()
    for words, who in _REFUSALS:
        if words in lowered:
            return f"{who} (HTTP {status}: {safe_text(_message(text))[:160]!r})"
    return None


def _message(text: str) -> str:
    """The error message of an OpenAI-style error body, else the text itself."""
    try:
        document: Any = host_json.loads(text.encode())
    except ValueError:
        return text
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(document, dict) and isinstance(document.get("message"), str):
        return str(document["message"])
    return text


def embedding_vector(payload: Any) -> int:
    """The length of the first vector of an OpenAI ``/v1/embeddings`` answer (``data[0].
    embedding``, a list of numbers); ``ValueError`` for another shape or an empty vector."""
    data = payload.get("data") if isinstance(payload, dict) else None
    first = data[0] if isinstance(data, list) and data else None
    vector = first.get("embedding") if isinstance(first, dict) else None
    if not isinstance(vector, list) or not vector:
        raise ValueError(f"no embedding vector in the answer: {safe_text(str(payload))[:80]}")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector):
        raise ValueError("the embedding vector holds something other than numbers")
    return len(vector)


def completion_choice_text(payload: Any) -> str:
    """The first choice's text of an OpenAI ``/v1/completions`` answer; ``ValueError``
    for another shape or an empty text."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    text = first.get("text") if isinstance(first, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the completion has no text: {safe_text(str(payload))[:80]}")
    return text.strip()
