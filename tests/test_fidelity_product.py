"""The product against what real Skupper 2.1.x/2.2.x do (docs/sandbox.md section 11, "The
skupper CLI and the system-controller"): the pure parts, no sandbox."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skupper_mcp.errors import CommandError
from skupper_mcp.facts.names import VERSION_COMMAND
from skupper_mcp.facts.precheck import parse_site_facts, site_facts_script
from skupper_mcp.facts.site_state import parse_site_state, site_state_script
from topology_samples import SMALL_TOPOLOGY


@pytest.mark.spawns
@pytest.mark.parametrize("key", ["Model_A", "llama-3.1", "model.api", "-model", "a" * 64])
def test_a2_a_routing_key_that_is_no_rfc1123_label_exits_2_and_nothing_runs(
    write_topology, key: str
) -> None:
    text = SMALL_TOPOLOGY.replace(
        "BETA_SSH_HOST=127.207.0.3", f"BETA_SSH_HOST=127.207.0.3\nBETA_ROUTING_KEY={key}"
    )
    path = write_topology(text)
    result = subprocess.run(
        [sys.executable, "-m", "skupper_mcp", "--topology", str(path), "setup"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "BETA_ROUTING_KEY" in result.stderr
    assert "RFC 1123 label" in result.stderr and "Listener and Connector" in result.stderr
    assert result.stdout == ""  # nothing ran


def test_a1_the_version_is_read_without_a_namespace_check() -> None:
    """Both remote scripts read the version through the kube variant, never plain
    ``skupper version`` (which fails on 2.1.x until namespaces/<ns> exists)."""
    assert VERSION_COMMAND == "KUBECONFIG=/dev/null skupper version -p kubernetes"
    for script in (site_state_script("models"), site_facts_script("models", with_ports=False)):
        assert VERSION_COMMAND in script
        assert "skupper version 2>&1" not in script.replace(VERSION_COMMAND, "")


def test_b3_a_failure_reports_the_cause_on_stdout_not_the_warnings_on_stderr() -> None:
    stderr = (
        "2025/06/01 10:00:00 WARN certificate will not be overwritten path=/x/ca.crt\n"
        "2025/06/01 10:00:00 WARN certificate will not be overwritten path=/x/tls.crt\n"
        "2025/06/01 10:00:00 WARN certificate will not be overwritten path=/x/tls.key\n"
    )
    stdout = (
        'Sources will be consumed from namespace "models"\n'
        "Failed to bootstrap: failed to render site state: invalid connector name: "
        'invalid name "Model_A"\n'
    )
    error = CommandError("rhel-ai", "skupper system reload -n models", 1, stderr, stdout)
    assert 'invalid connector name: invalid name "Model_A"' in str(error)
    assert "certificate will not be overwritten" not in str(error)
    podman = CommandError("rhel-ai", "podman start x", 125, "Error: no such container x\n", "")
    assert "no such container x" in str(podman)


def test_b5_the_precheck_reads_the_podman_socket() -> None:
    script = site_facts_script("models", with_ports=False)
    assert "is-active" in script and "\nset -- models 0 " in script and " podman.socket " in script
    facts = parse_site_facts("@@section systemd\n@@rc 0\n@@podman-socket inactive\n@@end\n")
    assert facts.podman_socket == "inactive"


def test_c8_the_site_state_read_never_prints_a_private_key(tmp_path: Path) -> None:
    """Run on a host's files by a POSIX shell: the kinds it reads, each file once, a link
    Secret without its private key, no Certificate, nothing from runtime Secrets."""
    script = site_state_script("models")
    assert "runtime/resources/*" not in script and "input/resources/*" not in script
    assert "Certificate-" not in script
    bin_dir, ns = tmp_path / "bin", tmp_path / "data" / "skupper" / "namespaces" / "models"
    bin_dir.mkdir()
    (bin_dir / "id").write_text('#!/bin/sh\ncase "$1" in -u) echo 1000 ;; *) echo tester ;; esac\n')
    (bin_dir / "id").chmod(0o755)
    site = "apiVersion: skupper.io/v2alpha1\nkind: Site\nmetadata:\n  name: s1"  # no newline
    key = "PRIVATE-KEY-BYTES"
    secret = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: link-hub\n"
        f"data:\n  ca.crt: Q0E=\n  tls.key: {key}\n"
    )
    for part in ("input", "runtime"):
        (ns / part / "resources").mkdir(parents=True)
        (ns / part / "resources" / "Site-s1.yaml").write_text(site)
        (ns / part / "resources" / "Secret-link-hub.yaml").write_text(secret)
        (ns / part / "resources" / "Certificate-c.yaml").write_text(f"tls.key: {key}\n")
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    ran = subprocess.run(
        ["sh", "-c", script], env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert key not in ran.stdout
    state = parse_site_state(ran.stdout)
    assert state.complete
    assert state.input_resources[("Site", "s1")]["metadata"]["name"] == "s1"
    assert state.input_resources[("Secret", "link-hub")]["data"] == {
        "ca.crt": "Q0E=",
        "tls.key": "redacted",
    }
    assert set(state.runtime_resources) == {("Site", "s1")}
