"""``test_model``: six end-to-end checks of one provider's model route.

Through the local listener: the port accepts, the API is healthy (``/health`` answers 200,
else ``/v1/models`` decides: many servers have no ``/health``), ``/v1/models`` reports a
model id of the host's profiles, a chat completion comes back; every request carries the
provider's API key (``<PREFIX>_MODEL_API_KEY_FILE``) when it has one. On the provider: the
host answers over SSH and its model container runs (not checked for a provider that
declares none). The two groups run concurrently.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

from ... import host_json
from ...errors import CheckFailed, ConfigError, Kind, status_kind
from ...facts.model_endpoint import listed_ids, model_ids
from ...facts.model_kind import (
    KindReading,
    completion_choice_text,
    embedding_vector,
    kind_of,
    refusal_words,
)
from ...results import ModelCheck, TestModelResult
from ...sites.podman import PodmanSite
from ...topology import ModelEndpoint, Topology
from ...vocabulary import ModelKind
from ..model_actions import active_or_default
from ..model_http import HTTP_MAX_BYTES, ApiKey, api_key, base_url, exchange, key_variable
from ..model_reading import read_listener
from ..runner import SITE_ERRORS, describe
from ..scope import resolve_target, site_ref
from ..sitemap import SiteMap
from ..verify import tcp_probe

# base_url, exchange and HTTP_MAX_BYTES moved to model_http; they are still named here
__all__ = ["HTTP_MAX_BYTES", "HTTP_TIMEOUT", "base_url", "exchange", "route_checks", "run"]

HTTP_TIMEOUT = 20.0
#: What a server without a ``/health`` route answers there: not found, or not allowed.
NO_ROUTE = frozenset({404, 405, 501})
PROMPT = "Reply with one short sentence: is the network up?"
ROUTE_CHECKS = ("listener port", "API health", "model id", "chat completion")
#: The last route check, by what the endpoint serves.
SERVE_CHECK: dict[ModelKind, str] = {
    "chat": "chat completion",
    "embeddings": "embeddings",
    "completions": "completion",
}
#: What a route answers on /v1/chat/completions when it has no such route (newer vLLM with
#: a pooling model): the chat check then asks /v1/embeddings before it fails.
NO_CHAT_ROUTE = frozenset({404, 405})


async def _timed(name: str, check: Callable[[], Awaitable[str]]) -> ModelCheck:
    import httpx

    expected: tuple[type[BaseException], ...] = (*SITE_ERRORS, CheckFailed, httpx.HTTPError)
    started = time.monotonic()
    try:
        detail = await check()
        passed = True
    except expected as exc:
        detail, passed = describe(exc), False
    return ModelCheck(
        name=name, passed=passed, detail=detail, seconds=round(time.monotonic() - started, 3)
    )


def _json(answer: tuple[int, bytes], what: str, key: KeyUse | None = None) -> Any:
    status, body = answer
    if status != 200 and status_kind(status) is Kind.REFUSED and key is not None:
        raise CheckFailed(key.refused(what, status), status=status)
    if status != 200:
        raise CheckFailed(f"{what} answered HTTP {status}", status=status)
    try:
        return host_json.loads(body)
    except ValueError as exc:
        text = body[:80].decode(errors="replace")
        raise CheckFailed(f"{what} did not answer JSON: {text!r}") from exc


def served_model_ids(payload: Any) -> list[str]:
    """The model ids of an OpenAI ``/v1/models`` answer; ``CheckFailed`` for another shape."""
    ids = model_ids(payload)
    if ids is None:
        raise CheckFailed(f"/v1/models did not answer a model list: {str(payload)[:80]}")
    return ids


def completion_text(payload: Any) -> str:
    """The first choice's message of an OpenAI chat completion; ``CheckFailed`` otherwise."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or not choices:
        raise CheckFailed(f"the completion has no choices: {str(payload)[:80]}")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str) or not content.strip():
        raise CheckFailed("the completion was empty")
    return content.strip()


class KeyUse:
    """The key a route's requests carry, and what to say when the server refuses it."""

    def __init__(self, key: ApiKey, variable: str | None) -> None:
        self.key, self.variable = key, variable

    def refused(self, what: str, status: int) -> str:
        """Why ``what`` answered 401/403, naming the variable that gives the key."""
        variable = self.variable or "<PREFIX>_MODEL_API_KEY_FILE"
        if self.key.problem:
            return (
                f"{what} refused the request (HTTP {status}); the key was not read: "
                f"{self.key.problem}"
            )
        if self.key.value is None:
            return (
                f"{what} refused the request (HTTP {status}): the model server needs an API "
                f"key; name the file that holds it in {variable}"
            )
        return f"{what} refused the key from {variable} (HTTP {status}): not this server's key"


async def route_checks(
    host: str,
    port: int,
    wanted: list[str],
    timeout: float = HTTP_TIMEOUT,
    key: ApiKey | None = None,
    key_variable: str | None = None,
    profiles: Mapping[str, str] | None = None,
    kind: KindReading | None = None,
    kind_variable: str = "<PREFIX>_MODEL_KIND",
) -> list[ModelCheck]:
    """The four checks through a local listener: port, health, model id, and what the
    endpoint serves: a chat completion, an embedding vector or a text completion.

    ``wanted`` are the model ids that count; ``key`` goes as the bearer of every request
    (``key_variable`` names where it comes from, for a refusal); ``profiles`` (profile ->
    model id, the endpoint's) names the profile a server runs when it is not the one asked
    for. ``kind`` is the endpoint's
    declared kind; None: learnt from the served id (``kind_of``), and a chat request that an
    embeddings server refuses in its engine's words (or a route without chat) is followed by
    ``/v1/embeddings``, which then decides (``kind_variable`` is what would declare it).
    Every failure is that check's result, with the ones after it marked as skipped, never
    an exception.
    """
    use = KeyUse(key or ApiKey(), key_variable)
    import httpx

    async def accepts() -> str:
        if not await tcp_probe(host, port, 2.0):
            raise CheckFailed(f"nothing accepts connections on {host}:{port}")
        return f"{host}:{port} accepts connections"

    checks = [await _timed("listener port", accepts)]
    if not checks[-1].passed:
        return checks + [
            ModelCheck(name=n, passed=False, detail="skipped: the listener port is closed")
            for n in ROUTE_CHECKS[1:]
        ]
    async with httpx.AsyncClient(
        base_url=base_url(host, port), timeout=timeout, headers=use.key.headers(), trust_env=False
    ) as http:
        route = _Route(http, timeout, use)
        checks.append(await _timed("API health", route.health))
        checks.append(await _timed("model id", partial(route.models, wanted, profiles or {})))
        if not route.model_id:
            name = SERVE_CHECK[kind.kind] if kind else "chat completion"
            checks.append(ModelCheck(name=name, passed=False, detail="skipped: no model id"))
            return checks
        reading = kind or kind_of(None, [route.model_id])
        checks.append(await route.serves(reading, kind_variable))
    return checks


class _Route:
    """The HTTP checks of one route, in order: health, model id, what it serves."""

    def __init__(self, http: Any, timeout: float, use: KeyUse) -> None:
        self.http, self.timeout, self.use = http, timeout, use
        self.model_id = ""

    async def health(self) -> str:
        status, _ = await exchange(self.http, "GET", "/health", self.timeout)
        if status == 200:
            return "/health answered 200"
        if status not in NO_ROUTE:  # a /health that says no (503: still loading)
            raise CheckFailed(f"/health answered HTTP {status}")
        # no /health at all (Ollama, LM Studio): the OpenAI route decides
        answer = await exchange(self.http, "GET", "/v1/models", self.timeout)
        served_model_ids(_json(answer, "/v1/models", self.use))
        return f"/health answered HTTP {status}; /v1/models answers a model list"

    async def models(self, wanted: list[str], profiles: Mapping[str, str]) -> str:
        answer = await exchange(self.http, "GET", "/v1/models", self.timeout)
        ids = served_model_ids(_json(answer, "/v1/models", self.use))
        found = [i for i in ids if i in wanted]
        if not found:
            raise CheckFailed(other_profile(ids, wanted, profiles))
        self.model_id = found[0]
        return f"serves {self.model_id}"

    async def serves(self, kind: KindReading, kind_variable: str) -> ModelCheck:
        """The last check, by kind. Chat not declared: an embeddings server's refusal (or
        no chat route) sends the check to /v1/embeddings, which passes it as embeddings."""
        if kind.kind == "embeddings":
            return await _timed("embeddings", self.embedding)
        if kind.kind == "completions":
            return await _timed("completion", self.completion)
        refused: list[str] = []
        chat = await _timed("chat completion", partial(self.chat, refused))
        if chat.passed or kind.source == "topology" or not refused:
            return chat
        embedded = await _timed("embeddings", self.embedding)
        if not embedded.passed:
            return chat
        said = refused[0]
        return embedded.model_copy(
            update={
                "detail": f"{embedded.detail}; an embeddings server: the chat request was "
                f"refused ({said}); {kind_variable}=embeddings declares it"
            }
        )

    async def chat(self, refused: list[str]) -> str:
        body = {
            "model": self.model_id,
            "messages": [{"role": "user", "content": PROMPT}],
            "max_tokens": 32,
            "temperature": 0,
        }
        status, data = await exchange(
            self.http, "POST", "/v1/chat/completions", self.timeout, json=body
        )
        words = refusal_words(status, data)
        if words is not None:
            refused.append(words)
            raise CheckFailed(f"the chat API refused: {words}", status=status)
        if status in NO_CHAT_ROUTE:  # no such route: perhaps embeddings only (newer vLLM)
            refused.append(f"no chat route, HTTP {status}")
        answer = _json((status, data), "the chat API", self.use)
        return f"answered: {completion_text(answer)[:80]}"

    async def embedding(self) -> str:
        body = {"model": self.model_id, "input": PROMPT}
        reply = await exchange(self.http, "POST", "/v1/embeddings", self.timeout, json=body)
        answer = _json(reply, "the embeddings API", self.use)
        try:
            size = embedding_vector(answer)
        except ValueError as error:
            raise CheckFailed(str(error)) from None
        return f"answered a vector of {size} numbers"

    async def completion(self) -> str:
        body = {"model": self.model_id, "prompt": PROMPT, "max_tokens": 32, "temperature": 0}
        reply = await exchange(self.http, "POST", "/v1/completions", self.timeout, json=body)
        answer = _json(reply, "the completions API", self.use)
        try:
            return f"answered: {completion_choice_text(answer)[:80]}"
        except ValueError as error:
            raise CheckFailed(str(error)) from None


async def run(sites: SiteMap, target_query: str) -> TestModelResult:
    """The six checks of one provider's model route (a pool's: ``pool_checks``)."""
    pool = sites.topology.pool(target_query.strip())
    if pool is not None:
        from . import pool_checks  # it builds on this module's route checks

        return await pool_checks.run(sites.topology, pool)
    target = resolve_target(sites.topology, target_query)
    if target.host is None or target.host not in {p.name for p in sites.topology.providers}:
        names = [p.name for p in sites.topology.providers]
        raise ConfigError(
            f"test_model needs a provider host or profile, not {target_query!r}: "
            f"use one of {', '.join(names)}, a profile or a pool name"
        )
    host = sites.provider(target.host)
    p = sites.topology.model_endpoint(target.endpoint) if target.endpoint else host.endpoints[0]
    if p is None or (host.multi_endpoint and target.endpoint is None):
        from .resolve import several_endpoints

        raise several_endpoints(host, "test_model")
    profile = target.profile
    key = api_key(p)  # read once: the route's checks and the readiness send the same key
    route, remote = await asyncio.gather(_route(sites.topology, p, profile, key), _remote(sites, p))
    checks = [*route, *remote]
    if profile is None:
        # the model id check's keyed read through the listener: the served.py rule
        served = next(
            (c.detail.split("serves ")[-1] for c in checks if c.name == "model id" and c.passed),
            None,
        )
        profile, _ = active_or_default(sites.topology, p.label, [served] if served else None)
    container = next((c for c in checks if c.name == "remote container running"), None)
    reading = await read_listener(
        sites.topology.local.listener_host,
        p.local_port,
        key,
        container.passed if container is not None else None,
        sites.topology.saturated_waiting,
    )
    return TestModelResult(
        target=target_query,
        host=p.host,
        endpoint=p.label if p.name else None,
        profile=profile,
        checks=checks,
        passed=sum(c.passed for c in checks),
        total=len(checks),
        readiness=reading,
    )


def other_profile(ids: list[str], wanted: list[str], profiles: Mapping[str, str]) -> str:
    """Why the model id check failed: the ids served and those asked for, and, when the
    server runs another profile of the endpoint (``profiles``: profile -> model id), which
    one, and what to do (start the asked profile, or test the running one)."""
    served = f"served {listed_ids(ids)}, expected one of {wanted}"
    asked = [name for name, model in profiles.items() if model in wanted]
    running = [name for name, model in profiles.items() if model in ids and name not in asked]
    if len(asked) != 1 or not running:
        return served
    return (
        f"{served}: the server runs profile {running[0]}, not {asked[0]}; start {asked[0]} "
        f"with hosted-model-ctl, or test {running[0]}"
    )


async def _route(
    topology: Topology, p: ModelEndpoint, profile: str | None, key: ApiKey
) -> list[ModelCheck]:
    wanted = [p.profiles[profile]] if profile else list(p.profiles.values())
    return await route_checks(
        topology.local.listener_host,
        p.local_port,
        wanted,
        key=key,
        key_variable=key_variable(p),
        profiles=p.profiles,
        kind=kind_of(p.kind, []) if p.kind else None,
        kind_variable=f"{p.prefix}_MODEL_KIND",
    )


async def _remote(sites: SiteMap, p: ModelEndpoint) -> list[ModelCheck]:
    site: PodmanSite | None = None

    async def reachable() -> str:
        nonlocal site
        started = time.monotonic()
        site = await sites.podman(site_ref(sites.topology, p.host))
        await site.answer(timeout=10)
        return f"{sites.provider(p.host).ssh} answered in {time.monotonic() - started:.2f}s"

    async def container() -> str:
        assert site is not None
        if p.model_container is None:  # <PREFIX>_MODEL_CONTAINER= empty: nothing to check
            return f"not checked: {p.label} declares no model container"
        found = (await site.containers(timeout=20)).get(p.model_container)
        if found is None:
            raise CheckFailed(f"no container {p.model_container!r} on {p.host}")
        if not found.running:
            raise CheckFailed(f"container {p.model_container!r} is {found.state}")
        return f"{p.model_container} running"

    first = await _timed("remote host reachable", reachable)
    if not first.passed:
        return [
            first,
            ModelCheck(
                name="remote container running",
                passed=False,
                detail="skipped: host unreachable",
            ),
        ]
    return [first, await _timed("remote container running", container)]
