"""Where a command's CPU goes, by kind of process: every process the machine ended while it ran.

    .venv/bin/python bench/suite_cpu.py [--top 40] [--interval 0.5] -- make e2e

For a suite that is CPU-bound (the worlds' half on 2 cores: docs/testing.md, "Where the
time goes"), what to make cheaper is the kind of process that spends the most CPU, not the
test that takes the longest. This turns on the kernel's process accounting (``acct(2)``,
format v3: a record per process at its exit, with its CPU, start time, parent and command
name) into a temporary file, runs the command, and looks at ``/proc`` every ``--interval``
seconds meanwhile for the command lines of the processes that run. A record is joined with
its command line by pid and start time. Python processes are named by their module
(``-m``) or script, so the product's CLI, the sandbox's daemons and pytest's workers are
told apart; the forks of a server (the sandbox's command server) keep its command line and
count with it. A process too short for the sampler to see is named by its command name
(``comm:NAME``: for a Python process, only ``python``).

Accounting is machine-wide and counts a process when it ends: the figures hold whatever
else ended meanwhile (run it on a machine doing nothing else), and not what still runs
when the command ends (a world left up). It needs root (``CAP_SYS_PACCT``), and turns
accounting off when the command ends: not for a machine that keeps its own (psacct). A
figure is the kernel's, in ticks of 10 ms: a process under a tick counts as none. It
prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

#: ``struct acct_v3`` (linux/acct.h): flag, version, tty, exit code, uid, gid, pid, ppid,
#: start (epoch seconds), elapsed (float, ticks), then eight ``comp_t`` (utime, stime, mem,
#: io, rw, minflt, majflt, swaps) and the command name.
ACCT_V3 = struct.Struct("<BBHIIIIIIf8H16s")
ACCT_VERSION = 3
AHZ = 100  # the ticks of acct's times (AHZ on Linux)
TICKS = os.sysconf("SC_CLK_TCK")  # the ticks of /proc/PID/stat's start time
START_SLACK = 1.5  # seconds: acct's start is whole seconds, /proc's is ticks


@dataclass(frozen=True)
class Ended:
    """One accounting record: a process that ended."""

    pid: int
    started: float  # epoch seconds
    cpu: float  # user and system seconds
    comm: str


def comp_t(value: int) -> int:
    """A ``comp_t``: 13 bits of mantissa, 3 of base-8 exponent."""
    return (value & 0x1FFF) << (3 * ((value >> 13) & 7))


def read_records(data: bytes) -> list[Ended]:
    """The v3 records of an accounting file (a record of another version: ``ValueError``)."""
    records = []
    for offset in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
        fields = ACCT_V3.unpack_from(data, offset)
        if fields[1] != ACCT_VERSION:
            raise ValueError(f"accounting record version {fields[1]}, not {ACCT_VERSION}")
        cpu = (comp_t(fields[10]) + comp_t(fields[11])) / AHZ
        comm = fields[18].split(b"\0")[0].decode(errors="replace")
        records.append(Ended(pid=fields[6], started=float(fields[8]), cpu=cpu, comm=comm))
    return records


def boot_time() -> float:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise RuntimeError("/proc/stat has no btime line")


class Sampler(threading.Thread):
    """The command line of every process seen, by pid and start (epoch seconds): the last
    one seen, which is the program's after an ``exec``."""

    def __init__(self, interval: float) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.boot = boot_time()
        self.seen: dict[tuple[int, int], str] = {}
        self._names: dict[tuple[int, int], bytes] = {}  # what each one's stat called it
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            self.sample()
            self._done.wait(self.interval)
        self.sample()

    def stop(self) -> None:
        self._done.set()
        self.join()

    def sample(self) -> None:
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
                end = stat.rindex(b")")
                key = (int(name), int(stat[end + 2 :].split()[19]))
                if self._names.get(key) == stat[:end]:
                    continue  # seen, and no exec since: its command line is the same
                line = Path(f"/proc/{name}/cmdline").read_bytes()[:400]
            except (OSError, ValueError, IndexError):
                continue  # ended meanwhile
            if line:  # a zombie's is empty: keep what it ran
                self._names[key] = stat[:end]
                self.seen[key] = line.replace(b"\0", b" ").decode(errors="replace")

    def command_lines(self) -> dict[int, list[tuple[float, str]]]:
        """What was seen, by pid: each process's start (epoch seconds) and command line."""
        by_pid: dict[int, list[tuple[float, str]]] = defaultdict(list)
        for (pid, start), line in self.seen.items():
            by_pid[pid].append((self.boot + start / TICKS, line.strip()))
        return by_pid


def command_line(ended: Ended, seen: dict[int, list[tuple[float, str]]]) -> str | None:
    """The command line seen for the process a record is of (pid and start), if any."""
    for started, line in seen.get(ended.pid, ()):
        if abs(started - ended.started) <= START_SLACK:
            return line
    return None


def kind(line: str | None, comm: str) -> str:
    """What a process was, in a few words: a Python process by its module or script, a
    shell by the first word of its ``-c`` script or its script's name, podman, skupper,
    make and node by their first argument, anything else by its program's name."""
    if not line:
        return f"comm:{comm}"
    words = re.sub(r"/tmp/\S*?/", ".../", line).split()
    program = os.path.basename(words[0]) if words else comm
    if program.startswith("python"):
        return _python_kind(words)
    if program in ("sh", "bash") and len(words) > 2 and words[1] == "-c":
        return f"{program} -c {words[2][:40]}"
    if program in ("sh", "bash", "podman", "skupper", "make", "node") and len(words) > 1:
        return f"{program} {os.path.basename(words[1])[:40]}"
    return program


def _python_kind(words: list[str]) -> str:
    at = 1
    while at < len(words):
        word = words[at]
        if word == "-m" and at + 1 < len(words):
            return f"python -m {words[at + 1]}"
        if word == "-c":
            return "python -c " + " ".join(words[at + 1 : at + 2])[:40]
        if word in ("-X", "-W"):  # an option with a value
            at += 2
            continue
        if not word.startswith("-"):
            return f"python {os.path.basename(word)}"
        at += 1
    return "python"


def set_accounting(path: Path | None) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.acct(str(path).encode() if path else None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"acct({path}): {os.strerror(errno)} (process accounting needs root)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=40, help="kinds to print (default 40)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to measure after --")
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as work:
        accounting = Path(work) / "acct"
        accounting.touch()
        sampler = Sampler(args.interval)
        sampler.start()
        try:
            set_accounting(accounting)
        except OSError as error:
            sampler.stop()
            print(f"suite_cpu: {error}", file=sys.stderr)
            return 2
        started = time.monotonic()
        try:
            status = subprocess.call(command)
        finally:
            set_accounting(None)
            sampler.stop()
        seconds = time.monotonic() - started
        records = read_records(accounting.read_bytes())
    cpu_by: dict[str, float] = defaultdict(float)
    count_by: dict[str, int] = defaultdict(int)
    seen = sampler.command_lines()
    for ended in records:
        name = kind(command_line(ended, seen), ended.comm)
        cpu_by[name] += ended.cpu
        count_by[name] += 1
    total = sum(cpu_by.values()) or 1e-9
    print(
        f"{' '.join(command)}: exit {status} in {seconds:.0f} s; {len(records)} processes "
        f"ended, {total:.0f} CPU s ({total / seconds:.2f} cores on average, "
        f"{os.cpu_count()} on the machine)"
    )
    print(f"{'CPU s':>8} {'share':>6} {'count':>7} {'ms each':>8}  kind")
    ranked = sorted(cpu_by, key=lambda name: -cpu_by[name])
    for name in ranked[: args.top]:
        cpu, count = cpu_by[name], count_by[name]
        print(f"{cpu:8.1f} {cpu / total:6.1%} {count:7d} {cpu / count * 1000:8.1f}  {name}")
    if rest := ranked[args.top :]:
        cpu = sum(cpu_by[name] for name in rest)
        print(f"{cpu:8.1f} {cpu / total:6.1%} {'':7} {'':8}  {len(rest)} kinds more")
    return status


if __name__ == "__main__":
    sys.exit(main())
