"""No code from the current folder by surprise (issue 31): run from a folder holding a
``topology.env`` and a kubeconfig whose user has an ``exec`` plugin, a plain
``skupper-mcp status`` ran the plugin's command. Here the folder's topology is not read
unless named, and a kubeconfig named by a relative ``$KUBECONFIG`` entry runs nothing.

Every host of these topologies is a loopback address nothing listens on.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from local_tools import run_python
from topology_samples import SMALL_TOPOLOGY

CLUSTER = """\
LOCAL_SSH_HOST=127.207.0.4
CRC_SITE_NAME=crc-hostile
CRC_MODEL_PORT=9100
"""


def hostile_folder(folder: Path) -> Path:
    """A folder with a topology.env naming its kubeconfig, whose exec plugin would leave a
    mark: the mark's path."""
    folder.mkdir(parents=True)
    mark = folder / "plugin-ran"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "evil",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.207.0.5:6443"}}],
        "contexts": [{"name": "evil", "context": {"cluster": "c", "user": "u"}}],
        "users": [
            {
                "name": "u",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "sh",
                        "args": ["-c", f"touch {mark}; echo not-a-credential"],
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
    }
    (folder / "kubeconfig").write_text(yaml.safe_dump(config))
    (folder / "topology.env").write_text(
        SMALL_TOPOLOGY + CLUSTER + "CRC_KUBECONFIG=kubeconfig\nSSH_ACCEPT_NEW_HOST_KEYS=true\n"
    )
    return mark


def status(folder: Path, home: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    # COLUMNS too: a pipe's tables are unbounded unless it is set, and a test of the CLI
    # elsewhere in the worker may have left it set (the message would wrap across cells)
    dropped = ("SKUPPER_MCP_TOPOLOGY", "KUBECONFIG", "COLUMNS")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), **extra)
    return run_python("-m", "skupper_mcp", "status", cwd=folder, env=env, timeout=120)


@pytest.mark.spawns
def test_a_folders_topology_is_not_read_and_its_kubeconfig_runs_nothing(tmp_path: Path) -> None:
    folder, home = tmp_path / "cloned", tmp_path / "home"
    home.mkdir()
    mark = hostile_folder(folder)
    result = status(folder, home)
    assert not mark.exists()
    assert result.returncode == 2, result.stdout + result.stderr
    assert "read only when named: pass --topology ./topology.env" in result.stderr


@pytest.mark.spawns
def test_the_users_own_topology_wins_over_the_folders(tmp_path: Path) -> None:
    folder, home = tmp_path / "cloned", tmp_path / "home"
    mark = hostile_folder(folder)
    own = home / ".config" / "skupper-mcp" / "topology.env"
    own.parent.mkdir(parents=True)
    # the user's own topology has a cluster too, on the default kubeconfig: a relative
    # $KUBECONFIG entry would make that the folder's file
    own.write_text(SMALL_TOPOLOGY + CLUSTER)
    result = status(folder, home, KUBECONFIG="kubeconfig")
    assert not mark.exists()
    assert "local-test" in result.stdout, result.stdout + result.stderr
    assert "it was not run" in result.stdout + result.stderr
