"""status, up and down against their anchors, on sandbox worlds of 2, 8 and 32 providers;
models on a world of 2 providers with two endpoints each.

    .venv/bin/python bench/status.py [--providers 2 8 32] [--rounds 5] [--podman emulated real]
        [--python OTHER/.venv/bin/python] [--no-up-down] [--no-models]

For each world (each number of providers on each podman asked for, emulated and this
machine's real one by default, one after the other in one run), side by side:

- floor: one SSH round trip (``true``) to every site at once on open connections;
- bash way: what a shell script would do, the OpenSSH client with a new connection per fact,
  host after host (eight facts per site);
- status cold (a new ``skupper-mcp status`` process) and warm (a call through an MCP server
  over stdio that has answered one already), each product's calls interleaved with the
  others' round by round (each round led by the next product), so that the load of a
  shared machine falls on every product alike; the median, least and most of the rounds;
- up and down through that server, against the slowest single site's own work;
- the processes one warm status starts per site, by program: ``podman``, ``skupper``,
  ``systemctl`` and ``curl`` (the emulated tools as the world's command server records them
  in ``commands.stats``, real podman as its wrapper counts it in each host's store);
- the SSH round trips one warm status makes per site and their seconds (the slowest
  site's), and the HTTP requests per model endpoint's local listener, counted by the
  product itself run in-process by its own interpreter (``COUNT_SCRIPT``), with its CPU;
- the CPU one warm status costs the product (its server process) and the sandbox (every
  process of the world, with the commands that ended meanwhile): on a shared 2-core machine
  their sum over 2 bounds the warm figure;
- the sandbox's idle CPU after setup (per cent of one core, every process of the world, and
  by kind of process on stderr) and the CPU of the costliest emulated command of a state
  read (what the world's command server records, plus the client).

Then (unless ``--no-models``) ``models`` on a world of two providers each with a chat and an
embeddings endpoint (four rows): its warm seconds interleaved as above, the processes per
site, the SSH round trips per provider host and the HTTP requests per endpoint.

``--python`` measures another checkout's product as well, on the same world, interleaved
with this one's: the one comparison a shared machine's load leaves fair. The load average
is printed at the start and the end. The sandbox shares this machine's cores with the
product, so its own cost is printed beside the product's figures. Real podman's commands
cost the world far more CPU than the emulated ones (docs/sandbox.md 4a), which would hide a
change in the product's own cost between runs: the two kinds are rows of their own, and
``--podman emulated`` alone compares the product's cost across runs. A kind this machine
cannot run is said and left out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Collection
from functools import partial
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from skupper_mcp.connectors.ssh import SSHConnector
from skupper_mcp.topology import Topology, load_topology
from skupper_sandbox import hostenv
from skupper_sandbox.cli import world_processes
from skupper_sandbox.layout import WorldSpec, provider_names
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


def server_pid(known: Collection[int] = ()) -> int:
    """The MCP server this process started over stdio (its child running skupper_mcp),
    not one of ``known`` (those started before it)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in known:
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


#: Run by a checkout's own interpreter (``python -c``, argv: topology, tool, rounds): one
#: warm call of TOOL, then ROUNDS more in one engine, as the MCP server runs them, counting
#: per call the SSH channels it opens per host (each is one command, one round trip) and
#: their seconds, and the HTTP requests it sends per port (a local listener's port is its
#: endpoint's), with the product's own CPU per call. Prints one JSON line.
COUNT_SCRIPT = """
import asyncio, json, sys, time
from collections import Counter
import httpx
from skupper_mcp.connectors.ssh import SSHConnector
from skupper_mcp.engine.core import Engine
from skupper_mcp.topology import load_topology
ssh, seconds, http = Counter(), Counter(), Counter()
opened = SSHConnector._open_process
async def counted_open(self, command):
    ssh[self._name] += 1
    return await opened(self, command)
SSHConnector._open_process = counted_open
run = SSHConnector.run
async def timed_run(self, command, **kw):
    started = time.monotonic()
    try:
        return await run(self, command, **kw)
    finally:
        seconds[self._name] += time.monotonic() - started
SSHConnector.run = timed_run
send = httpx.AsyncClient.send
async def counted_send(self, request, **kw):
    http[request.url.port] += 1
    return await send(self, request, **kw)
httpx.AsyncClient.send = counted_send
async def main(path, tool, rounds):
    async with Engine(load_topology(path)) as engine:
        await getattr(engine, tool)()
        ssh.clear(); seconds.clear(); http.clear()
        cpu = time.process_time()
        for _ in range(rounds):
            await getattr(engine, tool)()
        cpu = time.process_time() - cpu
    per = lambda c: {str(k): v / rounds for k, v in c.items()}
    print(json.dumps({"ssh": per(ssh), "ssh s": per(seconds), "http": per(http),
                      "cpu": cpu / rounds}))
asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def product_counts(topology_path: Path, tool: str, rounds: int, python: str) -> dict[str, Any]:
    """What one warm call of ``tool`` costs in round trips, by ``python``'s product run
    in-process (``COUNT_SCRIPT``): SSH channels and their seconds per host, HTTP requests
    per port, the product's CPU."""
    done = subprocess.run(
        [python, "-W", "ignore", "-c", COUNT_SCRIPT, str(topology_path), tool, str(rounds)],
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


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


def server_params(topology_path: Path, python: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=python,
        args=["-m", "skupper_mcp", "--topology", str(topology_path), "--log-level", "ERROR"],
    )


async def call_tool(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return dict(result.structured_content or {})


async def side_by_side(
    topology_path: Path, pythons: list[str], rounds: int, world: World, tool: str = "status"
) -> dict[str, dict[str, list[float]]]:
    """Warm calls of ``tool`` through one MCP server per product over stdio, the products'
    calls interleaved (each round led by the next product), so that the machine's load
    falls on each alike; per call the CPU it cost the product (its server's process) and
    the sandbox (every process of the world), and the processes it started per site."""
    world_id, sites = world.info.id, len(world.info.ssh_hosts)
    found: dict[str, dict[str, list[float]]] = {}
    async with contextlib.AsyncExitStack() as stack:
        servers: dict[str, tuple[Client, int]] = {}
        for python in pythons:
            client = Client(
                server_params(topology_path, python),
                mode="legacy",
                read_timeout_seconds=CALL_TIMEOUT,
            )
            client = await stack.enter_async_context(client)
            await call_tool(client, tool)  # warm: the connections open, the first read
            known = [pid for _, pid in servers.values()]
            servers[product_name(python)] = (client, server_pid(known))
            found[product_name(python)] = {
                key: [] for key in ("warm", "cpu", "world cpu", *COUNTED)
            }
        names = list(servers)
        for round_ in range(rounds):
            for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                client, server = servers[name]
                own, cpu = process_cpu_seconds(server), world_cpu_by_kind(world_id)
                ran = commands_run(world)
                seconds, _ = await timed(lambda c=client: call_tool(c, tool))  # type: ignore[misc]
                row = found[name]
                row["warm"].append(seconds)
                row["cpu"].append(process_cpu_seconds(server) - own)
                spent = cpu_by_kind(cpu, world_cpu_by_kind(world_id))
                await asyncio.sleep(0.2)  # the command server records a command after its end
                after = commands_run(world)
                for program in COUNTED:
                    row[program].append((after[program] - ran[program]) / sites)
                row["world cpu"].append(sum(spent.values()))
                print(
                    f"  warm {tool} ({name}) {seconds:.3f} s, world CPU s by process: "
                    + by_kind_line(spent, 0.005),
                    file=sys.stderr,
                    flush=True,
                )
    return found


async def through_server(
    topology_path: Path, rounds: int, python: str = sys.executable
) -> dict[str, list[float]]:
    """up and down through one MCP server over stdio (``python``'s product), against the
    slowest site's own work."""
    found: dict[str, list[float]] = {"up": [], "up site": [], "down": [], "down site": []}
    params = server_params(topology_path, python)
    async with Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as client:

        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            return await call_tool(client, tool, **arguments)

        await call("status")
        for round_ in range(rounds):
            if round_:  # the routers settle after the last round's up, as after setup
                await asyncio.sleep(SETTLE)
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


def set_up(world: World) -> None:
    setup = subprocess.run(
        [sys.executable, "-m", "skupper_mcp", "--topology", str(world.topology), "setup"],
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
    )
    assert setup.returncode == 0, setup.stdout + setup.stderr


def run_world(
    providers: int, rounds: int, podman: str, others: list[str], no_up_down: bool = False
) -> dict[str, dict[str, float]]:
    """The rows of one world: this checkout's product (``"this"``), then each of ``others``
    (another checkout's interpreter) on the same world: cold and warm status interleaved
    product by product, then each product's up and down."""
    spec = WorldSpec(providers=providers, kubernetes=False, podman=podman)
    pythons = [sys.executable, *others]
    with tempfile.TemporaryDirectory() as tmp, running_world(Path(tmp), spec) as world:
        topology = load_topology(world.topology)
        set_up(world)
        idle, by_kind = idle_percent(world)
        row = {"idle %": idle, "command ms": command_cpu_ms(world)}
        print(
            f"{providers} providers, idle % of a core by process: {by_kind_line(by_kind, 0.05)}",
            file=sys.stderr,
            flush=True,
        )
        row["floor"] = median([asyncio.run(floor(topology)) for _ in range(rounds)])
        row["bash way"] = median([bash_way(topology) for _ in range(min(rounds, 2))])
        rows = {product_name(python): dict(row) for python in pythons}
        colds: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(rounds):
            for python in pythons:
                colds[product_name(python)].append(cold_status(world.topology, python))
        warm = asyncio.run(side_by_side(world.topology, pythons, rounds, world))
        for python in pythons:
            product = rows[product_name(python)]
            product["cold"] = median(colds[product_name(python)])
            served = warm[product_name(python)]
            for key, values in served.items():
                product["status cpu" if key == "cpu" else key] = median(values)
            product["warm min"] = min(served["warm"])
            product["warm max"] = max(served["warm"])
            product.update(round_trips(world.topology, topology, "status", rounds, python))
        for python in pythons if not no_up_down else []:
            served = asyncio.run(through_server(world.topology, rounds, python))
            for key, values in served.items():
                rows[product_name(python)][key] = median(values)
        return rows


def round_trips(
    path: Path, topology: Topology, tool: str, rounds: int, python: str
) -> dict[str, float]:
    """One warm call's SSH round trips per site (the most any site had) and their seconds
    (the slowest site's), and HTTP requests per model endpoint's listener (the most any
    had), as ``product_counts`` counts them."""
    counts = product_counts(path, tool, rounds, python)
    ports = [str(e.local_port) for e in topology.model_endpoints()]
    return {
        "ssh": max(counts["ssh"].values(), default=0.0),
        "ssh s": max(counts["ssh s"].values(), default=0.0),
        "http": max((counts["http"].get(port, 0.0) for port in ports), default=0.0),
        "product cpu": counts["cpu"],
    }


#: The providers of the models world, each with two endpoints (chat and embed).
MODELS_PROVIDERS = 2


def models_world(rounds: int, podman: str, others: list[str]) -> dict[str, dict[str, float]]:
    """``models`` on a world of two providers with two endpoints each (``--embeddings``:
    chat and embed, four rows), the products' warm calls interleaved; with the SSH round
    trips per host and the HTTP requests per endpoint of one call."""
    spec = WorldSpec(
        providers=MODELS_PROVIDERS,
        kubernetes=False,
        podman=podman,
        embeddings_hosts=frozenset(provider_names(MODELS_PROVIDERS)),
    )
    pythons = [sys.executable, *others]
    with tempfile.TemporaryDirectory() as tmp, running_world(Path(tmp), spec) as world:
        topology = load_topology(world.topology)
        assert len(topology.model_endpoints()) == 2 * MODELS_PROVIDERS
        set_up(world)
        time.sleep(SETTLE)  # the routers' links settle, as for status
        warm = asyncio.run(side_by_side(world.topology, pythons, rounds, world, "models"))
        rows = {}
        for python in pythons:
            values = warm[product_name(python)]
            row = {key: median(v) for key, v in values.items()}
            row["warm min"] = min(values["warm"])
            row["warm max"] = max(values["warm"])
            row.update(round_trips(world.topology, topology, "models", rounds, python))
            rows[product_name(python)] = row
        return rows


def product_name(python: str) -> str:
    """``this`` for this checkout's interpreter, else the checkout's name."""
    return "this" if python == sys.executable else checkout_name(python)


def checkout_name(python: str) -> str:
    """A checkout's name from its interpreter (``CHECKOUT/.venv/bin/python``)."""
    path = Path(python)
    return path.parents[2].name if len(path.parents) > 2 else python


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def print_rows(rows: dict[tuple[int, str, str], dict[str, float]], columns: list[str]) -> None:
    head = f"{'providers':>9}{'podman':>10}{'product':>14}"
    print(head + "".join(f"{title:>12}" for title in columns))
    for (providers, podman, product), row in rows.items():
        cells = "".join(f"{row.get(key, float('nan')):>12.2f}" for key in columns)
        print(f"{providers:>9}{podman:>10}{product[-13:]:>14}{cells}")


def print_against(rows: dict[tuple[int, str, str], dict[str, float]], what: str) -> None:
    """Each other product's warm call against this checkout's on the same world."""
    for (providers, podman, product), row in rows.items():
        this = rows.get((providers, podman, "this"))
        if product == "this" or this is None:
            continue
        print(
            f"{providers} providers, {podman} podman: warm {what} this vs {product}: median "
            f"{this['warm']:.3f} vs {row['warm']:.3f} s ({this['warm'] / row['warm'] - 1:+.0%}), "
            f"least {this['warm min']:.3f} vs {row['warm min']:.3f} s "
            f"({this['warm min'] / row['warm min'] - 1:+.0%})"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--providers", type=int, nargs="+", default=[2, 8, 32])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--podman", choices=("emulated", "real"), nargs="+", default=["emulated", "real"]
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        help="another checkout's interpreter whose product is measured too (repeatable)",
    )
    parser.add_argument("--no-up-down", action="store_true", help="leave up and down out")
    parser.add_argument("--no-models", action="store_true", help="leave the models world out")
    args = parser.parse_args()
    print(f"load average at the start: {load_average()}", flush=True)
    rows: dict[tuple[int, str, str], dict[str, float]] = {}
    models: dict[tuple[int, str, str], dict[str, float]] = {}
    for podman in args.podman:
        worlds: list[tuple[int, Callable[[], dict[str, dict[str, float]]]]] = [
            (n, partial(run_world, n, args.rounds, podman, args.python, args.no_up_down))
            for n in args.providers
        ]
        if not args.no_models:
            worlds.append((0, partial(models_world, args.rounds, podman, args.python)))
        for providers, measure in worlds:
            what = f"{providers} providers" if providers else "the models world"
            print(f"{what}, {podman} podman ...", file=sys.stderr, flush=True)
            try:
                products = measure()
            except Exception as exc:  # said, and the other kind still measured
                if podman != "real":
                    raise
                print(f"real podman left out: {exc}", file=sys.stderr, flush=True)
                break
            for product, row in products.items():
                if providers:
                    rows[providers, podman, product] = row
                else:
                    models[2 * MODELS_PROVIDERS, podman, product] = row
    print(f"load average at the end: {load_average()}")
    print(f"products: this ({sys.executable}), " + ", ".join(args.python or ["no other"]))
    print(f"medians of {args.rounds} rounds (least: the round other work delayed least)\n")
    print_rows(rows, ["floor", "bash way", "cold", "warm", "warm min", "warm max"])
    print_rows(rows, ["up", "up site", "down", "down site", "status cpu", "world cpu"])
    print_rows(rows, ["idle %", "command ms"])
    print("\none warm status per site: processes started, SSH round trips and their seconds")
    print("(the slowest site's), the product's CPU in-process")
    print_rows(rows, [*COUNTED, "ssh", "ssh s", "product cpu"])
    print()
    print_against(rows, "status")
    for (providers, podman, product), row in rows.items():
        said = f"{row['bash way'] / row['warm']:.1f}x faster than the bash way"
        if "up" in row:
            said += (
                f"; up {row['up'] / max(row['up site'], 1e-9):.1f}x and down "
                f"{row['down'] / max(row['down site'], 1e-9):.1f}x the slowest site's own work"
            )
        print(f"{providers} providers, {podman} podman, {product}: warm status {said}")
    for podman in args.podman:
        sizes = sorted(p for p, kind, product in rows if kind == podman and product == "this")
        if len(sizes) > 1:
            small, large = rows[sizes[0], podman, "this"], rows[sizes[-1], podman, "this"]
            print(
                f"warm status on {podman} podman, {sizes[-1]} vs {sizes[0]} providers: "
                f"{large['warm'] / small['warm']:.1f}x"
            )
    if models:
        print(f"\nmodels, {MODELS_PROVIDERS} providers with two endpoints each (4 rows):")
        print("warm seconds, processes per site, SSH round trips per provider host (the most")
        print("any had) and HTTP requests per endpoint's local listener (the most any had)")
        print_rows(models, ["warm", "warm min", "warm max", *COUNTED, "ssh", "http"])
        print_against(models, "models")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
