"""The stdio server's start: from the process's start to its answer to tools/list.

    .venv/bin/python bench/startup.py [--rounds 7] [--python PYTHON] [--imports 12]

What an MCP client waits for before it can call a tool: ``python -m skupper_mcp`` started
over stdio on a topology (a small one written here: the server reads it, no host is
reached), ``initialize``, then ``tools/list``. The median of ``--rounds`` starts, with the
fastest and slowest, and the CPU the server process spent (its median and its least: on a
shared machine the least is the one other work inflated least); then one start under
``python -X importtime``, its costliest modules by their own and by their cumulative time
(what a lazy import would save). ``--python`` runs another checkout's interpreter, to
compare side by side in the same run on a shared machine.

Each round also starts the floor: the SDK's bare ``MCPServer`` with one tool, served over
stdio by the first interpreter, to the same tools/list. What the SDK alone costs, no product
can start faster; the product's own share is its figure less the floor's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from skupper_mcp.topology import load_topology

#: Two providers, as the sandbox's default world has them (the server only reads it).
TOPOLOGY = """\
PROVIDER_HOSTS="rhel-ai rhtevan-work"
RHEL_AI_SSH_HOST=127.0.0.2
RHEL_AI_PUBLIC_HOST=127.0.0.2
RHEL_AI_INTER_ROUTER_PORT=8000
RHEL_AI_MODEL_PORT=9000
RHEL_AI_PROFILES="g8b=granite-3.3-8b-instruct g3b=granite-3.3-2b-instruct"
RHEL_AI_DEFAULT_PROFILE=g8b
RHTEVAN_WORK_SSH_HOST=127.0.0.3
RHTEVAN_WORK_PUBLIC_HOST=127.0.0.3
RHTEVAN_WORK_INTER_ROUTER_PORT=55671
RHTEVAN_WORK_MODEL_PORT=10000
RHTEVAN_WORK_PROFILES="g3b-16k=granite-3.3-2b-instruct"
LOCAL_SITE_NAME=local
"""
TIMEOUT = 60.0
#: The floor: the SDK's own server with one tool over stdio, nothing of the product.
FLOOR = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("floor", log_level="ERROR")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Answer with the text.\"\"\"
    return text


server.run("stdio")
"""


FLOOR_LABEL = "floor: bare MCPServer, one tool"


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write(json.dumps(message).encode() + b"\n")
    pipe.flush()


def _answer(pipe: IO[bytes], request_id: int) -> dict[str, Any]:
    """The response to ``request_id`` (notifications and log lines skipped)."""
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError(f"the server closed its output before answering {request_id}")
        message = json.loads(line)
        if message.get("id") == request_id:
            if "error" in message:
                raise RuntimeError(f"the server answered {request_id}: {message['error']}")
            return dict(message)


def start(
    python: str, topology: Path | None, *, importtime: bool = False
) -> tuple[float, float, str]:
    """Seconds from the start of the server to its tools/list answer, the CPU seconds the
    server spent until it exited, and its stderr (the import times with ``importtime``);
    without a topology, the floor (the SDK's bare server)."""
    argv = [python, *(["-X", "importtime"] if importtime else [])]
    if topology is None:
        argv += ["-c", FLOOR]
    else:
        argv += ["-m", "skupper_mcp", "--topology", str(topology), "--log-level", "ERROR"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as errors:
        started = time.monotonic()
        with subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
        ) as server:
            assert server.stdin is not None and server.stdout is not None
            _send(
                server.stdin,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "1"},
                    },
                },
            )
            _answer(server.stdout, 1)
            _send(server.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            _send(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            tools = _answer(server.stdout, 2)["result"]["tools"]
            seconds = time.monotonic() - started
            assert tools, "tools/list listed no tool"
            server.stdin.close()
            server.wait(TIMEOUT)
        errors.seek(0)
        said = errors.read().decode(errors="replace")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu, said


def costliest(importtime: str, count: int) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The modules of ``-X importtime``'s report by their own and by their cumulative
    microseconds, costliest first; cumulative only for the product's and its libraries'
    top-level imports (the depth of a report's name is its indentation)."""
    own, cumulative = [], []
    for line in importtime.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = line.removeprefix("import time:").split("|")
        if not parts[0].strip().isdigit():
            continue  # the header
        name = parts[2]
        module = name.strip()
        own.append((int(parts[0]), module))
        depth = (len(name) - len(name.lstrip())) // 2
        if depth <= 2:
            cumulative.append((int(parts[1]), "  " * depth + module))
    own.sort(reverse=True)
    cumulative.sort(reverse=True)
    return own[:count], cumulative[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--python", action="append", help="an interpreter to measure (repeatable; default this)"
    )
    parser.add_argument("--imports", type=int, default=12, help="modules shown of importtime")
    args = parser.parse_args()
    pythons = args.python or [sys.executable]
    with tempfile.TemporaryDirectory() as tmp:
        topology = Path(tmp) / "topology.env"
        topology.write_text(TOPOLOGY + f"STATE_DIR={Path(tmp) / 'state'}\n")
        load_topology(topology)  # a topology the server can use, as a user's is
        runs: dict[str, tuple[str, Path | None]] = {p: (p, topology) for p in pythons}
        runs[FLOOR_LABEL] = (pythons[0], None)
        found: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in runs}
        loads = [os.getloadavg()[0]]
        for _ in range(args.rounds):  # interleaved: a busy moment costs each the same
            for label, (python, served) in runs.items():
                seconds, cpu, _ = start(python, served)
                found[label][0].append(seconds)
                found[label][1].append(cpu)
            loads.append(os.getloadavg()[0])
        header = f"{'median s':>10}{'min s':>8}{'max s':>8}{'cpu s':>8}{'min cpu':>9}"
        print(f"{'stdio start to tools/list':<34}{header}")
        for label, (times, cpus) in found.items():
            print(
                f"{label[-34:]:<34}{statistics.median(times):>10.3f}{min(times):>8.3f}"
                f"{max(times):>8.3f}{statistics.median(cpus):>8.3f}{min(cpus):>9.3f}"
            )
        print(
            f"{args.rounds} rounds; load average (1 min) {min(loads):.2f}-{max(loads):.2f} "
            f"on {os.cpu_count()} cores; the floor is the SDK's bare server on {pythons[0]}"
        )
        for python in pythons:
            _, _, report = start(python, topology, importtime=True)
            own, cumulative = costliest(report, args.imports)
            print(f"\n{python}: costliest imports, cumulative ms (top levels)")
            for micros, module in cumulative:
                print(f"  {micros / 1000:8.1f}  {module}")
            print(f"{python}: costliest imports, own ms")
            for micros, module in own:
                print(f"  {micros / 1000:8.1f}  {module}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
