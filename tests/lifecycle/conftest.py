"""One sandbox world for the lifecycle tests, set up once; each test makes its own
precondition (which sites are up) through the engine, as an agent would."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from skupper_mcp.engine.core import Engine
from skupper_mcp.topology import load_topology
from skupper_sandbox.testing import World, running_world


@pytest.fixture(scope="package")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("lifecycle"), providers=2) as w:
        yield w


def new_engine(world: World) -> Engine:
    return Engine(load_topology(world.topology))


@pytest.fixture(scope="package")
def built(world: World) -> World:
    """The world after one successful setup."""

    async def setup() -> None:
        async with new_engine(world) as engine:
            result = await engine.setup()
            assert result.ok, result.model_dump_json(indent=1)

    asyncio.run(setup())
    return world


@pytest.fixture
async def engine(built: World) -> AsyncIterator[Engine]:
    async with new_engine(built) as e:
        yield e


async def bound(world: World, host: str, port: int) -> bool:
    """Whether something accepts connections on a sandbox host's port."""
    from skupper_mcp.engine.verify import tcp_probe

    return await tcp_probe(world.addresses[host], port, 1.0)


def listener_port(world: World, provider: str) -> int:
    return {"rhel-ai": 9000, "rhtevan-work": 10000}[provider]


def host_file(world: World, host: str) -> Path:
    return world.dir / "hosts" / host / "host.json"
