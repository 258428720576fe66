"""``make demo`` (``python -m skupper_sandbox.demo``): the main job, end to end, on a sandbox
world.

Starts a simulated VAN (two GPU providers, one of them, rhel-ai, serving a chat and an
embeddings model side by side, the other, rhtevan-work, a llama.cpp server; the local
consumer, a Kubernetes consumer), then runs what an agent runs when a user says "set up
skupper", "start skupper", "is it working?", "which models do I have?", "is the model I
restarted ready yet?", "stop skupper on rhel-ai" and "stop skupper", printing each command
as a person would type it and what it answered. The sandbox is stopped at the end, whatever
happened (``--keep`` leaves it running for you to explore).

The demo belongs to the sandbox's distribution, not the product's: a user's install of
skupper-mcp carries nothing of the simulator. It drives the product only as a user does,
through its command (``python -m skupper_mcp``), never by importing it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skupper_sandbox.quiet import library_warnings_to_log

#: The host whose model is restarted and loads, and for how long (its llama.cpp server
#: answers every path 503 ``Loading model`` meanwhile).
LOADING_HOST, LOAD_SECONDS = "rhtevan-work", 15
RESTART = f"{LOADING_HOST}'s model server restarts (as hosted-model-ctl would) and loads"
READY = "Once it has loaded"
#: How long the demo waits for that model to read ready, on a busy machine.
READY_DEADLINE = 180.0

STEPS: list[tuple[str, list[str]]] = [
    ("Show the topology and run the precheck", ["setup", "--check"]),
    ("Build the VAN once", ["setup"]),
    ("A second setup changes nothing", ["setup"]),
    ("Start skupper", ["up"]),
    ("Check skupper", ["status"]),
    ("Prove a model route end to end", ["test-model", "rhtevan-work"]),
    ("Which models this machine now has (rhel-ai serves two: chat and embed)", ["models"]),
    ("Prove one endpoint of a host with two", ["test-model", "rhel-ai/embed"]),
    (RESTART, []),
    ("While it loads: llama.cpp answers 503 Loading model", ["models"]),
    (READY, ["models"]),
    ("Before 'stop skupper on rhel-ai': which model to stop first", ["down", "rhel-ai", "--plan"]),
    ("Stop skupper on rhel-ai (the local site stays: rhtevan-work is active)", ["down", "rhel-ai"]),
    ("Stop skupper", ["down"]),
]


SANDBOX = [sys.executable, "-m", "skupper_sandbox"]


def say(text: str = "") -> None:
    print(text, flush=True)


def run(title: str, args: list[str], topology: Path | None) -> int:
    shown = " ".join(["skupper-mcp", *args])
    say(f"\n== {title}\n$ {shown}")
    command = [sys.executable, "-m", "skupper_mcp"]
    if topology is not None:
        command += ["--topology", str(topology)]
    started = time.monotonic()
    result = subprocess.run(command + args, text=True, capture_output=True, check=False)
    if result.stdout.strip():
        say(result.stdout.rstrip())
    if result.returncode not in (0, 3):
        say(result.stderr.rstrip())
    say(f"(exit {result.returncode}, {time.monotonic() - started:.1f}s)")
    return result.returncode


def restart_loading_model(title: str, directory: Path) -> int:
    """What the hosted-model-ctl skill does when it restarts a model: the container restarts
    and its engine loads the model (the sandbox's control makes the load take
    ``LOAD_SECONDS``)."""
    say(f"\n== {title}")
    control = [*SANDBOX, "model", "--dir", str(directory), LOADING_HOST, "load", str(LOAD_SECONDS)]
    say(f"$ skupper-sandbox model {LOADING_HOST} load {LOAD_SECONDS}")
    done = subprocess.run(control, text=True, capture_output=True, check=False)
    if done.returncode != 0:
        say((done.stdout + done.stderr).rstrip())
        return 1
    restart = [*SANDBOX, "model", "--dir", str(directory), LOADING_HOST, "restart"]
    say(f"$ skupper-sandbox model {LOADING_HOST} restart")
    done = subprocess.run(restart, text=True, capture_output=True, check=False)
    say((done.stdout + done.stderr).rstrip())
    return done.returncode


def wait_ready(topology: Path) -> bool:
    """Whether the restarted model reads ready before ``READY_DEADLINE`` (``models`` asked
    every few seconds, as an agent told to wait for a loading model with a bound would)."""
    deadline = time.monotonic() + READY_DEADLINE
    command = [sys.executable, "-m", "skupper_mcp", "--topology", str(topology), "models"]
    while time.monotonic() < deadline:
        done = subprocess.run([*command, "--json"], text=True, capture_output=True, check=False)
        try:
            rows = json.loads(done.stdout)["rows"]
        except (ValueError, KeyError):
            rows = []
        states = [
            (r.get("readiness") or {}).get("state") for r in rows if r["host"] == LOADING_HOST
        ]
        if states == ["ready"]:
            return True
        time.sleep(2)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dir", help="sandbox directory (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="leave the sandbox running")
    args = parser.parse_args(argv)
    library_warnings_to_log()
    if importlib.util.find_spec("skupper_mcp") is None:
        say(
            "The demo drives the skupper-mcp command, which this Python lacks: install it "
            "beside the sandbox (`make venv` in a clone does), e.g. `pip install -e .`."
        )
        return 1
    owned = args.dir is None
    directory = Path(args.dir or tempfile.mkdtemp(prefix="skupper-mcp-demo-")).resolve()
    say(f"Starting a sandbox VAN in {directory} ...")
    started = time.monotonic()
    up = subprocess.run(
        [
            *SANDBOX,
            "up",
            "--dir",
            str(directory),
            "--embeddings",
            "rhel-ai",
            "--model-engine",
            f"{LOADING_HOST}=llamacpp",
        ],
        text=True,
        capture_output=True,
        check=False,
    )
    if up.returncode != 0:
        say(up.stdout + up.stderr)
        say("The sandbox did not start: see the output above.")
        # up stops what it started; the directory made for it goes too
        if owned:
            shutil.rmtree(directory, ignore_errors=True)
        return 1
    topology = Path(up.stdout.strip().splitlines()[-1])
    say(f"ready in {time.monotonic() - started:.1f}s; topology: {topology}")
    failures = 0
    try:
        for title, step in STEPS:
            if title == RESTART:
                code = restart_loading_model(title, directory)
            elif title == READY and not wait_ready(topology):
                say(f"\n{LOADING_HOST}'s model did not read ready in {READY_DEADLINE:.0f}s")
                code = 1
            else:
                code = run(title, step, topology)
            failures += code not in (0, 3)
    finally:
        if args.keep:
            say(f"\nThe sandbox keeps running: skupper-mcp --topology {topology} status")
            say(f"Stop it with: skupper-sandbox down --dir {directory}")
        else:
            subprocess.run(
                [*SANDBOX, "down", "--dir", str(directory)],
                capture_output=True,
                check=False,
            )
            if owned:
                shutil.rmtree(directory, ignore_errors=True)
    verdict = "every step did what it should" if not failures else f"{failures} step(s) failed"
    say(f"\nDemo finished: {verdict}.")
    return 0 if not failures else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
