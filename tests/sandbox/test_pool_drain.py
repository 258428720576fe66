"""``down`` of a pool member drains it first: on the default world (two providers, the
local site and the cluster site, each at its default release), 8 clients ask the pool's
port in parallel, each over a kept connection as the openai client does, through ``down``
of a member. The member's connector is withdrawn, ``down`` waits until the other member
carries the pool, then stops the router: no request asked after the withdrawal fails, and a
client that retries a refused request once (the openai client retries twice) sees none fail.
The requests in flight through the member when its connector goes are closed with it, as
skrouterd closes a deleted tcpConnector's connections (``dropTcpConnections``): the drain
counts the connections open through the member right before it withdraws it, and the
down's row says how many it cut and that a retry goes to the other member.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
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
#: Clients whose requests are in flight for HOLD seconds each, as an LLM's are: the ones a
#: drain's count of the connections it cut is about.
HELD = 4
HOLD = 4.0


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
class Failure:
    """A request that failed: when it was asked, what was raised, and when the connection
    it was on opened (its own connect, or when it was asked if it reused one)."""

    at: float
    what: str
    connected: float


@dataclass
class Clients:
    """Loops asking the pool's port, each with a client of its own: ``GET /v1/models``, or
    with ``hold`` a chat completion whose body takes that long to send, a request in flight
    for a while as an LLM's is. Every failure, every failure a retry did not mend, and who
    answered. (The sandbox's model server closes each connection after its answer, so each
    request goes on a connection of its own.)"""

    base: str
    hold: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    unmended: list[tuple[float, str]] = field(default_factory=list)
    answers: list[tuple[float, str]] = field(default_factory=list)

    async def ask(self, http: httpx.AsyncClient, connected: list[float]) -> str:
        async def trace(event: str, info: dict[str, object]) -> None:
            if event == "connection.connect_tcp.complete":
                connected.append(time.monotonic())

        if not self.hold:
            reply = await http.get(f"{self.base}/v1/models", extensions={"trace": trace})
            reply.raise_for_status()
            return str(reply.json()["data"][0]["id"])
        body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]})

        async def held() -> AsyncIterator[bytes]:
            yield body[:10].encode()
            await asyncio.sleep(self.hold)
            yield body[10:].encode()

        reply = await http.post(
            f"{self.base}/v1/chat/completions",
            content=held(),
            headers={"Content-Type": "application/json", "Content-Length": str(len(body))},
            extensions={"trace": trace},
        )
        reply.raise_for_status()
        return str(reply.json()["model"])

    async def one(self, stop: asyncio.Event) -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            while not stop.is_set():
                at = time.monotonic()
                connected: list[float] = []
                try:
                    self.answers.append((at, await self.ask(http, connected)))
                except httpx.HTTPError as exc:
                    opened = connected[-1] if connected else at
                    self.failures.append(Failure(at, f"{type(exc).__name__}: {exc}", opened))
                    try:  # the openai client retries a connection error (max_retries=2)
                        self.answers.append((time.monotonic(), await self.ask(http, [])))
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
        base = f"http://{world.addresses['local']}:{POOL_PORT}"
        clients, held = Clients(base), Clients(base, hold=HOLD)
        first, other = model_of(world, "rhel-ai"), model_of(world, "rhtevan-work")

        async def served() -> bool:
            async with httpx.AsyncClient(timeout=2) as http:
                try:
                    return await clients.ask(http, []) in (first, other)
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

        async def held_answered() -> bool:
            return held.asked_since(0) >= HELD

        drain_done: list[float] = []

        async def progress(line: str) -> None:
            if line.startswith("rhel-ai: drain rhel-ai from pool granite:"):
                drain_done.append(time.monotonic())

        stop = asyncio.Event()
        tasks = [asyncio.create_task(clients.one(stop)) for _ in range(CLIENTS)]
        tasks += [asyncio.create_task(held.one(stop)) for _ in range(HELD)]
        try:
            await eventually(lambda: answered(0), timeout=30, what="the clients under way")
            await eventually(held_answered, timeout=30, what="the held clients under way")
            began = time.monotonic()
            result = await engine.down("rhel-ai", progress=progress)
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
        # The count of what the withdrawal cut was read (the sandbox's router reports it as
        # skrouterd's management does), and every request that failed was in flight on a
        # connection through rhel-ai when its connector went. The count is read right
        # before the deletes, in the same script but by an skmanage of its own (a process
        # in the router container, some 0.1-0.5 s here): a connection opened between the
        # query and the delete is cut and not counted. So the bound holds for the failed
        # requests whose connection opened before the drain step began (the step holds
        # the query and the deletes): each of those was open at the query and counted.
        # The held clients' requests last HOLD s, longer than the step (1-2 s here): most
        # of theirs that were cut opened before it, which is what makes this bound bite;
        # the quick clients' requests last ms, so theirs that were cut opened within it.
        assert drain.cut_connections is not None, drain
        [drain_step] = [s for s in result.sites[0].steps if s.name.startswith("drain rhel-ai")]
        step_began = drain_done[0] - drain_step.seconds
        failures = clients.failures + held.failures
        before = [f for f in failures if f.connected < step_began]
        assert len(before) <= drain.cut_connections, (before, drain, step_began)
        detail = drain.detail or ""
        if failures or drain.cut_connections:
            assert "through rhel-ai at the withdrawal" in detail, detail
            assert "dropTcpConnections" in detail, detail
            assert "retries such a request and gets rhtevan-work" in detail, detail
        if drain.cut_connections:
            cut = f"{drain.cut_connections} connection"
            assert f"{cut}{'s' if drain.cut_connections > 1 else ''} through rhel-ai cut" in (
                result.summary
            ), result.summary
        else:
            assert "No connection was open through rhel-ai" in detail, detail
        steps = [s.name for s in result.sites[0].steps]
        assert steps.index("drain rhel-ai from pool granite") < steps.index("stop router"), steps
        print(
            f"drain: {len(clients.answers)} + {len(held.answers)} held answers, "
            f"failures {[(f.at, f.connected) for f in clients.failures]}, held "
            f"{[(f.at, f.connected) for f in held.failures]}, cut {drain.cut_connections}, "
            f"of them opened before the drain step ({step_began:.2f}-{drain_done[0]:.2f}) "
            f"{len(before)}, down {began:.2f}-{ended:.2f} ({ended - began:.1f} s)"
        )
        # what a user of a retrying client sees: nothing failed
        assert clients.unmended == [] and held.unmended == [], (clients.unmended, held.unmended)
        # a request closed with the member's connector was asked before the drain ended;
        # none asked once down returned failed, and every answer since is the other member's
        assert [f for f in failures if f.at >= ended] == [], failures
        late = {m for at, m in clients.answers + held.answers if at > ended}
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
