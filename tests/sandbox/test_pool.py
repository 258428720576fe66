"""A model pool over the world's two providers: one local port that keeps answering while
either provider is down (strategy any: one routing key carried by a Connector on each hub).

A world of its own, every site on Skupper 2.2.1 (the release with MultiKeyListener), since
the pool's setup changes what each hub holds.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from mcp import Client

from polling import eventually
from product import cli
from skupper_mcp.engine.core import Engine
from skupper_mcp.results import OperationResult, TestModelResult
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.usefixtures("bounded_mcp_clients")]

POOL_PORT = 9100
RANKED_PORT = 9101
VERSIONS = {"rhel-ai": "2.2.1", "rhtevan-work": "2.2.1", "local": "2.2.1"}


@pytest.fixture(scope="module")
def pool_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(
        tmp_path_factory.mktemp("pool"),
        WorldSpec(providers=2, kubernetes=False, skupper_versions=VERSIONS),
    ) as w:
        yield w


def pool_topology(world: World, strategy: str = "any", extra: str = "") -> Path:
    """The world's topology with the pool: ``granite`` on POOL_PORT (any), else ``ranked``
    on the port after it (a pool's strategy is fixed at setup: a new one, a new pool)."""
    name, port = ("granite", POOL_PORT) if strategy == "any" else ("ranked", RANKED_PORT)
    prefix = f"POOL_{name.upper()}_"
    text = world.topology.read_text() + (
        f'\nPOOLS="{name}"\n{prefix}PROVIDERS="rhel-ai rhtevan-work"\n'
        f"{prefix}LOCAL_PORT={port}\n{prefix}STRATEGY={strategy}\n{extra}"
    )
    path = world.dir / f"topology-pool-{strategy}.env"
    path.write_text(text)
    return path


#: One answer through the pool's port: a relay through the sandbox's routers on a busy
#: machine took more than 2 s. A request sent to a silent member waits this long.
ANSWER_TIMEOUT = 10.0
#: How long a failover may take on a busy machine before the test gives up on it.
FAILOVER_DEADLINE = 120.0


async def served_model(world: World, port: int = POOL_PORT) -> str | None:
    """The model id the pool's port answers with, or None when nothing answers (within
    ``ANSWER_TIMEOUT``)."""
    try:
        async with httpx.AsyncClient(timeout=ANSWER_TIMEOUT) as client:
            reply = await client.get(f"http://{world.addresses['local']}:{port}/v1/models")
    except httpx.HTTPError:
        return None
    if reply.status_code != 200:
        return None
    data = reply.json().get("data") or [{}]
    return str(data[0].get("id"))


@dataclass
class Probe:
    """The pool's port asked every 0.1 s: when it did not answer, and who did."""

    world: World
    misses: list[float] = field(default_factory=list)
    answers: list[tuple[float, str]] = field(default_factory=list)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            at = time.monotonic()
            model = await served_model(self.world)
            if model is None:
                self.misses.append(at)
            else:
                self.answers.append((at, model))
            await asyncio.sleep(0.1)

    async def asked_after(self, since: float, count: int = 10) -> None:
        """Until ``count`` requests asked after ``since`` have come back (answered or not),
        however long a busy machine takes over them."""

        async def asked() -> bool:
            times = [at for at in self.misses if at > since]
            times += [at for at, _ in self.answers if at > since]
            return len(times) >= count

        await eventually(asked, timeout=60, what=f"{count} requests to the pool's port")

    def gap(self) -> float:
        """The longest the port went without an answer (0 when it always answered)."""
        if not self.misses:
            return 0.0
        longest, start, last = 0.0, self.misses[0], self.misses[0]
        for at in [*self.misses[1:], float("inf")]:
            if at - last > 0.5:  # an answer came between them
                longest = max(longest, last - start + 0.1)
                start = at
            last = at
        return longest


async def take_down(engine: Engine, world: World, host: str) -> Probe:
    """Take ``host`` down while the pool's port is probed; the probe's record."""
    probe = Probe(world)
    stop = asyncio.Event()
    task = asyncio.create_task(probe.run(stop))
    result = await engine.down(host)
    assert result.ok, result.model_dump_json(indent=1)
    await probe.asked_after(time.monotonic())  # answers after the down, from the other member
    stop.set()
    await task
    return probe


@asynccontextmanager
async def set_up_pool(world: World) -> AsyncIterator[Engine]:
    """An engine on the pool's topology, after a setup that went well and once the pool
    serves a model."""
    async with Engine(load_topology(pool_topology(world))) as engine:
        result = await engine.setup()
        assert result.ok, result.model_dump_json(indent=1)
        assert await eventually(lambda: served_model(world), timeout=60, what="the pool")
        yield engine


def model_of(world: World, host: str) -> str:
    model = world.info.host(host).default_model_id
    assert model is not None
    return model


async def test_an_any_pool_keeps_answering_on_its_port_while_either_provider_is_down(
    pool_world: World,
) -> None:
    async with set_up_pool(pool_world) as engine:
        status = await engine.status()
        [pool] = status.pools
        assert (pool.state, pool.bound, pool.strategy) == ("serving", True, "any"), pool
        assert [(b.provider, b.live) for b in pool.backends] == [
            ("rhel-ai", True),
            ("rhtevan-work", True),
        ]
        assert "pool granite :9100 serving (2/2 live" in status.summary
        assert [(s.host, s.drift) for s in status.sites if s.drift] == []

        gaps = {}
        for down, other in (("rhel-ai", "rhtevan-work"), ("rhtevan-work", "rhel-ai")):
            planned = await engine.down(down, plan=True)
            assert f"pool granite (:{POOL_PORT}) keeps serving from {other}" in planned.summary
            probe = await take_down(engine, pool_world, down)
            after = [model for _, model in probe.answers[-10:]]
            assert after and set(after) == {model_of(pool_world, other)}, probe
            gaps[down] = probe.gap()
            status = await engine.status()
            [pool] = status.pools
            assert pool.state == "degraded", pool
            assert {b.provider: b.live for b in pool.backends} == {down: False, other: True}
            result = await engine.up(down)
            assert result.ok, result.model_dump_json(indent=1)

            async def both() -> bool:
                return await served_model(pool_world) is not None

            assert await eventually(both, timeout=60, what=f"the pool after up {down}")
        print(f"pool failover gaps (s): {gaps}")
        for gap in gaps.values():
            assert gap < 10, gaps  # the subject: the failover's gap, not until the member is up


async def test_model_on_a_pool_checks_its_port_and_each_backend_through_the_mcp_server(
    pool_world: World,
) -> None:
    path = pool_topology(pool_world)
    async with Engine(load_topology(path)) as engine:
        assert (await engine.setup()).ok  # also brings every site up
    async with Client(build_server(path), read_timeout_seconds=120) as client:
        reply = await client.call_tool("test_model", {"target": "granite"})
    assert not reply.is_error, reply.content
    result = TestModelResult.model_validate(reply.structured_content)
    assert result.target == "granite"
    names = [c.name for c in result.checks]
    assert names == [
        "listener port",
        "API health",
        "model id",
        "chat completion",
        "backend rhel-ai",
        "backend rhtevan-work",
    ]
    assert (result.passed, result.total) == (6, 6), result.model_dump_json(indent=1)
    assert result.host in ("rhel-ai", "rhtevan-work")

    async with Engine(load_topology(path)) as engine:
        assert (await engine.down("rhtevan-work")).ok
    async with Client(build_server(path), read_timeout_seconds=120) as client:
        reply = await client.call_tool("test_model", {"target": "granite"})
    result = TestModelResult.model_validate(reply.structured_content)
    failed = [c.name for c in result.checks if not c.passed]
    assert failed == ["backend rhtevan-work"], result.model_dump_json(indent=1)
    assert result.host == "rhel-ai"  # the pool answered from the member still up


async def test_a_priority_pool_is_a_multikeylistener_that_prefers_its_first_provider_and_fails_over(
    pool_world: World,
) -> None:
    path = pool_topology(pool_world, "priority", "SKUPPER_MIN_VERSION=2.2.0\n")
    async with Engine(load_topology(path)) as engine:
        result = await engine.setup()
        assert result.ok, result.model_dump_json(indent=1)
        first, second = model_of(pool_world, "rhel-ai"), model_of(pool_world, "rhtevan-work")

        async def preferred() -> bool:
            return await served_model(pool_world, RANKED_PORT) == first

        assert await eventually(preferred, timeout=60, what="the pool from rhel-ai")
        # every new connection goes to the first key while it is reachable
        answers = [await served_model(pool_world, RANKED_PORT) for _ in range(10)]
        assert set(answers) == {first}, answers
        keys = ["model-api-rhel-ai", "model-api-rhtevan-work"]

        async def reported(keys: list[str] = keys) -> bool:
            [pool] = (await engine.status()).pools
            return pool.reachable_keys == keys

        # the local controller's word on the MultiKeyListener (pkg/nonkube/api/
        # site_state.go@2.2.0:402-416), read back from runtime/resources
        assert await eventually(reported, timeout=30, what="both keys reachable")
        status = await engine.status()
        [pool] = status.pools
        assert (pool.strategy, pool.state, pool.preferred) == ("priority", "serving", "rhel-ai")
        assert pool.resource == "Ready"
        # the MultiKeyListener is read back as setup wrote it: nothing left to set up
        assert [(s.host, s.drift) for s in status.sites if s.drift] == []

        started = time.monotonic()
        assert (await engine.down("rhel-ai")).ok

        async def failed_over() -> bool:
            return await served_model(pool_world, RANKED_PORT) == second

        assert await eventually(failed_over, timeout=30, what="the pool from rhtevan-work")
        print(
            f"priority pool: answering from rhtevan-work {time.monotonic() - started:.2f} s "
            "after down rhel-ai began"
        )
        status = await engine.status()
        [pool] = status.pools
        assert (pool.state, pool.preferred) == ("degraded", "rhtevan-work"), pool
        assert await eventually(
            lambda: reported(keys[1:]), timeout=30, what="rhel-ai's key unreachable"
        )

        assert (await engine.up("rhel-ai")).ok
        assert await eventually(preferred, timeout=60, what="the pool back on rhel-ai")


async def seconds_until_served_by(
    world: World, model: str, fault: Callable[[], None], timeout: float = FAILOVER_DEADLINE
) -> float:
    """From the start of ``fault`` until a request to the pool's port first answers from
    ``model``. The port is asked one request at a time (an idle pool sends each to its first
    member) from before the fault, not after it: a killed router is started again at once by
    its restart policy, and on a busy machine it was back, its link too, before the fault's
    own command had returned, so asking only then never saw the outage."""
    probe = Probe(world)
    stop = asyncio.Event()
    task = asyncio.create_task(probe.run(stop))
    started = time.monotonic()

    async def first_answer() -> tuple[float] | None:
        """Seconds from the fault's start to the first request since that ``model`` answered
        (in a tuple: ``eventually`` takes a falsy answer for none, and 0.0 is one)."""
        times = [at for at, who in probe.answers if at >= started and who == model]
        return (min(times) - started,) if times else None

    try:
        await asyncio.to_thread(fault)
        [seconds] = await eventually(first_answer, timeout=timeout, what=f"an answer from {model}")
        return seconds
    finally:
        stop.set()
        await task


async def test_an_any_pool_fails_over_when_a_providers_router_dies_or_its_network_goes(
    pool_world: World,
) -> None:
    """Not a clean down: the router killed (its link closes at once) and the host's packets
    dropped (the link goes silent until the local router gives it up)."""
    path = pool_topology(pool_world)
    async with Engine(load_topology(path)) as engine:
        assert (await engine.setup()).ok  # also brings every site up
        assert await eventually(lambda: served_model(pool_world), timeout=60, what="the pool")
        measured = {}
        first, other = model_of(pool_world, "rhel-ai"), model_of(pool_world, "rhtevan-work")
        for fault in ("kill-router", "blackhole"):

            async def from_first() -> bool:
                # the idle router balances to the first peer: the member about to fail
                return await served_model(pool_world) == first

            assert await eventually(from_first, timeout=60, what=f"rhel-ai before {fault}")
            # a silent link is given up after the router's idle timeout (the imitation's 5 s,
            # skrouterd's 16 s); the deadline is a busy laptop's (two busy loops beside the
            # suite's workers missed 30 s), the order below is what the test is about
            measured[fault] = await seconds_until_served_by(
                pool_world, other, functools.partial(pool_world.fault, "rhel-ai", fault)
            )
            pool_world.restore_all()
            assert (await engine.up("all")).ok
        print(f"pool failover (s, fault to first answer from the other member): {measured}")
        # a killed router's link closes at once, so its failover does not wait for the idle
        # timeout a silent link does: an order, which load stretches on both sides alike
        assert measured["kill-router"] < measured["blackhole"], measured


@pytest.mark.spawns
async def test_through_the_cli_the_pool_answers_on_its_port_while_either_provider_is_down(
    pool_world: World,
) -> None:
    """What a user runs: ``down`` of each member in turn from the CLI, the port asked every
    0.1 s meanwhile, ``status --json`` after each."""
    path = pool_topology(pool_world)
    async with Engine(load_topology(path)) as engine:
        assert (await engine.setup()).ok  # also brings every site up
    assert await eventually(lambda: served_model(pool_world), timeout=60, what="the pool")
    for down, other in (("rhel-ai", "rhtevan-work"), ("rhtevan-work", "rhel-ai")):
        probe = Probe(pool_world)
        stop = asyncio.Event()
        task = asyncio.create_task(probe.run(stop))
        began = time.monotonic()
        done = await asyncio.to_thread(cli, path, "down", down)
        ended = time.monotonic()
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"pool granite (:{POOL_PORT}) keeps serving from {other}" in " ".join(
            done.stdout.split()
        )
        await probe.asked_after(ended)
        stop.set()
        await task
        # a request in flight through the member's router when it stops is reset with it
        # (its link closes, the local router drops what it carried); every request asked
        # once the down has returned is answered by the other member
        # (a count, not a span: a busy machine asks fewer in the same time, never more)
        late = [at for at in probe.misses if not began <= at <= ended]
        assert late == [] and len(probe.misses) <= 5, (began, ended, probe.misses)
        assert {m for _, m in probe.answers[-5:]} == {model_of(pool_world, other)}
        shown = await asyncio.to_thread(cli, path, "--json", "status")
        [pool] = json.loads(shown.stdout)["pools"]
        assert pool["state"] == "degraded"
        assert {b["provider"]: b["live"] for b in pool["backends"]} == {down: False, other: True}
        again = await asyncio.to_thread(cli, path, "up", down)
        assert again.returncode == 0, again.stdout + again.stderr


async def test_models_lists_the_pool_as_one_url_that_still_serves_with_a_provider_down(
    pool_world: World,
) -> None:
    async with set_up_pool(pool_world) as engine:
        models = await engine.models()
        [row] = [r for r in models.rows if r.pool is not None]
        assert (row.host, row.state, row.listener_port) == ("granite", "serving", POOL_PORT), row
        assert row.local_base_url == f"http://{pool_world.addresses['local']}:{POOL_PORT}/v1"
        assert row.model_ids and set(row.model_ids) <= {
            model_of(pool_world, "rhel-ai"),
            model_of(pool_world, "rhtevan-work"),
        }
        assert row.pool is not None
        assert [(b.provider, b.live) for b in row.pool.backends] == [
            ("rhel-ai", True),
            ("rhtevan-work", True),
        ]

        result = await engine.down("rhel-ai")
        assert result.ok, result.model_dump_json(indent=1)
        try:
            models = await engine.models()
            by_host = {r.host: r for r in models.rows}
            assert by_host["rhel-ai"].state == "provider-stopped", by_host["rhel-ai"]
            row = by_host["granite"]
            assert row.state == "serving", row
            assert row.model_ids == [model_of(pool_world, "rhtevan-work")]
            assert row.pool is not None and row.pool.state == "degraded"
            assert {b.provider: b.live for b in row.pool.backends} == {
                "rhel-ai": False,
                "rhtevan-work": True,
            }
        finally:
            result = await engine.up("rhel-ai")
            assert result.ok, result.model_dump_json(indent=1)


def input_resources(world: World, host: str) -> set[str]:
    """The resource files of ``host``'s namespace (``input/resources``)."""
    folder = world.host_dir(host) / "home/.local/share/skupper/namespaces/default/input/resources"
    return {p.name for p in folder.iterdir()}


def granite(world: World, strategy: str) -> Path:
    """The pool ``granite`` on POOL_PORT with ``strategy``."""
    path = world.dir / f"topology-granite-{strategy}.env"
    path.write_text(
        world.topology.read_text()
        + '\nPOOLS="granite"\nPOOL_GRANITE_PROVIDERS="rhel-ai rhtevan-work"\n'
        + f"POOL_GRANITE_LOCAL_PORT={POOL_PORT}\nPOOL_GRANITE_STRATEGY={strategy}\n"
        + "SKUPPER_MIN_VERSION=2.2.0\n"
        + ("POOL_GRANITE_WEIGHTS=rhel-ai=1000\n" if strategy == "weighted" else "")
    )
    return path


async def test_setup_removes_what_the_pools_earlier_strategy_built_when_it_changes(
    pool_world: World,
) -> None:
    """granite goes any -> priority -> weighted -> any on one port: status's setup-needed
    list and setup's plan name what the old strategy built, and after setup nothing of it
    is left (a stale Listener beside the MultiKeyListener maps the port twice, which the
    2.2 validator refuses at reload; priority to weighted is the same MultiKeyListener,
    which 2.2.1 refuses to change in place: setup removes it and reloads first)."""
    first, second = model_of(pool_world, "rhel-ai"), model_of(pool_world, "rhtevan-work")
    built = {
        "any": {
            "local": "Listener/pool-granite",
            "rhel-ai": "Connector/pool-granite",
            "rhtevan-work": "Connector/pool-granite",
        },
        "priority": {"local": "MultiKeyListener/pool-granite"},
        "weighted": {"local": "MultiKeyListener/pool-granite"},
    }
    async with Engine(load_topology(granite(pool_world, "any"))) as engine:
        assert (await engine.setup()).ok
    for old, new in (("any", "priority"), ("priority", "weighted"), ("weighted", "any")):
        # the same MultiKeyListener with the other strategy: made anew, not left over
        anew = {old, new} == {"priority", "weighted"}
        why = "runs another strategy" if anew else "left by"
        async with Engine(load_topology(granite(pool_world, new))) as engine:
            status = await engine.status()
            drift = {s.host: s.drift or [] for s in status.sites}
            plan = await engine.setup(plan=True)
            assert isinstance(plan, OperationResult)
            steps = {s.host: {step.name: step.detail for step in s.steps} for s in plan.sites}
            for host, resource in built[old].items():
                assert any(line.startswith(f"{resource}: {why}") for line in drift[host]), drift
                assert resource in steps[host]["remove resources"], steps[host]
            if anew:
                assert "reload without the old strategy" in steps["local"], steps["local"]
            result = await engine.setup()
            assert result.ok, result.model_dump_json(indent=1)
            for host, resource in built[old].items():
                held = resource.replace("/", "-") + ".yaml" in input_resources(pool_world, host)
                assert held == anew, (host, resource)
            status = await engine.status()
            assert [(s.host, s.drift) for s in status.sites if s.drift] == []

        # priority, and weighted 1000:1: the first member answers; any: either
        answers = {first, second} if new == "any" else {first}

        async def answering(answers: set[str] = answers) -> bool:
            return await served_model(pool_world) in answers

        assert await eventually(answering, timeout=60, what=f"the {new} pool on its port")
