"""SSHConnector and ConnectorPool against real SSH servers on 127.204.0.x.

Every behaviour runs against asyncssh's server; the command behaviours also run against
OpenSSH's sshd when it is installed (CI installs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from polling import eventually
from skupper_mcp.connectors import ssh as ssh_connector
from skupper_mcp.connectors.base import SSHOptions, SSHTarget
from skupper_mcp.connectors.local import LocalConnector
from skupper_mcp.connectors.pool import ConnectorPool
from skupper_mcp.connectors.ssh import SSHConnector
from skupper_mcp.errors import (
    CommandError,
    CommandTimeout,
    ConnectError,
    HostKeyError,
    Kind,
    OutputLimitError,
)
from sshkit import (
    AsyncSSHServer,
    SilenceableLink,
    SSHServer,
    asyncssh_server,
    asyncssh_server_apart,
    blackhole_server,
    free_port,
    known_hosts_line,
    make_keys,
    openssh_available,
    openssh_server,
)

ASYNCSSH_ADDRESS = "127.204.0.10"
OPENSSH_ADDRESS = "127.204.0.11"
BLACKHOLE_ADDRESS = "127.204.0.12"
REFUSING_ADDRESS = "127.204.0.13"
POOL_ADDRESSES = ("127.204.0.20", "127.204.0.21")
#: What a 1 s connect timeout must end well within however busy the machine: what it
#: guards against (TCP's retransmits, a host that never answers) takes minutes.
SILENCE_BOUND = 30.0

SERVER_KINDS = [
    "asyncssh",
    *(
        pytest.param(
            kind,
            marks=[
                pytest.mark.openssh,
                pytest.mark.skipif(not openssh_available(), reason="OpenSSH sshd not installed"),
            ],
        )
        for kind in ("openssh", "openssh-dash")
    ),
]


@contextlib.asynccontextmanager
async def connected(target: SSHTarget, options: SSHOptions) -> AsyncIterator[SSHConnector]:
    """The connector ``gpu-1`` to ``target``, closed when the block ends however it ends."""
    conn = SSHConnector("gpu-1", target, options)
    try:
        yield conn
    finally:
        await conn.close()


@pytest.fixture(params=SERVER_KINDS)
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SSHServer]:
    if request.param == "asyncssh":
        async with asyncssh_server(tmp_path, ASYNCSSH_ADDRESS) as running:
            yield running
    else:
        shell = "/bin/dash" if request.param == "openssh-dash" else None
        async with openssh_server(tmp_path, OPENSSH_ADDRESS, shell=shell) as running:
            yield running


@pytest.fixture
async def asyncssh_only(tmp_path: Path) -> AsyncIterator[AsyncSSHServer]:
    async with asyncssh_server(tmp_path, ASYNCSSH_ADDRESS) as running:
        yield running


@pytest.fixture
async def connector(server: SSHServer) -> AsyncIterator[SSHConnector]:
    async with connected(server.target, server.options) as conn:
        yield conn


def _written(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie awaiting its parent's wait counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def hold_the_loop(seconds: float) -> None:
    """Hold the event loop as a long parse or import on it does: the time is what the tests
    that call this are about (past the connect timeout), not a wait for something."""
    time.sleep(seconds)


async def wait_for_file(path: Path) -> str:
    async def written() -> str | None:
        return _written(path)

    return await eventually(written, timeout=30, every=0.02, what=f"{path} to be written")


async def wait_gone(pid: int) -> None:
    async def gone() -> bool:
        return not _alive(pid)

    await eventually(gone, timeout=30, every=0.02, what=f"process {pid} to end")


# ---- commands -------------------------------------------------------------------------


async def test_echo_runs_on_the_host(connector: SSHConnector) -> None:
    result = await connector.run("echo hello")
    assert (result.host, result.exit_status, result.stdout, result.stderr) == (
        "gpu-1",
        0,
        "hello\n",
        "",
    )


async def test_exit_status_and_stderr_are_passed_through_separately(
    connector: SSHConnector,
) -> None:
    result = await connector.run("echo out; echo err >&2; exit 3")
    assert (result.exit_status, result.stdout, result.stderr) == (3, "out\n", "err\n")


async def test_check_turns_a_failure_into_command_error(connector: SSHConnector) -> None:
    with pytest.raises(CommandError) as raised:
        await connector.run("echo 'no such unit' >&2; exit 5", check=True)
    assert (raised.value.host, raised.value.exit_status) == ("gpu-1", 5)
    assert "no such unit" in str(raised.value)


async def test_stdin_reaches_the_remote_command(connector: SSHConnector) -> None:
    result = await connector.run("wc -c; cat", stdin="")
    assert result.stdout.split() == ["0"]
    result = await connector.run("tr a-z A-Z", stdin="line one\nline two\n")
    assert result.stdout == "LINE ONE\nLINE TWO\n"


async def test_one_connection_serves_many_commands(
    server: SSHServer, connector: SSHConnector
) -> None:
    results = [await connector.run(f"echo {n}") for n in range(4)]
    results += await asyncio.gather(*(connector.run(f"echo {n}") for n in range(4, 8)))
    assert [r.stdout for r in results] == [f"{n}\n" for n in range(8)]
    assert connector.connect_count == 1
    assert server.connections_accepted == 1


async def test_command_timeout_ends_the_remote_process(
    connector: SSHConnector, tmp_path: Path
) -> None:
    pidfile = tmp_path / "remote.pid"
    with pytest.raises(CommandTimeout) as raised:
        await connector.run(f"echo $$ > {pidfile}; exec sleep 30", timeout=0.5)
    assert raised.value.host == "gpu-1"
    await wait_gone(int(await wait_for_file(pidfile)))
    assert (await connector.run("echo still usable")).stdout == "still usable\n"


async def test_output_past_the_bound_ends_the_remote_command(
    connector: SSHConnector, tmp_path: Path
) -> None:
    pidfile = tmp_path / "yes.pid"
    with pytest.raises(OutputLimitError) as raised:
        await connector.run(f"echo $$ > {pidfile}; exec yes", timeout=60)
    assert raised.value.host == "gpu-1" and raised.value.stream == "stdout"
    await wait_gone(int(await wait_for_file(pidfile)))
    assert (await connector.run("echo still usable")).stdout == "still usable\n"


async def test_a_timed_out_command_leaves_no_process_behind(
    connector: SSHConnector, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    with pytest.raises(CommandTimeout):
        await connector.run(f"sleep 30 & echo $! > {pidfile}; wait", timeout=0.5)
    await wait_gone(int(await wait_for_file(pidfile)))


async def test_cancellation_closes_the_channel_and_ends_the_remote_process(
    connector: SSHConnector, tmp_path: Path
) -> None:
    pidfile = tmp_path / "remote.pid"
    task = asyncio.create_task(connector.run(f"echo $$ > {pidfile}; exec sleep 30"))
    pid = int(await wait_for_file(pidfile))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_gone(pid)


async def test_a_host_that_restarted_is_reconnected_on_the_next_command(
    asyncssh_only: AsyncSSHServer,
) -> None:
    async with connected(asyncssh_only.target, asyncssh_only.options) as conn:
        assert (await conn.run("echo before")).stdout == "before\n"
        await asyncssh_only.kill()
        await asyncssh_only.start()
        assert (await conn.run("echo after")).stdout == "after\n"
        assert conn.connect_count == 2


async def test_a_host_that_is_down_is_a_connect_error_then_recovers(
    asyncssh_only: AsyncSSHServer,
) -> None:
    async with connected(asyncssh_only.target, asyncssh_only.options) as conn:
        await conn.run("true")
        await asyncssh_only.kill()
        with pytest.raises(ConnectError, match="connection refused") as raised:
            await conn.run("true")
        assert raised.value.kind is Kind.CONNECT
        await asyncssh_only.start()
        assert (await conn.run("echo back")).stdout == "back\n"


async def test_a_held_connection_to_a_host_gone_silent_fails_within_the_connect_timeout(
    asyncssh_only: AsyncSSHServer,
) -> None:
    async with SilenceableLink(
        ASYNCSSH_ADDRESS, (asyncssh_only.address, asyncssh_only.port)
    ) as link:
        target = dataclasses.replace(asyncssh_only.target, port=link.port)
        with asyncssh_only.known_hosts.open("a") as known:
            known.write(known_hosts_line(asyncssh_only.keys.host_key, link.address, link.port))
        options = dataclasses.replace(asyncssh_only.options, connect_timeout=1.0)
        async with connected(target, options) as conn:
            await conn.run("true")
            link.go_silent()
            started = time.monotonic()
            with pytest.raises(ConnectError, match="stopped answering") as raised:
                await conn.run("true")
            assert raised.value.kind is Kind.TIMEOUT
            # the subject: the connect timeout ends it, where TCP's retransmits take
            # minutes (a bound no load brings a 1 s timeout near)
            assert time.monotonic() - started < SILENCE_BOUND
            link.resume()
            assert (await conn.run("echo back")).stdout == "back\n"
            assert conn.connect_count == 2


async def test_a_loop_held_past_the_deadline_does_not_fail_a_channel_the_host_answered(
    tmp_path: Path,
) -> None:
    """The answer deadline counts the time this process listened, not the time its loop
    spent on other work: a parse (or an import) that holds the loop past the deadline while
    the host answers at once is not a host that stopped answering. On a busy machine the
    kubernetes client's import on the loop held it 5-13 s, and SSH channels to live hosts
    failed 'stopped answering' (docs/sandbox.md 4a)."""
    async with asyncssh_server_apart(tmp_path, ASYNCSSH_ADDRESS) as server:
        options = dataclasses.replace(server.options, connect_timeout=1.0)
        async with connected(server.target, options) as conn:
            await conn.connect()
            running = asyncio.create_task(conn.run("echo answered"))
            await asyncio.sleep(0)  # the run asks for its channel and waits for the answer
            hold_the_loop(2.5)
            assert (await running).stdout == "answered\n"
            assert conn.connect_count == 1


async def test_a_loop_held_past_the_deadline_does_not_fail_a_connect_the_host_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for the connect: TCP, handshake and login are the host's answers too. The
    loop is held in the middle of the handshake, where the client decides on a new host
    key (any work of the loop's, there or elsewhere, holds it the same)."""
    decide = ssh_connector._HostKeyVerifier.decide

    def decide_holding_the_loop(self: Any, *args: Any) -> bool:
        hold_the_loop(2.5)
        return decide(self, *args)

    monkeypatch.setattr(ssh_connector._HostKeyVerifier, "decide", decide_holding_the_loop)
    async with asyncssh_server_apart(tmp_path, ASYNCSSH_ADDRESS) as server:
        server.known_hosts.write_text("")
        options = dataclasses.replace(
            server.options, connect_timeout=1.0, accept_new_host_keys=True
        )
        async with connected(server.target, options) as conn:
            await conn.connect()
            assert (await conn.run("echo answered")).stdout == "answered\n"


async def test_a_loop_held_while_a_given_up_command_is_killed_still_kills_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kill of a command given up on goes over a channel of its own, under the same
    deadline: a loop held past it while the host answers does not leave the command
    running (a fixed 2 s of wall time did, under make unit's load)."""
    login_command = ssh_connector.shell.login_command

    def holding_after_the_kill(command: str) -> str:
        if command.startswith("kill -s KILL"):
            # once the kill's channel is asked for (the caller's next await)
            asyncio.get_running_loop().call_soon(hold_the_loop, 2.5)
        return login_command(command)

    monkeypatch.setattr(ssh_connector.shell, "login_command", holding_after_the_kill)
    async with asyncssh_server_apart(tmp_path, ASYNCSSH_ADDRESS) as server:
        options = dataclasses.replace(server.options, connect_timeout=1.0)
        async with connected(server.target, options) as conn:
            pidfile = tmp_path / "remote.pid"
            task = asyncio.create_task(conn.run(f"echo $$ > {pidfile}; exec sleep 30"))
            pid = int(await wait_for_file(pidfile))
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await wait_gone(pid)


async def test_a_run_cancelled_while_its_channel_opens_still_ends_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host starts a command when it answers the exec request, before the client has
    read that answer: a run cancelled in between (its loop busy, on a loaded machine) must
    still end what the host started, once the channel is open. It left the command
    running: ``_end_remote`` only covered a run past its channel's opening. Here the run is
    cancelled just after its exec request went out and the host started the command."""
    import asyncssh.channel

    pidfile = tmp_path / "remote.pid"
    caller: list[asyncio.Task[Any]] = []
    make_request = asyncssh.channel.SSHClientChannel._make_request

    async def cancelled_after_exec(self: Any, request: bytes, *args: Any) -> Any:
        asked = asyncio.ensure_future(make_request(self, request, *args))
        if request == b"exec" and caller:
            await asyncio.sleep(0)  # the request is out
            deadline = time.monotonic() + 30
            while not _written(pidfile):  # the loop held: the host's answer stays unread
                assert time.monotonic() < deadline, "the host never started the command"
                hold_the_loop(0.01)
            caller[0].cancel()
        return await asked

    monkeypatch.setattr(asyncssh.channel.SSHClientChannel, "_make_request", cancelled_after_exec)
    async with (
        asyncssh_server_apart(tmp_path, ASYNCSSH_ADDRESS) as server,
        connected(server.target, server.options) as conn,
    ):
        await conn.connect()
        caller.append(asyncio.create_task(conn.run(f"echo $$ > {pidfile}; exec sleep 30")))
        with pytest.raises(asyncio.CancelledError):
            await caller[0]
        await wait_gone(int(_written(pidfile)))


async def test_a_target_without_a_user_logs_in_as_the_local_user(
    asyncssh_only: AsyncSSHServer,
) -> None:
    target = dataclasses.replace(asyncssh_only.target, user=None)
    async with connected(target, asyncssh_only.options) as conn:
        assert (await conn.run("echo hello")).stdout == "hello\n"


# ---- reaching the host ----------------------------------------------------------------


async def test_refused_host_fails_fast_with_a_hint() -> None:
    port = free_port(REFUSING_ADDRESS)
    options = SSHOptions(connect_timeout=2 * SILENCE_BOUND)
    conn = SSHConnector("gpu-1", SSHTarget(REFUSING_ADDRESS, port, "root"), options)
    started = time.monotonic()
    with pytest.raises(ConnectError) as raised:
        await conn.run("true")
    # the subject: the refusal ends it, not the connect timeout (twice the bound)
    assert time.monotonic() - started < SILENCE_BOUND
    assert raised.value.host == "gpu-1"
    assert f"is sshd running on {REFUSING_ADDRESS}:{port}?" in str(raised.value)
    assert raised.value.kind is Kind.CONNECT  # a closed port: not reached, not refused


async def test_host_that_never_answers_times_out_at_the_connect_timeout() -> None:
    async with blackhole_server(BLACKHOLE_ADDRESS) as (address, port):
        options = SSHOptions(connect_timeout=1.0)
        conn = SSHConnector("gpu-1", SSHTarget(address, port, "root"), options)
        started = time.monotonic()
        with pytest.raises(ConnectError) as raised:
            await conn.run("true")
        elapsed = time.monotonic() - started
    # the subject: the connect timeout, never less; more only as long as the machine kept
    # the loop from listening, and never unbounded
    assert 0.9 <= elapsed < SILENCE_BOUND
    assert f"timed out after 1s connecting to {address}:{port}" in str(raised.value)
    assert raised.value.kind is Kind.TIMEOUT


async def test_wrong_client_key_is_an_authentication_error(
    server: SSHServer, tmp_path: Path
) -> None:
    stranger = make_keys(tmp_path / "stranger").client_key
    options = dataclasses.replace(server.options, identity_files=(stranger,))
    conn = SSHConnector("gpu-1", server.target, options)
    with pytest.raises(ConnectError, match="authentication failed for user") as raised:
        await conn.run("true")
    # the host answered: a fix of the credentials, not of the network
    assert raised.value.kind is Kind.REFUSED


async def test_changed_host_key_is_refused_and_nothing_runs(
    server: SSHServer, tmp_path: Path
) -> None:
    impostor = make_keys(tmp_path / "impostor").host_key
    server.known_hosts.write_text(known_hosts_line(impostor, server.address, server.port))
    before = server.known_hosts.read_text()
    marker = tmp_path / "ran"
    options = dataclasses.replace(server.options, accept_new_host_keys=True)
    conn = SSHConnector("gpu-1", server.target, options)
    with pytest.raises(HostKeyError) as raised:
        await conn.run(f"touch {marker}")
    message = str(raised.value)
    assert f"host key for [{server.address}]:{server.port} has changed" in message
    assert "ssh-keygen -R" in message
    assert not marker.exists()
    assert server.known_hosts.read_text() == before


@pytest.mark.parametrize("revoked_for", ["host and port", "host alone"])
async def test_a_revoked_host_key_is_refused_on_any_port(
    asyncssh_only: AsyncSSHServer, tmp_path: Path, revoked_for: str
) -> None:
    """asyncssh's own match lost a revocation across its retry without the port: a key
    revoked for ``[host]:port`` was then only unknown (accepted and recorded with
    SSH_ACCEPT_NEW_HOST_KEYS=true), one revoked for ``host`` trusted on its port."""
    server = asyncssh_only
    assert server.port != 22
    key = server.keys.host_key
    if revoked_for == "host and port":
        known = "@revoked " + known_hosts_line(key, server.address, server.port)
    else:
        known = "@revoked " + known_hosts_line(key, server.address, 22)
        known += known_hosts_line(key, server.address, server.port)
    server.known_hosts.write_text(known)
    marker = tmp_path / "ran"
    options = dataclasses.replace(server.options, accept_new_host_keys=True)
    async with connected(server.target, options) as conn:
        with pytest.raises(HostKeyError, match="marked @revoked") as raised:
            await conn.run(f"touch {marker}")
    assert "whatever SSH_ACCEPT_NEW_HOST_KEYS says" in str(raised.value)
    assert not marker.exists()
    assert server.known_hosts.read_text() == known


async def test_a_key_revoked_for_another_host_does_not_refuse_this_one(
    asyncssh_only: AsyncSSHServer,
) -> None:
    server = asyncssh_only
    other = "@revoked " + known_hosts_line(server.keys.host_key, "127.204.0.99", server.port)
    trusted = known_hosts_line(server.keys.host_key, server.address, server.port)
    server.known_hosts.write_text(other + trusted)
    async with connected(server.target, server.options) as conn:
        assert (await conn.run("echo trusted")).stdout == "trusted\n"


async def test_unknown_host_is_refused_with_how_to_trust_it(server: SSHServer) -> None:
    server.known_hosts.write_text("")
    conn = SSHConnector("gpu-1", server.target, server.options)
    with pytest.raises(HostKeyError) as raised:
        await conn.run("true")
    assert raised.value.kind is Kind.REFUSED
    assert "ssh-keyscan" in str(raised.value)
    assert "SSH_ACCEPT_NEW_HOST_KEYS=true" in str(raised.value)
    assert server.known_hosts.read_text() == ""


async def test_accept_new_trusts_an_unknown_host_and_records_its_key(server: SSHServer) -> None:
    server.known_hosts.unlink()
    accepting = dataclasses.replace(server.options, accept_new_host_keys=True)
    async with connected(server.target, accepting) as conn:
        assert (await conn.run("echo first")).stdout == "first\n"
    expected = known_hosts_line(server.keys.host_key, server.address, server.port)
    assert server.known_hosts.read_text() == expected
    strict = SSHConnector("gpu-1", server.target, server.options)
    try:
        assert (await strict.run("echo known")).stdout == "known\n"
    finally:
        await strict.close()


async def test_secrets_never_appear_in_errors(server: SSHServer, tmp_path: Path) -> None:
    server.known_hosts.write_text("")
    conn = SSHConnector("gpu-1", server.target, server.options)
    with pytest.raises(HostKeyError) as raised:
        await conn.run("true")
    private = server.keys.client_key.read_text()
    body = "".join(private.splitlines()[1:-1])
    assert body[:40] not in str(raised.value)


# ---- pool -----------------------------------------------------------------------------


async def test_pool_hands_out_one_connection_to_concurrent_callers(
    asyncssh_only: AsyncSSHServer,
) -> None:
    async with ConnectorPool(asyncssh_only.options) as pool:
        got = await asyncio.gather(*(pool.get("gpu-1", asyncssh_only.target) for _ in range(5)))
        assert all(c is got[0] for c in got)
        assert (await got[0].run("echo shared")).stdout == "shared\n"
        assert await pool.get("gpu-1", asyncssh_only.target) is got[0]
    assert asyncssh_only.connections_accepted == 1


async def test_pool_gives_a_local_connector_without_a_target() -> None:
    pool = ConnectorPool()
    try:
        local = await pool.get("local", None)
        assert isinstance(local, LocalConnector)
        assert (await local.run("echo here")).stdout == "here\n"
    finally:
        await pool.close()


async def test_a_slow_host_does_not_delay_the_others(tmp_path: Path) -> None:
    events: list[str] = []
    async with (
        asyncssh_server(tmp_path / "a", POOL_ADDRESSES[0]) as fast,
        blackhole_server(BLACKHOLE_ADDRESS, accepted=events) as hole1,
        blackhole_server(POOL_ADDRESSES[1], accepted=events) as hole2,
    ):
        options = dataclasses.replace(fast.options, connect_timeout=1.0)

        async def get(pool: ConnectorPool, name: str, target: SSHTarget) -> object:
            try:
                return await pool.get(name, target)
            except ConnectError as exc:
                events.append(f"failed {name}")
                return exc

        async with ConnectorPool(options) as pool:
            outcomes = await asyncio.gather(
                get(pool, "fast", fast.target),
                get(pool, "slow-1", SSHTarget(*hole1, "root")),
                get(pool, "slow-2", SSHTarget(*hole2, "root")),
            )
    assert isinstance(outcomes[0], SSHConnector)
    assert all(isinstance(o, ConnectError) for o in outcomes[1:])
    # both silent hosts were dialled before either gave up: at once, not one after another
    assert sorted(events[:2]) == [f"accept {a}" for a in (BLACKHOLE_ADDRESS, POOL_ADDRESSES[1])]
    assert sorted(events[2:]) == ["failed slow-1", "failed slow-2"], events


@pytest.mark.skipif(os.geteuid() != 0, reason="sshd needs root to change user")
async def test_openssh_runs_commands_as_the_target_user(tmp_path: Path) -> None:
    if not openssh_available():
        pytest.skip("OpenSSH sshd not installed")
    async with (
        openssh_server(tmp_path, OPENSSH_ADDRESS) as sshd,
        connected(sshd.target, sshd.options) as conn,
    ):
        assert (await conn.run("id -un")).stdout.strip() == sshd.user


async def test_concurrent_commands_to_a_silent_host_share_one_connect_attempt() -> None:
    """Three callers at once wait one connect timeout and all get its error, instead of
    queueing to repeat it (1x, 2x, 3x the timeout)."""
    accepted: list[str] = []
    async with blackhole_server(BLACKHOLE_ADDRESS, accepted=accepted) as (address, port):
        options = SSHOptions(connect_timeout=1.0)
        conn = SSHConnector("gpu-1", SSHTarget(address, port, "root"), options)
        outcomes = await asyncio.gather(
            conn.run("true"), conn.connect(), conn.run("uptime"), return_exceptions=True
        )
        await conn.close()
    assert all(isinstance(o, ConnectError) and "timed out after 1s" in str(o) for o in outcomes)
    assert accepted == [f"accept {address}"], "callers repeated the connect one after another"
