"""The logs tool on the live world, as agents (MCP, in-process) and people (the CLI) use it:
real router output from a provider's container and from the cluster's router pod, the line
bound, what is not there, an unknown or unreachable target, and secrets that never come back."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from skupper_mcp.engine.core import Engine
from skupper_mcp.facts.redact import PRIVATE_KEY_MARK
from skupper_mcp.results import LogsResult
from skupper_mcp.server import build_server
from skupper_sandbox import real_podman
from skupper_sandbox.testing import World

from .conftest import NS, host_file, namespace_dir
from .helpers import cli, only_up

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

#: Every MCP request of this module is bounded: a log read takes a second or two.
CLIENT_TIMEOUT = 60.0
ROUTER = f"{NS}-skupper-router"
# skrouterd's line: "2026-12-01 03:24:25.513063 +0000 ROUTER (info) Router started in ..."
ROUTER_LINE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} \+0000 [A-Z_]+ "
    r"\((trace|debug|info|notice|warning|error|critical)\) "
)
STARTED = re.compile(r"ROUTER \(info\) Router started in (Interior|Edge|Standalone) mode")


async def call_logs(world: World, **arguments: Any) -> tuple[bool, str, dict[str, Any] | None]:
    """One logs call through a fresh in-process MCP server: (is_error, text, structured)."""
    async with Client(
        build_server(world.topology), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        result = await client.call_tool("logs", arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    return result.is_error, text, result.structured_content


async def logs_over_mcp(world: World, **arguments: Any) -> LogsResult:
    is_error, text, structured = await call_logs(world, **arguments)
    assert not is_error, text
    return LogsResult.model_validate(structured)


def container_log(world: World, host: str, container: str) -> Path:
    """The emulated podman's log file of a container (``ctr.log``)."""
    home = json.loads(host_file(world, host).read_text())["host_dir"]
    return Path(home) / "home/.local/share/containers/sandbox" / container / "ctr.log"


def container_lines(world: World, host: str, container: str) -> list[str]:
    """The lines the container wrote: its ``ctr.log``, or on a real-podman host
    (``--podman real``) what its podman keeps, read with ``podman logs``."""
    if real_podman.is_real(world.host_dir(host)):
        code, out, err = world.ssh(host, f"podman logs {shlex.quote(container)} 2>&1")
        assert code == 0, out + err
        return out.splitlines()
    return container_log(world, host, container).read_text().splitlines()


def contiguous_in(lines: list[str], whole: list[str]) -> bool:
    """Whether ``lines`` appear in ``whole`` one after another, as a tail read gives them."""
    return any(whole[i : i + len(lines)] == lines for i in range(len(whole) - len(lines) + 1))


async def test_a_providers_router_log_over_mcp_is_the_routers_own_output(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ("rhtevan-work",))  # a fresh start: its opening lines are recent
    result = await logs_over_mcp(built, target="g3b-16k", lines=500)
    assert (result.host, result.site, result.role, result.platform) == (
        "rhtevan-work",
        "hub-rhtevan-work",
        "provider",
        "podman",
    )
    assert (result.component, result.source, result.found) == ("router", ROUTER, True)
    assert result.lines and all(ROUTER_LINE.match(line) for line in result.lines), result.lines
    assert any(STARTED.search(line) for line in result.lines), result.lines[:40]
    assert result.redactions == 0
    written = container_lines(built, "rhtevan-work", ROUTER)
    assert contiguous_in(result.lines, written)


def test_lines_5_on_the_cli_gives_the_newest_five(built: World) -> None:
    table = cli(built, "logs", "rhtevan-work", "--lines", "5")
    assert table.returncode == 0, table.stderr
    printed = table.stdout.splitlines()
    assert len(printed) == 5 and all(ROUTER_LINE.match(line) for line in printed), printed
    assert f"5 lines from {ROUTER}" in table.stderr
    as_json = cli(built, "--json", "logs", "hub-rhtevan-work", "--lines", "5")
    assert as_json.returncode == 0, as_json.stderr
    result = LogsResult.model_validate_json(as_json.stdout)
    assert (result.requested, len(result.lines), result.source) == (5, 5, ROUTER)
    written = container_lines(built, "rhtevan-work", ROUTER)
    assert contiguous_in(result.lines, written)


def test_the_controllers_log_is_its_containers(built: World) -> None:
    user = json.loads(host_file(built, "rhel-ai").read_text())["user"]
    run = cli(built, "--json", "logs", "rhel-ai", "--component", "controller", "--lines", "3")
    assert run.returncode == 0, run.stderr
    result = LogsResult.model_validate_json(run.stdout)
    assert (result.component, result.source, result.found) == (
        "controller",
        f"{user}-skupper-controller",
        True,
    )
    written = container_lines(built, "rhel-ai", result.source or "")
    assert result.lines == written[-3:]


async def test_the_clusters_router_pod_log_and_where_its_controller_is(built: World) -> None:
    result = await logs_over_mcp(built, target="crc", lines=200)
    assert (result.host, result.platform, result.found) == ("crc", "kubernetes", True)
    assert (result.source or "").startswith("skupper-router-")
    assert result.lines and all(ROUTER_LINE.match(line) for line in result.lines), result.lines
    pod_log = built.dir / "kube" / "pods" / (result.source or "") / "router.log"
    assert contiguous_in(result.lines, pod_log.read_text().splitlines())

    controller = await logs_over_mcp(built, target="crc-sandbox", component="controller")
    assert (controller.found, controller.source, controller.lines) == (False, None, [])
    assert "outside the site's namespace" in (controller.detail or "")
    assert "kubectl logs -n skupper deployment/skupper-controller" in (controller.detail or "")
    run = cli(built, "logs", "crc", "--component", "controller")
    assert run.returncode == 3 and "outside the site's namespace" in run.stdout, run


async def test_an_unknown_or_unreachable_target_is_a_tool_error_naming_it(built: World) -> None:
    is_error, text, _ = await call_logs(built, target="nowhere")
    assert is_error and "unknown target 'nowhere'" in text and "rhtevan-work" in text
    is_error, text, _ = await call_logs(built, target="all")
    assert is_error and "one site at a time" in text
    built.fault("rhel-ai", "blackhole")
    try:
        started = time.monotonic()
        is_error, text, _ = await call_logs(built, target="rhel-ai")
        seconds = time.monotonic() - started
    finally:
        built.fault("rhel-ai", "restore")
    assert is_error and "cannot connect to rhel-ai" in text, text
    # the subject: the connect timeout (5 s of listening) ends it, not a command's (60 s)
    assert seconds < 30, seconds


async def test_a_private_key_or_token_in_the_log_never_comes_back(built: World) -> None:
    """The router never logs its keys, so the secrets reach its log the way a container's
    output does: appended to the container's log file, on the host. They are real ones: the
    site's own link private key and a service-account-shaped bearer token."""
    key_file = sorted((namespace_dir(built, "rhel-ai") / "runtime" / "certs").glob("*/tls.key"))[0]
    key_body = [
        line for line in key_file.read_text().splitlines() if line and not line.startswith("-----")
    ]
    token = (
        "eyJhbGciOiJSUzI1NiIsImtpZCI6InNhbmRib3gifQ"
        ".eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6bW9kZWxzOnNrdXBwZXIifQ"
        ".c2lnbmF0dXJlLW5vdC1yZWFs"
    )
    key, line = shlex.quote(str(key_file)), f"'GET /api Authorization: Bearer {token}'"
    if real_podman.is_real(built.host_dir("rhel-ai")):
        # a real container's log is conmon's k8s-file (its router is stopped here, so
        # nothing runs to write to): each line as conmon writes one, "<RFC 3339 time> stdout
        # F <line>", in the file podman inspect names, which a rootless host's store owns
        # inside podman's user namespace (podman unshare)
        path = "{{.HostConfig.LogConfig.Path}}"
        append = (
            'if [ "$(id -u)" -eq 0 ]; then cat >> "$log";'
            ' else podman unshare sh -c \'cat >> "$1"\' sh "$log"; fi'
        )
        command = (
            f"log=$(podman inspect --format '{path}' {ROUTER}) && {{ cat {key}; echo {line}; }} |"
            " while IFS= read -r l; do"
            ' printf "%s stdout F %s\\n" "$(date -u +%Y-%m-%dT%H:%M:%S.%N+00:00)" "$l";'
            f" done | {{ {append}; }}"
        )
    else:
        log = shlex.quote(str(container_log(built, "rhel-ai", ROUTER)))
        command = f"cat {key} >> {log} && echo {line} >> {log}"
    code, _, err = built.ssh("rhel-ai", command)
    assert code == 0, err
    # the secret is in the log for real (conmon writes it a moment later)
    deadline = time.monotonic() + 10
    while key_body[0] not in "\n".join(container_lines(built, "rhel-ai", ROUTER)):
        assert time.monotonic() < deadline, "the key never reached the router's log"
        await asyncio.sleep(0.2)

    is_error, text, structured = await call_logs(built, target="rhel-ai", lines=30)
    assert not is_error, text
    result = LogsResult.model_validate(structured)
    for secret in [*key_body, token.split(".")[1]]:
        assert secret not in text and secret not in json.dumps(structured)
    assert PRIVATE_KEY_MARK in result.lines
    assert "GET /api Authorization: Bearer [REDACTED]" in result.lines
    assert result.redactions == 2 and "2 secrets redacted" in result.summary

    run = cli(built, "logs", "rhel-ai", "--lines", "30")
    assert run.returncode == 0, run.stderr
    assert all(secret not in run.stdout + run.stderr for secret in key_body)
    assert PRIVATE_KEY_MARK in run.stdout and "2 secrets redacted" in run.stderr
