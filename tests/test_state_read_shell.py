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


#: A curl that answers each model endpoint of a host by its port: a list, another list,
#: and a port where nothing listens (curl's exit 7).
ENDPOINTS_CURL = """#!/bin/sh
for url; do :; done
case "$url" in
*:9000/*) echo '{"object":"list","data":[{"id":"org/chat"}]}' ;;
*:9001/*) echo '{"object":"list","data":[{"id":"org/embed"}]}' ;;
*) echo "curl: (7) Failed to connect" >&2; exit 7 ;;
esac
"""


def test_every_model_endpoint_of_a_host_is_read_in_the_one_round_trip(tmp_path: Path) -> None:
    """A host with several model endpoints: the one state read asks each one's /v1/models,
    each answer in its own section, a failure as its own (issue 48)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("curl", ENDPOINTS_CURL), ("podman", "#!/bin/sh\necho '[]'\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    script = site_state_script(
        "models",
        "http://127.0.0.1:9000/v1/models",
        0,
        more_model_urls=("http://127.0.0.1:9001/v1/models", "http://127.0.0.1:9002/v1/models"),
    )
    done = subprocess.run(
        ["sh", "-c", script],
        env={"HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
        check=False,
    )
    state = parse_site_state(done.stdout.decode())
    assert state.complete
    assert state.served_models == ["org/chat"]
    assert state.models_answer(0).served_models == ["org/chat"]
    assert state.models_answer(1).served_models == ["org/embed"]
    third = state.models_answer(2)
    assert third.served_models is None and third.models_exit == 7
    assert "Failed to connect" in (third.models_error or "")
    assert state.models_answer(3).served_models is None  # not asked
