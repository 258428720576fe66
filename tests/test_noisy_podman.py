"""Stderr never breaks a parse: a podman that warns on stderr (libpod does on cgroup-v1 hosts
and over SSH without a login session) leaves every container read, its warnings kept as
evidence; output a parser cannot read is a typed error naming the command, never "none"."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from skupper_mcp.connectors.base import CommandResult
from skupper_mcp.errors import SiteStateError, Unparsed
from skupper_mcp.facts.site_state import (
    parse_podman_ps,
    parse_router_inspect,
    parse_site_state,
    parse_systemctl_show,
    site_state_script,
)
from skupper_mcp.sites.podman import PodmanSite

#: libpod's warnings as podman v5 writes them (logrus, on stderr): the cgroup-v1 deprecation
#: (``cmd/podman/root.go``) and the missing user session (``pkg/util/utils_linux.go``).
LIBPOD_WARNINGS = (
    'time="2026-12-03T10:00:00Z" level=warning msg="Using cgroups-v1 which is deprecated in'
    " favor of cgroups-v2 with Podman v5 and will be removed in a future version. Set"
    ' environment variable `PODMAN_IGNORE_CGROUPSV1_WARNING` to hide this warning."',
    "WARN[0000] The cgroupv2 manager is set to systemd but there is no systemd user session"
    " available",
)
PS_JSON = (
    '[{"Names":["skupper-router"],"State":"running","ExitCode":0,"StartedAt":5},'
    '{"Names":["models-skupper-controller"],"State":"exited","ExitCode":1,"ExitedAt":9}]'
)


def _warning_podman(tmp_path: Path, ps_output: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    warn = "".join(f"echo '{line}' >&2\n" for line in LIBPOD_WARNINGS)
    (bin_dir / "podman").write_text(
        "#!/bin/sh\n"
        + warn
        + f'case "$1 $2" in "ps -a") echo \'{ps_output}\';;\n'
        # podman v5 on a container that does not exist: an empty list and 125
        + "  inspect*) echo '[]'; echo 'Error: no such object' >&2; exit 125;;\n"
        + "  *) exit 0;; esac\n"
    )
    (bin_dir / "podman").chmod(0o755)
    return {"HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin"}


def _read(tmp_path: Path, ps_output: str) -> str:
    env = _warning_podman(tmp_path, ps_output)
    done = subprocess.run(
        ["sh", "-c", site_state_script("models")], env=env, capture_output=True, timeout=60
    )
    return done.stdout.decode()


def test_a_warning_podman_leaves_every_container_parsed(tmp_path: Path) -> None:
    state = parse_site_state(_read(tmp_path, PS_JSON))
    assert state.complete and state.parse_errors == []
    assert state.containers["skupper-router"].running
    assert state.containers["models-skupper-controller"].exit_code == 1
    # the warnings are kept, apart, as evidence
    assert state.stderr["containers"].split("\n") == list(LIBPOD_WARNINGS)


def test_a_malformed_podman_ps_is_a_typed_error_naming_the_command(tmp_path: Path) -> None:
    state = parse_site_state(_read(tmp_path, "Error: something podman says [1"))
    assert state.complete and state.containers == {}
    error = state.unparsed("containers")
    assert error is not None
    assert error.command == "podman ps -a --format json"
    assert error.first_line == "Error: something podman says [1"
    assert "podman ps -a --format json" in str(error)


@pytest.mark.parametrize(
    "text", ["not json", '{"Names": ["a"]}', '["a"]', "[{}, 3]", '[{"Names":["a"]}'], ids=repr
)
def test_podman_ps_output_that_is_not_a_container_list_is_unparsed(text: str) -> None:
    with pytest.raises(Unparsed):
        parse_podman_ps(text)


def test_no_podman_ps_output_is_no_containers() -> None:
    assert parse_podman_ps("") == {} and parse_podman_ps("[]") == {}


@pytest.mark.parametrize("text", ["WARN[0000] x\n[]", '{"a": 1}', "[1]"], ids=repr)
def test_a_router_inspect_that_is_not_a_container_list_is_unparsed(text: str) -> None:
    with pytest.raises(Unparsed):
        parse_router_inspect(text)
    assert parse_router_inspect("[]") is None


def test_systemctl_show_text_without_a_unit_is_unparsed() -> None:
    with pytest.raises(Unparsed):
        parse_systemctl_show("Failed to connect to bus: No medium found")
    assert parse_systemctl_show("") == {}


class _Answers:
    """A connector that answers every command with ``stdout`` (a ``podman ps`` gone wrong)."""

    host = "rhel-ai"

    def __init__(self, stdout: str) -> None:
        self.stdout = stdout

    async def run(self, command: str, **_: object) -> CommandResult:
        return CommandResult(self.host, command, 0, self.stdout, LIBPOD_WARNINGS[1], 0.01)


def test_the_containers_read_refuses_what_it_cannot_parse() -> None:
    site = PodmanSite(_Answers("WARN[0000] mixed in\n[]"), "models")  # type: ignore[arg-type]
    with pytest.raises(SiteStateError) as caught:
        asyncio.run(site.containers(timeout=5))
    assert "podman ps -a --format json" in str(caught.value)
    assert "WARN[0000] mixed in" in str(caught.value)
