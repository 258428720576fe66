"""The skupper-mcp command: exit codes, messages, tables and --json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skupper_mcp.models import ResolveResult
from topology_samples import SMALL_TOPOLOGY


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skupper_mcp", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        (
            "ALPHA_MODEL_PORT=9000",
            "ALPHA_MODEL_PORT=65536",
            "ALPHA_MODEL_PORT: '65536' is not a port",
        ),
        ("BETA_MODEL_PORT=10000", "BETA_MODEL_PORT=9000", "already used by alpha"),
        ("LOCAL_SITE_NAME=local-test", "LOCAL_SITE_NAME=-bad-", "DNS-1123 label"),
        ("BETA_SSH_HOST=127.207.0.3", "BETA_SSH_HOST='x;reboot'", "not a host name"),
        ("LOCAL_SITE_NAME=local-test", "", "LOCAL_SITE_NAME: required"),
    ],
)
def test_bad_topology_exits_2_with_the_message(
    write_topology, old: str, new: str, words: str
) -> None:
    path = write_topology(SMALL_TOPOLOGY.replace(old, new))
    result = run("--topology", str(path), "setup", "--check")
    assert result.returncode == 2
    assert words in result.stderr
    assert str(path) in result.stderr
    assert result.stdout == ""  # nothing ran


def test_resolve_unknown_name_exits_2_listing_names(example_path: Path) -> None:
    result = run("--topology", str(example_path), "resolve", "rhel")
    assert result.returncode == 2
    assert "valid names: rhel-ai, rhtevan-work" in result.stderr


def test_resolve_prints_a_table_and_json(example_path: Path) -> None:
    table = run("--topology", str(example_path), "resolve", "g3b-16k")
    assert table.returncode == 0
    assert "profile source  given" in table.stdout
    as_json = run("--topology", str(example_path), "--json", "resolve", "local")
    assert as_json.returncode == 0
    resolved = ResolveResult.model_validate(json.loads(as_json.stdout))
    assert (resolved.role, resolved.site, resolved.profile) == ("consumer", "local-ezhang", None)


def test_json_flag_after_the_verb(example_path: Path) -> None:
    result = run("resolve", "--topology", str(example_path), "--json", "crc")
    assert result.returncode == 0
    assert json.loads(result.stdout)["host"] == "crc"


def test_missing_topology_file_exits_2(tmp_path: Path) -> None:
    result = run("--topology", str(tmp_path / "absent.env"), "resolve", "x")
    assert result.returncode == 2
    assert "cannot read the topology" in result.stderr


def test_bad_usage_exits_2() -> None:
    result = run("resolve")
    assert result.returncode == 2
    assert "usage" in result.stderr


@pytest.mark.parametrize("verb", ["up", "down"])
@pytest.mark.parametrize("target", ["", " ", "\t"])
def test_a_blank_target_exits_2_and_runs_nothing(
    example_path: Path, verb: str, target: str
) -> None:
    result = run("--topology", str(example_path), verb, target, "--plan")
    assert result.returncode == 2
    assert "the target is empty" in result.stderr and "rhel-ai" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["logs", "all"], "logs reads one site at a time"),
        (["logs", "rhel-ai", "--lines", "0"], "lines must be a whole number from 1 to 500"),
        (["logs", "rhel-ai", "--lines", "501"], "lines must be a whole number from 1 to 500"),
        (["logs", "rhel-ai", "--component", "proxy"], "invalid choice: 'proxy'"),
        (["logs", "nowhere"], "unknown target 'nowhere'"),
    ],
)
def test_logs_usage_errors_exit_2_before_reaching_a_host(
    example_path: Path, args: list[str], words: str
) -> None:
    result = run("--topology", str(example_path), *args)
    assert result.returncode == 2, result.stderr
    assert words in result.stderr
    assert result.stdout == ""
