"""What the package carries and what it needs: the example topology and the skill are
package data (the repository's root copies are the same files), and the default install,
without the ``kubernetes`` extra, runs every topology: one with a Kubernetes site fails
that site alone, with a message that names the extra."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from local_tools import run_python
from skupper_mcp import data
from topology_samples import SMALL_TOPOLOGY

ROOT = Path(__file__).resolve().parent.parent

#: Runs the product's CLI as if the kubernetes client were not installed: an import of it
#: raises ImportError, as it does in an install without the extra.
WITHOUT_KUBERNETES = """\
import importlib, pkgutil, sys
sys.modules["kubernetes"] = None
import skupper_mcp
for module in pkgutil.walk_packages(skupper_mcp.__path__, "skupper_mcp."):
    if module.name != "skupper_mcp.__main__":
        importlib.import_module(module.name)
from skupper_mcp.cli import main
sys.exit(main(sys.argv[1:]))
"""

CLUSTER = """\
CRC_SITE_NAME=crc-test
CRC_NAMESPACE=models
CRC_KUBECONFIG=kubeconfig-never-read
CRC_ALPHA_PORT=8000
"""


def test_the_root_skill_is_the_packaged_file() -> None:
    """The root's copy is for people reading the repository; the package's is what users
    get. Edit src/skupper_mcp/data/SKILL.md and copy it to the root."""
    assert (ROOT / data.SKILL).read_text() == data.skill()


def _without_kubernetes(
    tmp_path: Path, topology: str, *args: str
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "topology.env"
    path.write_text(topology)
    return run_python(
        "-c", WITHOUT_KUBERNETES, "--topology", str(path), *args, cwd=tmp_path, timeout=60
    )


@pytest.mark.spawns
def test_without_kubernetes_a_topology_without_a_cluster_works(tmp_path: Path) -> None:
    result = _without_kubernetes(tmp_path, SMALL_TOPOLOGY, "resolve", "a-big", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["host"] == "alpha"


@pytest.mark.spawns
def test_without_kubernetes_the_cluster_site_alone_fails_and_names_the_extra(
    tmp_path: Path,
) -> None:
    """status reads every site: the providers' hosts refuse the connection (nothing listens
    on the sample's addresses), the cluster's site says what to install, no traceback."""
    result = _without_kubernetes(tmp_path, SMALL_TOPOLOGY + CLUSTER, "status", "--json")
    assert "Traceback" not in result.stderr, result.stderr
    sites = {s["host"]: s for s in json.loads(result.stdout)["sites"]}
    crc = json.dumps(sites["crc"])
    assert "pip install 'skupper-mcp[kubernetes]'" in crc, crc
    assert "kubernetes" not in json.dumps(sites["alpha"])
