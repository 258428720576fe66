"""``test_model``: the seed's six end-to-end checks of one provider's model route.

Through the local listener: the port accepts, ``/health`` answers, ``/v1/models`` reports
a model id of the host's profiles, a chat completion comes back. On the provider: the host
answers over SSH and its model container runs. The two groups run concurrently.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..connectors.shell import script
from ..errors import CheckFailed, ConfigError
from ..facts.site_state import parse_podman_ps
from ..models import ModelCheck, TestModelResult
from ..topology import ProviderHost
from .runner import SITE_ERRORS, describe
from .scope import resolve_target
from .sitemap import SiteMap
from .verify import tcp_probe

if TYPE_CHECKING:
    import httpx

HTTP_TIMEOUT = 20.0
PROMPT = "Reply with one short sentence: is the network up?"


async def _timed(name: str, check: Callable[[], Awaitable[str]]) -> ModelCheck:
    started = time.monotonic()
    try:
        detail = await check()
        passed = True
    except SITE_ERRORS as exc:
        detail, passed = describe(exc), False
    return ModelCheck(
        name=name, passed=passed, detail=detail, seconds=round(time.monotonic() - started, 3)
    )


async def _json(host: str, call: Awaitable[httpx.Response]) -> Any:
    """The JSON body of a model API call; HTTP errors and bodies that are not JSON become
    ``CheckFailed`` (httpx's errors are translated here, at the seam)."""
    import httpx

    try:
        response = await call
        response.raise_for_status()
        return response.json()
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        raise CheckFailed(
            host, f"{exc.request.url.path} answered HTTP {status}", status=status
        ) from exc
    except httpx.HTTPError as exc:
        raise CheckFailed(host, f"{exc.request.url}: {describe_http(exc)}") from exc
    except ValueError as exc:
        raise CheckFailed(host, f"the answer is not JSON: {exc}") from exc


def describe_http(exc: httpx.HTTPError) -> str:
    return str(exc) or type(exc).__name__


def _field(host: str, document: Any, *path: str | int) -> Any:
    """``document[path[0]][path[1]]...``, or ``CheckFailed`` naming what is missing."""
    found = document
    for step in path:
        try:
            found = found[step]
        except (KeyError, IndexError, TypeError):
            where = "".join(f"[{p!r}]" for p in path)
            raise CheckFailed(host, f"the answer has no {where}") from None
    return found


class ModelChecks:
    """The six checks of one provider's model route."""

    def __init__(self, sites: SiteMap) -> None:
        self.sites = sites

    async def run(self, target_query: str) -> TestModelResult:
        target = resolve_target(self.sites.topology, target_query)
        if target.host is None or target.host not in {
            p.name for p in self.sites.topology.providers
        }:
            names = [p.name for p in self.sites.topology.providers]
            raise ConfigError(
                f"test_model needs a provider host or profile, not {target_query!r}: "
                f"use one of {', '.join(names)} or a profile name"
            )
        p = self.sites.provider(target.host)
        profile = target.profile
        route, remote = await asyncio.gather(self._route(p, profile), self._remote(p))
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

    async def _route(self, p: ProviderHost, profile: str | None) -> list[ModelCheck]:
        import httpx

        host = self.sites.topology.local.listener_host
        base = f"http://{host}:{p.local_port}"
        checks: list[ModelCheck] = []

        async def port() -> str:
            if not await tcp_probe(host, p.local_port, 2.0):
                raise CheckFailed(p.name, f"nothing accepts connections on {host}:{p.local_port}")
            return f"{host}:{p.local_port} accepts connections"

        checks.append(await _timed("listener port", port))
        if not checks[-1].passed:
            return checks + [
                ModelCheck(name=n, passed=False, detail="skipped: the listener port is closed")
                for n in ("API health", "model id", "chat completion")
            ]
        model_id = ""
        async with httpx.AsyncClient(base_url=base, timeout=HTTP_TIMEOUT) as http:

            async def health() -> str:
                try:
                    r = await http.get("/health")
                    r.raise_for_status()
                except httpx.HTTPStatusError as exc:
                    status = exc.response.status_code
                    raise CheckFailed(
                        p.name, f"/health answered HTTP {status}", status=status
                    ) from exc
                except httpx.HTTPError as exc:
                    raise CheckFailed(p.name, f"/health: {describe_http(exc)}") from exc
                return f"/health answered {r.status_code}"

            async def models() -> str:
                nonlocal model_id
                data = _field(p.name, await _json(p.name, http.get("/v1/models")), "data")
                ids = [m.get("id") for m in data if isinstance(m, dict)]
                wanted = [p.profiles[profile]] if profile else list(p.profiles.values())
                found = [i for i in ids if i in wanted]
                if not found:
                    raise CheckFailed(p.name, f"served {ids}, expected one of {wanted}")
                model_id = found[0]
                return f"serves {model_id}"

            async def chat() -> str:
                body = {
                    "model": model_id,
                    "messages": [{"role": "user", "content": PROMPT}],
                    "max_tokens": 32,
                    "temperature": 0,
                }
                answer = await _json(p.name, http.post("/v1/chat/completions", json=body))
                text = _field(p.name, answer, "choices", 0, "message", "content")
                if not str(text).strip():
                    raise CheckFailed(p.name, "the completion was empty")
                return f"answered: {str(text).strip()[:80]}"

            checks.append(await _timed("API health", health))
            checks.append(await _timed("model id", models))
            if model_id:
                checks.append(await _timed("chat completion", chat))
            else:
                checks.append(
                    ModelCheck(name="chat completion", passed=False, detail="skipped: no model id")
                )
        return checks

    async def _remote(self, p: ProviderHost) -> list[ModelCheck]:
        connector = None

        async def reachable() -> str:
            nonlocal connector
            started = time.monotonic()
            connector = await self.sites.pool.get(p.name, p.ssh)
            await connector.run("true", timeout=10, check=True)
            return f"{p.ssh} answered in {time.monotonic() - started:.2f}s"

        async def container() -> str:
            assert connector is not None
            result = await connector.run(
                script("podman ps -a --format json"), timeout=20, check=True
            )
            found = parse_podman_ps(result.stdout).get(p.model_container)
            if found is None:
                raise CheckFailed(p.name, f"no container {p.model_container!r} on {p.name}")
            if not found.running:
                raise CheckFailed(p.name, f"container {p.model_container!r} is {found.state}")
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
