"""The closed error tree: an expected failure at a site is that site's ``failed`` outcome;
anything else (a NotImplementedError, an AttributeError) is a bug and surfaces as one. A
parse of a host's text past its bounds (a RecursionError, a JSON error) is that host's
failure too (issue 43): the parsers refuse such text first, this is the backstop."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest

import skupper_mcp
from fake_connector import framed
from skupper_mcp import errors
from skupper_mcp.connectors.base import CommandResult, SSHTarget
from skupper_mcp.engine.desired.podman import hub_resources, local_resources_without_secrets
from skupper_mcp.engine.operations import updown
from skupper_mcp.engine.runner import SITE_ERRORS
from skupper_mcp.engine.sitemap import SiteMap
from skupper_mcp.errors import CommandError, SiteStateError, SkupperMcpError
from skupper_mcp.facts import names
from skupper_mcp.sites import units
from skupper_mcp.topology import Topology, parse_topology
from topology_samples import SMALL_TOPOLOGY

PRODUCT = Path(skupper_mcp.__file__).parent
#: Raised only when a caller broke a precondition (a bug): never caught as a site failure.
PRECONDITIONS = {"ValueError", "KeyError"}


class Broken:
    """A connector whose every command raises ``error`` (or returns ``result``)."""

    def __init__(self, host: str, error: BaseException) -> None:
        self.host = host
        self.error = error
        self.ran: list[str] = []

    async def run(self, command: str, **_: object) -> CommandResult:
        self.ran.append(command)
        raise self.error

    async def close(self) -> None:
        pass


class Pool:
    """Hands every host a ``Broken`` connector raising the same error."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def get(self, name: str, target: SSHTarget | None) -> Broken:
        return Broken(name, self.error)


def set_up_site_state(host: str, namespace: str = "default", user: str = "tester") -> str:
    """What the state read prints for a site of SMALL_TOPOLOGY that is set up as setup
    leaves it (its resources, containers, units and watch script), and stopped."""
    topology = parse_topology(SMALL_TOPOLOGY, Path("topology.env"))
    provider = topology.provider(host)
    desired = (
        hub_resources(provider, topology.pools)
        if provider is not None
        else local_resources_without_secrets(topology)
    )
    podman = "/usr/bin/podman"
    stopped = [names.controller_container(user), names.router_container(namespace)]
    controller = json.dumps([{"Names": [name], "State": "exited"} for name in stopped])
    socket = f"Id={names.PODMAN_SOCKET_UNIT}\nLoadState=loaded\nActiveState=active\n"
    lines = [f"@@user {user}", f"@@podman {podman}", "@@section version", "2.2.1", "@@rc 0"]
    lines += ["@@section units", socket, "@@rc 0", "@@section containers", controller, "@@rc 0"]
    for resource in desired:
        kind, name = resource["kind"], resource["metadata"]["name"]
        lines += [f"@@file input {kind}-{name}.yaml", json.dumps(resource)]
    for unit in units.site_units(namespace, user, podman):
        lines += [f"@@file unit {unit.name}", unit.content]
    lines += ["@@file watch start-watch.sh", units.watch_script(podman)]
    return framed("\n".join([*lines, "@@rendered", "@@end"]) + "\n")


class FailsToAct(Broken):
    """Reads a set-up, stopped site; every other command raises ``error``."""

    async def run(self, command: str, **_: object) -> CommandResult:
        self.ran.append(command)
        if "@@section version" in command:
            return CommandResult(self.host, command, 0, set_up_site_state(self.host), "", 0.0)
        raise self.error


class ActingPool(Pool):
    async def get(self, name: str, target: SSHTarget | None) -> Broken:
        return FailsToAct(name, self.error)


@pytest.fixture
def topology(tmp_path: Path) -> Topology:
    return parse_topology(SMALL_TOPOLOGY, tmp_path / "topology.env")


@pytest.mark.parametrize("bug", [AttributeError("no such"), NotImplementedError("todo")])
async def test_a_bug_inside_a_site_surfaces_as_a_bug(topology: Topology, bug: Exception) -> None:
    sites = SiteMap(topology, Pool(bug), None)  # type: ignore[arg-type]
    with pytest.raises(type(bug)):
        await updown.up(sites, "alpha")
    with pytest.raises(type(bug)):
        await updown.down(sites, "all", plan=True)


async def test_a_bug_in_an_action_surfaces_and_a_failure_fails_the_site(
    topology: Topology,
) -> None:
    buggy = SiteMap(topology, ActingPool(NotImplementedError("todo")), None)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError):
        await updown.up(buggy, "alpha")
    failure = CommandError("alpha", "systemctl --user start", 1, "Failed to start")
    result = await updown.up(SiteMap(topology, ActingPool(failure), None), "alpha")  # type: ignore[arg-type]
    assert [(s.host, s.outcome) for s in result.sites] == [
        ("alpha", "failed"),
        ("local", "failed"),
    ]
    assert all((s.reason or "").startswith("start controller failed: ") for s in result.sites)
    assert all(str(failure) in (s.reason or "") for s in result.sites)


@pytest.mark.parametrize(
    "failure",
    [
        CommandError("alpha", "sh -c ...", 1, "Failed to connect to bus"),
        SiteStateError("alpha", "reading the state of alpha was cut short: gone"),
    ],
)
async def test_an_expected_failure_is_the_site_failing(
    topology: Topology, failure: SkupperMcpError
) -> None:
    result = await updown.up(SiteMap(topology, Pool(failure), None), "alpha")  # type: ignore[arg-type]
    assert not result.ok
    assert [(s.host, s.outcome) for s in result.sites] == [
        ("alpha", "failed"),
        ("local", "failed"),
    ]
    assert all(str(failure) in (s.reason or "") for s in result.sites)


@pytest.mark.parametrize(
    "past_bounds", [RecursionError("maximum recursion depth"), json.JSONDecodeError("x", "[", 0)]
)
async def test_a_parse_past_its_bounds_is_that_sites_failure(
    topology: Topology, past_bounds: Exception
) -> None:
    result = await updown.up(SiteMap(topology, Pool(past_bounds), None), "alpha")  # type: ignore[arg-type]
    assert not result.ok
    assert {s.host: s.outcome for s in result.sites} == {"alpha": "failed", "local": "failed"}
    acted = await updown.up(SiteMap(topology, ActingPool(past_bounds), None), "alpha")  # type: ignore[arg-type]
    assert {s.outcome for s in acted.sites} == {"failed"}


def test_site_errors_are_the_product_errors_and_a_parse_past_its_bounds() -> None:
    assert (SkupperMcpError, RecursionError, json.JSONDecodeError) == SITE_ERRORS
    assert not any(issubclass(RuntimeError, e) or issubclass(OSError, e) for e in SITE_ERRORS)


def test_every_error_the_product_raises_is_in_the_tree() -> None:
    """Every ``raise Name(...)`` in the product names a class of ``skupper_mcp.errors``
    (or, in the MCP front end, MCP's ToolError and protocol errors; or a precondition guard;
    or the AttributeError a module's ``__getattr__`` must raise for a name it does not have,
    PEP 562)."""
    tree = {
        name
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, SkupperMcpError)
    }
    outside = []
    for path in sorted(PRODUCT.rglob("*.py")):
        module = ast.parse(path.read_text(), str(path))
        lazy = {
            id(node)
            for top in module.body
            if isinstance(top, ast.FunctionDef) and top.name == "__getattr__"
            for node in ast.walk(top)
        }
        for node in ast.walk(module):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
                continue
            func = node.exc.func
            if not isinstance(func, ast.Name) or func.id[:1].islower():
                continue  # a helper that builds the error (reader.error(...)) is checked by type
            front = path.name in ("server.py", "prompts.py", "mcp_tasks.py")
            allowed = tree | PRECONDITIONS | ({"ToolError", "MCPError"} if front else set())
            if id(node) in lazy:
                allowed = allowed | {"AttributeError"}
            if func.id not in allowed:
                outside.append(f"{path.relative_to(PRODUCT)}:{node.lineno} raises {func.id}")
    assert outside == []
    assert not PRECONDITIONS & {e.__name__ for e in SITE_ERRORS}
