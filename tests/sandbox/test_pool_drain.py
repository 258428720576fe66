"""``down`` of a pool member drains it first: on the default world (two providers, the
local site and the cluster site, each at its default release), 8 clients ask the pool's
port in parallel, each over a kept connection as the openai client does, through ``down``
of a member. The member's connector is withdrawn, ``down`` waits until the other member
carries the pool, then stops the router: no request asked after the withdrawal fails, and a
client that retries a refused request once (the openai client retries twice) sees none fail.
The requests in flight through the member when its connector goes are closed with it, as
skrouterd closes a deleted tcpConnector's connections (``dropTcpConnections``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from polling import eventually
from skupper_mcp.engine.core import Engine
from skupper_mcp.engine.stopping import STOP, Stop
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.usefixtures("bounded_mcp_clients")]

POOL_PORT = 9100
CLIENTS = 8


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("drain"), WorldSpec(providers=2)) as w:
        yield w


def any_pool(world: World) -> Path:
    path = world.dir / "topology-drain.env"
    path.write_text(
        world.topology.read_text()
        + '\nPOOLS="granite"\nPOOL_GRANITE_PROVIDERS="rhel-ai rhtevan-work"\n'
        + f"POOL_GRANITE_LOCAL_PORT={POOL_PORT}\nPOOL_GRANITE_STRATEGY=any\n"
    )
    return path


def model_of(world: World, host: str) -> str:
    model = world.info.host(host).default_model_id
    assert model is not None
    return model


@dataclass
class Clients:
    """CLIENTS loops asking ``GET /v1/models`` of the pool's port, each on its own kept
    connection: every failure (when, what), every failure a retry did not mend, and who
    answered."""

    url: str
    failures: list[tuple[float, str]] = field(default_factory=list)
    unmended: list[tuple[float, str]] = field(default_factory=list)
    answers: list[tuple[float, str]] = field(default_factory=list)

    async def ask(self, http: httpx.AsyncClient) -> str:
        reply = await http.get(self.url)
        reply.raise_for_status()
        return str(reply.json()["data"][0]["id"])

    async def one(self, stop: asyncio.Event) -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            while not stop.is_set():
                at = time.monotonic()
                try:
                    self.answers.append((at, await self.ask(http)))
                except httpx.HTTPError as exc:
                    self.failures.append((at, f"{type(exc).__name__}: {exc}"))
                    try:  # the openai client retries a connection error (max_retries=2)
                        self.answers.append((time.monotonic(), await self.ask(http)))
                    except httpx.HTTPError as again:
                        self.unmended.append((at, f"{type(again).__name__}: {again}"))
                await asyncio.sleep(0.02)

    def asked_since(self, since: float) -> int:
        return sum(1 for at, _ in self.answers if at > since)


async def test_down_of_a_pool_member_drains_it_first_and_8_parallel_clients_see_no_failure(
    world: World,
) -> None:
    path = any_pool(world)
    async with Engine(load_topology(path)) as engine:
        result = await engine.setup()
        assert result.ok, result.model_dump_json(indent=1)
        clients = Clients(f"http://{world.addresses['local']}:{POOL_PORT}/v1/models")
        first, other = model_of(world, "rhel-ai"), model_of(world, "rhtevan-work")

        async def served() -> bool:
            async with httpx.AsyncClient(timeout=2) as http:
                try:
                    return await clients.ask(http) in (first, other)
                except httpx.HTTPError:
                    return False

        assert await eventually(served, timeout=60, what="the pool")
        planned = await engine.down("rhel-ai", plan=True)
        names = [s.name for s in planned.sites[0].steps]
        assert names[:2] == [
            "drain rhel-ai from pool granite",
            "wait until rhtevan-work carry pool granite",
        ], names

        async def answered(since: float) -> bool:
            return clients.asked_since(since) >= 4 * CLIENTS

        stop = asyncio.Event()
        tasks = [asyncio.create_task(clients.one(stop)) for _ in range(CLIENTS)]
        try:
            await eventually(lambda: answered(0), timeout=30, what="the clients under way")
            began = time.monotonic()
            result = await engine.down("rhel-ai")
            ended = time.monotonic()
            assert result.ok, result.model_dump_json(indent=1)
            await eventually(lambda: answered(ended), timeout=60, what="answers after the down")
        finally:
            stop.set()
            await asyncio.gather(*tasks)
        [drain] = result.drains
        assert (drain.pool, drain.member, drain.drained) == ("granite", "rhel-ai", True), drain
        assert drain.withdrawn and drain.degraded_for is None, drain
        assert "rhel-ai drained first" in result.summary, result.summary
        steps = [s.name for s in result.sites[0].steps]
        assert steps.index("drain rhel-ai from pool granite") < steps.index("stop router"), steps
        print(
            f"drain: {len(clients.answers)} answers, failures {clients.failures}, "
            f"down {began:.2f}-{ended:.2f} ({ended - began:.1f} s)"
        )
        # what a user of a retrying client sees: nothing failed
        assert clients.unmended == [], clients.unmended
        # a request closed with the member's connector was asked before the drain ended;
        # none asked once down returned failed, and every answer since is the other member's
        assert [f for f in clients.failures if f[0] >= ended] == [], clients.failures
        late = {m for at, m in clients.answers if at > ended}
        assert late == {other}, late

        result = await engine.up("rhel-ai")
        assert result.ok, result.model_dump_json(indent=1)

        # up started rhel-ai's router from its config: its connector is back
        assert await eventually(
            lambda: answers_from(world, first), timeout=60, what="the pool from rhel-ai after up"
        )


async def answers_from(world: World, model: str) -> bool:
    """Whether a new connection to the pool's port is answered by ``model`` (the idle
    local router sends it to the first peer in order: rhel-ai while its connector is there)."""
    async with httpx.AsyncClient(timeout=2) as http:
        try:
            reply = await http.get(f"http://{world.addresses['local']}:{POOL_PORT}/v1/models")
            return reply.status_code == 200 and reply.json()["data"][0]["id"] == model
        except (httpx.HTTPError, ValueError, KeyError, IndexError):
            return False


async def test_a_down_stopped_after_the_drain_restarts_the_members_router_with_its_connector(
    world: World,
) -> None:
    """A down cancelled (an MCP task's cancel) between the drain and the stop: the router
    ran on without its connector, and up would find nothing to start; down restarts it."""
    path = any_pool(world)
    async with Engine(load_topology(path)) as engine:
        result = await engine.up("all")
        assert result.ok, result.model_dump_json(indent=1)
        first = model_of(world, "rhel-ai")
        assert await eventually(lambda: answers_from(world, first), timeout=60, what="rhel-ai")
        stop = Stop()

        async def progress(line: str) -> None:
            if line.startswith("rhel-ai: drain rhel-ai from pool granite: ok"):
                stop.requested = True  # the step that runs ends; no other starts

        token = STOP.set(stop)
        try:
            result = await engine.down("rhel-ai", progress=progress)
        finally:
            STOP.reset(token)
        steps = {s.name: s for s in result.sites[0].steps}
        assert "stop router" not in steps, steps
        restored = steps["restore withdrawn connector"]
        assert restored.ok and "systemctl restart" in restored.detail, restored
        [drain] = result.drains
        assert drain.drained is False and "stopped before" in (drain.detail or ""), drain
        assert await eventually(
            lambda: answers_from(world, first), timeout=60, what="rhel-ai's connector back"
        )
