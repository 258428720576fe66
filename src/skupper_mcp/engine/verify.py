"""Waiting for the network to be what an operation promised: routers running, listeners
bound, links connected. Every wait polls with a deadline."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterable
from dataclasses import replace

import anyio
import anyio.to_thread

from ..errors import NotReadyError
from ..facts import names
from ..sites.kube import ClusterSite, status_of
from ..sites.work import ApiCall
from ..topology import ModelEndpoint
from .predicates import link_connected, podman_router_running, podman_router_supervised
from .readings import PodmanReading
from .runner import SITE_ERRORS, Action, SiteRun, describe

POLL = 0.3
LINK_DEADLINE = 30.0


class Pacing:
    """The pauses between reads of a site while waiting for it: short for the first
    ``quick`` reads, when most waits end (a router starts in a second or two), then longer.
    A full state read costs its host tens of milliseconds of CPU, so reading 33 starting
    sites every 0.3 s would take the CPU their routers need to start."""

    def __init__(
        self, first: float = POLL, quick: int = 5, factor: float = 1.5, longest: float = 2.0
    ) -> None:
        self.next, self.quick, self.factor, self.longest = first, quick, factor, longest

    def take(self, remaining: float) -> float:
        """The next pause, never longer than ``remaining`` (the last read falls on the
        deadline)."""
        pause = max(0.0, min(self.next, remaining))
        if self.quick > 1:
            self.quick -= 1
        else:
            self.next = min(self.longest, self.next * self.factor)
        return pause

    async def pause(self, deadline: float) -> None:
        await asyncio.sleep(self.take(deadline - time.monotonic()))


#: How many probes connect at once (a worker thread each): every listener and link of a
#: large topology, so one host that drops the SYN never holds up the others.
_PROBES = anyio.CapacityLimiter(64)


async def tcp_probe(host: str, port: int, timeout: float = 1.0) -> bool:
    """Whether something accepts TCP connections at host:port, within ``timeout``.

    The connect runs in a worker thread with the socket's own timeout, so the answer is
    the socket's: other work holding the event loop (the SSH key exchange test_model runs
    beside the probe, an import) delays it but never turns an accepted connection into a
    timeout. With ``asyncio.wait_for`` the deadline was the loop's: held past it on a
    loaded machine, an open listener read as "nothing accepts connections"."""
    return await anyio.to_thread.run_sync(
        _connects, host, port, timeout, limiter=_PROBES, abandon_on_cancel=True
    )


def _connects(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:  # refused, unreachable, or its timeout (socket.timeout is an OSError)
        return False


async def wait_router(run: SiteRun, reading: PodmanReading, deadline: float) -> bool:
    """Wait until the site's router container runs under its active unit."""
    started = time.monotonic()
    last = "not read yet"
    pacing = Pacing()
    while True:
        try:
            now = replace(reading, state=await reading.site.read())
            if podman_router_supervised(now):
                await run.note(
                    "verify router", "router running", seconds=time.monotonic() - started
                )
                return True
            unit = now.state.unit(names.router_unit(now.namespace))
            container = "runs" if podman_router_running(now) else "is not running"
            last = f"router unit {unit.active_state}/{unit.sub_state}, its container {container}"
        except SITE_ERRORS as exc:
            last = describe(exc)
        if time.monotonic() >= deadline:
            await run.note("verify router", last, ok=False, seconds=time.monotonic() - started)
            run.fail(f"the router did not come up: {last}")
            return False
        await pacing.pause(deadline)


async def probe_listeners(
    host: str, providers: Iterable[ModelEndpoint], deadline: float
) -> dict[str, float | None]:
    """Poll each model endpoint's local listener port until it accepts or the deadline
    passes: the seconds each (by label) took to accept, None for one that never did."""
    started = time.monotonic()
    pending = {p.label: p.local_port for p in providers}
    bound: dict[str, float | None] = dict.fromkeys(pending)
    while pending:
        results = await asyncio.gather(*(tcp_probe(host, port, 0.5) for port in pending.values()))
        for name, ok in zip(list(pending), results, strict=True):
            if ok:
                bound[name] = time.monotonic() - started
                del pending[name]
        if not pending or time.monotonic() >= deadline:
            break
        await asyncio.sleep(POLL)
    return bound


async def wait_links(site: ClusterSite, names: list[str], deadline: float) -> str:
    last = "not read"
    pacing = Pacing()
    while True:
        try:
            state = await site.read()
            pending = {
                n: status_of(state.links.get(n))
                for n in names
                if not link_connected(state.links.get(n))
            }
            if not pending:
                return f"links ready: {', '.join(names)}"
            last = "; ".join(f"{n} {s}" for n, s in pending.items())
        except SITE_ERRORS as exc:
            last = str(exc)
        if time.monotonic() >= deadline:
            raise NotReadyError(
                site.host, f"links not ready within {LINK_DEADLINE:g}s: {last}", LINK_DEADLINE
            )
        await pacing.pause(deadline)


def wait_for_links(site: ClusterSite, names: list[str]) -> Action:
    return Action(
        "wait for links",
        tuple(ApiCall("wait", "Link", n) for n in names),
        lambda: wait_links(site, names, time.monotonic() + LINK_DEADLINE),
        changes=False,
    )


async def probe_routes(
    host: str, providers: Iterable[ModelEndpoint], deadline: float
) -> dict[str, tuple[float | None, str]]:
    """Poll ``GET /v1/models`` through each provider's local listener (with its key) until
    an HTTP answer comes back through the route, whatever its status (a 503 of an engine
    still loading is the engine's answer: the route carries it), or the deadline passes:
    per endpoint (by label) the seconds it took (None: no answer) and the last thing seen. A bound
    listener whose route closes each connection (the router has no live path yet, or the
    server's port refuses while it loads) is what this waits out."""
    import httpx

    from .model_http import api_key, base_url, probe_models

    started = time.monotonic()
    pending = {p.label: p for p in providers}
    found: dict[str, tuple[float | None, str]] = {n: (None, "not asked") for n in pending}
    async with httpx.AsyncClient(trust_env=False) as http:
        while pending:
            names = list(pending)
            probes = await asyncio.gather(
                *(
                    probe_models(
                        http,
                        api_key(pending[n]),
                        f"{base_url(host, pending[n].local_port)}/v1/models",
                        2.0,
                    )
                    for n in names
                )
            )
            for name, probe in zip(names, probes, strict=True):
                if probe.status is not None:
                    found[name] = (time.monotonic() - started, f"HTTP {probe.status}")
                    del pending[name]
                else:
                    found[name] = (None, probe.error or "no answer")
            if not pending or time.monotonic() >= deadline:
                break
            await asyncio.sleep(POLL)
    return found
