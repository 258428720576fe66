"""Issue 31's hostile host, whole: one provider of a set-up, running world made hostile in
every way at once (``hostile_world``), driven through the MCP client as an agent drives it.

Every call on the hostile host ends within its bound with that host's typed result (failed
or skipped with a reason, the refused files named); no secret, lone surrogate or bidi
control reaches any result; the marker its file name forges is never taken (the evil podman
it names never runs, through setup, up and down); skupper://status keeps its table; and the
setup that follows the user's removal of the refused files leaves every key 0600. Meanwhile
the healthy provider's calls keep answering in their usual time.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from hostile_world import (
    BIDI,
    BOMB_FILE,
    OVERSIZED_FILE,
    HostileModel,
    Hostility,
    append_log,
    open_key_files,
    plant_files,
    plant_site_status,
)
from polling import wait_for
from redaction_cases import CASES, EC_KEY, _body, _windows
from skupper_mcp.connectors.shell import script
from skupper_mcp.engine.core import Engine
from skupper_mcp.engine.operations.model_checks import HTTP_TIMEOUT
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.usefixtures("bounded_mcp_clients")]

HOSTILE, HEALTHY = "rhtevan-work", "rhel-ai"
CLIENT_TIMEOUT = 180.0
#: The bound of each hostile call: the product's own (a state read's 30 s, the model API's
#: HTTP_TIMEOUT for the whole exchange) and slack for a loaded machine.
READ_BOUND = 40.0
TEST_MODEL_BOUND = HTTP_TIMEOUT + 20.0
SETUP_BOUND = 120.0
#: A healthy call while the hostile ones run may take this many times its usual time, plus
#: a fixed slack: the hostile calls share the 2 cores (SSH, the routers carrying 1 MiB, the
#: redactor in a thread) but none may make it wait on them, and the shortest hostile bound
#: it would then wait out (a model answer's 20 s) is far beyond.
HEALTHY_FACTOR, HEALTHY_SLACK = 4.0, 2.0

#: A private key JSON-escaped in one line, as a Go or JSON log prints a Secret's value.
JSON_KEY = "level=info msg=loaded secret=" + json.dumps({"tls.key": EC_KEY})
SECRET_TEXTS = [case.text for case in CASES.values()] + [JSON_KEY]
SECRETS = [s for case in CASES.values() for s in case.secrets] + _body(EC_KEY)


def forbidden_windows() -> set[str]:
    """Every 8-character piece of every secret planted, but those that the redactor's own
    table shows stay in text it keeps (a certificate shares DER runs with its key)."""
    from skupper_mcp.facts.redact import redact

    kept = "\n".join(redact(text)[0] for text in SECRET_TEXTS)
    windows = {w for secret in SECRETS for w in _windows(secret)}
    return {w for w in windows if w not in kept}


def namespace_dir(world: World, host: str) -> Path:
    return world.host_dir(host) / "home/.local/share/skupper/namespaces/default"


@dataclass
class Hostile:
    world: World
    hostility: Hostility
    model: HostileModel


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    root = tmp_path_factory.mktemp("hostile-world")
    # the emulated podman: the hostile log is planted in its container's ctr.log, a file
    # a real podman keeps elsewhere (run by hand, a world is real podman where it runs)
    spec = WorldSpec(providers=2, kubernetes=False, podman="emulated")
    with running_world(root / "world", spec) as world:

        async def build() -> None:
            async with Engine(load_topology(world.topology)) as engine:
                assert (await engine.setup()).ok
                assert (await engine.up()).ok

        asyncio.run(build())
        ns = namespace_dir(world, HOSTILE)
        hostility = plant_files(ns, root, HOSTILE)
        router_log = (
            world.host_dir(HOSTILE)
            / "home/.local/share/containers/sandbox/default-skupper-router/ctr.log"
        )
        append_log(router_log, SECRET_TEXTS)
        stopped = world.ssh(HOSTILE, script("$SKMCP_CTL stop skupper-controller.service"))
        assert stopped[0] == 0, stopped
        plant_site_status(ns)
        gone = world.ssh(HOSTILE, "podman stop hosted-model")
        assert gone[0] == 0, gone
        entry = world.hosts[HOSTILE]
        model = HostileModel(entry.address, _model_port(world), entry.default_model_id or "")
        try:
            wait_for(model.answers, timeout=30, what="the hostile model server")
            yield Hostile(world, hostility, model)
        finally:
            model.stop()


def _model_port(world: World) -> int:
    topology = load_topology(world.topology)
    return next(p.model_port for p in topology.providers if p.name == HOSTILE)


@dataclass
class Calls:
    """Every answer the client got, for the checks that hold for all of them."""

    answers: list[tuple[str, Any, str]] = field(default_factory=list)

    async def call(
        self, client: Client, tool: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], float]:
        started = time.monotonic()
        result = await client.call_tool(tool, arguments)
        took = time.monotonic() - started
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        self.answers.append((f"{tool} {arguments}", result.structured_content, text))
        assert not result.is_error, (tool, arguments, text)
        assert result.structured_content is not None, (tool, text)
        return result.structured_content, took


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def site_of(result: dict[str, Any], host: str) -> dict[str, Any]:
    return next(s for s in result["sites"] if s["host"] == host)


def check_of(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in result["checks"] if c["name"] == name)


HEALTHY_CALLS = (
    ("resolve_profile", {"name": HEALTHY}),
    ("test_model", {"target": HEALTHY}),
)


async def test_a_hostile_host_in_every_way_at_once(hostile: Hostile) -> None:
    world, hostility = hostile.world, hostile.hostility
    calls = Calls()
    hostile_took: dict[str, float] = {}
    found: dict[str, dict[str, Any]] = {}
    healthy_took: dict[str, list[float]] = {name: [] for name, _ in HEALTHY_CALLS}

    async with Client(
        build_server(world.topology), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:

        async def hostile_call(key: str, tool: str, arguments: dict[str, Any]) -> None:
            found[key], hostile_took[key] = await calls.call(client, tool, arguments)

        # the healthy provider's usual time, in this run, on this machine
        usual: dict[str, float] = {}
        for name, arguments in HEALTHY_CALLS:
            await calls.call(client, name, arguments)  # warm: its connection open
            times = [(await calls.call(client, name, arguments))[1] for _ in range(3)]
            usual[name] = max(times)

        done = anyio.Event()

        async def model_calls() -> None:
            # in order: the model server answers the first list endlessly, trickles the
            # first chat completion, and answers later ones with hostile text
            for n in (1, 2, 3):
                await hostile_call(f"test_model {n}", "test_model", {"target": HOSTILE})

        async def reads_and_setup() -> None:
            await hostile_call("status", "status", {})
            await hostile_call("diagnose", "diagnose", {"target": HOSTILE})
            await hostile_call("logs", "logs", {"target": HOSTILE, "lines": 500})
            await hostile_call(
                "logs controller", "logs", {"target": HOSTILE, "component": "controller"}
            )
            await hostile_call("resolve", "resolve_profile", {"name": HOSTILE})
            await hostile_call("setup plan", "setup", {"plan": True})
            await hostile_call("setup", "setup", {})

        async def healthy_calls() -> None:
            while not done.is_set():
                for name, arguments in HEALTHY_CALLS:
                    result, took = await calls.call(client, name, arguments)
                    healthy_took[name].append(took)
                    if name == "test_model":
                        assert result["passed"] == result["total"], result
                    else:
                        assert result["profile_source"] == "active", result

        async def hostile_calls() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(model_calls)
                group.start_soon(reads_and_setup)
            done.set()

        async with anyio.create_task_group() as group:
            group.start_soon(hostile_calls)
            group.start_soon(healthy_calls)
        markdown = (await client.read_resource("skupper://status")).contents[0].text  # type: ignore[union-attr]

        # --- what the agent saw of the hostile host -------------------------------------
        bounds = {"test_model": TEST_MODEL_BOUND, "setup": SETUP_BOUND}
        for key, took in hostile_took.items():
            assert took < bounds.get(key.split()[0], READ_BOUND), (key, took)
        status = found["status"]
        row = site_of(status, HOSTILE)
        assert row["reachable"] and row["container"] is None, row
        why = row["state_reason"]  # not read: why, said once (detail is what a site says)
        assert BOMB_FILE in why and OVERSIZED_FILE in why, row
        assert "anchors or aliases" in why, row
        assert site_of(status, HEALTHY)["container"] == "running"
        diagnosed = json.dumps(found["diagnose"])
        assert BOMB_FILE in diagnosed and OVERSIZED_FILE in diagnosed, diagnosed[:2000]
        logs = found["logs"]
        assert logs["found"] and logs["redactions"] > 0, logs["summary"]
        # the router logs on after the planted lines (status's probes of its link port)
        lines = logs["lines"]
        assert any("bad byte \ufffd" in line for line in lines), lines[-12:]
        assert any(line.endswith("SERVER (info) evil x") for line in lines), lines[-12:]
        for forged in ("@@rc 0", "@@end", "|@@exists 0"):  # lines of the log, nothing more
            assert forged in lines, lines[-12:]
        resolved = found["resolve"]
        assert resolved["profile_source"] == "default", resolved
        assert "\\ud800" in resolved["detail"] and "\\u202e" in resolved["detail"], resolved
        first, second, third = (found[f"test_model {n}"] for n in (1, 2, 3))
        assert "cut off" in check_of(first, "model id")["detail"], first
        assert check_of(first, "chat completion")["detail"] == "skipped: no model id"
        assert f"within {HTTP_TIMEOUT:g}s" in check_of(second, "chat completion")["detail"]
        answered = check_of(third, "chat completion")
        assert answered["passed"] and "bad \ufffd evil" in answered["detail"], answered
        for result in (first, second, third):
            # the model container is stopped: a typed check of its own, not a failed call
            assert not check_of(result, "remote container running")["passed"], result
        for key in ("setup plan", "setup"):
            outcome = site_of(found[key], HOSTILE)
            assert outcome["outcome"] == "failed", outcome
            assert BOMB_FILE in outcome["reason"] and OVERSIZED_FILE in outcome["reason"]
            assert site_of(found[key], HEALTHY)["outcome"] != "failed", found[key]

        # --- and meanwhile the healthy provider answered as usual -----------------------
        print("hostile calls (s):", {k: round(v, 2) for k, v in hostile_took.items()})
        print("healthy usual (s):", {k: round(v, 3) for k, v in usual.items()})
        print("healthy during (s):", {k: [round(t, 3) for t in v] for k, v in healthy_took.items()})
        for name, times in healthy_took.items():
            assert times, f"no {name} ran while the hostile calls did"
            bound = HEALTHY_FACTOR * usual[name] + HEALTHY_SLACK
            assert max(times) < bound, (name, usual[name], times)

        # --- the user removes the files the refusal named; the rest stays hostile --------
        hostility.remove_refused_files()
        again, _ = await calls.call(client, "status", {})
        markdown_after = (await client.read_resource("skupper://status")).contents[0].text  # type: ignore[union-attr]
        keys, _ = await calls.call(client, "diagnose", {"target": HOSTILE})
        setup, _ = await calls.call(client, "setup", {})
        assert hostility.marks == []
        up, _ = await calls.call(client, "up", {"target": HOSTILE})
        assert hostility.marks == []
        down, _ = await calls.call(client, "down", {"target": HOSTILE})

    assert "Forged heading" in site_of(again, HOSTILE)["detail"], site_of(again, HOSTILE)
    for text in (markdown, markdown_after):
        assert_table_kept(text, len(status["sites"]))
    assert "private-key-readable" in {f["id"] for f in keys["findings"]}, keys["summary"]
    assert setup["ok"], setup["summary"]
    assert up["ok"] and down["ok"], (up["summary"], down["summary"])
    # no key of any podman site is readable by others after setup; the routers link
    for host in (HEALTHY, HOSTILE, "local"):
        assert open_key_files(namespace_dir(world, host)) == [], host
    assert site_of(up, HOSTILE)["outcome"] == "up", up["summary"]
    # the podman the units and the watch script run is the host's own, never the forged one
    home = world.host_dir(HOSTILE) / "home"
    written = [*(home / ".config/systemd/user").glob("skupper-*.service")]
    written.append(home / ".local/share/skupper-mcp/start-watch.sh")
    real_podman = str(world.layout.bin_dir / "podman")  # what `command -v podman` finds
    for path in written:
        text = path.read_text()
        assert str(hostility.evil_podman) not in text and real_podman in text, (path, text)
    assert hostility.marks == [], hostility.marks

    # --- what holds for every answer, hostile and healthy alike --------------------------
    forbidden = forbidden_windows()
    for name, structured, text in calls.answers:
        everything = [*strings(structured), text]
        for value in everything:
            assert not any(0xD800 <= ord(c) <= 0xDFFF for c in value), (name, value[:200])
            assert not BIDI & set(value), (name, value[:200])
        joined = "\n".join(everything)
        leaked = [w for w in forbidden if w in joined]
        assert not leaked, (name, leaked[:5])


def assert_table_kept(markdown: str, sites: int) -> None:
    """skupper://status's Sites table has one row per site and nothing under it but the
    next heading: no host text opened a line of its own."""
    lines = markdown.split("\n")
    start = lines.index("## Sites") + 2
    end = lines.index("## Links")
    table = [line for line in lines[start:end] if line]
    assert len(table) == 2 + sites, table
    assert all(line.startswith("| ") or line.startswith("|---") for line in table), table
    assert not any(line.startswith("# Forged") for line in lines), markdown
