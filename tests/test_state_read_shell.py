"""The state read as a POSIX shell runs it on a host: its output is held until it ends, then
written whole (one SSH packet per 32 KiB instead of one per ``echo``)."""

from __future__ import annotations

import select
import subprocess
from pathlib import Path

from polling import wait_for
from skupper_mcp.facts.site_state import parse_site_state, site_state_script

#: A podman that blocks until the test lets it go: the state read is then half done.
BLOCKING_PODMAN = """#!/bin/sh
touch "$ENTERED"
n=0
while [ ! -e "$GO" ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
echo '[]'
"""


def test_nothing_is_written_before_the_read_ends_then_all_of_it(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "podman").write_text(BLOCKING_PODMAN)
    (bin_dir / "podman").chmod(0o755)
    entered, go = tmp_path / "entered", tmp_path / "go"
    env = {
        "HOME": str(tmp_path),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "ENTERED": str(entered),
        "GO": str(go),
    }
    with subprocess.Popen(
        ["sh", "-c", site_state_script("models")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as proc:
        try:
            assert proc.stdout is not None
            wait_for(entered.exists, what="the read reaching podman")
            # the user, the clock and the version are read by now, and not yet written
            readable, _, _ = select.select([proc.stdout], [], [], 0.3)
            assert readable == []
            go.touch()
            out, _ = proc.communicate(timeout=30)
        finally:
            proc.kill()
    text = out.decode()
    assert text.startswith("@@user ") and text.endswith("@@end\n")
    state = parse_site_state(text)
    assert state.complete and state.containers == {}
