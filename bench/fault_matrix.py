"""The fault matrix: one MCP server under random faults, every answer checked against the
sandbox's own ground truth.

    .venv/bin/python bench/fault_matrix.py [--seed N] [--seconds 180] [--providers 2]

It starts a sandbox world and one MCP server over stdio (as an agent runs it), sets the VAN
up, then for ``--seconds`` interleaves ``up``, ``down``, ``status``, ``test_model`` and
``setup`` with the sandbox's faults (``down``, ``blackhole``, ``slow``, ``kill-router``,
``restore``; Kubernetes ``unauthenticated``, ``down``, ``restore``) on random hosts. The
choices come from ``--seed``, so a failure can be replayed. After every call it checks:

- the call returned within its bound, with no protocol error and no traceback;
- every site's outcome is true: a router reported up is running; a skipped or unreachable
  site is one that is faulted; ``status`` never says stopped where it could not read;
- nothing is left behind: the operation lock is free and no remote command outlives the
  call; at the end, with every fault restored, each site still has the CA it had.

It prints a table (fault x operation -> calls, held, worst seconds) and every violation,
and exits 1 if there was one. The suite runs a short version (tests/lifecycle).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from skupper_mcp.engine.store.lock import lock_path
from skupper_mcp.topology import Topology, load_topology
from skupper_sandbox import hostenv
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

#: A remote command of the product carries this marker (see connectors/ssh.py).
REMOTE_MARKER = b"skupper-mcp-pid="
CALL_TIMEOUT = 400.0  # far past every bound: a call that reaches it is stuck


@dataclass
class Faults:
    """The faults in force, as the matrix set them."""

    network: dict[str, str] = field(default_factory=dict)  # host -> down | blackhole
    slow: dict[str, float] = field(default_factory=dict)
    kube: str | None = None

    def label(self) -> str:
        parts = [f"{kind} {host}" for host, kind in sorted(self.network.items())]
        parts += [f"slow {host}" for host in sorted(self.slow)]
        if self.kube:
            parts.append(f"crc {self.kube}")
        return ", ".join(parts) or "none"

    def kind(self) -> str:
        """The fault class for the table: the worst kind in force."""
        if "blackhole" in self.network.values():
            return "blackhole"
        if "down" in self.network.values():
            return "down"
        if self.kube:
            return f"crc {self.kube}"
        if self.slow:
            return "slow"
        return "none"


@dataclass
class Tally:
    calls: int = 0
    held: int = 0
    worst: float = 0.0


class Matrix:
    def __init__(self, world: World, topology: Topology, rng: random.Random) -> None:
        self.world = world
        self.topology = topology
        self.rng = rng
        self.faults = Faults()
        self.killed = False  # a router was just killed (an event, not a lasting fault)
        self.tally: dict[tuple[str, str], Tally] = defaultdict(Tally)
        self.violations: list[str] = []
        self.providers = [p.name for p in topology.providers]
        self.kube = topology.kubernetes.name if topology.kubernetes else None
        self.connect_timeout = topology.ssh.connect_timeout

    # ---- faults ----------------------------------------------------------------------

    def random_fault(self) -> str:
        host = self.rng.choice(self.providers)
        choices: list[tuple[str, tuple[str, ...]]] = [
            ("restore", ()),
            ("restore", ()),
            ("down", ()),
            ("blackhole", ()),
            ("slow", (str(self.rng.choice([1, 2, 3])),)),
            ("kill-router", ()),
        ]
        if self.kube:
            choices += [("crc-unauthenticated", ()), ("crc-down", ()), ("crc-restore", ())]
        kind, args = self.rng.choice(choices)
        self.killed = kind == "kill-router"
        if kind.startswith("crc-"):
            mode = kind.removeprefix("crc-")
            self.world.fault("crc", mode)
            self.faults.kube = None if mode == "restore" else mode
            return f"crc {mode}"
        self.world.fault(host, kind, *args)
        if kind == "restore":
            self.faults.network.pop(host, None)
            self.faults.slow.pop(host, None)
        elif kind in ("down", "blackhole"):
            self.faults.network[host] = kind
        elif kind == "slow":
            self.faults.slow[host] = float(args[0])
        return f"{kind} {host}"

    def restore_all(self) -> None:
        self.world.restore_all()
        self.faults = Faults()

    # ---- calls -----------------------------------------------------------------------

    def bound(self, operation: str) -> float:
        """How long a call may take with the faults in force (seconds)."""
        slow = max(self.faults.slow.values(), default=0.0)
        base = {"status": 8.0, "test_model": 30.0, "up": 60.0, "down": 60.0, "setup": 240.0}
        per_command = {"status": 2, "test_model": 3, "up": 10, "down": 10, "setup": 30}
        return base[operation] + self.connect_timeout + slow * per_command[operation]

    def random_call(self) -> tuple[str, dict[str, Any]]:
        operation = self.rng.choice(["status", "status", "up", "down", "test_model", "setup"])
        if operation in ("up", "down"):
            target = self.rng.choice(["all", "all", "local", *self.providers])
            return operation, {"target": target}
        if operation == "test_model":
            return operation, {"target": self.rng.choice(self.providers)}
        return operation, {}

    async def call(self, client: Client, operation: str, arguments: dict[str, Any]) -> None:
        label = self.faults.kind()
        if self.killed and label == "none":
            label = "kill-router"
        self.killed = False
        bound = self.bound(operation)
        started = time.monotonic()
        problem: str | None = None
        result: Any = None
        try:
            result = await asyncio.wait_for(client.call_tool(operation, arguments), CALL_TIMEOUT)
        except Exception as exc:  # a protocol error or a dead server is a violation
            problem = f"no answer: {type(exc).__name__}: {exc}"
        seconds = time.monotonic() - started
        tally = self.tally[(label, operation)]
        tally.calls += 1
        tally.worst = max(tally.worst, seconds)
        where = f"{operation} {json.dumps(arguments)} under [{self.faults.label()}]"
        if problem is None and seconds > bound:
            problem = f"took {seconds:.1f}s, bound {bound:.0f}s"
        if problem is None and result is not None:
            problem = self.check_answer(operation, result)
        if problem is None:
            problem = await self.check_nothing_left()
        if problem is None:
            tally.held += 1
        else:
            self.violations.append(f"{where}: {problem}")
            print(f"  VIOLATION {where}: {problem}", flush=True)

    # ---- invariants ------------------------------------------------------------------

    def unreachable(self) -> set[str]:
        gone = {h for h, kind in self.faults.network.items() if kind in ("down", "blackhole")}
        if self.kube and self.faults.kube:
            gone.add(self.kube)
        return gone

    def running(self) -> dict[str, set[str]]:
        """Host -> names of its running containers, from the sandbox itself."""
        done = self.world.sandbox("status", "--json")
        hosts = json.loads(done.stdout)["hosts"]
        return {h["name"]: set(h.get("running", [])) for h in hosts}

    def check_answer(self, operation: str, result: Any) -> str | None:
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            if "Traceback" in text or "Error executing tool" in text:
                return f"an error instead of a result: {text[:300]}"
            return f"a tool error: {text[:300]}"
        answer = result.structured_content or {}
        if "Traceback" in json.dumps(answer):
            return "a traceback in the result"
        gone = self.unreachable()
        if operation == "status":
            for site in answer.get("sites", []):
                host = site["host"]
                if host in gone and site.get("container") is not None:
                    # It cannot have been read: a state here is made up (e.g. "stopped").
                    return f"{host} is faulted but status says {site.get('container')}"
            return None
        if operation == "test_model":
            checks = answer.get("checks", [])
            return None if len(checks) == 6 else f"{len(checks)} checks, not six"
        running = self.running()
        for site in answer.get("sites", []):
            host, outcome = site["host"], site["outcome"]
            if outcome == "skipped" and host not in gone and not self._skips_for_a_peer(site):
                return f"{host} skipped but not faulted: {site.get('reason')}"
            if site["platform"] != "podman" or host in gone:
                continue
            router = f"{self._namespace(host)}-skupper-router"
            if outcome == "up" and router not in running.get(host, set()):
                return f"{host} reported up but its router is not running"
            if outcome == "down" and router in running.get(host, set()):
                return f"{host} reported down but its router runs"
        return None

    def _skips_for_a_peer(self, site: dict[str, Any]) -> bool:
        """A site may be skipped because a site it depends on is unreachable."""
        reason = (site.get("reason") or "").lower()
        return any(peer in reason for peer in self.unreachable())

    def _namespace(self, host: str) -> str:
        if host == self.topology.local.name:
            return self.topology.local.namespace
        return next(p.namespace for p in self.topology.providers if p.name == host)

    async def check_nothing_left(self) -> str | None:
        path = lock_path(self.topology.state_dir, self.topology.path)
        if path.exists():
            fd = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                return "the operation lock is still held after the call"
            finally:
                os.close(fd)
        deadline = time.monotonic() + 3
        while True:
            left = list(remote_commands(self.world.info.id))
            if not left:
                return None
            if time.monotonic() >= deadline:
                return f"remote commands outlived the call: pids {left}"
            await asyncio.sleep(0.2)

    def site_cas(self) -> dict[str, str]:
        """Host -> the sha256 of its site CA certificate, read over SSH."""
        found = {}
        for host in [self.topology.local.name, *self.providers]:
            ns = self._namespace(host)
            command = (
                'd="${XDG_DATA_HOME:-$HOME/.local/share}/skupper"; [ "$(id -u)" = 0 ] && '
                f'd=/var/lib/skupper; sha256sum "$d/namespaces/{ns}/runtime/issuers/'
                'skupper-site-ca/ca.crt" | cut -c1-16'
            )
            _, out, _ = self.world.ssh(host, command)
            found[host] = out.strip()
        return found

    def report(self) -> None:
        print(f"\n{'fault':<22}{'operation':<12}{'calls':>6}{'held':>6}{'worst s':>9}")
        for (fault, operation), t in sorted(self.tally.items()):
            print(f"{fault:<22}{operation:<12}{t.calls:>6}{t.held:>6}{t.worst:>9.1f}")
        calls = sum(t.calls for t in self.tally.values())
        held = sum(t.held for t in self.tally.values())
        print(f"\n{held}/{calls} calls held every invariant; {len(self.violations)} violations")
        for violation in self.violations:
            print(f"  - {violation}")


def remote_commands(world_id: str) -> Iterator[int]:
    """Pids of the product's remote shells still alive on this world's hosts (other worlds,
    a test suite's say, may run on the same machine: their shells are not ours to count)."""
    ours = f"{hostenv.WORLD_ID_VAR}={world_id}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if REMOTE_MARKER not in (entry / "cmdline").read_bytes():
                continue
            if ours in (entry / "environ").read_bytes().split(b"\0"):
                yield int(entry.name)
        except OSError:
            continue


async def run_matrix(world: World, seed: int, seconds: float) -> Matrix:
    topology = load_topology(world.topology)
    matrix = Matrix(world, topology, random.Random(seed))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skupper_mcp", "--topology", str(world.topology), "--log-level", "ERROR"],
    )
    async with Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as client:
        setup = await client.call_tool("setup", {})
        assert not setup.is_error and setup.structured_content["ok"], setup.content
        cas = matrix.site_cas()
        await client.call_tool("up", {"target": "all"})
        deadline = time.monotonic() + seconds
        step = 0
        while time.monotonic() < deadline:
            step += 1
            fault = matrix.random_fault() if matrix.rng.random() < 0.6 else "no new fault"
            operation, arguments = matrix.random_call()
            print(f"[{step}] {fault}; {operation} {json.dumps(arguments)}", flush=True)
            await matrix.call(client, operation, arguments)
        matrix.restore_all()
        await matrix.call(client, "status", {})
    after = matrix.site_cas()
    for host, digest in cas.items():
        if after.get(host) != digest:
            matrix.violations.append(f"{host}'s site CA changed ({digest} -> {after.get(host)})")
    return matrix


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--providers", type=int, default=2)
    args = parser.parse_args()
    print(f"fault matrix: seed {args.seed}, {args.seconds:g}s, {args.providers} providers")
    with (
        tempfile.TemporaryDirectory(prefix="skmcp-faults-") as tmp,
        running_world(Path(tmp), WorldSpec(providers=args.providers)) as world,
    ):
        matrix = asyncio.run(run_matrix(world, args.seed, args.seconds))
    matrix.report()
    print(f"replay with: bench/fault_matrix.py --seed {args.seed} --seconds {args.seconds:g}")
    return 1 if matrix.violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
