"""Fixtures shared by the foundation's tests: the example topology and small topologies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import leftovers
from browser import Browser, Page, chromium
from lifecycle import part_of
from mcp_client import MODES
from topology_samples import ssh_topology

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "topology.env.example"


@pytest.fixture
def example_path() -> Path:
    """The repository's topology.env.example."""
    return EXAMPLE


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    """The MCP client's mode: a test that takes it runs once in each (legacy and the
    default, ``auto``)."""
    return str(request.param)


@pytest.fixture
def write_topology(tmp_path: Path):
    """Write topology text to a file and return its path."""

    def write(text: str, name: str = "topology.env") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def refusing_topology(write_topology, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A topology whose only provider refuses at once: setup stops at its precheck and
    diagnose reads nothing, in a second or two."""
    monkeypatch.setenv("PATH", "/nonexistent")
    text = ssh_topology(
        [("alpha", "127.207.0.9", 1)],
        identities=[str(tmp_path / "none")],
        known_hosts=str(tmp_path / "known_hosts"),
        connect_timeout=2,
    )
    return write_topology(text)


# --- The suite's two halves -------------------------------------------------------------
#
# ``make unit`` runs ``-m "not sandbox and not openssh and not packaging and not browser and
# not spawns"`` (no world, no build, no browser, no Python process of the product started:
# a loop of a minute or less on 2 cores); ``make e2e`` the rest. A test is end-to-end when
# it uses a world fixture or lives under ``tests/lifecycle/`` or ``tests/sandbox/`` (the
# simulator's components: real routers, podman and systemd imitations, processes each): it
# is marked ``sandbox`` here, whatever its module says. A unit test's module that can start
# a world itself (it holds ``running_world`` or ``sandbox_command``) stops the run at
# collection instead of slowing ``make unit`` down.

WORLD_FIXTURES = frozenset({"world", "built", "openssh_world"})
E2E_DIRS = (ROOT / "tests" / "lifecycle", ROOT / "tests" / "sandbox")
E2E_MARKS = ("sandbox", "openssh", "packaging", "browser", "spawns")
#: What a test module starts a world with, when it does so itself.
WORLD_STARTERS = ("running_world", "sandbox_command")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "spawns: tests that start a Python process of the product (the CLI, the stdio or "
        "HTTP server, a fresh interpreter): make e2e",
    )


def is_e2e(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(mark) is not None for mark in E2E_MARKS)


def starts_worlds(item: pytest.Item) -> bool:
    """Whether the test's module holds what starts a sandbox world."""
    from skupper_sandbox import testing

    module = getattr(item, "module", None)
    return any(getattr(module, name, None) is getattr(testing, name) for name in WORLD_STARTERS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unmarked = []
    for item in items:
        path = Path(item.path).resolve()
        uses_world = WORLD_FIXTURES & set(getattr(item, "fixturenames", ()))
        if uses_world or any(d in path.parents for d in E2E_DIRS):
            item.add_marker(pytest.mark.sandbox)
        if not is_e2e(item) and starts_worlds(item):
            unmarked.append(item.nodeid)
    if unmarked:
        raise pytest.UsageError(
            "these tests' modules start sandbox worlds but the tests are not marked sandbox:"
            " use a world fixture, put them under tests/lifecycle/ or mark them"
            " pytest.mark.sandbox: " + ", ".join(unmarked[:5])
        )


@pytest.fixture
def bounded_mcp_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every MCP client the test opens must bound its requests: one without
    ``read_timeout_seconds`` fails at once instead of hanging the suite some day. (Every
    ``Client(...)`` in tests/ also passes it, by test_suite_rules.py.)"""
    import mcp

    init = mcp.Client.__init__

    def bounded(self: mcp.Client, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("read_timeout_seconds") is None:
            pytest.fail("an MCP Client without read_timeout_seconds: give it a bound")
        init(self, *args, **kwargs)

    monkeypatch.setattr(mcp.Client, "__init__", bounded)


# --- Workers: ``make unit`` and ``make e2e`` run pytest-xdist (``-n``) --------------------
#
# A file's tests run on one worker, in order, so its fixtures (a world, an sshd, a cluster)
# are made once. The lifecycle tests of a part share one world (``tests/lifecycle/``) and
# some start from what an earlier one left: each part is one unit of work.
# (Scopes, not ``xdist_group`` marks: xdist 3.8 sets those on a node attribute that pytest
# 9 no longer reads.)

LIFECYCLE_SCOPE = "tests/lifecycle"
#: Files whose tests all run on a world made for each of their parameters (and take no other
#: parameter, or a parameter's world would be made again on another worker): a parameter's
#: tests are a unit of work, so the two podman kinds of one file run on two workers at once.
#: The models catalog on both kinds was a sixth of the e2e half's worker time, all on one
#: worker, the longest unit (docs/testing.md, "Where the time goes").
WORLD_PER_PARAM = frozenset(
    {
        "tests/sandbox/test_handbuilt_van.py",
        "tests/sandbox/test_models_catalog.py",
        "tests/sandbox/test_reboot.py",
        "tests/sandbox/test_model_readiness.py",
    }
)
#: Files whose tests each make all they use (routers, sites, ports), none for the module:
#: each test is a unit of work. The real skrouterd's start makes this the longest file of
#: the simulator's components.
TEST_PER_UNIT = frozenset({"tests/sandbox/test_router.py"})


#: Files that share a session world (tests/sandbox/conftest.py) without changing it for each
#: other: one unit of work, so their world is made once, not once on each worker one of them
#: lands on. ``world`` (the example's hosts and the cluster): test_faults restores each fault
#: it makes; ``unset_world``: never set up, only read.
SHARED_WORLDS = {
    "tests/sandbox/test_world.py": "the session world",
    "tests/sandbox/test_faults.py": "the session world",
    "tests/sandbox/test_host_fidelity.py": "the session world",
    "tests/sandbox/test_never_set_up.py": "the world never set up",
    "tests/sandbox/test_error_layers.py": "the world never set up",
}


def work_unit(nodeid: str) -> str:
    path, _, name = nodeid.partition("::")
    if path in SHARED_WORLDS:
        return SHARED_WORLDS[path]
    if path.startswith(LIFECYCLE_SCOPE + "/"):
        return f"{LIFECYCLE_SCOPE} part {part_of(path)}"
    if path in WORLD_PER_PARAM and name.endswith("]"):
        return f"{path} [{name.rsplit('[', 1)[1]}"
    if path in TEST_PER_UNIT:
        return nodeid
    return path


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # no xdist: the suite runs in one process
    pass
else:

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> ByWorkUnit:
        return ByWorkUnit(config, log)


# --- What a run leaves running ----------------------------------------------------------
#
# The controller looks once, after every worker has ended (a worker's own processes end with
# its fixtures): what still mentions the run's temporary directory was left by a test. It is
# stopped, named, and fails the run, so the test that left it is found in this run rather
# than met by the next one.


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None)
    if basetemp is None:  # no test made a temporary directory
        return
    found = leftovers.left_running(basetemp)
    if not found:
        return
    leftovers.stop(found)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write("\n")
        reporter.write_sep("=", "processes the run left running (stopped now)", red=True)
        for leftover in found:
            reporter.write_line(f"pid {leftover.pid}: {leftover.command}")
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --- The browser suites' Chromium ------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for a module's tests."""
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh tab, closed after the test."""
    p = browser.new_page()
    yield p
    browser.close_page(p)


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the VAN view's screenshots are kept: ``$SKMCP_ARTEFACTS/van-view``, else a
    temporary directory (printed)."""
    base = os.environ.get("SKMCP_ARTEFACTS")
    path = Path(base) / "van-view" if base else tmp_path_factory.mktemp("van-view")
    path.mkdir(parents=True, exist_ok=True)
    print(f"VAN view screenshots: {path}")
    return path
