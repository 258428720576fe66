"""``python -m skupper_sandbox.model_server``: a small OpenAI-compatible model API.

It stands in for a GPU model container on a provider host: ``GET /health``,
``GET /v1/models`` and ``POST /v1/chat/completions`` (JSON, or SSE with ``"stream": true``)
on ``$HOST:$PORT``, serving ``$MODEL_ID``. Replies are deterministic: they echo the last
user message, so a test can tell its own answer from another's.

Two options make it a server as people run them (docs/sandbox.md, "Model servers"):

- ``--api-key KEY`` / ``--api-key-file FILE``: every ``/v1`` route requires
  ``Authorization: Bearer KEY`` and answers 401 ``{"error": "Unauthorized"}`` without it,
  while ``/health`` stays open, as vLLM's ``--api-key`` does;
- ``--no-health``: no ``/health`` route (404), as Ollama and LM Studio serve only their
  own and the OpenAI routes.

``--engine`` (default ``$SKMCP_MODEL_ENGINE``, else ``openai``) makes it answer as vLLM,
llama.cpp's server or Ollama do, in the states a test asks for through the control file
``$SKMCP_MODEL_CONTROL`` (``engines``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import socket
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skupper_sandbox import engines, hostenv

MAX_BODY = 4 * 1024 * 1024
#: How often a loading vLLM reads its control, to see whether its load has ended.
LOAD_POLL = 0.2
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Payload Too Large",
    503: "Service Unavailable",
}


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class BadRequest(Exception):
    """The request cannot be answered; ``status`` is the HTTP status to send."""

    def __init__(self, status: int, message: str, code: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def reply_text(messages: Any) -> str:
    """The model's deterministic answer: it echoes the last user message."""
    last = ""
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "user":
                last = _content_text(message.get("content"))
    return f"You said: {last}" if last else "Hello! How can I help you today?"


def completion(model_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """A ``chat.completion`` object for a request body."""
    text = reply_text(body.get("messages"))
    prompt_tokens = _tokens(body.get("messages"))
    completion_tokens = len(text.split())
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_id,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def completion_chunks(model_id: str, body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` events of a streamed answer (before ``[DONE]``)."""
    full = completion(model_id, body)
    text = full["choices"][0]["message"]["content"]
    base = {
        "id": full["id"],
        "object": "chat.completion.chunk",
        "created": full["created"],
        "model": model_id,
    }

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    words = text.split(" ")
    events = [chunk({"role": "assistant", "content": ""}, None)]
    events += [chunk({"content": w if i == 0 else " " + w}, None) for i, w in enumerate(words)]
    events.append(chunk({}, "stop"))
    return events


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # the OpenAI "content parts" form
        return " ".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return ""


def _tokens(messages: Any) -> int:
    if not isinstance(messages, list):
        return 0
    return sum(
        len(_content_text(m.get("content")).split()) + 3 for m in messages if isinstance(m, dict)
    )


class ModelServer:
    """Serves one model id over HTTP/1.1 (one request per connection); with ``api_key``
    the ``/v1`` routes require it as a bearer token, with ``health`` false there is no
    ``/health``."""

    def __init__(
        self,
        model_id: str,
        api_key: str | None = None,
        health: bool = True,
        engine: str = engines.OPENAI,
        control: str | None = None,
        kind: str = engines.CHAT,
    ) -> None:
        self.model_id = model_id
        self.kind = kind
        self.api_key = api_key
        self.health = health
        self.engine = engines.check(engine)
        self.control_path = control
        self.started = time.monotonic()

    def control(self) -> engines.Control:
        """What the test asks for now (the defaults when its file cannot be read)."""
        try:
            return engines.read_control(self.control_path)
        except (OSError, ValueError) as exc:
            print(f"model server: control file not read: {exc}", file=sys.stderr, flush=True)
            return engines.Control()

    def loading(self) -> bool:
        """Whether the model is still loading: ``load_seconds`` after the start, as the
        control says now (a test ends a held load by writing a shorter one)."""
        return time.monotonic() - self.started < self.control().load_seconds

    def authorized(self, request: Request) -> bool:
        """vLLM's rule: the scheme is ``Bearer`` in any case, the token the key exactly."""
        if self.api_key is None:
            return True
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(
            token.encode(), self.api_key.encode()
        )

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                request = await _read_request(reader)
            except BadRequest as exc:
                await _send_json(writer, exc.status, _error(str(exc), exc.code))
                return
            if request is None:
                return
            await self._route(request, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _refused(self, path: str, request: Request) -> engines.Answer | None:
        """The key check's refusal, as the engine words it (None: let it through)."""
        if self.engine == engines.LLAMACPP:
            if path in engines.LLAMACPP_PUBLIC or self.authorized(request):
                return None
            return engines.llamacpp_error(401, "Invalid API Key", "authentication_error")
        if path.startswith("/v1") and not self.authorized(request):
            return engines.Answer.json(401, {"error": "Unauthorized"})
        return None

    async def _route(self, request: Request, writer: asyncio.StreamWriter) -> None:
        path = request.path.split("?", 1)[0].rstrip("/") or "/"
        loading = self.loading()
        if loading and self.engine == engines.LLAMACPP:  # before the key check, as there
            await _send(writer, engines.LOADING)
            return
        refused = self._refused(path, request)
        if refused is not None:
            await _send(writer, refused)
            return
        control = self.control()
        own = engines.answer(
            self.engine, request.method, path, self.model_id, control, loading=loading
        )
        off = engines.off_kind(self.engine, self.kind, request.method, path)
        if own is not None:
            await _send(writer, own)
        elif off is not None:
            await _send(writer, off)
        elif path == "/v1/embeddings" and request.method == "POST":
            await _send(writer, engines.embeddings_answer(self.model_id, _json_body(request)))
        elif self.engine == engines.VLLM and path in ("/sleep", "/wake_up"):
            await self._sleep(path == "/sleep", request, writer)
        elif path == "/health" and self.health:
            await _send_json(writer, 200, {"status": "ok"})
        elif path == "/v1/models" and request.method == "GET":
            owners = {engines.OLLAMA: "library", engines.VLLM: "vllm", engines.LLAMACPP: "llamacpp"}
            owner = owners.get(self.engine, "sandbox")
            model = {"id": self.model_id, "object": "model", "owned_by": owner, "created": 0}
            await _send_json(writer, 200, {"object": "list", "data": [model]})
        elif path == "/v1/chat/completions" and request.method == "POST":
            await self._chat(request, writer)
        elif path in {"/v1/models", "/v1/chat/completions"}:
            message = f"{request.method} is not allowed on {path}"
            await _send_json(writer, 405, _error(message, "method_not_allowed"))
        else:
            await _send_json(writer, 404, _error(f"no route for {path}", "not_found"))

    async def _sleep(self, sleep: bool, request: Request, writer: asyncio.StreamWriter) -> None:
        """vLLM's ``POST /sleep`` and ``POST /wake_up`` (sleep mode): the control file
        records the new state, so ``/is_sleeping`` and a test read the same."""
        if request.method != "POST":
            await _send_json(writer, 405, {"detail": "Method Not Allowed"})
            return
        if self.control_path:
            try:
                engines.write_control(Path(self.control_path), sleeping=sleep)
            except (OSError, ValueError) as exc:
                await _send_json(writer, 500, {"detail": f"sleep state not kept: {exc}"})
                return
        await _send_json(writer, 200, {"status": "sleeping" if sleep else "awake"})

    async def _chat(self, request: Request, writer: asyncio.StreamWriter) -> None:
        try:
            body = json.loads(request.body)
        except (ValueError, UnicodeDecodeError) as exc:
            await _send_json(writer, 400, _error(f"request body is not valid JSON: {exc}"))
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            await _send_json(writer, 400, _error("'messages' must be a list of messages"))
            return
        if not body.get("stream"):
            await _send_json(writer, 200, completion(self.model_id, body))
            return
        writer.write(_head(200, "text/event-stream", None, extra={"Cache-Control": "no-cache"}))
        for event in completion_chunks(self.model_id, body):
            writer.write(f"data: {json.dumps(event)}\n\n".encode())
            await writer.drain()
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()


def _json_body(request: Request) -> Any:
    """The request's JSON body, or None when it is not JSON."""
    try:
        return json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        return None


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    except asyncio.LimitOverrunError as exc:
        raise BadRequest(400, "request header is too large") from exc
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise BadRequest(400, "malformed request line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    body = b""
    if "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError as exc:
            raise BadRequest(400, "bad Content-Length") from exc
        if length > MAX_BODY:
            raise BadRequest(413, f"request body is larger than {MAX_BODY} bytes")
        body = await reader.readexactly(length)
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    return Request(parts[0].upper(), parts[1], headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readline()
        try:
            size = int(size_line.split(b";")[0].strip(), 16)
        except ValueError as exc:
            raise BadRequest(400, "bad chunk size") from exc
        if size == 0:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            return bytes(body)
        if len(body) + size > MAX_BODY:
            raise BadRequest(413, f"request body is larger than {MAX_BODY} bytes")
        body += await reader.readexactly(size)
        await reader.readline()


def _error(message: str, code: str = "invalid_request_error") -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    }


def _head(
    status: int, content_type: str, length: int | None, extra: Mapping[str, str] | None = None
) -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}", f"Content-Type: {content_type}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _send(writer: asyncio.StreamWriter, answer: engines.Answer) -> None:
    writer.write(_head(answer.status, answer.content_type, len(answer.body)) + answer.body)
    await writer.drain()


async def _send_json(writer: asyncio.StreamWriter, status: int, body: Any) -> None:
    data = json.dumps(body).encode()
    writer.write(_head(status, "application/json", len(data)) + data)
    await writer.drain()


def _bind_host(env: Mapping[str, str]) -> str:
    host = env.get("HOST", "0.0.0.0")
    try:
        return hostenv.translate(host, hostenv.current_host(env))
    except hostenv.NotOnSandboxHost:
        return host


def _bound_socket(host: str, port: int) -> socket.socket:
    """The port bound and not listening: vLLM binds before it loads its model and listens
    after, so meanwhile a connection is refused (``setup_server``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


async def serve(host: str, port: int, model: ModelServer) -> None:
    """Serve until the process is killed."""
    if model.engine == engines.VLLM and model.loading():
        sock = _bound_socket(host, port)
        print(f"vllm: loading {model.model_id}", flush=True)
        # the load's end is a file another process writes: no event to wait on
        while model.loading():  # noqa: ASYNC110
            await asyncio.sleep(LOAD_POLL)
        server = await asyncio.start_server(model.handle, sock=sock)
    else:
        server = await asyncio.start_server(model.handle, host, port)
    needs = "; requires a bearer key" if model.api_key is not None else ""
    health = "" if model.health else "; no /health"
    print(
        f"model server ({model.engine}) for {model.model_id} listening on {host}:{port}"
        f"{needs}{health}",
        flush=True,
    )
    async with server:
        await server.serve_forever()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m skupper_sandbox.model_server",
        description="An OpenAI-compatible model API on $HOST:$PORT serving $MODEL_ID.",
    )
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument("--api-key", metavar="KEY", help="require KEY as bearer on /v1 routes")
    keys.add_argument(
        "--api-key-file", metavar="FILE", help="require the key in FILE (stripped) as bearer"
    )
    parser.add_argument("--no-health", action="store_true", help="serve no /health route")
    parser.add_argument(
        "--engine",
        choices=engines.ENGINES,
        default=os.environ.get(engines.ENGINE_VAR) or engines.OPENAI,
        help="answer as this engine does (default $SKMCP_MODEL_ENGINE, else openai)",
    )
    parser.add_argument(
        "--kind",
        choices=engines.KINDS,
        default=os.environ.get(engines.KIND_VAR) or engines.CHAT,
        help="serve chat completions or embeddings only (default $SKMCP_MODEL_KIND, else chat)",
    )
    return parser


def _api_key(args: argparse.Namespace) -> str | None:
    if args.api_key_file is None:
        return str(args.api_key) if args.api_key is not None else None
    with open(args.api_key_file, encoding="utf-8") as file:
        key = file.read(4096).strip()
    if not key:
        raise ValueError(f"{args.api_key_file} holds no key")
    return key


def main(argv: list[str] | None = None) -> int:
    env = os.environ
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    try:
        port = int(env.get("PORT", "8000"))
    except ValueError:
        print(f"PORT must be a number, not {env.get('PORT')!r}", file=sys.stderr)
        return 2
    try:
        api_key = _api_key(args)
    except (OSError, ValueError) as exc:
        print(f"cannot read the API key: {exc}", file=sys.stderr)
        return 2
    host = _bind_host(env)
    if args.engine not in engines.ENGINES:
        print(f"unknown engine {args.engine!r}", file=sys.stderr)
        return 2
    model = ModelServer(
        env.get("MODEL_ID", "sandbox-model"),
        api_key,
        not args.no_health,
        args.engine,
        env.get(engines.CONTROL_VAR) or None,
        args.kind,
    )
    try:
        asyncio.run(serve(host, port, model))
    except OSError as exc:
        print(f"cannot listen on {host}:{port}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
