"""The logs tool without a sandbox: the pure parts (the remote script's parser, the line and
byte bounds, target and argument checks) and the engine over scripted hosts."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from fake_connector import Call, FakeConnector, FakeHosts, Reply
from skupper_mcp.connectors.base import SSHOptions
from skupper_mcp.connectors.pool import ConnectorPool
from skupper_mcp.connectors.shell import runnable
from skupper_mcp.engine.core import Engine
from skupper_mcp.engine.operations.logs import check_arguments, one_site
from skupper_mcp.errors import CommandError, ConfigError, ConnectError
from skupper_mcp.facts.logs import (
    MAX_LOG_BYTES,
    journal_logs_script,
    log_search_script,
    merged_pod_logs,
    parse_journal_logs,
    parse_log_search,
    parse_podman_logs,
    podman_logs_script,
    probe_eof_line,
    tail_lines,
)
from skupper_mcp.facts.redact import PRIVATE_KEY_MARK
from skupper_mcp.topology import load_topology
from topology_samples import SMALL_TOPOLOGY

ROUTER_LOG = (Path(__file__).parent / "router_logs" / "skrouterd-3.4.2-hub.log").read_text()
KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"


def script_output(
    container: str, text: str | None, exists: int = 0, rc: int = 0, stderr: str = ""
) -> str:
    """What ``podman_logs_script`` prints on a host."""
    out = f"@@container {container}\n@@exists {exists}\n"
    if text is None:
        return out
    stuffed = "".join(f"|{line}\n" for line in text.split("\n")) if text else ""
    if stderr:
        stuffed += "\n@@stderr\n" + "".join(f"|{line}\n" for line in stderr.split("\n"))
    return out + f"@@logs\n{stuffed}\n@@rc {rc}\n"


#: libpod's warning on a cgroups-v1 host, as podman writes it to an SSH session's stderr
#: (the sandbox's podman-warns quirk, docs/sandbox.md section 11)
CGROUPS_V1_WARNING = (
    'time="2026-01-02T03:04:05Z" level=warning msg="Using cgroups-v1 which is deprecated in '
    "favor of cgroups-v2 with Podman v5 and will be removed in a future version. Set "
    'environment variable `PODMAN_IGNORE_CGROUPSV1_WARNING` to hide this warning."'
)


# -- the pure parts --------------------------------------------------------------------------


def test_the_script_names_the_container_and_bounds_what_it_reads() -> None:
    # scripts/logs.sh, its values as positional parameters: bound to the last 1064 bytes
    router = podman_logs_script(25, 1000, "models-skupper-router")
    assert "\nset -- 25 1064 models-skupper-router -skupper-controller\n" in router
    assert router.endswith(runnable("logs.sh"))
    controller = podman_logs_script(5, 1000)
    assert "\nset -- 5 1064 '' -skupper-controller\n" in controller


def test_parse_keeps_the_log_and_podmans_status() -> None:
    read = parse_podman_logs(script_output("r", "one\ntwo"), 1000)
    assert (read.container, read.exists, read.rc, read.text, read.cut) == (
        "r",
        0,
        0,
        "one\ntwo",
        False,
    )
    # a line of the log that looks like a marker is the log's, not a marker
    tricky = parse_podman_logs(script_output("r", "@@rc 7\n@@logs\nlast\n"), 1000)
    assert (tricky.text, tricky.rc) == ("@@rc 7\n@@logs\nlast\n", 0)
    absent = parse_podman_logs(script_output("r", None, exists=1), 1000)
    assert (absent.exists, absent.rc, absent.text) == (1, None, "")
    assert parse_podman_logs(script_output("r", "x" * 1001), 1000).cut


def test_podmans_own_warning_on_stderr_is_no_line_of_the_log() -> None:
    """podman writes the container's stderr lines and its own warnings to its stderr
    (libpod LogLine.Write; logrus): the container's stay, podman's are set aside."""
    routed = "2026-01-02 03:04:05.000001 +0000 ROUTER (info) Router started in Interior mode"
    read = parse_podman_logs(
        script_output("r", "launched", stderr=f"{CGROUPS_V1_WARNING}\n{routed}"), 1000
    )
    assert (read.text, read.podman_said, read.rc) == (
        f"launched\n{routed}",
        (CGROUPS_V1_WARNING,),
        0,
    )
    only_warned = parse_podman_logs(script_output("r", "", stderr=CGROUPS_V1_WARNING), 1000)
    assert (only_warned.text.strip(), only_warned.podman_said) == ("", (CGROUPS_V1_WARNING,))
    # on a terminal logrus writes WARN[0000]; the controller's slog is not podman's
    assert parse_podman_logs(script_output("r", "", stderr="WARN[0000] x"), 100).text == ""
    slog = 'time=2026-01-02T03:04:05.000Z level=INFO msg="Router started"'
    assert parse_podman_logs(script_output("r", "", stderr=slog), 1000).text == slog
    # a stderr cut at the front loses its partial first line and says older lines went
    cut = parse_podman_logs(script_output("r", "", stderr="tial\n" + "y" * 30), 20)
    assert (cut.text, cut.dropped, cut.cut) == ("y" * 30, True, False)


def test_tail_keeps_the_newest_lines_within_the_bounds() -> None:
    assert tail_lines("a\nb\nc\n", 2, 100).lines == ["b", "c"]
    assert tail_lines("a\r\nb", 5, 100) == tail_lines("a\nb\n", 5, 100)
    bounded = tail_lines("old\nnewer\nnewest\n", 10, 13)
    assert (bounded.lines, bounded.truncated) == (["newer", "newest"], True)
    cut = tail_lines("tial line\nwhole\n", 10, 100, cut=True)
    assert (cut.lines, cut.truncated) == (["whole"], True)
    huge = tail_lines("x" * 50 + "end\n", 10, 20)
    assert huge.truncated and huge.lines == ["x" * 16 + "end"]
    assert tail_lines("", 5, 100).lines == []


@pytest.fixture
def topology(write_topology):
    return load_topology(write_topology(SMALL_TOPOLOGY))


@pytest.mark.parametrize(
    ("query", "host"),
    [("alpha", "alpha"), ("hub-beta", "beta"), ("b-fast", "beta"), ("local", "local")],
)
def test_a_target_names_one_site(topology, query: str, host: str) -> None:
    assert one_site(topology, query).host == host


@pytest.mark.parametrize("query", ["all", " ", "nowhere"])
def test_all_or_an_unknown_target_is_refused_naming_the_sites(topology, query: str) -> None:
    with pytest.raises(ConfigError) as error:
        one_site(topology, query)
    message = str(error.value)
    assert "alpha" in message and "local" in message and not re.search(r"\ball\b,", message)
    if query == "all":
        assert "one site at a time" in message


@pytest.mark.parametrize(("component", "lines"), [("router", 0), ("router", 501), ("proxy", 5)])
def test_arguments_out_of_bounds_are_refused(component: str, lines: int) -> None:
    with pytest.raises(ConfigError):
        check_arguments(component, lines)
    check_arguments("controller", 500)
    check_arguments("router", 1)


# -- the engine over scripted hosts ----------------------------------------------------------


def engine_with(topology, alpha: FakeConnector) -> Engine:
    pool = ConnectorPool(SSHOptions(), factory=FakeHosts({"alpha": alpha}))
    return Engine(topology, pool)


async def test_a_router_log_comes_back_newest_last_with_its_secrets_gone(topology) -> None:
    lines = ROUTER_LOG.splitlines()
    text = "\n".join([*lines[:-3], *KEY.splitlines(), "token=abc123def", *lines[-3:]])

    def answer(call: Call) -> Reply | None:
        if "# logs.sh\nset -- 6 " in call.command:
            return Reply(script_output("default-skupper-router", text))
        return None

    alpha = FakeConnector("alpha", answer)
    async with engine_with(topology, alpha) as engine:
        result = await engine.logs("alpha", lines=6)
    assert (result.host, result.site, result.platform, result.component) == (
        "alpha",
        "hub-alpha",
        "podman",
        "router",
    )
    assert (result.source, result.found, result.requested) == ("default-skupper-router", True, 6)
    assert result.lines == [lines[-4], PRIVATE_KEY_MARK, "token=[REDACTED]", *lines[-3:]]
    assert "MIIE" not in "\n".join(result.lines) and "abc123def" not in "\n".join(result.lines)
    assert result.redactions == 2 and not result.truncated
    assert "2 secrets redacted" in result.summary
    assert all(c.timeout <= 15 for c in alpha.calls)


async def test_a_huge_log_is_cut_to_its_newest_64_kib(topology) -> None:
    body = "\n".join(f"line {n} " + "x" * 300 for n in range(400))
    alpha = FakeConnector("alpha")
    alpha.on("podman logs", script_output("default-skupper-router", body))
    async with engine_with(topology, alpha) as engine:
        result = await engine.logs("alpha", lines=500)
    assert result.truncated and result.lines[-1].startswith("line 399 ")
    assert sum(len(line.encode()) + 1 for line in result.lines) <= MAX_LOG_BYTES
    assert len(result.lines) < 400


async def test_a_missing_container_is_a_result_that_says_so(topology) -> None:
    alpha = FakeConnector("alpha")
    alpha.on("skupper-controller", script_output("cloud-user-skupper-controller", None, exists=1))
    async with engine_with(topology, alpha) as engine:
        result = await engine.logs("a-big", component="controller")
    assert (result.host, result.found, result.lines) == ("alpha", False, [])
    assert result.source == "cloud-user-skupper-controller"
    assert "cloud-user-skupper-controller does not exist on alpha" in (result.detail or "")


async def test_an_unreachable_host_is_an_error_naming_it(topology) -> None:
    alpha = FakeConnector("alpha", unreachable="connection refused")
    async with engine_with(topology, alpha) as engine:
        with pytest.raises(ConnectError) as error:
            await engine.logs("alpha")
    assert str(error.value) == "cannot connect to alpha: connection refused"


async def test_podman_failing_is_an_error_not_an_empty_log(topology) -> None:
    alpha = FakeConnector("alpha")
    alpha.on("podman", script_output("default-skupper-router", None, exists=125), stderr="boom")
    async with engine_with(topology, alpha) as engine:
        with pytest.raises(CommandError) as error:
            await engine.logs("alpha")
    assert "alpha" in str(error.value)
    leaked = FakeConnector("alpha")
    leaked.on(
        "podman", script_output("default-skupper-router", f"{KEY}\nError: read failed", rc=125)
    )
    async with engine_with(topology, leaked) as engine:
        with pytest.raises(CommandError) as failed:
            await engine.logs("alpha")
    assert "Error: read failed" in str(failed.value) and "MIIE" not in str(failed.value)


# -- a container on podman's journald log driver ---------------------------------------------

ROUTER_ID = "a" * 64


def journal_output(text: str, driver: str = "journald", rc: int = 0, stderr: str = "") -> str:
    """What ``journal_logs_script`` prints on a host."""
    out = f"@@inspect\n|{ROUTER_ID} {driver}\n@@journal\n"
    out += "".join(f"|{line}\n" for line in text.split("\n")) if text else ""
    out += "\n"
    if stderr:
        out += "@@stderr\n" + "".join(f"|{line}\n" for line in stderr.split("\n"))
    return out + f"@@rc {rc}\n"


def journald_host(journal: str) -> FakeConnector:
    def answer(call: Call) -> Reply | None:
        if "# journal.sh\n" in call.command:
            return Reply(journal)
        if "# logs.sh\n" in call.command:
            return Reply(script_output("default-skupper-router", ""))
        return None

    return FakeConnector("alpha", answer)


def test_the_journal_script_matches_the_container_by_full_id_and_uid_as_podman_does() -> None:
    """podman's readFromJournal matches CONTAINER_ID_FULL and _UID (from v4.4.0), never the
    name (libpod/container_log_linux.go@v5.8.2:50-100)."""
    script = journal_logs_script(25, 1000, "default-skupper-router")
    assert "\nset -- 25 1064 default-skupper-router\n" in script
    body = runnable("journal.sh")
    assert script.endswith(body)
    assert '-n $lines CONTAINER_ID_FULL=$id _UID=$uid"' in body
    assert "uid=$(id -u)" in body
    assert "-q -o cat -n $lines" in body and 'skmcp_framed -l "$max_bytes"' in body


def test_parse_journal_keeps_the_driver_the_lines_and_journalctls_stderr() -> None:
    read = parse_journal_logs(journal_output("one\ntwo", stderr="Hint: not all"), 1000)
    assert (read.container_id, read.driver, read.rc, read.text) == (
        ROUTER_ID,
        "journald",
        0,
        "one\ntwo",
    )
    assert read.stderr == "Hint: not all" and read.has_lines
    # an id that is not one, or a driver that is not a name, is not believed
    odd = parse_journal_logs("@@inspect\n|xyz journald\n@@journal\n\n@@rc 0\n", 1000)
    assert (odd.container_id, odd.driver, odd.has_lines) == (None, None, False)


async def test_an_empty_podman_log_is_read_from_the_journal(topology) -> None:
    alpha = journald_host(journal_output("router started\nlink up"))
    async with engine_with(topology, alpha) as engine:
        result = await engine.logs("alpha", lines=5)
    assert result.lines == ["router started", "link up"]
    assert (result.via, result.unavailable, result.found) == ("journal", None, True)
    assert "from the journal" in result.summary
    assert all(c.timeout <= 15 for c in alpha.calls)


async def test_a_journald_host_whose_podman_warns_is_read_from_the_journal(topology) -> None:
    """Both quirks on one host: podman logs prints only libpod's warning (on stderr), which
    is no log; the journal has the lines, and the warning is said apart from them."""

    def answer(call: Call) -> Reply | None:
        if "# journal.sh\n" in call.command:
            return Reply(journal_output("router started\nlink up"))
        if "# logs.sh\n" in call.command:
            return Reply(script_output("default-skupper-router", "", stderr=CGROUPS_V1_WARNING))
        return None

    async with engine_with(topology, FakeConnector("alpha", answer)) as engine:
        result = await engine.logs("alpha")
    assert (result.lines, result.via) == (["router started", "link up"], "journal")
    assert "cgroups-v1" not in "\n".join(result.lines)
    assert "podman warned" in (result.detail or "") and "cgroups-v1" in (result.detail or "")


async def test_neither_podman_nor_the_journal_having_lines_says_the_log_is_unavailable(
    topology,
) -> None:
    said = "No journal files were opened due to insufficient permissions."
    alpha = journald_host(journal_output("", stderr=said))
    async with engine_with(topology, alpha) as engine:
        result = await engine.logs("alpha")
    assert result.lines == [] and result.found
    assert "logs to the journal" in (result.unavailable or "")
    assert said in (result.unavailable or "") and "unavailable" in result.summary


async def test_an_empty_file_log_is_an_empty_log_not_an_unavailable_one(topology) -> None:
    alpha = journald_host(journal_output("", driver="k8s-file"))
    async with engine_with(topology, alpha) as engine:
        result = await engine.logs("alpha")
    assert (result.lines, result.unavailable, result.via) == ([], None, "podman-logs")


def test_the_log_search_reads_the_whole_log_and_sends_only_the_matches(tmp_path: Path) -> None:
    """scripts/log-search.sh on a POSIX sh with a podman and a journalctl of its own: the
    matching lines of both, the newest last, bounded; nothing else crosses."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    old = "SERVER (error) Connection to hub:8000 failed: certificate verify failed"
    (bin_dir / "podman").write_text(
        "#!/bin/sh\n"
        f"echo '{old}'\n"
        "for i in 1 2 3 4 5; do echo newer line $i; done\n"
        "echo 'a warning' >&2\n"
    )
    (bin_dir / "journalctl").write_text("#!/bin/sh\necho 'journal: certificate verify failed'\n")
    for tool in ("podman", "journalctl"):
        (bin_dir / tool).chmod(0o755)
    script = log_search_script("r", "certificate verify failed", 10, 4000)
    done = subprocess.run(
        ["sh", "-c", script],
        env={"HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
    )
    found = parse_log_search(done.stdout.decode(), 4000)
    assert found == [old, "journal: certificate verify failed"]
    assert parse_log_search("@@matches\n|x\n", 4000) is None  # cut short: not searched


def test_an_ha_sites_two_router_logs_merge_in_time_order_with_kubectls_prefix() -> None:
    first = (
        "2026-12-01 03:24:25.000001 +0000 ROUTER (info) one\n2026-12-01 03:24:27.0 +0000 three\n"
    )
    second = "partial\n2026-12-01 03:24:26.000001 +0000 ROUTER (info) two\n"
    merged = merged_pod_logs("router", [("r-a", first, False), ("r-b", second, True)])
    assert merged.split("\n") == [
        "[pod/r-a/router] 2026-12-01 03:24:25.000001 +0000 ROUTER (info) one",
        "[pod/r-b/router] 2026-12-01 03:24:26.000001 +0000 ROUTER (info) two",
        "[pod/r-a/router] 2026-12-01 03:24:27.0 +0000 three",
    ]


#: The real skupper-router 3.4.2's log of a hub (tests/router_logs): its link port probed by
#: TCP connects that closed before any TLS handshake, each logged at error level (and again
#: in a FLOW_LOG record), among lines that are no probe's.
RECORDED_HUB = Path(__file__).parent / "router_logs" / "skrouterd-3.4.2-hub.log"


def test_a_connection_closed_before_its_handshake_is_told_from_other_failures() -> None:
    text = RECORDED_HUB.read_text()
    probes = [line for line in text.splitlines() if probe_eof_line(line)]
    assert len(probes) == 6, probes  # three connections, each also in a FLOW_LOG record
    assert all("Connection from 127.0.0.1:" in line for line in probes)
    # a dialling router's own failure, or another TLS failure, is no probe's
    assert not probe_eof_line(
        "2026-12-01 03:24:27.288498 +0000 SERVER (error) [C4] Connection to 127.0.0.9:55671 "
        "failed: amqp:connection:framing-error SSL Failure: error:0A000086:SSL routines::"
        "certificate verify failed"
    )
    assert not probe_eof_line(
        "2026-12-01 03:24:27.288498 +0000 SERVER (error) [C4] Connection from 127.0.0.1:1 (to "
        "127.80.61.3:55671) failed: amqp:connection:framing-error SSL Failure: error:0A000410:"
        "SSL routines::sslv3 alert handshake failure"
    )


async def test_the_router_log_says_which_lines_its_link_port_probes_left(topology) -> None:
    text = RECORDED_HUB.read_text()
    alpha = FakeConnector("alpha")
    alpha.on("podman logs", script_output("default-skupper-router", text))
    async with engine_with(topology, alpha) as engine:
        result = await engine.logs("alpha", lines=500)
    assert result.probe_lines == 6, result.lines
    assert "6 lines an incoming connection closed before its TLS handshake" in result.summary
    assert "no fault of a link" in result.summary
