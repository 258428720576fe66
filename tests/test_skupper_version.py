"""One reading of ``skupper version``, fed with what the real CLIs print, and the same
verdict from the precheck and from setup/up's version check.

The outputs follow skupperproject/skupper: ``internal/cmd/skupper/version/nonkube/version.go``
(a ``text/tabwriter`` table, minwidth 8, tabwidth 8, padding 1, padded with tabs),
``internal/images/images.go`` for each tag's image versions, ``internal/utils/configs/
manifest.go`` for the Docker warning on stderr (2.0.1+), ``version/version.go`` for 2.2.x's
bare version, and ``cmd/skupper/skupper.go@1.8.1`` for 1.x.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skupper_mcp.connectors.local import LocalConnector
from skupper_mcp.connectors.pool import ConnectorPool
from skupper_mcp.engine.operations.precheck import evaluate_facts
from skupper_mcp.engine.sitemap import SiteMap
from skupper_mcp.facts.precheck import parse_site_facts, site_facts_script
from skupper_mcp.facts.skupper_version import SkupperVersion, Version, parse_skupper_version
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.topology import parse_topology
from topology_samples import SMALL_TOPOLOGY

TAB = "\t"
DOCKER_WARNING = "Warning: Docker is not installed. Skipping image digests search.\n"


def table(rows: list[tuple[str, str]]) -> str:
    """A COMPONENT/VERSION table as Go's tabwriter pads it: the first column is as wide as
    its longest cell plus one, rounded up to a multiple of 8, and filled with tabs."""
    cells = [("COMPONENT", "VERSION"), *rows]
    width = max(8, max(len(name) + 1 for name, _ in cells))
    width = -(-width // 8) * 8
    return "".join(name + TAB * -(-(width - len(name)) // 8) + v + "\n" for name, v in cells)


def nonkube_rows(cli: str, router: str, prometheus: str, system_controller: bool) -> list:
    rows = [("router", router), ("network-observer", cli), ("cli", cli)]
    if system_controller:
        rows.append(("system-controller", cli))
    return [*rows, ("prometheus", prometheus), ("origin-oauth-proxy", "4.14.0")]


V200 = table(nonkube_rows("2.0.0", "3.2.0", "v3.1.0", False))
V201 = table(nonkube_rows("2.0.1", "3.3.1", "v3.1.0", False))
V210 = table(nonkube_rows("2.1.0", "3.4.0", "v2.42.0", True))
V213 = table(nonkube_rows("2.1.3", "3.4.2", "v2.42.0", True))
V214 = table(nonkube_rows("2.1.4", "3.4.2", "v2.42.0", True))
NO_NAMESPACE = 'there is no definition for namespace ""\n'


def test_the_table_is_padded_as_the_real_cli_pads_it() -> None:
    assert V213.splitlines()[:4] == [
        "COMPONENT\t\tVERSION",
        "router\t\t\t3.4.2",
        "network-observer\t2.1.3",
        "cli\t\t\t2.1.3",
    ]


@pytest.mark.parametrize(
    ("output", "status", "version"),
    [
        (V200, 0, "2.0.0"),
        (DOCKER_WARNING + V201, 0, "2.0.1"),
        (DOCKER_WARNING + V210, 0, "2.1.0"),
        (V213, 0, "2.1.3"),
        (DOCKER_WARNING + V214, 0, "2.1.4"),
        ("2.2.0\n", 0, "2.2.0"),
        ("2.2.1\n", 0, "2.2.1"),
        ("client version                 1.8.1\n", 0, "1.8.1"),
    ],
)
def test_the_cli_row_or_the_bare_version_is_the_version(
    output: str, status: int, version: str
) -> None:
    reading = parse_skupper_version(output, status)
    assert str(reading.cli) == version and reading.problem is None


def test_other_rows_are_never_the_skupper_version() -> None:
    router_only = table([("router", "3.4.2"), ("prometheus", "v2.42.0")])
    reading = parse_skupper_version(router_only, 0)
    assert reading.cli is None and "no cli row" in (reading.problem or "")
    assert parse_skupper_version("cli 2.0\nrouter 3.4.2\n").cli == Version(2, 0, 0)


def test_2_1_without_the_namespace_directory_has_no_version() -> None:
    reading = parse_skupper_version(NO_NAMESPACE, 2)
    assert reading == SkupperVersion(
        None, 'there is no definition for namespace ""', missing_namespace=""
    )
    named = parse_skupper_version('there is no definition for namespace "team-a"\n', 2)
    assert named.missing_namespace == "team-a"


@pytest.mark.parametrize(
    ("output", "status", "words"),
    [
        ("sh: 1: eval: skupper: not found\n", 127, "the skupper CLI is not installed"),
        ("", 1, "command not found"),
        ("undefined\n", 0, "development build"),
        ("Error: unknown command\n", 0, "no version in the output: Error: unknown command"),
        ("", 0, "no output"),
    ],
)
def test_why_there_is_no_version(output: str, status: int, words: str) -> None:
    reading = parse_skupper_version(output, status)
    assert reading.cli is None and words in (reading.problem or "")


def test_a_cli_the_shell_cannot_find_is_not_installed_whatever_the_shell_says() -> None:
    """A stranger's up --plan read 'skupper CLI not usable: sh: 1: eval: skupper: not found'
    and diagnose called it a version mismatch; the shell's 127 is the fact."""
    for said in ("sh: 1: eval: skupper: not found\n", "fish: Unknown command: skupper\n", ""):
        reading = parse_skupper_version(said, 127)
        assert reading.not_installed and reading.problem == "the skupper CLI is not installed"
    assert not parse_skupper_version("sh: skupper: Permission denied\n", 126).not_installed


def test_versions_compare_by_number_and_keep_their_text() -> None:
    assert Version.parse("2.1.3") > Version.parse("2.1") == Version(2, 1, 0)  # type: ignore[operator]
    assert Version.parse("v2.2.0-rc1") == Version(2, 2, 0)
    assert str(Version.parse("v2.2.0-rc1")) == "2.2.0-rc1"
    assert Version.parse("3.4.2 router") is None
    assert parse_skupper_version("2.0.1").meets("2.1.0") is False
    assert parse_skupper_version("2.1").meets("2.1.0") is True
    assert parse_skupper_version("").meets("2.1.0") is None


# ---------------------------------------------------------------- one verdict, two paths


def fake_skupper(bin_dir: Path, output: str, status: int) -> None:
    """A ``skupper`` whose ``version`` prints ``output`` (a Docker warning on stderr)."""
    bin_dir.mkdir(exist_ok=True)
    warning = DOCKER_WARNING if output.startswith(DOCKER_WARNING) else ""
    (bin_dir / "version.out").write_text(output.removeprefix(warning))
    (bin_dir / "version.err").write_text(warning)
    tool = bin_dir / "skupper"
    tool.write_text(
        '#!/bin/sh\nd=$(dirname "$0")\ncat "$d/version.err" >&2\ncat "$d/version.out"\n'
        f"exit {status}\n"
    )
    tool.chmod(0o755)


CASES = [
    # the example: a router row must not stand in for the CLI's version
    pytest.param("COMPONENT VERSION\nrouter 3.4.2\ncli 2.0\n", 0, False, id="cli-2.0"),
    pytest.param("COMPONENT VERSION\nrouter 3.4.2\ncli 2.1\n", 0, True, id="cli-2.1"),
    pytest.param(V200, 0, False, id="2.0.0"),
    pytest.param(DOCKER_WARNING + V201, 0, False, id="2.0.1"),
    pytest.param(DOCKER_WARNING + V210, 0, True, id="2.1.0"),
    pytest.param(DOCKER_WARNING + V213, 0, True, id="2.1.3"),
    pytest.param("2.2.1\n", 0, True, id="2.2.1"),
    pytest.param(NO_NAMESPACE, 2, None, id="2.1-no-namespace"),
]


@pytest.mark.parametrize(("output", "status", "accepted"), CASES)
async def test_the_precheck_and_setup_up_give_the_same_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str, status: int, accepted: bool | None
) -> None:
    fake_skupper(tmp_path / "bin", output, status)
    # a systemd manager that answers (with no units): this machine may have none, and a
    # manager that does not answer is the site's own error (UserManagerDown), not the subject
    quiet = tmp_path / "bin" / "systemctl"
    quiet.write_text("#!/bin/sh\nexit 0\n")
    quiet.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path))
    connector = LocalConnector()
    # the precheck's path: its script, its parser, its check
    ran = await connector.run(site_facts_script("default", with_ports=False), timeout=30)
    facts = parse_site_facts(ran.stdout)
    check = next(
        c for c in evaluate_facts("h", facts, "2.1.0", is_local=False) if c.name == "skupper"
    )
    # setup's and up's path: the one-round-trip state read and the site map's version check
    state = await PodmanSite(connector, "default").read()
    topology = parse_topology(SMALL_TOPOLOGY, tmp_path / "topology.env")
    problem = SiteMap(topology, ConnectorPool(), None).version_problem(state)
    if accepted is True:
        assert check.status == "pass" and problem is None
    elif accepted is False:
        assert check.status == "fail" and "not supported" in check.detail
        assert problem is not None and "is not supported" in problem
        assert str(facts.skupper.cli) in check.detail and str(state.skupper.cli) in problem
    else:
        assert check.status == "warn" and "no definition for namespace" in check.detail
        assert problem is not None and "no definition for namespace" in problem
    assert facts.skupper == state.skupper
