"""Issue 42's second bug on a sandbox world: rhel-ai has the tmpfs workaround and its router
runs, but its ``podman inspect`` prints what is not JSON (here a wrapper of the world's
podman, for that host and that subcommand alone). Status's setup-needed names it, up
refuses with that line, setup --check fails on it, and setup refuses the site without
stopping the router. Before, setup-needed was empty, up did not refuse, and setup stopped
the running router to re-create it, unsaid."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from skupper_mcp.engine.core import Engine
from skupper_mcp.results import CheckResult, OperationResult
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

HOST = "rhel-ai"
UNREAD = "router container default-skupper-router: the output of `podman inspect` could not be read"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The local site and rhel-ai (its tmpfs workaround on), on the emulated podman: the
    wrapper below stands in front of the world's own podman program."""
    spec = WorldSpec(providers=1, kubernetes=False, podman="emulated")
    with running_world(tmp_path_factory.mktemp("router-unread"), spec) as w:
        yield w


@contextlib.contextmanager
def inspect_garbled(world: World, host: str) -> Iterator[None]:
    """``podman inspect`` on ``host`` prints an HTML page and exits 0; every other podman
    command, and every other host's, is the world's own (run under its own name, from a
    folder beside the world's ``bin``: the emulated tools know themselves by it)."""
    podman = world.dir / "bin" / "podman"
    real = world.dir / "bin-real" / "podman"
    real.parent.mkdir()
    if podman.is_symlink():  # a link to the compiled command client
        real.symlink_to(os.path.realpath(podman))
    else:  # a script that starts Python
        shutil.copy2(podman, real)
    saved = podman.with_name(".podman-saved")
    podman.rename(saved)
    podman.write_text(
        "#!/bin/sh\n"
        f'case "${{SKMCP_SANDBOX_HOST:-}}" in */{host})\n'
        '    if [ "$1" = inspect ]; then echo "<html>bad gateway</html>"; exit 0; fi ;;\n'
        "esac\n"
        f'exec "{real}" "$@"\n'
    )
    podman.chmod(0o755)
    try:
        yield
    finally:
        saved.replace(podman)
        shutil.rmtree(real.parent)


def _site(result: OperationResult, host: str) -> tuple[str, str, list[str]]:
    found = next(s for s in result.sites if s.host == host)
    return found.outcome, found.reason or "", [st.name for st in found.steps]


def test_an_unreadable_router_fact_is_named_refused_and_nothing_is_recreated(
    world: World,
) -> None:
    topology: Path = world.topology

    async def run() -> None:
        async with Engine(load_topology(topology)) as engine:
            assert (await engine.setup()).ok
            assert (await engine.up()).ok
        with inspect_garbled(world, HOST):
            async with Engine(load_topology(topology)) as engine:
                status = await engine.status()
                row = next(s for s in status.sites if s.host == HOST)
                assert row.state == "up", row
                assert [line[: len(UNREAD)] for line in row.drift or []] == [UNREAD]
                up = await engine.up()
                outcome, reason, _ = _site(up, HOST)
                assert outcome == "failed" and UNREAD in reason, (outcome, reason)
                checked = await engine.setup(check=True)
                assert isinstance(checked, CheckResult)
                [needs] = [c for c in checked.checks if c.name == "setup-needed" and c.site == HOST]
                assert needs.status == "fail" and UNREAD in needs.detail, needs
                setup = await engine.setup()
                assert isinstance(setup, OperationResult)
                outcome, reason, steps = _site(setup, HOST)
                assert outcome == "failed" and UNREAD in reason, (outcome, reason)
                assert not any("recreate" in s or "stop" in s for s in steps), steps
        async with Engine(load_topology(topology)) as engine:
            after = await engine.status()
            row = next(s for s in after.sites if s.host == HOST)
            assert row.state == "up" and row.drift == [], row  # never stopped

    asyncio.run(run())
