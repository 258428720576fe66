"""Record ``results/``: what the engine's operations answer over the recorded site states.

The view's, the renderers' and the CLI's tests read these results (``recorded_results.py``,
``van_results.py``) instead of results written by hand, so a change to what ``status``,
``diagnose``, ``up`` or ``down`` answer changes them. Each scenario is a recorded world
(``engine/site_states/``, replayed by ``site_replay.py``) in some phase, a recorded reading
changed where the recordings cannot show the case (hostile text, a router killed a minute
ago), and, for a scenario that is what a write left, the write itself run through the engine.
Every scenario is then read with ``status``, ``diagnose``, ``up --plan`` and ``down --plan``.

Re-record whenever an operation's answer changes (``tests/test_recorded_results.py`` fails
and says so), and after re-recording the site states:

    .venv/bin/python tests/record_results.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from site_replay import (
    HOSTS,
    Edit,
    ReplayedHost,
    ReplayEngine,
    clock_after_exit,
    in_section,
    probes_answered,
    replay_topology,
)

RESULTS = Path(__file__).resolve().parent / "results"
RERECORD = ".venv/bin/python tests/record_results.py"
#: What a result of one scenario is recorded as: the file's keys, in order.
READS = ("status", "diagnose", "up-plan", "down-plan")

#: Markup a host may write: an element with a handler, the end of the page's data element in
#: two spellings, a comment opened.
HOSTILE = "<img src=x onerror=alert(1)></script><script>alert(2)</script><!-- </SCRIPT >"

TLS_REFUSED = (
    "Error: TLS handshake failed: x509: certificate signed by unknown authority "
    '(possibly because of "crypto/rsa: verification error" while trying to verify '
    'candidate authority certificate "skupper-site-ca")'
)
SSH_TIMEOUT = (
    "ssh 127.231.238.3:2222: connect timed out after 5.0s (is the host up and is SSH listening?)"
)
CLUSTER_TIMEOUT = "cannot reach the Kubernetes API at https://api.crc.testing:6443: timed out"
ROUTER = "default-skupper-router"  # every recorded site is in namespace default
LINK_TO_RHEL_AI = "@@file runtime Link-link-hub-rhel-ai.yaml"
SITE_OF_RHEL_AI = "@@file runtime Site-hub-rhel-ai.yaml"
ROUTER_UNIT_ACTIVE = (
    "|Id=skupper-default.service\n|LoadState=loaded\n|ActiveState=active\n|SubState=running\n"
)
READY_OK = "|  status: Ready\n|  message: OK\n"
#: rhel-ai's Site as it was before its router stopped: Ready (a kill leaves it so)
READY_AGAIN = in_section(
    SITE_OF_RHEL_AI, "|  status: Pending\n|  message: No router pod is ready\n", READY_OK
)


def _cut_short(text: str) -> str:
    """The reading without its last line (``@@end``): the read stopped before its end."""
    if not text.rstrip().endswith("@@end"):
        raise AssertionError("the recorded reading does not end with @@end")
    return text.rstrip()[: -len("@@end")]


def every(phase: str) -> dict[str, str]:
    return dict.fromkeys(HOSTS, phase)


@dataclass(frozen=True)
class Scenario:
    """A world the results are read from. ``operation`` (verb, target), when set, is run
    first through the engine on the ``phases`` world, which it takes to ``after``; the
    ``edits`` are of the readings taken after it."""

    name: str
    what: str
    phases: Mapping[str, str]
    edits: Mapping[str, tuple[Edit, ...]] = field(default_factory=dict)
    unreachable: Mapping[str, str] = field(default_factory=dict)
    cluster: str | None = None  # the world has the cluster site, unreachable for this reason
    operation: tuple[str, str] | None = None
    after: Mapping[str, str] = field(default_factory=dict)
    #: providers whose local listener has no route (their link cannot connect)
    no_route: frozenset[str] = frozenset()
    #: What the scenario is there to show, checked on what was recorded: a re-recording
    #: that no longer shows it fails instead of quietly testing something else.
    shows: Callable[[dict[str, Any]], str | None] = lambda results: None


def _site(results: dict[str, Any], host: str) -> dict[str, Any]:
    return next(s for s in results["status"]["sites"] if s["host"] == host)


def _listener(results: dict[str, Any], provider: str) -> dict[str, Any]:
    site = _site(results, "local")["site"]
    return next(
        li
        for li in results["status"]["listeners"]
        if li["provider"] == provider and li["site"] == site
    )


def _outcome(results: dict[str, Any], operation: str, host: str) -> str:
    return str(next(s["outcome"] for s in results[operation]["sites"] if s["host"] == host))


def _texts(results: dict[str, Any]) -> str:
    return json.dumps(results)


def _expect(**wanted: Callable[[dict[str, Any]], bool]) -> Callable[[dict[str, Any]], str | None]:
    def check(results: dict[str, Any]) -> str | None:
        failed = [what for what, holds in wanted.items() if not holds(results)]
        return ", ".join(failed) or None

    return check


SCENARIOS = [
    Scenario(
        "fresh",
        "nothing set up anywhere",
        every("fresh"),
        shows=_expect(
            no_site_rendered=lambda r: all(s["state"] == "not-set-up" for s in r["status"]["sites"])
        ),
    ),
    Scenario(
        "all-up",
        "setup done: every site runs",
        every("up"),
        shows=_expect(
            every_router_runs=lambda r: all(
                s["container"] == "running" for s in r["status"]["sites"]
            ),
            every_listener_serves=lambda r: all(
                li["state"] == "serving" for li in r["status"]["listeners"]
            ),
        ),
    ),
    Scenario(
        "provider-down",
        "from all up, `down rhel-ai` (the local site stays: rhtevan-work still runs)",
        every("up"),
        operation=("down", "rhel-ai"),
        after=every("rhel-ai-down"),
        shows=_expect(
            rhel_ai_stopped=lambda r: _site(r, "rhel-ai")["container"] == "exited",
            local_kept=lambda r: _site(r, "local")["container"] == "running",
            listener_closing=lambda r: _listener(r, "rhel-ai")["state"] == "closing",
        ),
    ),
    Scenario(
        "all-down",
        "from all up, `down` (every site)",
        every("up"),
        operation=("down", "all"),
        after=every("down"),
        shows=_expect(
            no_router_runs=lambda r: all(s["container"] != "running" for s in r["status"]["sites"]),
        ),
    ),
    Scenario(
        "only-rhel-ai-up",
        "from all down, `up rhel-ai`: rhel-ai and the local site run, rhtevan-work is stopped",
        every("rhel-ai-up"),
        shows=_expect(
            rhtevan_stopped=lambda r: _site(r, "rhtevan-work")["container"] == "exited",
            rhel_ai_runs=lambda r: _site(r, "rhel-ai")["container"] == "running",
        ),
    ),
    Scenario(
        "router-killed",
        "rhel-ai's router and controller stopped behind the user's back: the readings `down "
        "rhel-ai` left, with no down asked for",
        every("rhel-ai-down"),
        # stopped behind its back: its Site keeps the Ready it had (the recording's down let
        # the controller write Pending first)
        edits={"rhel-ai": (READY_AGAIN,)},
        shows=_expect(
            rhel_ai_stopped=lambda r: _site(r, "rhel-ai")["container"] == "exited",
            rhel_ai_stale=lambda r: _site(r, "rhel-ai")["state"] == "stale",
        ),
    ),
    Scenario(
        "cluster-skipped",
        "every podman site runs; the cluster's API does not answer",
        every("up"),
        cluster=CLUSTER_TIMEOUT,
        shows=_expect(
            cluster_unreachable=lambda r: not _site(r, "crc")["reachable"],
            cluster_says_why=lambda r: "timed out" in _site(r, "crc")["state_reason"],
        ),
    ),
    Scenario(
        "link-tls-refused",
        "every site runs, but the local site's link to hub-rhel-ai is refused in the TLS "
        "handshake (its port accepts; no route, so the local listener for rhel-ai does not bind)",
        every("up"),
        edits={
            "local": (
                in_section(
                    LINK_TO_RHEL_AI, READY_OK, f"|  status: Pending\n|  message: '{TLS_REFUSED}'\n"
                ),
            )
        },
        no_route=frozenset({"rhel-ai"}),
        shows=_expect(
            link_says_why=lambda r: (
                "certificate signed by unknown authority" in r["status"]["links"][0]["status"]
            ),
            port_accepts=lambda r: r["status"]["links"][0]["tcp_probe"] is True,
            no_listener=lambda r: _listener(r, "rhel-ai")["state"] == "closed",
        ),
    ),
    Scenario(
        "listener-closing",
        "`down rhel-ai` 48 s ago: the local listener for rhel-ai is still bound, and the "
        "local router drops it within 15 s",
        every("up"),
        operation=("down", "rhel-ai"),
        after=every("rhel-ai-down"),
        edits={"rhel-ai": (clock_after_exit(ROUTER, 48),)},
        shows=_expect(
            closing=lambda r: _listener(r, "rhel-ai")["state"] == "closing",
            closes_within_15s=lambda r: _listener(r, "rhel-ai")["closes_within"] == 15.0,
        ),
    ),
    Scenario(
        "hostile-text",
        "hosts that write markup into what is shown: rhtevan-work's SSH error, the local "
        "site's link status and rhel-ai's site status",
        every("up"),
        edits={
            "local": (
                in_section(
                    LINK_TO_RHEL_AI, READY_OK, f"|  status: Pending\n|  message: '{HOSTILE}'\n"
                ),
            ),
            "rhel-ai": (
                in_section(
                    SITE_OF_RHEL_AI, READY_OK, f"|  status: Ready\n|  message: '{HOSTILE}'\n"
                ),
            ),
        },
        unreachable={"rhtevan-work": f"ssh said: {HOSTILE}"},
        no_route=frozenset({"rhel-ai"}),  # its link is not up (the local site says Pending)
        shows=_expect(
            unreachable_says_it=lambda r: HOSTILE in _site(r, "rhtevan-work")["state_reason"],
            link_says_it=lambda r: HOSTILE in r["status"]["links"][0]["status"],
            site_says_it=lambda r: HOSTILE in (_site(r, "rhel-ai")["detail"] or ""),
        ),
    ),
    Scenario(
        "stranger",
        "a network a stranger finds: rhel-ai's router killed, rhtevan-work unreachable "
        "(SSH timed out), the cluster's API silent",
        {"rhel-ai": "rhel-ai-down", "rhtevan-work": "up", "local": "up"},
        # killed, not stopped: the controller had no time to write the Site Pending (it
        # does, in the recording of a down, when its router stops first)
        edits={"rhel-ai": (READY_AGAIN,)},
        unreachable={"rhtevan-work": SSH_TIMEOUT},
        cluster=CLUSTER_TIMEOUT,
        shows=_expect(
            rhel_ai_stale=lambda r: _site(r, "rhel-ai")["stale"] is True,
            rhtevan_unreachable=lambda r: not _site(r, "rhtevan-work")["reachable"],
            cluster_unreachable=lambda r: not _site(r, "crc")["reachable"],
        ),
    ),
    Scenario(
        "degraded-and-unknown",
        "every site up, except: rhtevan-work's router container runs while its unit is not "
        "active (started by hand), and rhel-ai's reading is cut short (it never reaches its end)",
        every("up"),
        edits={
            "rhtevan-work": (
                in_section(
                    "@@section units",
                    ROUTER_UNIT_ACTIVE,
                    ROUTER_UNIT_ACTIVE.replace(
                        "active\n|SubState=running", "inactive\n|SubState=dead"
                    ),
                ),
            ),
            "rhel-ai": (_cut_short,),
        },
        shows=_expect(
            rhtevan_degraded=lambda r: _site(r, "rhtevan-work")["state"] == "degraded",
            rhel_ai_unknown=lambda r: _site(r, "rhel-ai")["state"] == "unknown",
        ),
    ),
    Scenario(
        "stranger-up",
        "`up` on the stranger's network: rhel-ai and the local site run again, rhtevan-work "
        "and the cluster are skipped (unreachable)",
        {"rhel-ai": "rhel-ai-down", "rhtevan-work": "up", "local": "up"},
        unreachable={"rhtevan-work": SSH_TIMEOUT},
        cluster=CLUSTER_TIMEOUT,
        operation=("up", "all"),
        after={"rhel-ai": "up"},
        shows=_expect(
            rhel_ai_started=lambda r: _outcome(r, "up", "rhel-ai") == "up",
            rhtevan_skipped=lambda r: _outcome(r, "up", "rhtevan-work") == "skipped",
            cluster_skipped=lambda r: _outcome(r, "up", "crc") == "skipped",
        ),
    ),
]
BY_NAME = {s.name: s for s in SCENARIOS}


def _normalised(value: Any, state_dir: str) -> Any:
    """The result without what differs between two runs: the run's own STATE_DIR and how
    many seconds each read or step took."""
    if isinstance(value, dict):
        return {
            k: (0.0 if k == "seconds" and isinstance(v, float) else _normalised(v, state_dir))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalised(v, state_dir) for v in value]
    if isinstance(value, str):
        return value.replace(state_dir, "/state")
    return value


def _dumped(result: BaseModel) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True)


async def _read(scenario: Scenario, state_dir: Path) -> dict[str, Any]:
    topology = replay_topology(state_dir, cluster=scenario.cluster is not None)
    hosts = {
        h: ReplayedHost(
            h,
            scenario.phases[h],
            () if scenario.operation else scenario.edits.get(h, ()),
            scenario.unreachable.get(h),
            then=scenario.after.get(h) if scenario.operation else None,
        )
        for h in HOSTS
    }
    found: dict[str, Any] = {"scenario": scenario.name, "what": scenario.what}
    with probes_answered(topology, hosts, scenario.no_route):
        async with ReplayEngine(topology, hosts, scenario.cluster or "") as engine:
            if scenario.operation is not None:
                verb, target = scenario.operation
                done = await (engine.down(target) if verb == "down" else engine.up(target))
                if not done.ok:
                    raise AssertionError(f"{scenario.name}: {verb} {target}: {done.summary}")
                found[verb] = _dumped(done)
                for host in hosts.values():
                    host.phase, host.then = scenario.after.get(host.name, host.phase), None
                    host.edits = scenario.edits.get(host.name, ())
            written = {h: len(r.writes) for h, r in hosts.items()}
            found["status"] = _dumped(await engine.status())
            found["diagnose"] = _dumped(await engine.diagnose())
            found["up-plan"] = _dumped(await engine.up(plan=True))
            found["down-plan"] = _dumped(await engine.down(plan=True))
    wrote = {h: r.writes[written[h] :] for h, r in hosts.items() if r.writes[written[h] :]}
    if wrote:
        raise AssertionError(f"{scenario.name}: reads and plans wrote to hosts: {wrote}")
    return _normalised(found, str(state_dir))


def produce(scenario: Scenario) -> dict[str, Any]:
    """The scenario's results, as ``results/<name>.json`` holds them."""
    with tempfile.TemporaryDirectory() as tmp:
        found = asyncio.run(_read(scenario, Path(tmp)))
    wrong = scenario.shows(found)
    if wrong:
        raise AssertionError(f"{scenario.name} no longer shows what it is for: {wrong}")
    return found


def path_of(name: str) -> Path:
    return RESULTS / f"{name}.json"


def as_text(found: dict[str, Any]) -> str:
    return json.dumps(found, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    RESULTS.mkdir(exist_ok=True)
    for scenario in SCENARIOS:
        path_of(scenario.name).write_text(as_text(produce(scenario)))
        print(f"recorded {scenario.name}", file=sys.stderr)
    known = {path_of(s.name) for s in SCENARIOS}
    for stale in set(RESULTS.glob("*.json")) - known:
        stale.unlink()
        print(f"removed {stale.name}: no scenario records it", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
