"""Streamable HTTP is safe by default: a real server process on 127.0.0.1, driven with httpx
and with mcp.Client, needs the bearer token on every request and checks Host and Origin; a
bind outside loopback without an explicit token does not start."""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from mcp.shared._httpx_utils import create_mcp_http_client

from polling import wait_for
from skupper_mcp.errors import ConfigError, LocalStateError
from skupper_mcp.http_auth import (
    TOKEN_FILE_NAME,
    TOKEN_VARIABLE,
    http_access,
    is_loopback,
    stored_token,
    transport_security,
)
from skupper_mcp.http_sessions import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE,
    IDLE_VARIABLE,
    SESSIONS_VARIABLE,
    SessionLimits,
    session_limits,
)
from skupper_mcp.server import serve
from skupper_sandbox.netprobe import port_open
from topology_samples import ALL_TOOLS, SMALL_TOPOLOGY

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

CLIENT_TIMEOUT = 30.0
START_TIMEOUT = 30.0
GOOD_TOKEN = "a-test-token-that-is-long-enough"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


@dataclass
class Served:
    url: str
    port: int
    process: subprocess.Popen[str]
    stderr: Path

    def log(self) -> str:
        return self.stderr.read_text()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}
    env["XDG_STATE_HOME"] = str(state / "xdg")
    return env | extra


def topology(tmp: Path) -> Path:
    path = tmp / "topology.env"
    path.write_text(SMALL_TOPOLOGY + f"STATE_DIR={tmp / 'state'}\n")
    return path


def command(topology_path: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "skupper_mcp",
        "--topology",
        str(topology_path),
        "--transport",
        "streamable-http",
        *args,
    ]


def listening(port: int, process: subprocess.Popen[str], stderr: Path) -> bool:
    if process.poll() is not None:
        pytest.fail(f"the server exited ({process.returncode}): {stderr.read_text()}")
    return port_open("127.0.0.1", port)


def start(tmp: Path, *args: str, env: dict[str, str]) -> Iterator[Served]:
    """A server process on a free loopback port; stopped (and waited for) afterwards."""
    port = free_port()
    stderr = tmp / f"server-{port}.log"
    with stderr.open("w") as sink:
        process = subprocess.Popen(
            command(topology(tmp), "--host", "127.0.0.1", "--port", str(port), *args),
            stdout=subprocess.DEVNULL,
            stderr=sink,
            env=env,
            text=True,
        )
    try:
        wait_for(
            lambda: listening(port, process, stderr),
            timeout=START_TIMEOUT,
            what="the HTTP server listening",
        )
        yield Served(f"http://127.0.0.1:{port}/mcp", port, process, stderr)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server started with no token given: it generates one in STATE_DIR."""
    tmp = tmp_path_factory.mktemp("generated")
    yield from start(tmp, env=server_env(tmp))


@pytest.fixture(scope="module")
def from_variable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("variable")
    yield from start(tmp, env=server_env(tmp, **{TOKEN_VARIABLE: GOOD_TOKEN}))


def token_of(served: Served) -> str:
    path = Path(served.stderr).parent / "state" / TOKEN_FILE_NAME
    return path.read_text().strip()


def post(served: Served, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(
        served.url, json=INITIALIZE, headers=MCP_HEADERS | headers, timeout=CLIENT_TIMEOUT
    )


@pytest.mark.spawns
def test_a_generated_token_is_stored_0600_and_only_its_place_is_printed(
    generated: Served,
) -> None:
    path = Path(generated.stderr).parent / "state" / TOKEN_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = token_of(generated)
    assert len(token) >= 40
    log = generated.log()
    assert f"generated an HTTP bearer token in {path}" in log
    assert f"Authorization: Bearer $(cat {path})" in log
    assert token not in log


@pytest.mark.spawns
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"authorization": "Bearer wrong-token-of-some-length"},
        {"authorization": "Bearer"},
        {"authorization": "Basic dXNlcjpwYXNz"},
    ],
    ids=["none", "wrong", "empty", "basic"],
)
def test_a_request_without_the_token_gets_401(generated: Served, headers: dict[str, str]) -> None:
    response = post(generated, headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.spawns
def test_the_token_under_another_scheme_gets_401(generated: Served) -> None:
    response = post(generated, {"authorization": f"Basic {token_of(generated)}"})
    assert response.status_code == 401


@pytest.mark.spawns
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_with_the_token_initializes_and_lists_tools(
    generated: Served, mode: str
) -> None:
    http = create_mcp_http_client(headers={"authorization": f"Bearer {token_of(generated)}"})
    async with (
        http,
        Client(
            streamable_http_client(generated.url, http_client=http),
            mode=mode,
            read_timeout_seconds=CLIENT_TIMEOUT,
        ) as client,
    ):
        tools = (await client.list_tools()).tools
        resolved = await client.call_tool("resolve_profile", {"name": "a-big"})
    assert {t.name for t in tools} == ALL_TOOLS
    assert (resolved.structured_content or {})["host"] == "alpha"


@pytest.mark.spawns
@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example:80"}, 421),
        ({"host": "127.0.0.1:1"}, 421),
        ({"origin": "http://evil.example"}, 403),
    ],
    ids=["host", "other-port", "origin"],
)
def test_a_forged_host_or_origin_is_refused_even_with_the_token(
    from_variable: Served, headers: dict[str, str], status: int
) -> None:
    authorized = {"authorization": f"Bearer {GOOD_TOKEN}"}
    assert post(from_variable, authorized).status_code == 200
    assert post(from_variable, authorized | headers).status_code == status


@pytest.mark.spawns
def test_the_variable_gives_the_token_and_nothing_is_generated(from_variable: Served) -> None:
    assert post(from_variable, {"authorization": "Bearer " + GOOD_TOKEN}).status_code == 200
    assert post(from_variable, {}).status_code == 401
    assert not (Path(from_variable.stderr).parent / "state" / TOKEN_FILE_NAME).exists()
    assert f"Bearer ${TOKEN_VARIABLE}" in from_variable.log()


@pytest.mark.spawns
def test_the_loopback_opt_out_needs_no_header_but_still_checks_host(tmp_path: Path) -> None:
    for served in start(tmp_path, "--insecure-no-auth-on-loopback", env=server_env(tmp_path)):
        assert post(served, {}).status_code == 200
        assert post(served, {"host": "evil.example:80"}).status_code == 421
        assert "WARNING --insecure-no-auth-on-loopback" in served.log()
    assert not (tmp_path / "state" / TOKEN_FILE_NAME).exists()


@pytest.mark.spawns
@pytest.mark.parametrize(
    ("args", "extra", "words"),
    [
        (["--host", "0.0.0.0"], {}, "--host 0.0.0.0 is outside loopback"),
        (["--host", "::"], {}, "pass --token-file PATH or set SKUPPER_MCP_HTTP_TOKEN"),
        (
            ["--host", "0.0.0.0", "--insecure-no-auth-on-loopback"],
            {TOKEN_VARIABLE: GOOD_TOKEN},
            "is for loopback only",
        ),
        (["--host", "127.0.0.1"], {TOKEN_VARIABLE: "short"}, "at least 16 visible ASCII"),
    ],
    ids=["any-v4", "any-v6", "opt-out-off-loopback", "short-token"],
)
def test_an_unsafe_start_exits_2_with_what_to_do(
    tmp_path: Path, args: list[str], extra: dict[str, str], words: str
) -> None:
    result = subprocess.run(
        command(topology(tmp_path), "--port", str(free_port()), *args),
        capture_output=True,
        text=True,
        env=server_env(tmp_path, **extra),
        timeout=START_TIMEOUT,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert words in result.stderr
    assert not (tmp_path / "state" / TOKEN_FILE_NAME).exists()


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("myhost.example", False),
    ],
)
def test_loopback_is_an_address_not_a_name_that_resolves(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_token_file_outside_loopback_is_accepted_when_only_we_can_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    token_file = tmp_path / "token"
    token_file.write_text(GOOD_TOKEN + "\n")
    token_file.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        http_access("0.0.0.0", token_file=token_file, no_auth=False, state_dir=tmp_path)
    token_file.chmod(0o600)
    access = http_access("0.0.0.0", token_file=token_file, no_auth=False, state_dir=tmp_path)
    assert access.token == GOOD_TOKEN
    monkeypatch.setenv(TOKEN_VARIABLE, GOOD_TOKEN)
    with pytest.raises(ConfigError, match="keep one"):
        http_access("127.0.0.1", token_file=token_file, no_auth=False, state_dir=tmp_path)


def test_the_generated_token_is_made_once_and_never_through_a_link(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = stored_token(state)
    assert stored_token(state) == first
    assert stat.S_IMODE((state / TOKEN_FILE_NAME).stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    target = tmp_path / "target"
    target.write_text("")
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o700)
    (planted / TOKEN_FILE_NAME).symlink_to(target)
    with pytest.raises(ConfigError, match="cannot read the HTTP token file"):
        stored_token(planted)
    assert target.read_text() == ""
    linked_state = tmp_path / "linked-state"
    linked_state.symlink_to(planted)
    with pytest.raises(LocalStateError, match="symbolic link"):
        stored_token(linked_state)


def test_host_and_origin_allow_the_bound_address_and_the_localhost_forms() -> None:
    settings = transport_security("::1", 8765)
    assert settings.enable_dns_rebinding_protection
    assert settings.allowed_hosts == ["[::1]:8765", "127.0.0.1:8765", "localhost:8765"]
    assert "http://localhost:8765" in settings.allowed_origins
    assert not any("*" in h for h in settings.allowed_hosts + settings.allowed_origins)


def open_session(served: Served, token: str) -> httpx.Response:
    return post(served, {"authorization": f"Bearer {token}"})


@pytest.mark.spawns
def test_sessions_past_the_cap_get_503_until_one_is_closed_or_idles_out(tmp_path: Path) -> None:
    """Authenticated clients could open sessions without end; past ``--max-sessions`` a new
    one is refused as the SDK's session manager refuses it, and a place frees up when a
    session is deleted or has idled past ``--session-idle-timeout``."""
    env = server_env(tmp_path, **{TOKEN_VARIABLE: GOOD_TOKEN})
    idle = 10.0  # room for the steps before the wait, on a loaded machine
    args = ("--max-sessions", "2", "--session-idle-timeout", str(idle))
    for served in start(tmp_path, *args, env=env):
        first = open_session(served, GOOD_TOKEN)
        before_second = time.monotonic()  # the second session idles from after this
        second = open_session(served, GOOD_TOKEN)
        assert (first.status_code, second.status_code) == (200, 200)
        ids = [r.headers["mcp-session-id"] for r in (first, second)]
        assert len(set(ids)) == 2
        refused = open_session(served, GOOD_TOKEN)
        assert refused.status_code == 503
        assert refused.headers["content-type"].startswith("application/json")
        body = refused.json()
        assert body["jsonrpc"] == "2.0" and body["id"] is None
        assert body["error"]["message"] == "Too many open sessions"
        session_headers = MCP_HEADERS | {
            "authorization": f"Bearer {GOOD_TOKEN}",
            "mcp-protocol-version": INITIALIZE["params"]["protocolVersion"],  # type: ignore[index]
        }
        closed = httpx.delete(
            served.url,
            headers=session_headers | {"mcp-session-id": ids[0]},
            timeout=CLIENT_TIMEOUT,
        )
        assert closed.status_code == 200
        assert open_session(served, GOOD_TOKEN).status_code == 200  # the deleted one's place
        assert open_session(served, GOOD_TOKEN).status_code == 503

        def freed(served: Served = served) -> bool:
            return open_session(served, GOOD_TOKEN).status_code == 200

        wait_for(
            freed,
            timeout=idle * 4,
            what="an idle session to be closed",
        )
        # the first place to free is the second session's: never before it idled
        assert time.monotonic() - before_second >= idle
        gone = httpx.post(
            served.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
            headers=session_headers | {"mcp-session-id": ids[1]},
            timeout=CLIENT_TIMEOUT,
        )
        assert gone.status_code == 404


@pytest.mark.parametrize(
    ("flags", "environment", "expected"),
    [
        ((None, None), {}, SessionLimits(DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE)),
        ((None, None), {SESSIONS_VARIABLE: "5", IDLE_VARIABLE: "90"}, SessionLimits(5, 90.0)),
        ((3, 2.5), {SESSIONS_VARIABLE: "5", IDLE_VARIABLE: "90"}, SessionLimits(3, 2.5)),
    ],
    ids=["defaults", "variables", "flags-first"],
)
def test_session_limits_come_from_the_flags_then_the_variables(
    monkeypatch: pytest.MonkeyPatch,
    flags: tuple[int | None, float | None],
    environment: dict[str, str],
    expected: SessionLimits,
) -> None:
    for name in (SESSIONS_VARIABLE, IDLE_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert session_limits(*flags) == expected


@pytest.mark.parametrize(
    ("flags", "environment", "words"),
    [
        ((0, None), {}, "--max-sessions must be a whole number of sessions above 0"),
        ((None, -1.0), {}, "--session-idle-timeout must be a number of seconds above 0"),
        ((None, None), {SESSIONS_VARIABLE: "many"}, f"{SESSIONS_VARIABLE} must be"),
        ((None, None), {IDLE_VARIABLE: "nan"}, f"{IDLE_VARIABLE} must be"),
        ((None, None), {IDLE_VARIABLE: "inf"}, f"{IDLE_VARIABLE} must be"),
    ],
)
def test_a_session_limit_that_is_no_positive_number_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
    flags: tuple[int | None, float | None],
    environment: dict[str, str],
    words: str,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=re.escape(words)):
        session_limits(*flags)


def test_the_idle_default_is_the_sdks() -> None:
    assert DEFAULT_SESSION_IDLE == DEFAULT_SESSION_IDLE_TIMEOUT


def test_session_flags_under_stdio_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="apply to --transport streamable-http only"):
        serve(str(topology(tmp_path)), transport="stdio", max_sessions=3)
