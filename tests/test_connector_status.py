"""The router's own connector status (skmanage query --type=connector in the router
container): the shipped script, and the parse of a recorded management answer."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from skupper_mcp.errors import Unparsed
from skupper_mcp.facts.connector_status import (
    ConnectorStatus,
    connector_status_script,
    parse_connector_status,
)

MAX = 64 * 1024
REFUSED = (
    "Connection to 127.0.0.9:8000 failed: amqp:connection:framing-error SSL Failure: "
    "error:0A000086:SSL routines::certificate verify failed"
)
# skmanage query --type=connector on a skupper-router 3.4.2 whose link is refused: the
# connector entity's attributes (python/skupper_router/management/skrouter.json@3.4.2)
RECORDED = [
    {
        "host": "127.0.0.9",
        "port": "8000",
        "protocolFamily": None,
        "role": "inter-router",
        "cost": 1,
        "sslProfile": "link-rhtevan-work-profile",
        "verifyHostname": True,
        "maxFrameSize": 16384,
        "maxSessionFrames": None,
        "idleTimeoutSeconds": 16,
        "stripAnnotations": "both",
        "linkCapacity": None,
        "failoverUrls": "amqps://127.0.0.9:8000",
        "connectionStatus": "CONNECTING",
        "connectionMsg": REFUSED,
        "name": "link-rhtevan-work",
        "identity": "connector/127.0.0.9:8000:link-rhtevan-work",
        "type": "io.skupper.router.connector",
    }
]


def framed(body: str, rc: int = 0, stderr: str = "") -> str:
    stuffed = "".join(f"|{line}\n" for line in body.split("\n"))
    err = "".join(f"|{line}\n" for line in stderr.split("\n")) if stderr else ""
    return f"@@connectors\n{stuffed}\n" + (f"@@stderr\n{err}" if err else "") + f"@@rc {rc}\n"


def test_a_recorded_answer_gives_each_connector_with_its_last_failure() -> None:
    [c] = parse_connector_status(framed(json.dumps(RECORDED, indent=2)), MAX) or []
    assert c == ConnectorStatus(
        "link-rhtevan-work", "inter-router", "127.0.0.9", "8000", "CONNECTING", REFUSED
    )
    assert c.endpoint == "127.0.0.9:8000"


def test_a_site_without_a_management_listener_is_not_asked() -> None:
    assert parse_connector_status("@@no-management\n", MAX) is None


@pytest.mark.parametrize(
    ("output", "why"),
    [
        (framed("", 1, "ConnectionException: Connection refused"), "skmanage exited 1"),
        (framed("Traceback (most recent call last):"), "not JSON"),
        (framed('{"name": "x"}'), "not a list"),
        (framed('[{"name": ["x"]}]'), "not a string"),
        ("@@connectors\n|[\n", "did not run to its end"),
    ],
)
def test_an_answer_that_is_not_skmanages_is_a_typed_error(output: str, why: str) -> None:
    with pytest.raises(Unparsed, match=why):
        parse_connector_status(output, MAX)


def test_the_script_asks_the_management_listener_with_the_local_client_certificate(
    tmp_path: Path,
) -> None:
    """The port is the skupper-local-normal listener's in the rendered skrouterd.json; the
    certificate is the one mounted in the router container; the container name arrives
    quoted, once."""
    data = tmp_path / "data"
    router = data / "skupper" / "namespaces" / "default" / "runtime" / "router"
    router.mkdir(parents=True)
    config = [
        ["router", {"id": "x", "mode": "interior"}],
        ["listener", {"name": "skupper-local-normal", "role": "normal", "port": 5671}],
        ["listener", {"name": "x-public-inter-router", "role": "inter-router", "port": 55671}],
    ]
    (router / "skrouterd.json").write_text(json.dumps(config, indent=4))
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "podman").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (tools / "podman").chmod(0o755)
    (tools / "id").write_text("#!/bin/sh\necho 1000\n")  # a user's data dir, even as root
    (tools / "id").chmod(0o755)
    env = {"PATH": f"{tools}:/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(data)}
    command = connector_status_script("default", "default-skupper-router; x", MAX)
    done = subprocess.run(
        ["sh", "-c", command], capture_output=True, text=True, env=env, timeout=20, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "@@connectors\n" in done.stdout and "@@rc 0" in done.stdout
    argv = [line[1:] for line in done.stdout.split("\n") if line.startswith("|")]
    certs = "/etc/skupper-router/runtime/certs/skupper-local-client"
    assert argv[:4] == ["exec", "default-skupper-router; x", "skmanage", "-b"]
    assert argv[4] == "amqps://127.0.0.1:5671"
    assert f"{certs}/tls.crt" in argv and f"{certs}/tls.key" in argv
    assert f"{certs}/ca.crt" in argv and argv[-2:] == ["query", "--type=connector"]


def test_the_script_says_so_when_the_site_has_no_management_listener(tmp_path: Path) -> None:
    (tmp_path / "id").write_text("#!/bin/sh\necho 1000\n")
    (tmp_path / "id").chmod(0o755)
    env = {
        "PATH": f"{tmp_path}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path),
    }
    done = subprocess.run(
        ["sh", "-c", connector_status_script("default", "c", MAX)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=20,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert parse_connector_status(done.stdout, MAX) is None


def test_a_connector_status_too_deep_is_unparsed() -> None:
    # issue 43: 2 KB of [[[[...]]]] raised RecursionError out of diagnose for every site
    with pytest.raises(Unparsed, match="nests 1000 levels deep"):
        parse_connector_status(framed("[" * 1000 + "]" * 1000), MAX)
