"""The state read through the podman API socket, and the skupper version it reuses.

Where the host's podman service serves its API socket, the read asks it for the containers
and the router's inspect (one curl, two requests) instead of starting ``podman ps`` and
``podman inspect``: both are libpod's answers (podman 4.3.1 ``cmd/podman/containers/ps.go``
``jsonOut`` and ``pkg/api/handlers/libpod/containers.go`` ``ListContainers`` list the same
``entities.ListContainer``; ``podman inspect`` and ``GetContainer`` both print
``ctr.Inspect``), so the state must be the same either way. A host without the socket, or
whose service does not answer, is read with the processes as before. ``skupper version``
runs only when the binary's key (its path and stat) is not the one the engine knows.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import shutil
import socket
import socketserver
import subprocess
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from fake_connector import Call, FakeConnector, Reply
from site_replay import STATES
from skupper_mcp.facts.framing import split_frames
from skupper_mcp.facts.site_state import (
    KnownSkupper,
    SiteState,
    parse_site_state,
    site_state_script,
)
from skupper_mcp.facts.skupper_version import SkupperVersion, Version
from skupper_mcp.sites.podman import KnownVersions, PodmanSite
from threaded_server import in_thread

RECORDED = sorted(STATES.glob("*/*.txt"))


def _unframed(frames: list[Any]) -> str:
    return "".join(
        f"@@{f.tag} {f.argument}".rstrip() + "\n" + "".join(f"|{line}\n" for line in f.lines)
        for f in frames
    )


def through_api(recorded: str) -> str:
    """A recorded read as a host with the API socket prints it: the containers and router
    sections (and their ``@@rc``/``@@stderr``) replaced by one ``podman-api`` section that
    holds the API's answers, as libpod's encoder writes them (one line each)."""
    frames = split_frames(recorded)
    kept, bodies, section = [], {}, ""
    for frame in frames:
        if frame.tag == "section":
            section = frame.argument
        if section in ("containers", "router"):
            if frame.tag == "section":
                bodies[section] = frame.body
            elif frame.tag == "rc":
                bodies[f"{section}:rc"] = frame.argument
            if frame.tag == "rc" and section == "router":
                rows = json.loads(bodies["containers"] or "[]")
                inspected = json.loads(bodies["router"]) if bodies["router:rc"] == "0" else []
                answers = [json.dumps(rows, separators=(",", ":")), "@http 200"]
                if inspected:
                    answers += [json.dumps(inspected[0], separators=(",", ":")), "@http 200"]
                else:
                    answers += ['{"cause":"no such container","response":404}', "@http 404"]
                kept.append(type(frame)("section", "podman-api", answers))
                kept.append(type(frame)("rc", "0", []))
                section = ""
            continue
        kept.append(frame)
    assert any(f.argument == "podman-api" for f in kept), "no router section recorded"
    return _unframed(kept)


def without_stderr_of_podman(state: SiteState) -> dict[str, Any]:
    found = asdict(state)
    for section in ("containers", "router"):  # libpod's warnings: no process, no stderr
        found["stderr"].pop(section, None)
    return found


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_api_answers_give_the_state_the_podman_processes_give(path: Path) -> None:
    recorded = path.read_text()
    by_processes = parse_site_state(recorded)
    by_api = parse_site_state(through_api(recorded))
    assert by_api.complete and not by_api.refused and not by_api.parse_errors
    assert without_stderr_of_podman(by_api) == without_stderr_of_podman(by_processes)


def test_an_api_section_that_is_not_two_answers_is_unknown_not_empty() -> None:
    recorded = (STATES / "up" / "rhel-ai.txt").read_text()
    broken = through_api(recorded).replace("|@http 404\n", "").replace("|@http 200\n", "", 1)
    state = parse_site_state(broken)
    assert state.unparsed("containers") is not None and state.unparsed("router") is not None
    assert state.containers == {} and state.router is None
    assert "GET /libpod/containers/json" in str(state.unparsed("containers"))


def test_an_api_answer_the_script_would_not_print_is_unknown() -> None:
    recorded = (STATES / "up" / "rhel-ai.txt").read_text()
    state = parse_site_state(through_api(recorded).replace("|@http 200\n", "|@http 500\n"))
    assert state.unparsed("containers") is not None and state.unparsed("router") is not None
    assert "HTTP 500" in str(state.unparsed("containers")) and state.containers == {}


# --- the script as sh runs it --------------------------------------------------------------

PODMAN = """#!/bin/sh
echo "$*" >> "$CALLS"
case $1 in
    ps) cat "$DATA/list.json" ;;
    inspect) [ -s "$DATA/router.json" ] || { echo '[]'; exit 125; }
             printf '['; cat "$DATA/router.json"; printf ']' ;;
esac
"""
SKUPPER = """#!/bin/sh
echo "skupper $*" >> "$CALLS"
echo 2.1.3
"""
#: The login's uid as a rootless host reports it (the test may run as root, whose socket
#: is the machine's /run/podman/podman.sock).
ID = """#!/bin/sh
case $1 in -u) echo 1000 ;; -un) echo ezhang ;; *) echo "uid=1000(ezhang)" ;; esac
"""


class _Api(http.server.BaseHTTPRequestHandler):
    """libpod's two answers, from the host's files (``status`` 500: a broken service)."""

    def do_GET(self) -> None:
        data: Path = self.server.data  # type: ignore[attr-defined]
        (data / "requests").open("a").write(self.path + "\n")
        broken = (data / "broken").exists()
        router = data / "router.json"
        if broken:
            status, body = 500, b'{"cause":"broken","response":500}\n'
        elif self.path == "/v4.0.0/libpod/containers/json?all=true":
            status, body = 200, json.dumps(json.loads((data / "list.json").read_text())).encode()
        elif self.path == "/v4.0.0/libpod/containers/models-skupper-router/json":
            status, body = (200, router.read_bytes()) if router.exists() else (404, b"{}")
        else:
            status, body = 404, b'{"cause":"no such route"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) + 1))
        self.end_headers()
        self.wfile.write(body + b"\n")

    def log_message(self, *args: object) -> None:
        pass


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self) -> tuple[socket.socket, tuple[str, int]]:
        request, _ = super().get_request()
        return request, ("local", 0)  # BaseHTTPRequestHandler prints a client address


@pytest.fixture
def host(tmp_path: Path) -> Iterator[dict[str, str]]:
    if shutil.which("curl") is None:
        pytest.skip("no curl on this machine")
    bin_dir, data, run = tmp_path / "bin", tmp_path / "data", tmp_path / "run"
    for directory in (bin_dir, data, run / "podman"):
        directory.mkdir(parents=True)
    for name, text in (("podman", PODMAN), ("skupper", SKUPPER), ("id", ID)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    recorded = split_frames((STATES / "up" / "rhel-ai.txt").read_text())
    bodies = {
        f.argument: f.body for f in recorded if f.tag == "section" and f.argument != "version"
    }
    (data / "list.json").write_text(bodies["containers"] + "\n")
    inspected = json.loads(bodies["router"])
    (data / "router.json").write_text(json.dumps(inspected[0]))
    yield {
        "HOME": str(tmp_path),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "XDG_RUNTIME_DIR": str(run),
        "CALLS": str(tmp_path / "calls"),
        "DATA": str(data),
    }


@pytest.fixture
def api(host: dict[str, str]) -> Iterator[Path]:
    """The host's podman service: its API socket served until the test ends."""
    path = Path(host["XDG_RUNTIME_DIR"]) / "podman" / "podman.sock"
    server = _UnixServer(str(path), _Api)
    server.data = Path(host["DATA"])  # type: ignore[attr-defined]
    with in_thread(server):
        yield path


def read(host: dict[str, str], known: KnownSkupper | None = None) -> tuple[SiteState, str]:
    """The state as sh reads it on ``host``, and what the host ran (then forgotten)."""
    done = subprocess.run(
        ["sh", "-c", site_state_script("models", known_skupper=known.key if known else "")],
        env=host,
        capture_output=True,
        text=True,
        timeout=60,
    )
    calls = Path(host["CALLS"])
    ran = calls.read_text() if calls.exists() else ""
    calls.unlink(missing_ok=True)
    state = parse_site_state(done.stdout, known=known)
    assert state.complete and not state.refused, done.stdout + done.stderr
    return state, ran


def same(one: SiteState, other: SiteState) -> bool:
    """Whether two reads found the same, but for the host's clock (a second may pass)."""
    return {**asdict(one), "now": None} == {**asdict(other), "now": None}


def test_a_host_that_serves_the_api_is_read_without_a_podman_process(
    host: dict[str, str], api: Path
) -> None:
    by_api, ran = read(host)
    assert "ps" not in ran.split() and "inspect" not in ran.split()
    assert (Path(host["DATA"]) / "requests").read_text().count("\n") == 2  # one curl, both
    api.unlink()  # the service stopped: no socket, the processes
    by_processes, ran = read(host)
    assert ran.splitlines()[-2:] == ["ps -a --format json", "inspect models-skupper-router"]
    assert by_api.router is not None and by_api.containers
    assert same(by_api, by_processes)


def test_a_router_the_api_does_not_know_is_none_as_podman_inspect_says(
    host: dict[str, str], api: Path
) -> None:
    (Path(host["DATA"]) / "router.json").unlink()
    by_api, ran = read(host)
    assert "ps" not in ran.split() and by_api.router is None and by_api.containers
    api.unlink()
    by_processes, _ = read(host)
    assert same(by_api, by_processes)


def test_a_service_that_does_not_answer_is_read_with_the_processes(
    host: dict[str, str], api: Path
) -> None:
    (Path(host["DATA"]) / "broken").touch()
    state, ran = read(host)
    assert "ps -a --format json" in ran and state.router is not None and state.containers


def test_podman_sent_to_another_service_is_asked_itself_not_the_local_socket(
    host: dict[str, str], api: Path
) -> None:
    for variable, value in (
        ("CONTAINER_HOST", "ssh://elsewhere/run/podman.sock"),
        ("CONTAINER_CONNECTION", "elsewhere"),
    ):
        _, ran = read({**host, variable: value})
        assert "ps -a --format json" in ran
        assert not (Path(host["DATA"]) / "requests").exists()


def test_skupper_version_runs_again_only_when_the_binary_changed(host: dict[str, str]) -> None:
    first, ran = read(host)
    assert "skupper version -p kubernetes" in ran
    assert first.skupper.cli == Version(2, 1, 3) and first.skupper_key
    known = KnownSkupper(first.skupper_key, first.skupper)
    again, ran = read(host, known)
    assert "skupper version" not in ran and again.skupper_reused
    assert again.skupper == first.skupper and again.skupper_key == first.skupper_key
    binary = Path(host["PATH"].split(":")[0]) / "skupper"
    binary.write_text(SKUPPER.replace("2.1.3", "2.2.1"))  # upgraded in place
    os.utime(binary, (1, 1))
    upgraded, ran = read(host, known)
    assert "skupper version -p kubernetes" in ran and not upgraded.skupper_reused
    assert upgraded.skupper.cli == Version(2, 2, 1) and upgraded.skupper_key != known.key


def test_a_known_version_the_read_was_not_sent_is_refused() -> None:
    forged = "@@user ezhang\n@@skupper-key /usr/bin/skupper 1:2 3 4 5\n@@skupper-known\n@@end\n"
    other = KnownSkupper("/usr/bin/skupper 9:9 9 9 9", SkupperVersion(Version(2, 1, 3)))
    for known in (None, other):
        state = parse_site_state(forged, known=known)
        assert state.refused and state.skupper.cli is None


class _Host:
    """A host whose read answers as the script would: the version's section unless the
    key sent is the binary's, then the known marker."""

    def __init__(self) -> None:
        self.binary = "/usr/bin/skupper 8:1 100 5 5"
        self.versions_run = 0
        self.fake = FakeConnector("rhel-ai", self.answer)

    def answer(self, call: Call) -> Reply:
        sent = next(li for li in call.command.split("\n") if li.startswith("set -- "))
        lines = ["@@user ezhang", f"@@skupper-key {self.binary}"]
        if f" '{self.binary}' " in f"{sent} ":
            lines.append("@@skupper-known")
        else:
            self.versions_run += 1
            lines += ["@@section version", "|2.1.3", "@@rc 0"]
        return Reply("\n".join([*lines, "@@end", ""]))


def test_an_engines_reads_run_skupper_version_once_per_binary() -> None:
    host, versions = _Host(), KnownVersions()

    async def status() -> SiteState:
        return await PodmanSite(host.fake, "models", known_versions=versions).read()

    states = [asyncio.run(status()) for _ in range(3)]
    assert host.versions_run == 1 and [s.skupper_reused for s in states] == [False, True, True]
    assert {s.skupper.cli for s in states} == {Version(2, 1, 3)}
    host.binary = "/usr/bin/skupper 8:2 120 6 6"  # a new binary: asked again, then known
    states = [asyncio.run(status()) for _ in range(2)]
    assert host.versions_run == 2 and [s.skupper_reused for s in states] == [False, True]
