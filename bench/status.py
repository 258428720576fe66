"""status, up and down against their anchors, on sandbox worlds of 2, 8 and 32 providers.

    .venv/bin/python bench/status.py [--providers 2 8 32] [--rounds 3] [--podman emulated real]
        [--python OTHER/.venv/bin/python]

For each world (each number of providers on each podman asked for, emulated and this
machine's real one by default), in the same run, side by side:

- floor: one SSH round trip (``true``) to every site at once on open connections;
- bash way: what a shell script would do, the OpenSSH client with a new connection per fact,
  host after host (eight facts per site);
- status cold (a new ``skupper-mcp status`` process) and warm (the second call through one
  MCP server over stdio);
- up and down through that server, against the slowest single site's own work;
- the processes one warm status starts per site, by program: ``podman``, ``skupper``,
  ``systemctl`` and ``curl`` (the emulated tools as the world's command server records them
  in ``commands.stats``, real podman as its wrapper counts it in each host's store);
- the CPU one warm status costs the product (its server process) and the sandbox (every
  process of the world, with the commands that ended meanwhile): on a shared 2-core machine
  their sum over 2 bounds the warm figure;
- the sandbox's idle CPU after setup (per cent of one core, every process of the world, and
  by kind of process on stderr) and the CPU of the costliest emulated command of a state
  read (what the world's command server records, plus the client).

Medians of ``--rounds``, and for warm status the least of them too (on a shared machine the
round other work delayed least). ``--python`` measures another checkout's product as well
(cold, warm, up and down through its own server, on the same world, right after this one's):
a figure to compare in the same run, under the same load. The sandbox shares this machine's
cores with the product, so its own cost is printed beside the product's figures. Real
podman's commands cost the world far more CPU than the emulated ones (docs/sandbox.md 4a),
which would hide a change in the product's own cost between runs: the two kinds are rows of
their own, and ``--podman emulated`` alone compares the product's cost across runs. A kind
this machine cannot run is said and left out.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from skupper_mcp.connectors.ssh import SSHConnector
from skupper_mcp.topology import Topology, load_topology
from skupper_sandbox import hostenv
from skupper_sandbox.cli import world_processes
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.real_podman import podman_calls
from skupper_sandbox.testing import World, running_world
from skupper_sandbox.world import host_user

CALL_TIMEOUT = 600.0
IDLE_WINDOW = 10.0
#: After setup the routers keep changing for a while (links, remote sites named) and their
#: controllers ask them quickly after each change (0.5-8 s): idle is what the world costs
#: once that has passed.
SETTLE = 20.0
TICKS = os.sysconf("SC_CLK_TCK")


async def floor(topology: Topology) -> float:
    """One round trip to every site at once, on connections opened beforehand."""
    options = topology.ssh.options()
    connectors = [
        SSHConnector(site.name, site.ssh, options)
        for site in [topology.local, *topology.providers]
        if site.ssh is not None
    ]
    try:
        await asyncio.gather(*(c.run("true", timeout=30) for c in connectors))  # connect
        started = time.monotonic()
        await asyncio.gather(*(c.run("true", timeout=30) for c in connectors))
        return time.monotonic() - started
    finally:
        await asyncio.gather(*(c.close() for c in connectors))


def bash_way(topology: Topology) -> float:
    """A shell script's way: ``ssh host fact`` per fact, one host after another."""
    identity, known_hosts = topology.ssh.identity_files[0], topology.ssh.known_hosts
    first = topology.providers[0]
    facts = [
        "skupper version",
        "systemctl --user is-active skupper-{ns}.service",
        "podman ps --format '{{{{.Names}}}}'",
        "podman inspect {ns}-skupper-router --format '{{{{.State.Status}}}}'",
        "skupper site status -n {ns}",
        "skupper link status -n {ns}",
        "skupper listener status -n {ns}",
        "curl -s -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{port}/v1/models",
    ]
    started = time.monotonic()
    sites = [(topology.local, first.local_port)] + [(p, p.model_port) for p in topology.providers]
    for site, port in sites:
        assert site.ssh is not None
        for fact in facts:
            command = [
                "ssh",
                "-i",
                str(identity),
                "-o",
                f"UserKnownHostsFile={known_hosts}",
                "-o",
                "BatchMode=yes",
                "-p",
                str(site.ssh.port or 22),
                f"{site.ssh.user}@{site.ssh.host}" if site.ssh.user else site.ssh.host,
                "export XDG_RUNTIME_DIR=/run/user/$(id -u); "
                + fact.format(ns=site.namespace, port=port),
            ]
            subprocess.run(command, capture_output=True, timeout=60)
    return time.monotonic() - started


def cold_status(topology_path: Path, python: str = sys.executable) -> float:
    started = time.monotonic()
    done = subprocess.run(
        [python, "-m", "skupper_mcp", "--topology", str(topology_path), "status"],
        capture_output=True,
        timeout=CALL_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return time.monotonic() - started


def slowest_site(result: dict[str, Any]) -> float:
    sites = result.get("sites") or []
    return max((sum(s["seconds"] for s in site["steps"]) for site in sites), default=0.0)


async def timed(call: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    started = time.monotonic()
    value = await call()
    return time.monotonic() - started, value


def proc_stat(pid: int | str) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state first)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def server_pid() -> int:
    """The MCP server this process started over stdio (its child running skupper_mcp)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int(proc_stat(entry.name)[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"skupper_mcp" in cmdline:
            return int(entry.name)
    raise RuntimeError("the MCP server process was not found")


def process_cpu_seconds(pid: int) -> float:
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


#: The programs whose processes a warm status is counted by.
COUNTED = ("podman", "skupper", "systemctl", "curl")


def commands_run(world: World) -> dict[str, int]:
    """How many processes of each counted program the world's hosts ran so far: the
    emulated tools by the command server's record, real podman by its wrapper's."""
    stats = world.dir / "logs" / "commands.stats"
    lines = stats.read_text().splitlines() if stats.exists() else []
    found = {tool: 0 for tool in COUNTED}
    for line in lines:
        tool = line.split(" ", 1)[0]
        if tool in found:
            found[tool] += 1
    for host in world.info.ssh_hosts:
        found["podman"] += len(podman_calls(world.host_dir(host.name)))
    return found


async def through_server(
    topology_path: Path, rounds: int, world: World, python: str = sys.executable
) -> dict[str, list[float]]:
    """Warm status, up and down through one MCP server over stdio (``python``'s product);
    with the CPU a warm status costs the product (the server's process) and the sandbox
    (every process of the world), and the processes it started per site."""
    world_id, sites = world.info.id, len(world.info.ssh_hosts)
    params = StdioServerParameters(
        command=python,
        args=["-m", "skupper_mcp", "--topology", str(topology_path), "--log-level", "ERROR"],
    )
    found: dict[str, list[float]] = {"warm": [], "up": [], "up site": [], "down": []}
    found["down site"], found["status cpu"], found["world cpu"] = [], [], []
    for tool in COUNTED:
        found[tool] = []
    async with Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as client:

        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content
            return dict(result.structured_content or {})

        await call("status")
        server = server_pid()
        for round_ in range(rounds):
            if round_:  # the routers settle after the last round's up, as after setup
                await asyncio.sleep(SETTLE)
            own, cpu = process_cpu_seconds(server), world_cpu_by_kind(world_id)
            ran = commands_run(world)
            seconds, _ = await timed(lambda: call("status"))
            found["warm"].append(seconds)
            found["status cpu"].append(process_cpu_seconds(server) - own)
            spent = cpu_by_kind(cpu, world_cpu_by_kind(world_id))
            await asyncio.sleep(0.2)  # the command server records a command after its end
            after = commands_run(world)
            for tool in COUNTED:
                found[tool].append((after[tool] - ran[tool]) / sites)
            found["world cpu"].append(sum(spent.values()))
            print(
                "  warm status, world CPU s by process: " + by_kind_line(spent, 0.005),
                file=sys.stderr,
                flush=True,
            )
            seconds, down = await timed(lambda: call("down", target="all"))
            found["down"].append(seconds)
            found["down site"].append(slowest_site(down))
            seconds, up = await timed(lambda: call("up", target="all"))
            if not up["ok"]:  # reported, not hidden: the figure is then that of a failed up
                failed = [s for s in up["sites"] if s["outcome"] == "failed"]
                reason = failed[0]["reason"] if failed else up["summary"]
                print(f"up failed on {len(failed)} sites: {reason}", file=sys.stderr)
            found["up"].append(seconds)
            found["up site"].append(slowest_site(up))
    return found


def process_kind(pid: int) -> str:
    """What a world process is: the module a Python process runs, else its program. The
    command server's children (tools, conmon, and the image programs conmon forks) keep
    its command line and take their program's name (``comm``)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "gone"
    words = [a.decode(errors="replace") for a in argv if a]
    if "-m" in words[:-1]:
        module = words[words.index("-m") + 1].removeprefix("skupper_sandbox.")
        if module == "commands.server" and not name.startswith("python"):
            return name
        return module
    return Path(words[0]).name if words else "?"


def world_cpu_by_kind(world_id: str) -> dict[int, tuple[str, float]]:
    """CPU seconds so far of every live process of the world (by its environment), with
    that of the children it has reaped: a command that ended counts to its parent's kind."""
    found = {}
    for pid in world_processes(world_id):
        try:
            fields = proc_stat(pid)
        except OSError:
            continue
        ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        found[pid] = (process_kind(pid), ticks / TICKS)
    return found


def cpu_by_kind(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
) -> dict[str, float]:
    """CPU seconds spent between two looks, by kind of process."""
    kinds: dict[str, float] = {}
    for pid, (kind, seconds) in after.items():
        kinds[kind] = kinds.get(kind, 0.0) + seconds - before.get(pid, (kind, 0.0))[1]
    return kinds


def by_kind_line(kinds: dict[str, float], least: float) -> str:
    shown = sorted(kinds.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{kind} {value:.2f}" for kind, value in shown if value >= least)


def idle_percent(world: World) -> tuple[float, dict[str, float]]:
    """The world's CPU while nothing is asked of it (per cent of one core), in all and by
    kind of process."""
    time.sleep(SETTLE)
    before = world_cpu_by_kind(world.info.id)
    time.sleep(IDLE_WINDOW)
    spent = cpu_by_kind(before, world_cpu_by_kind(world.info.id))
    kinds = {kind: 100 * seconds / IDLE_WINDOW for kind, seconds in spent.items()}
    return sum(kinds.values()), kinds


#: The emulated commands of a site's state read (curl there is the machine's own curl).
READ_COMMANDS = (
    ("podman", "ps", "-a", "--format", "json"),
    ("podman", "inspect", "default-skupper-router"),
    ("skupper", "version", "-p", "kubernetes"),
    ("systemctl", "--user", "show", "-p", "ActiveState", "skupper-default.service"),
)


def command_cpu_ms(world: World, count: int = 10) -> float:
    """CPU of the costliest emulated command of a state read, run as the host runs it: the
    client's own CPU plus the command's (the server records each; without a server both
    are children)."""
    host_dir = world.host_dir(world.info.ssh_hosts[0].name)
    env = hostenv.host_env(host_dir)
    env["PATH"] = f"{world.dir / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    env["KUBECONFIG"] = "/dev/null"
    stats = world.dir / "logs" / "commands.stats"
    # as the host's login user: root driving a rootless user's podman store takes it over
    as_user = host_user(host_dir)
    costs = []
    for command in READ_COMMANDS:
        served_before = len(stats.read_text().splitlines()) if stats.exists() else 0
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(count):
            subprocess.run(
                command, env=env, capture_output=True, timeout=60, cwd=env["HOME"], **as_user
            )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
        served = stats.read_text().splitlines()[served_before:] if stats.exists() else []
        costs.append((own + sum(float(line.split()[1]) for line in served)) / count)
    return max(costs)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def run_world(
    providers: int, rounds: int, podman: str, others: list[str]
) -> dict[str, dict[str, float]]:
    """The rows of one world: this checkout's product (``"this"``), then each of ``others``
    (another checkout's interpreter) on the same world."""
    spec = WorldSpec(providers=providers, kubernetes=False, podman=podman)
    with tempfile.TemporaryDirectory() as tmp, running_world(Path(tmp), spec) as world:
        topology = load_topology(world.topology)
        setup = subprocess.run(
            [sys.executable, "-m", "skupper_mcp", "--topology", str(world.topology), "setup"],
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT,
        )
        assert setup.returncode == 0, setup.stdout + setup.stderr
        idle, by_kind = idle_percent(world)
        row = {"idle %": idle, "command ms": command_cpu_ms(world)}
        print(
            f"{providers} providers, idle % of a core by process: {by_kind_line(by_kind, 0.05)}",
            file=sys.stderr,
            flush=True,
        )
        row["floor"] = median([asyncio.run(floor(topology)) for _ in range(rounds)])
        row["bash way"] = median([bash_way(topology) for _ in range(min(rounds, 2))])
        rows = {}
        for python in [sys.executable, *others]:
            product = dict(row)
            product["cold"] = median([cold_status(world.topology, python) for _ in range(rounds)])
            served = asyncio.run(through_server(world.topology, rounds, world, python))
            for key, values in served.items():
                product[key] = median(values)
            product["warm min"] = min(served["warm"])
            rows["this" if python == sys.executable else checkout_name(python)] = product
        return rows


def checkout_name(python: str) -> str:
    """A checkout's name from its interpreter (``CHECKOUT/.venv/bin/python``)."""
    path = Path(python)
    return path.parents[2].name if len(path.parents) > 2 else python


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--providers", type=int, nargs="+", default=[2, 8, 32])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--podman", choices=("emulated", "real"), nargs="+", default=["emulated", "real"]
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        help="another checkout's interpreter whose product is measured too (repeatable)",
    )
    args = parser.parse_args()
    columns = [
        ("floor", "floor s"),
        ("bash way", "bash s"),
        ("cold", "cold s"),
        ("warm", "warm s"),
        ("warm min", "warm min s"),
        ("up", "up s"),
        ("up site", "up site s"),
        ("down", "down s"),
        ("down site", "down site s"),
        ("status cpu", "status cpu"),
        ("world cpu", "world cpu"),
        ("idle %", "idle %"),
        ("command ms", "cmd ms"),
    ]
    rows: dict[tuple[int, str, str], dict[str, float]] = {}
    for providers in args.providers:
        for podman in args.podman:
            said = f"world of {providers} providers, {podman} podman ..."
            print(said, file=sys.stderr, flush=True)
            try:
                products = run_world(providers, args.rounds, podman, args.python)
            except Exception as exc:  # said, and the other kind still measured
                if podman != "real":
                    raise
                print(f"real podman left out: {exc}", file=sys.stderr, flush=True)
                continue
            for product, row in products.items():
                rows[providers, podman, product] = row
    print(f"products: this ({sys.executable}), " + ", ".join(args.python or ["no other"]))
    head = f"{'providers':>9}{'podman':>10}{'product':>14}"
    print(head + "".join(f"{title:>12}" for _, title in columns))
    for (providers, podman, product), row in rows.items():
        cells = "".join(f"{row[key]:>12.2f}" for key, _ in columns)
        print(f"{providers:>9}{podman:>10}{product[-13:]:>14}{cells}")
    print(f"\nprocesses one warm status starts per site\n{head}", end="")
    print("".join(f"{tool:>12}" for tool in COUNTED))
    for (providers, podman, product), row in rows.items():
        counts = "".join(f"{row[tool]:>12.2f}" for tool in COUNTED)
        print(f"{providers:>9}{podman:>10}{product[-13:]:>14}{counts}")
    print()
    for (providers, podman, product), row in rows.items():
        print(
            f"{providers} providers, {podman} podman, {product}: warm status "
            f"{row['bash way'] / row['warm']:.1f}x faster than the bash way; up "
            f"{row['up'] / max(row['up site'], 1e-9):.1f}x and down "
            f"{row['down'] / max(row['down site'], 1e-9):.1f}x the slowest site's own work"
        )
    for podman in args.podman:
        sizes = sorted(p for p, kind, product in rows if kind == podman and product == "this")
        if len(sizes) > 1:
            small, large = rows[sizes[0], podman, "this"], rows[sizes[-1], podman, "this"]
            print(
                f"warm status on {podman} podman, {sizes[-1]} vs {sizes[0]} providers: "
                f"{large['warm'] / small['warm']:.1f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
