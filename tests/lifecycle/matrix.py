"""The scenario matrix of issue 30: one world driven through ordinary operations, and in each
scenario what every consumer says (status over the CLI and MCP, the CLI's exit code,
diagnose's findings and next steps, and the up/down/setup plans).

It reads the results as plain JSON, so it also runs against a product without the typed
state (``.get("state")`` is then None): ``python tests/lifecycle/matrix.py`` prints the
table for whatever ``skupper_mcp`` is importable, which is how the "before" column of the
issue's closing note was taken. The test (``test_97_matrix.py``) asserts on what it records.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from polling import eventually
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

SKUPPER_VERSIONS = {"rhel-ai": "2.2.1", "rhtevan-work": "2.1.0"}
NS = "models"
ROOT_HOSTS = frozenset({"rhtevan-work"})
CALL_TIMEOUT = 240.0
SITES = ("rhel-ai", "rhtevan-work", "local", "crc")


def world_spec() -> WorldSpec:
    return WorldSpec(
        providers=2, skupper_versions=SKUPPER_VERSIONS, namespace=NS, root_hosts=ROOT_HOSTS
    )


@dataclass
class Observed:
    """What every consumer said in one scenario."""

    name: str
    state: dict[str, str | None] = field(default_factory=dict)
    stale: dict[str, bool] = field(default_factory=dict)
    drift: dict[str, list[str] | None] = field(default_factory=dict)
    summary: str = ""
    attempts: int = 1
    unread: dict[str, str] = field(default_factory=dict)
    status_exit: int = -1
    mcp_state: dict[str, str | None] = field(default_factory=dict)
    findings: list[tuple[str, str, list[str]]] = field(default_factory=list)
    diagnose_exit: int = -1
    diagnose_state: dict[str, str | None] = field(default_factory=dict)
    plans: dict[str, dict[str, tuple[str, list[str], str | None]]] = field(default_factory=dict)
    #: the results as the consumers returned them, by tool (the view draws these)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        return {
            "scenario": self.name,
            "state": self.state,
            "summary": self.summary,
            "unread": self.unread,
            "attempts": self.attempts,
            "drift": {h: d for h, d in self.drift.items() if d},
            "status_exit": self.status_exit,
            "diagnose_exit": self.diagnose_exit,
            "findings": [
                f"{host}:{fid}->{'|'.join(nxt) or '-'}" for host, fid, nxt in self.findings
            ],
            "plans": {
                op: {h: f"{o}:{','.join(steps) or '-'}" for h, (o, steps, _) in sites.items()}
                for op, sites in self.plans.items()
            },
        }


def cli(world: World, *args: str) -> tuple[int, dict[str, Any]]:
    """A CLI verb with --json: its exit code and result."""
    done = subprocess.run(
        [sys.executable, "-m", "skupper_mcp", "--topology", str(world.topology), "--json", *args],
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        return done.returncode, {"error": done.stdout + done.stderr}


def server(world: World) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "skupper_mcp", "--topology", str(world.topology), "--log-level", "ERROR"],
    )


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments, read_timeout_seconds=CALL_TIMEOUT)
    assert not result.is_error, (tool, arguments, result.content)
    assert result.structured_content is not None
    return dict(result.structured_content)


async def write(client: Client, tool: str, arguments: dict[str, Any]) -> None:
    """A write that must reach every site: made again (writes are idempotent) while a site
    was skipped, which on a loaded machine is a connect that timed out."""
    for _ in range(ATTEMPTS):
        result = await call(client, tool, arguments)
        if not any(s["outcome"] == "skipped" for s in result["sites"]):
            break
    assert result["ok"] and not any(s["outcome"] == "skipped" for s in result["sites"]), result


async def observe(world: World, client: Client, name: str) -> Observed:
    """Every consumer asked at once, as an agent and a person at a terminal might: a host
    that does not answer then costs one connect timeout, not one per consumer."""
    seen = Observed(name)
    ops = ("up", "down", "setup")
    plan_args: list[dict[str, Any]] = [
        {"plan": True} if op == "setup" else {"plan": True, "target": "all"} for op in ops
    ]
    (
        (seen.status_exit, status),
        (seen.diagnose_exit, diagnose),
        over_mcp,
        *plans,
    ) = await asyncio.gather(
        asyncio.to_thread(cli, world, "status"),
        asyncio.to_thread(cli, world, "diagnose"),
        call(client, "status", {}),
        *(call(client, op, args) for op, args in zip(ops, plan_args, strict=True)),
    )
    seen.results["status"] = status
    for s in status.get("sites", []):
        seen.state[s["host"]] = s.get("state")
        seen.stale[s["host"]] = s.get("stale", False)
        seen.drift[s["host"]] = s.get("drift")
        if not s.get("controller"):  # not read: say why
            seen.unread[s["host"]] = s.get("detail") or ""
    seen.summary = status.get("summary", status.get("error", ""))
    seen.mcp_state = {s["host"]: s.get("state") for s in over_mcp["sites"]}
    seen.results["diagnose"] = diagnose
    seen.findings = [
        (f["host"], f["id"], [n["text"] for n in f.get("next", [])])
        for f in diagnose.get("findings", [])
        if f["severity"] != "info"
    ]
    seen.diagnose_state = {s["host"]: s.get("state") for s in diagnose.get("sites", [])}
    for op, plan in zip(ops, plans, strict=True):
        seen.results[op] = plan
        seen.plans[op] = {
            s["host"]: (s["outcome"], [st["name"] for st in s.get("steps", [])], s.get("reason"))
            for s in plan.get("sites", [])
        }
    return seen


def on_host(world: World, host: str, command: str) -> None:
    from skupper_mcp.connectors.shell import script

    code, _, err = world.ssh(host, script(command))
    assert code == 0, err


#: The scenarios in order, each from the one before: (name, what to do before observing).
Step = Callable[[World, Client], Awaitable[None]]


async def _nothing(world: World, client: Client) -> None:
    return None


async def _setup_up(world: World, client: Client) -> None:
    await write(client, "setup", {})
    await write(client, "up", {"target": "all"})


async def _down_provider(world: World, client: Client) -> None:
    await write(client, "down", {"target": "rhel-ai"})


async def _down_all(world: World, client: Client) -> None:
    await write(client, "up", {"target": "all"})
    await write(client, "down", {"target": "all"})


async def _router_killed(world: World, client: Client) -> None:
    """Up, then rhel-ai's controller and router stopped on the host behind our back: its
    rendered status keeps saying Ready (really stale)."""
    await write(client, "up", {"target": "all"})

    async def ready() -> bool:
        sites = (await call(client, "status", {}))["sites"]
        return any(s["host"] == "rhel-ai" and s.get("detail") == "Ready" for s in sites)

    await eventually(ready, timeout=60, every=0.5, what="rhel-ai's controller to write Ready")
    on_host(
        world,
        "rhel-ai",
        f"$SKMCP_CTL stop skupper-controller.service && $SKMCP_CTL stop skupper-{NS}.service",
    )


async def _unreachable(world: World, client: Client) -> None:
    await write(client, "up", {"target": "all"})
    world.fault("rhel-ai", "blackhole")


async def _root_host_down(world: World, client: Client) -> None:
    world.fault("rhel-ai", "restore")
    await write(client, "down", {"target": "rhtevan-work"})


async def _cluster_skipped(world: World, client: Client) -> None:
    await write(client, "up", {"target": "all"})
    world.fault("crc", "down")


async def _teardown(world: World, client: Client) -> None:
    world.fault("crc", "restore")
    for _ in range(ATTEMPTS):  # as write(): again while a site was skipped
        code, result = cli(world, "teardown", "--yes")
        if code == 0:
            break
    assert code == 0, result


#: Each scenario: its name, what makes it, and the hosts it makes unreachable.
SCENARIOS: tuple[tuple[str, Step, frozenset[str]], ...] = (
    ("fresh", _nothing, frozenset()),
    ("set up and up", _setup_up, frozenset()),
    ("provider stopped by down", _down_provider, frozenset()),
    ("all down", _down_all, frozenset()),
    ("router killed (stale)", _router_killed, frozenset()),
    ("host unreachable", _unreachable, frozenset({"rhel-ai"})),
    ("2.1.0 root host stopped", _root_host_down, frozenset()),
    ("cluster skipped", _cluster_skipped, frozenset({"crc"})),
    ("after teardown", _teardown, frozenset()),
)
#: How often a scenario is observed again when a host it did not fault could not be read:
#: on a loaded machine a read of the sandbox can time out, which is not what is tested here.
ATTEMPTS = 3


def unread_by_load(seen: Observed, faulted: frozenset[str]) -> set[str]:
    """Hosts outside ``faulted`` that some consumer could not read in this observation."""
    found = {h for h in seen.unread if h not in faulted}
    found |= {h for h, fid, _ in seen.findings if h not in faulted and fid == "site-unreadable"}
    return found


async def run_matrix(world: World, say: Callable[[Observed], None] | None = None) -> list[Observed]:
    found = []
    # bounded by the bounded_mcp_clients fixture, which test_97_matrix.py requests
    async with Client(server(world), mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as client:
        for name, step, faulted in SCENARIOS:
            await step(world, client)
            for attempt in range(1, ATTEMPTS + 1):
                seen = await observe(world, client, name)
                seen.attempts = attempt
                if not unread_by_load(seen, faulted):
                    break
            if say is not None:
                say(seen)
            found.append(seen)
    return found


#: The sandbox shares a loaded machine with the product: a connect given more time than a
#: real network needs, so that only the blackholed host is unreachable.
CONNECT_TIMEOUT = 30


def patient(world: World) -> None:
    """The world's topology.env with a longer SSH connect timeout."""
    text = world.topology.read_text()
    lines = [line for line in text.splitlines() if not line.startswith("SSH_CONNECT_TIMEOUT=")]
    world.topology.write_text("\n".join([*lines, f"SSH_CONNECT_TIMEOUT={CONNECT_TIMEOUT}", ""]))


def main() -> None:
    with (
        tempfile.TemporaryDirectory(prefix="matrix-") as tmp,
        running_world(Path(tmp), world_spec()) as world,
    ):
        patient(world)
        asyncio.run(run_matrix(world, lambda seen: print(json.dumps(seen.row()), flush=True)))


if __name__ == "__main__":
    main()
