"""Fixtures shared by the foundation's tests: the example topology and small topologies."""

from __future__ import annotations

from pathlib import Path

import pytest

from lifecycle import part_of

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "topology.env.example"


@pytest.fixture
def example_path() -> Path:
    """The repository's topology.env.example."""
    return EXAMPLE


@pytest.fixture
def write_topology(tmp_path: Path):
    """Write topology text to a file and return its path."""

    def write(text: str, name: str = "topology.env") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


# --- The suite's two halves -------------------------------------------------------------
#
# ``make unit`` runs ``-m "not sandbox and not openssh and not packaging and not browser"``
# (seconds, no world, no build, no browser); ``make e2e`` the rest. A test is end-to-end
# when it uses a world fixture or lives under ``tests/lifecycle/``: it is marked ``sandbox``
# here, whatever its module says. A test that starts a world some other way without the
# mark fails instead of slowing ``make unit`` down.

WORLD_FIXTURES = frozenset({"world", "built", "openssh_world"})
E2E_DIRS = (ROOT / "tests" / "lifecycle",)
E2E_MARKS = ("sandbox", "openssh", "packaging", "browser")
_current = {"e2e": False, "name": ""}


def is_e2e(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(mark) is not None for mark in E2E_MARKS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(item.path).resolve()
        uses_world = WORLD_FIXTURES & set(getattr(item, "fixturenames", ()))
        if uses_world or any(d in path.parents for d in E2E_DIRS):
            item.add_marker(pytest.mark.sandbox)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _current["e2e"] = is_e2e(item)
    _current["name"] = item.nodeid


def pytest_configure(config: pytest.Config) -> None:
    _bound_mcp_clients()
    from skupper_sandbox import testing

    original = testing.sandbox_command
    if getattr(original, "guarded", False):
        return

    def guarded(*args: str, **kwargs: object):  # type: ignore[no-untyped-def]
        if args[:1] == ("up",) and not _current["e2e"]:
            pytest.fail(
                f"{_current['name']} starts a sandbox world but is not marked sandbox: use a"
                " world fixture, put it under tests/lifecycle/ or mark it pytest.mark.sandbox",
                pytrace=False,
            )
        return original(*args, **kwargs)

    guarded.guarded = True  # type: ignore[attr-defined]
    testing.sandbox_command = guarded  # type: ignore[assignment]


def _bound_mcp_clients() -> None:
    """Every MCP client a test opens must bound its requests: one without
    ``read_timeout_seconds`` fails at once instead of hanging the suite some day."""
    import mcp

    init = mcp.Client.__init__
    if getattr(init, "bounded", False):
        return

    def bounded(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("read_timeout_seconds") is None:
            pytest.fail("an MCP Client without read_timeout_seconds: give it a bound")
        init(self, *args, **kwargs)

    bounded.bounded = True  # type: ignore[attr-defined]
    mcp.Client.__init__ = bounded  # type: ignore[method-assign]


# --- Workers: ``make unit`` and ``make e2e`` run pytest-xdist (``-n``) --------------------
#
# A file's tests run on one worker, in order, so its fixtures (a world, an sshd, a cluster)
# are made once. The lifecycle tests of a part share one world (``tests/lifecycle/``) and
# some start from what an earlier one left: each part is one unit of work.
# (Scopes, not ``xdist_group`` marks: xdist 3.8 sets those on a node attribute that pytest
# 9 no longer reads.)

LIFECYCLE_SCOPE = "tests/lifecycle"
#: Files whose tests all run on a world made for each of their parameters: a parameter's
#: tests are a unit of work.
WORLD_PER_PARAM = frozenset({"tests/sandbox/test_handbuilt_van.py"})
#: Files whose tests each make all they use (routers, sites, ports), none for the module:
#: each test is a unit of work. The real skrouterd's start makes these the longest unit
#: file of the fast half.
TEST_PER_UNIT = frozenset({"tests/sandbox/test_router.py"})


def work_unit(nodeid: str) -> str:
    path, _, name = nodeid.partition("::")
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
