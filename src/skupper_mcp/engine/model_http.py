"""HTTP to a model API through this machine's listener for it: one bounded exchange, the
provider's API key as a bearer header, and the ``/v1/models`` probe that the models
catalog, test_model, resolve_profile and diagnose share.

Every exchange has a whole-exchange deadline and a bound on the bytes it reads. The key is
read from ``<PREFIX>_MODEL_API_KEY_FILE`` (``model_keys``, which registers it with the
redactor) and goes only into the ``Authorization`` header of a request to the listener:
never into a result, a message or a log line.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from dataclasses import dataclass
from typing import Any

from .. import host_json
from ..errors import CheckFailed, ConfigError, Kind, status_kind
from ..facts.engine_reading import Engine, engine_of, loading_words
from ..facts.model_endpoint import MODELS_MAX_BYTES, model_ids
from ..model_keys import read_model_api_key
from ..safe_text import safe_text
from ..topology import ModelEndpoint, ModelPool, Topology, cluster_listener_name
from .desired.leftovers import cluster_pool_name
from .runner import describe

#: The most one answer of the model API may hold: a model list or a 32-token completion
#: is a few KiB; an answer that never ends must not grow the process.
HTTP_MAX_BYTES = 1024 * 1024
#: How long the catalog's probe of one listener may take in all.
PROBE_TIMEOUT = 5.0


def base_url(host: str, port: int) -> str:
    """The listener's URL; an IPv6 address goes in brackets."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def local_base_url(topology: Topology, p: ModelEndpoint) -> str:
    """The OpenAI base URL of ``p``'s model on this machine."""
    return f"{base_url(topology.local.listener_host, p.local_port)}/v1"


def cluster_base_url(topology: Topology, p: ModelEndpoint) -> str | None:
    """The OpenAI base URL of ``p``'s model inside the cluster: its listener's Service DNS
    name (the Listener's host, ``desired.cluster.base_resources``); None without one."""
    kube = topology.kubernetes
    if kube is None or p.label not in kube.listeners:
        return None
    service = cluster_listener_name(p.label)
    return f"http://{service}.{kube.namespace}.svc:{kube.listeners[p.label]}/v1"


def pool_cluster_base_url(topology: Topology, pool: ModelPool) -> str | None:
    """The OpenAI base URL of a pool inside the cluster: its listener's Service DNS name
    (``desired.leftovers.cluster_pool_name``); None without ``_CRC_PORT``."""
    kube = topology.kubernetes
    if kube is None or pool.kube_port is None:
        return None
    return f"http://{cluster_pool_name(pool)}.{kube.namespace}.svc:{pool.kube_port}/v1"


def key_variable(p: ModelEndpoint) -> str:
    """The topology variable that names the provider's key file (what a finding names)."""
    return f"{p.prefix}_MODEL_API_KEY_FILE"


def key_env(p: ModelEndpoint) -> str | None:
    """The environment variable an exported client configuration reads the key from
    (``<PREFIX>_MODEL_API_KEY``); None when the provider declares no key."""
    return f"{p.prefix}_MODEL_API_KEY" if p.model_api_key_file is not None else None


@dataclass(frozen=True)
class ApiKey:
    """The provider's key (None: none declared, or it could not be read) and, when it
    could not be read, why (our words and the file's path, never the key)."""

    value: str | None = None
    problem: str | None = None

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.value}"} if self.value else {}


def api_key(p: ModelEndpoint) -> ApiKey:
    """The key of ``p`` as its topology declares it."""
    if p.model_api_key_file is None:
        return ApiKey()
    try:
        return ApiKey(read_model_api_key(p.model_api_key_file, key_variable(p)))
    except ConfigError as error:
        return ApiKey(problem=f"{key_variable(p)}: {error}")


async def exchange(
    http: Any,
    method: str,
    path: str,
    timeout: float,
    max_bytes: int = HTTP_MAX_BYTES,
    **kwargs: Any,
) -> tuple[int, bytes]:
    """One request and its whole answer: (status, body). httpx's timeouts are per phase
    (a body sent a byte a second never trips them), so the whole exchange has ``timeout``;
    the body is read as it comes and given up past ``max_bytes``. Either is ``CheckFailed``.

    The answer is asked for unencoded (``Accept-Encoding: identity``) and read raw: httpx
    would unpack a gzip answer a whole chunk at a time, so 1 MiB of gzip became 1 GiB before
    the bound was looked at. A server that compresses anyway is unpacked here within
    ``max_bytes`` (``_Unpacker``)."""
    kwargs["headers"] = {**(kwargs.get("headers") or {}), "Accept-Encoding": "identity"}
    try:
        async with asyncio.timeout(timeout):
            async with http.stream(method, path, **kwargs) as response:
                unpack = _Unpacker(response.headers.get("content-encoding", ""), path, max_bytes)
                body = bytearray()
                async for chunk in response.aiter_raw():
                    unpack.into(body, chunk)
                unpack.end(body)
                return response.status_code, bytes(body)
    except TimeoutError:
        raise CheckFailed(f"{path} did not answer in full within {timeout:g}s") from None


class _Unpacker:
    """The body of an answer in ``encoding`` (``identity``, ``gzip`` or ``deflate``), kept
    within ``max_bytes`` as it is unpacked: each chunk unpacks to at most the room left, so
    what a small chunk expands to is never held past the bound. Another encoding, or more
    than ``max_bytes`` sent or unpacked, is ``CheckFailed``."""

    def __init__(self, encoding: str, path: str, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.received = 0
        coding = encoding.strip().lower()
        if coding in ("", "identity"):
            self.unzip = None
        elif coding in ("gzip", "x-gzip", "deflate"):
            # gzip's header, or zlib's (deflate): 32 + MAX_WBITS takes either
            self.unzip = zlib.decompressobj(32 + zlib.MAX_WBITS)
        else:
            raise CheckFailed(
                f"{path} answered in the {safe_text(encoding)[:40]!r} encoding, which was not "
                "asked for (identity was)"
            )

    def _cut(self, what: str) -> CheckFailed:
        return CheckFailed(
            f"{self.path} answered more than {self.max_bytes // 1024} KiB{what}: cut off there"
        )

    def into(self, body: bytearray, chunk: bytes) -> None:
        self.received += len(chunk)
        if self.received > self.max_bytes:
            raise self._cut("")
        if self.unzip is None:
            body += chunk
            return
        data = chunk
        while data:
            try:
                body += self.unzip.decompress(data, self.max_bytes - len(body) + 1)
            except zlib.error as exc:
                raise CheckFailed(
                    f"{self.path} answered a body that does not unpack: {exc}"
                ) from None
            if len(body) > self.max_bytes:
                raise self._cut(" once unpacked")
            data = self.unzip.unconsumed_tail

    def end(self, body: bytearray) -> None:
        if self.unzip is not None:
            body += self.unzip.flush(self.max_bytes - len(body) + 1)
            if len(body) > self.max_bytes:
                raise self._cut(" once unpacked")


@dataclass(frozen=True)
class ModelsProbe:
    """What ``GET /v1/models`` through a listener answered: the HTTP status (None: no HTTP
    answer), the ids of its model list (None: no list), why there is no list, and how long
    the probe took."""

    status: int | None
    ids: list[str] | None
    error: str | None
    latency_ms: float
    #: The engine its list's cards name (``engine_reading.engine_of``; None: no list).
    engine: Engine | None = None
    #: llama.cpp's words while it loads its model (its 503's message), else None.
    loading: str | None = None

    @property
    def refused(self) -> bool:
        """The server answered and refused the request's credentials (401/403)."""
        return self.status is not None and status_kind(self.status) is Kind.REFUSED


async def probe_models(
    http: Any, key: ApiKey, url: str = "/v1/models", timeout: float = PROBE_TIMEOUT
) -> ModelsProbe:
    """``GET url`` (``/v1/models`` of the listener: a full URL, or a path of ``http``'s
    base URL) with the key, bounded by ``timeout`` and ``MODELS_MAX_BYTES``; never raises
    for what the far side does."""
    import httpx

    started = time.monotonic()

    def done(
        status: int | None,
        ids: list[str] | None,
        error: str | None,
        engine: Engine | None = None,
        loading: str | None = None,
    ) -> ModelsProbe:
        took = round((time.monotonic() - started) * 1000, 1)
        return ModelsProbe(status, ids, error, took, engine, loading)

    try:
        status, body = await exchange(
            http, "GET", url, timeout, MODELS_MAX_BYTES, headers=key.headers()
        )
    except (CheckFailed, httpx.HTTPError, OSError) as error:
        return done(None, None, describe(error))
    try:
        answer = host_json.loads(body)
    except ValueError:
        answer = None
    if status != 200:
        words = loading_words(status, answer)
        if words is not None:
            return done(status, None, f"/v1/models answered HTTP {status}: {words}", loading=words)
        return done(status, None, f"/v1/models answered HTTP {status}")
    ids = model_ids(answer) if answer is not None else None
    if ids is None:
        return done(status, None, "/v1/models did not answer an OpenAI model list")
    return done(status, ids, None, engine_of(answer))
