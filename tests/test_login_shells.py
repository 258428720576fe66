"""Every script runs as POSIX sh whatever the SSH user's login shell is.

sshd runs an exec request as ``$SHELL -c COMMAND`` (OpenSSH ``session.c`` do_child): these
tests run ``shell.login_command`` exactly so, under each login shell Debian packages, with a
fake HOME and a fake podman on PATH, and read what the product's own parsers make of it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skupper_mcp.connectors.shell import login_command, quote
from skupper_mcp.facts.logs import parse_podman_logs, podman_logs_script
from skupper_mcp.facts.precheck import parse_site_facts, site_facts_script
from skupper_mcp.facts.site_state import parse_site_state, site_state_script

LOGIN_SHELLS = ("bash", "dash", "zsh", "fish", "tcsh")

#: Text that a login shell would change if it read the script: quotes, backslashes, a ``!``
#: (csh history), ``$``, a newline, a heredoc and a non-ASCII letter.
AWKWARD = 'a\'b\\\\c!d $HOME "q" \\n é'

#: A podman that answers the reads the way a quiet host's does: one running router.
FAKE_PODMAN = """#!/bin/sh
case "$1 $2" in
  "ps -a") echo '[{"Names":["skupper-router"],"State":"running","ExitCode":0,"StartedAt":5}]';;
  "container exists") exit 0;;
  "logs --tail") echo "router log line one"; echo "router log line two";;
  "--version "*) echo "podman version 5.4.0";;
  *) exit 0;;
esac
"""


def _login_shell(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (scripts/host-deps.sh installs it)")
    return path


def _host(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "podman").write_text(FAKE_PODMAN)
    (bin_dir / "podman").chmod(0o755)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin", "LANG": "C.UTF-8"}


def _as_sshd_runs(
    shell: str, script: str, env: dict[str, str], stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """``$SHELL -c COMMAND`` with the login's environment, as sshd's child runs it."""
    return subprocess.run(
        [shell, "-c", login_command(script)],
        env={**env, "SHELL": shell},
        cwd=env["HOME"],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("name", LOGIN_SHELLS)
def test_the_script_reaches_sh_unchanged_with_its_input(name: str, tmp_path: Path) -> None:
    shell = _login_shell(name)
    script = f"printf '%s\\n' {quote(AWKWARD)}"
    script += "\ncat <<'EOF'\nheredoc \\\\ ! $x\nEOF\necho \"args=$#\"\ncat"
    result = _as_sshd_runs(shell, script, _host(tmp_path), stdin=b"from stdin\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == f"{AWKWARD}\nheredoc \\\\ ! $x\nargs=0\nfrom stdin\n"


@pytest.mark.parametrize("name", LOGIN_SHELLS)
def test_the_script_runs_in_the_session_process(name: str, tmp_path: Path) -> None:
    """``$$`` is the process sshd started (the connector kills its group on a timeout)."""
    shell = _login_shell(name)
    env = _host(tmp_path)
    with subprocess.Popen(
        [shell, "-c", login_command('echo "$$"')], env=env, stdout=subprocess.PIPE
    ) as proc:
        out, _ = proc.communicate(timeout=30)
    assert out.decode().strip() == str(proc.pid)


@pytest.mark.parametrize("name", LOGIN_SHELLS)
def test_the_state_read_under_each_login_shell(name: str, tmp_path: Path) -> None:
    result = _as_sshd_runs(
        _login_shell(name), site_state_script("models", log_lines=5), _host(tmp_path)
    )
    state = parse_site_state(result.stdout.decode())
    assert state.complete, result.stderr
    assert state.refused == []
    assert state.containers["skupper-router"].running
    assert state.logs["router"] == ["router log line one", "router log line two"]


@pytest.mark.parametrize("name", LOGIN_SHELLS)
def test_the_precheck_under_each_login_shell(name: str, tmp_path: Path) -> None:
    result = _as_sshd_runs(
        _login_shell(name), site_facts_script("models", with_ports=True), _host(tmp_path)
    )
    facts = parse_site_facts(result.stdout.decode())
    assert facts.complete, result.stderr
    assert facts.podman == "podman version 5.4.0"


@pytest.mark.parametrize("name", LOGIN_SHELLS)
def test_the_logs_read_under_each_login_shell(name: str, tmp_path: Path) -> None:
    result = _as_sshd_runs(
        _login_shell(name), podman_logs_script(10, 4096, "skupper-router"), _host(tmp_path)
    )
    read = parse_podman_logs(result.stdout.decode(), 4096)
    assert (read.container, read.exists, read.rc) == ("skupper-router", 0, 0), result.stderr
    assert read.text.split("\n")[:2] == ["router log line one", "router log line two"]
