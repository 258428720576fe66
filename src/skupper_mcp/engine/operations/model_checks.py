"""``test_model``: six end-to-end checks of one provider's model route.

Through the local listener: the port accepts, ``/health`` answers, ``/v1/models`` reports
a model id of the host's profiles, a chat completion comes back. On the provider: the host
answers over SSH and its model container runs. The two groups run concurrently.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...errors import CheckFailed, ConfigError
from ...facts.model_endpoint import listed_ids, model_ids
from ...models import ModelCheck, TestModelResult
from ...sites.podman import PodmanSite
from ...topology import ProviderHost, Topology
from ..runner import SITE_ERRORS, describe
from ..scope import resolve_target, site_ref
from ..sitemap import SiteMap
from ..verify import tcp_probe

HTTP_TIMEOUT = 20.0
#: The most one answer of the model API may hold: a model list or a 32-token completion
#: is a few KiB; an answer that never ends must not grow the process.
HTTP_MAX_BYTES = 1024 * 1024
PROMPT = "Reply with one short sentence: is the network up?"
ROUTE_CHECKS = ("listener port", "API health", "model id", "chat completion")


async def _timed(name: str, check: Callable[[], Awaitable[str]]) -> ModelCheck:
    import httpx

    expected: tuple[type[BaseException], ...] = (*SITE_ERRORS, CheckFailed, httpx.HTTPError)
    started = time.monotonic()
    try:
        detail = await check()
        passed = True
    except expected as exc:
        detail, passed = _reason(exc), False
    return ModelCheck(
        name=name, passed=passed, detail=detail, seconds=round(time.monotonic() - started, 3)
    )


def _reason(exc: BaseException) -> str:
    import httpx

    if isinstance(exc, httpx.TransportError) and not str(exc):
        return f"no answer: the connection was reset or closed ({type(exc).__name__})"
    return describe(exc)


def base_url(host: str, port: int) -> str:
    """The listener's URL; an IPv6 address goes in brackets."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


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
    the body is read as it comes and given up past ``max_bytes``. Either is ``CheckFailed``."""
    try:
        async with asyncio.timeout(timeout):
            async with http.stream(method, path, **kwargs) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise CheckFailed(
                            f"{path} answered more than {max_bytes // 1024} KiB: cut off there"
                        )
                return response.status_code, bytes(body)
    except TimeoutError:
        raise CheckFailed(f"{path} did not answer in full within {timeout:g}s") from None


def _json(answer: tuple[int, bytes], what: str) -> Any:
    status, body = answer
    if status != 200:
        raise CheckFailed(f"{what} answered HTTP {status}")
    try:
        return json.loads(body)
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


async def route_checks(
    host: str, port: int, wanted: list[str], timeout: float = HTTP_TIMEOUT
) -> list[ModelCheck]:
    """The four checks through a local listener: port, health, model id, chat completion.

    ``wanted`` are the model ids that count. Every failure is that check's result, with
    the ones after it marked as skipped, never an exception.
    """
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
    model_id = ""
    async with httpx.AsyncClient(base_url=base_url(host, port), timeout=timeout) as http:

        async def health() -> str:
            status, _ = await exchange(http, "GET", "/health", timeout)
            if status != 200:
                raise CheckFailed(f"/health answered HTTP {status}")
            return f"/health answered {status}"

        async def models() -> str:
            nonlocal model_id
            answer = await exchange(http, "GET", "/v1/models", timeout)
            ids = served_model_ids(_json(answer, "/v1/models"))
            found = [i for i in ids if i in wanted]
            if not found:
                raise CheckFailed(f"served {listed_ids(ids)}, expected one of {wanted}")
            model_id = found[0]
            return f"serves {model_id}"

        async def chat() -> str:
            body = {
                "model": model_id,
                "messages": [{"role": "user", "content": PROMPT}],
                "max_tokens": 32,
                "temperature": 0,
            }
            reply = await exchange(http, "POST", "/v1/chat/completions", timeout, json=body)
            answer = _json(reply, "the chat API")
            return f"answered: {completion_text(answer)[:80]}"

        checks.append(await _timed("API health", health))
        checks.append(await _timed("model id", models))
        if model_id:
            checks.append(await _timed("chat completion", chat))
        else:
            checks.append(
                ModelCheck(name="chat completion", passed=False, detail="skipped: no model id")
            )
    return checks


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
    p = sites.provider(target.host)
    profile = target.profile
    route, remote = await asyncio.gather(_route(sites.topology, p, profile), _remote(sites, p))
    checks = [*route, *remote]
    served = next(
        (c.detail.split("serves ")[-1] for c in checks if c.name == "model id" and c.passed), ""
    )
    if profile is None:
        profile = next(
            (name for name, mid in p.profiles.items() if mid == served), p.default_profile
        )
    return TestModelResult(
        target=target_query,
        host=p.name,
        profile=profile,
        checks=checks,
        passed=sum(c.passed for c in checks),
        total=len(checks),
    )


async def _route(topology: Topology, p: ProviderHost, profile: str | None) -> list[ModelCheck]:
    wanted = [p.profiles[profile]] if profile else list(p.profiles.values())
    return await route_checks(topology.local.listener_host, p.local_port, wanted)


async def _remote(sites: SiteMap, p: ProviderHost) -> list[ModelCheck]:
    site: PodmanSite | None = None

    async def reachable() -> str:
        nonlocal site
        started = time.monotonic()
        site = await sites.podman(site_ref(sites.topology, p.name))
        await site.answer(timeout=10)
        return f"{p.ssh} answered in {time.monotonic() - started:.2f}s"

    async def container() -> str:
        assert site is not None
        if p.model_container is None:  # <PREFIX>_MODEL_CONTAINER= empty: nothing to check
            return f"not checked: {p.name} declares no model container"
        found = (await site.containers(timeout=20)).get(p.model_container)
        if found is None:
            raise CheckFailed(f"no container {p.model_container!r} on {p.name}")
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
