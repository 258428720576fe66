"""A site's removal script as a POSIX shell runs it, with stand-ins for Skupper's tools.

Skupper's controller writes a namespace's status back with ``MkdirAll`` (it loads the
runtime state, then marshals it: ``pkg/nonkube/api/site_state.go@2.1.3:389``), as its router
or the controller itself stops; a write that lands after the namespace was removed makes
``runtime/resources`` again, Secrets and all."""

from __future__ import annotations

import subprocess
from pathlib import Path

from skupper_mcp.facts.site_state import SiteState
from skupper_mcp.sites.podman import PodmanSite

NS = "models"

#: systemctl that, as the controller stops, writes the namespace's status back as Skupper's
#: controller may: the directory made again.
LATE_WRITING_SYSTEMCTL = """#!/bin/sh
case " $* " in
  *" stop skupper-controller.service "*)
    mkdir -p "$NSDIR/runtime/resources"
    printf 'kind: Secret\\n' > "$NSDIR/runtime/resources/Secret-skupper-site-server.yaml" ;;
esac
"""


def _host(tmp_path: Path) -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tools = {
        "id": 'case "$1" in -u) echo 1000 ;; *) echo tester ;; esac\n',
        "systemctl": LATE_WRITING_SYSTEMCTL.split("\n", 1)[1],
        "skupper": "exit 0\n",
        "podman": "exit 0\n",
    }
    for name, body in tools.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body)
        (bin_dir / name).chmod(0o755)
    data = tmp_path / "data" / "skupper"
    nsdir = data / "namespaces" / NS
    (nsdir / "runtime" / "resources").mkdir(parents=True)
    (nsdir / "input" / "resources").mkdir(parents=True)
    env = {
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "NSDIR": str(nsdir),
    }
    return env, data


def _remove(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = PodmanSite(None, NS).remove(SiteState()).text  # type: ignore[arg-type]
    return subprocess.run(
        ["sh", "-c", script], env=env, capture_output=True, text=True, timeout=30, check=False
    )


def test_a_status_written_back_as_the_controller_stops_is_removed_too(tmp_path: Path) -> None:
    env, data = _host(tmp_path)
    ran = _remove(env)
    assert ran.returncode == 0, ran.stderr
    assert "@@kept" not in ran.stdout
    assert not (data / "namespaces" / NS).exists()


def test_another_namespace_with_a_site_keeps_the_controller(tmp_path: Path) -> None:
    env, data = _host(tmp_path)
    (data / "namespaces" / "other" / "runtime").mkdir(parents=True)
    ran = _remove(env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["@@kept", "other"]
    assert not (data / "namespaces" / NS).exists()
