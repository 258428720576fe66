"""A sandbox world for the lifecycle tests, set up once; each test makes its own
precondition (which sites are up) through the engine, as an agent would.

The files run in parts (``PARTS``), each on a world of its own: a part's files run in
order, and the parts can run on as many workers at once (tests/conftest.py).

The world mixes both of Skupper's layouts: rhtevan-work logs in as root (uid 0:
/var/lib/skupper, /etc/systemd/system, the system manager), the other hosts as their
non-root users (~/.local/share/skupper, ~/.config/systemd/user, `systemctl --user`).

Its podman is ``$SKMCP_LIFECYCLE_PODMAN`` (``make lifecycle`` sets ``auto``), else what
``skupper-sandbox up`` chooses (``$SKMCP_SANDBOX_PODMAN``, else ``auto``). On real podman the
root host (rhtevan-work) runs rootful podman and the other hosts rootless podman under
Unix users made for the world (docs/sandbox.md 4a)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from skupper_mcp.connectors.shell import script
from skupper_mcp.engine.core import Engine
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

from . import part_of

# Both Skupper lines every time: a 2.2.1 provider next to 2.1.x hosts (2.1.0, whose
# controller never updates the Site's Running, and the default 2.1.3 on the local site), on
# a namespace that is not ``default``: what real hosts may run, none of it the easy case.
SKUPPER_VERSIONS = {"rhel-ai": "2.2.1", "rhtevan-work": "2.1.0"}
NS = "models"
# and both layouts: one provider logs in as root
ROOT_HOSTS = frozenset({"rhtevan-work"})


class PartWorlds:
    """The world of the part that runs now, made (and set up) when its first file asks;
    the world of the part before stops then, since a part's files come after the last one's."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.tmp = tmp_path_factory
        self.stack = ExitStack()
        self.part: int | None = None
        self.world: World | None = None
        self.built = False

    def of(self, part: int) -> World:
        if part != self.part or self.world is None:
            self.close()
            self.world = self.stack.enter_context(
                running_world(
                    self.tmp.mktemp(f"lifecycle-{part}"),
                    WorldSpec(
                        providers=2,
                        skupper_versions=SKUPPER_VERSIONS,
                        namespace=NS,
                        root_hosts=ROOT_HOSTS,
                        podman=os.environ.get("SKMCP_LIFECYCLE_PODMAN") or None,
                    ),
                )
            )
            self.part = part
        return self.world

    def close(self) -> None:
        self.stack.close()
        self.stack = ExitStack()
        self.part, self.world, self.built = None, None, False


@pytest.fixture(scope="session")
def part_worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PartWorlds]:
    worlds = PartWorlds(tmp_path_factory)
    yield worlds
    worlds.close()


@pytest.fixture(scope="module")
def world(part_worlds: PartWorlds, request: pytest.FixtureRequest) -> World:
    return part_worlds.of(part_of(request.path))


def on_host(command: str) -> str:
    """A command with the product's prelude: ``$SKMCP_CTL``, ``$SKMCP_DATA``, ``$SKMCP_UNITS``
    name the host's systemctl, Skupper data home and unit directory, whatever its user."""
    return script(command)


def is_root(world: World, host: str) -> bool:
    return bool(json.loads(host_file(world, host).read_text())["uid"] == 0)


def skupper_home(world: World, host: str) -> Path:
    """Where the host's Skupper data home really is in the world directory."""
    host_dir = world.host_dir(host)
    if is_root(world, host):
        return host_dir / "sysroot/var/lib/skupper"
    return host_dir / "home/.local/share/skupper"


def unit_dir(world: World, host: str) -> Path:
    host_dir = world.host_dir(host)
    if is_root(world, host):
        return host_dir / "sysroot/etc/systemd/system"
    return host_dir / "home/.config/systemd/user"


def new_engine(world: World) -> Engine:
    return Engine(load_topology(world.topology))


@pytest.fixture(scope="module")
def built(world: World, part_worlds: PartWorlds) -> World:
    """The world after one successful setup (the part's first)."""

    async def setup() -> None:
        async with new_engine(world) as engine:
            result = await engine.setup()
            assert result.ok, result.model_dump_json(indent=1)

    if not part_worlds.built:
        asyncio.run(setup())
        part_worlds.built = True
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
    return world.host_dir(host) / "host.json"


def namespace_dir(world: World, host: str) -> Path:
    """The Skupper namespace directory of a podman host of the lifecycle world."""
    return skupper_home(world, host) / "namespaces" / NS
