"""The scripted fake connector and the pool's connector factory."""

from __future__ import annotations

import pytest

from fake_connector import Call, FakeConnector, FakeHosts, Reply, Unscripted
from skupper_mcp.connectors.base import SSHOptions, SSHTarget
from skupper_mcp.connectors.pool import ConnectorPool
from skupper_mcp.errors import CommandError, ConnectError


async def test_answers_by_pattern_and_records_what_ran() -> None:
    fake = FakeConnector("rhel-ai")
    fake.on(r"^skupper version", "cli 2.1.3\n")
    fake.on(r"systemctl --user start", exit_status=1, stderr="Unit not found")
    assert (await fake.run("skupper version", timeout=3)).stdout == "cli 2.1.3\n"
    failed = await fake.run("systemctl --user start x", stdin="data")
    assert (failed.exit_status, failed.stderr) == (1, "Unit not found")
    with pytest.raises(CommandError, match="Unit not found"):
        await fake.run("systemctl --user start x", check=True)
    assert fake.calls == [
        Call("skupper version", 3, None, False),
        Call("systemctl --user start x", 60.0, "data", False),
        Call("systemctl --user start x", 60.0, None, True),
    ]
    with pytest.raises(Unscripted, match="rm -rf"):
        await fake.run("rm -rf /")


async def test_a_handler_answers_first_and_none_falls_through() -> None:
    def handler(call: Call) -> Reply | None:
        return Reply(call.stdin or "") if call.command == "cat" else None

    fake = FakeConnector("local", handler)
    fake.on("^echo", "hi\n")
    assert (await fake.run("cat", stdin="in")).stdout == "in"
    assert (await fake.run("echo hi")).stdout == "hi\n"


async def test_the_pool_connects_every_connector_through_the_protocol() -> None:
    up = FakeConnector("rhel-ai")
    down = FakeConnector("rhtevan-work", unreachable="no route to host")
    pool = ConnectorPool(SSHOptions(), factory=FakeHosts({"rhel-ai": up, "rhtevan-work": down}))
    target = SSHTarget("127.0.0.2")
    assert await pool.get("rhel-ai", target) is up
    assert await pool.get("rhel-ai", target) is up  # one connector per host, connect() each get
    assert up.connects == 2
    with pytest.raises(ConnectError, match="no route to host"):
        await pool.get("rhtevan-work", target)
    down.unreachable = None
    assert await pool.get("rhtevan-work", target) is down  # the next get tries again
    await pool.close()
    assert up.closed and down.closed
