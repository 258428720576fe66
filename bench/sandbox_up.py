"""Time `sandbox up` and `sandbox down` for a few world sizes (not a test).

.venv/bin/python bench/sandbox_up.py            # 2 and 32 providers
.venv/bin/python bench/sandbox_up.py 2 8 64
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _sandbox(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skupper_sandbox.cli", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def time_world(providers: int) -> tuple[float, float]:
    """Seconds for `up` and for `down` of a world with ``providers`` providers."""
    with tempfile.TemporaryDirectory(prefix="skmcp-bench-") as tmp:
        world = str(Path(tmp) / "world")
        started = time.monotonic()
        up = _sandbox("up", "--dir", world, "--providers", str(providers))
        up_seconds = time.monotonic() - started
        started = time.monotonic()
        _sandbox("down", "--dir", world)
        down_seconds = time.monotonic() - started
        if up.returncode != 0:
            raise SystemExit(f"sandbox up failed for {providers} providers:\n{up.stderr}")
        return up_seconds, down_seconds


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [2, 32]
    print(f"{'providers':>9}  {'up (s)':>7}  {'down (s)':>8}")
    for size in sizes:
        up_seconds, down_seconds = time_world(size)
        print(f"{size:>9}  {up_seconds:>7.2f}  {down_seconds:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
