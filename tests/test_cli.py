"""The skupper-mcp command: exit codes, messages, tables and --json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skupper_mcp.results import ResolveResult
from topology_samples import SMALL_TOPOLOGY


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skupper_mcp", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.spawns
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


@pytest.mark.spawns
def test_resolve_unknown_name_exits_2_listing_names(example_path: Path) -> None:
    result = run("--topology", str(example_path), "resolve", "rhel")
    assert result.returncode == 2
    assert "valid names: rhel-ai, rhtevan-work" in result.stderr


@pytest.mark.spawns
def test_resolve_prints_a_table_and_json(example_path: Path) -> None:
    table = run("--topology", str(example_path), "resolve", "g3b-16k")
    assert table.returncode == 0
    assert "profile source  given" in table.stdout
    as_json = run("--topology", str(example_path), "--json", "resolve", "local")
    assert as_json.returncode == 0
    resolved = ResolveResult.model_validate(json.loads(as_json.stdout))
    assert (resolved.role, resolved.site, resolved.profile) == ("consumer", "local-ezhang", None)


@pytest.mark.spawns
def test_json_flag_after_the_verb(example_path: Path) -> None:
    result = run("resolve", "--topology", str(example_path), "--json", "crc")
    assert result.returncode == 0
    assert json.loads(result.stdout)["host"] == "crc"


@pytest.mark.spawns
def test_missing_topology_file_exits_2(tmp_path: Path) -> None:
    result = run("--topology", str(tmp_path / "absent.env"), "resolve", "x")
    assert result.returncode == 2
    assert "cannot read the topology" in result.stderr


@pytest.mark.spawns
def test_bad_usage_exits_2() -> None:
    result = run("resolve")
    assert result.returncode == 2
    assert "usage" in result.stderr


@pytest.mark.spawns
@pytest.mark.parametrize("verb", ["up", "down"])
@pytest.mark.parametrize("target", ["", " ", "\t"])
def test_a_blank_target_exits_2_and_runs_nothing(
    example_path: Path, verb: str, target: str
) -> None:
    result = run("--topology", str(example_path), verb, target, "--plan")
    assert result.returncode == 2
    assert "the target is empty" in result.stderr and "rhel-ai" in result.stderr
    assert result.stdout == ""


@pytest.mark.spawns
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


HOSTILE = "router up \x1b]0;title\x07\x1b[2J\x1b[31mred\x1b[0m \x9b2J\x9d0;t\x9c\x7f\r\x00done\tend"


def logs_answering(monkeypatch: pytest.MonkeyPatch, line: str, source: str) -> None:
    """The engine's logs answer with ``line`` (and a summary quoting it), without reaching
    a host."""
    from skupper_mcp.engine import Engine
    from skupper_mcp.results import LogsResult

    async def logs(self: Engine, target: str, component: str = "router", lines: int = 50):
        return LogsResult(
            target=target,
            host=target,
            site=f"hub-{target}",
            role="provider",
            platform="podman",
            component="router",
            source=source,
            found=True,
            lines=[line],
            requested=lines,
            summary=f"1 line from {line}",
        )

    monkeypatch.setattr(Engine, "logs", logs)


@pytest.fixture
def hostile_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's logs answer with a line a hostile host wrote, without reaching a host."""
    logs_answering(monkeypatch, HOSTILE, "hostile")


def terminal_controls(text: str) -> list[str]:
    """Every character of text a terminal would act on (tab and newline aside)."""
    return [c for c in text if (ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F]


def test_the_cli_prints_no_escape_sequence_from_a_log_line(
    example_path: Path, hostile_logs: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from skupper_mcp.cli import main

    assert main(["--topology", str(example_path), "logs", "rhel-ai"]) == 0
    printed = capsys.readouterr()
    assert terminal_controls(printed.out) == [] and terminal_controls(printed.err) == []
    assert "\x1b" not in printed.out + printed.err and "\x07" not in printed.out + printed.err
    assert "router up" in printed.out and "red" in printed.out
    assert "done\tend" in printed.out
    assert "title" not in printed.out  # the OSC's payload goes with it


def test_json_output_holds_the_text_without_what_a_terminal_acts_on(
    example_path: Path, hostile_logs: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from skupper_mcp.cli import main

    assert main(["--topology", str(example_path), "--json", "logs", "rhel-ai"]) == 0
    printed = capsys.readouterr().out
    assert terminal_controls(printed) == []
    # the result itself holds no control (results.Result): the text stays, the sequences go
    assert json.loads(printed)["lines"] == ["router up red 2J0;tdone\tend"]


#: Bidi controls a host may write: embeddings, overrides, isolates and marks.
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@pytest.fixture
def bidi_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's logs answer with a line whose bidi controls turn it around, and a lone
    surrogate (an undecodable byte)."""
    logs_answering(monkeypatch, f"user\u202eexe.txt\u202c ok{BIDI} \ud800end", "bidi")


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_bidi_controls_and_surrogates_never_reach_the_output(
    example_path: Path, bidi_logs: None, as_json: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    from skupper_mcp.cli import main

    json_flag = ["--json"] if as_json else []
    assert main(["--topology", str(example_path), *json_flag, "logs", "rhel-ai"]) == 0
    printed = capsys.readouterr()
    everything = printed.out + printed.err
    assert not set(BIDI) & set(everything), ascii(everything)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in everything)
    line = json.loads(printed.out)["lines"][0] if as_json else printed.out.strip()
    assert line == "userexe.txt ok \ufffdend"


@pytest.mark.parametrize("text", [f"a{BIDI}b", "a\ud800b", "a\x1b[31mb"])
def test_what_the_cli_prints_outside_a_result_is_cleaned_too(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Error messages and progress are not results: show() cleans them the same way."""
    from skupper_mcp.cli import show

    show(text)
    assert capsys.readouterr().out in ("ab\n", "a\ufffdb\n")


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("\x1b]0;title\x07after", "after"),
        ("\x1b]2;title\x1b\\after", "after"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b[2J\x1b[H\x1b[1;31mred", "red"),
        ("\x1bPdevice\x1b\\x", "x"),
        ("a\x1b(Bb\x1bcc", "abc"),
        ("lone\x1b", "lone"),
        ("\x1b]0;never ends\nnext line", "\nnext line"),
        ("over\rwrite\x08\x08", "overwrite"),
        ("keep\ttab\nand newline", "keep\ttab\nand newline"),
        ("\u00e9t\u00e9 \u2603", "\u00e9t\u00e9 \u2603"),
        ("right\u202eto left\u2066isolated\u2069", "rightto leftisolated"),
        ("lone \udcff surrogate", "lone \ufffd surrogate"),
    ],
)
def test_terminal_safe_strips_sequences_and_controls_only(raw: str, safe: str) -> None:
    from skupper_mcp.cli import terminal_safe

    assert terminal_safe(raw) == safe


def test_terminal_safe_is_linear_on_a_hostile_mebibyte() -> None:
    import time

    from skupper_mcp.cli import terminal_safe

    text = ("\x1b[" + "1;" * 50 + "\x1b]" + "x" * 100 + "\x9b") * 6000
    # CPU time, the subject (a quadratic or backtracking pass takes minutes): a busy
    # machine stretches the wall clock, not this thread's CPU
    start = time.thread_time()
    cleaned = terminal_safe(text)
    assert time.thread_time() - start < 1.0
    assert terminal_controls(cleaned) == []


def test_the_cli_prints_only_through_its_sanitising_seam() -> None:
    """A new print() would bypass terminal_safe: the CLI has exactly one, in show()."""
    import skupper_mcp.cli as cli

    source = Path(cli.__file__).read_text()
    assert source.count("print(") == 1
    assert "print(terminal_safe(text)" in source


@pytest.mark.parametrize("verb", ["resolve", "resolve-profile", "resolve_profile"])
def test_the_tools_name_is_a_verb_too(
    example_path: Path, verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from skupper_mcp.cli import main

    assert main(["--topology", str(example_path), verb, "g3b-16k"]) == 0
    assert "profile source  given" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("verb", "tool"),
    [("test-model", "test_model"), ("test_model", "test_model"), ("status", "status")],
)
def test_every_verbs_help_says_what_it_does(
    verb: str, tool: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from skupper_mcp.cli import main

    with pytest.raises(SystemExit) as exited:
        main([verb, "--help"])
    assert exited.value.code == 0
    assert f"(the MCP tool {tool}: " in " ".join(capsys.readouterr().out.split())


@pytest.fixture
def recorded_status(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's status answers with a recorded result, without reaching a host."""
    from recorded_results import recorded_status as recorded
    from skupper_mcp.engine import Engine

    async def status(self: Engine, readiness: bool = False):
        return recorded()

    monkeypatch.setattr(Engine, "status", status)


@pytest.mark.parametrize("columns", ["80", "120"])
def test_status_fits_the_terminals_width(
    example_path: Path,
    recorded_status: None,
    columns: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from skupper_mcp.cli import main

    monkeypatch.setenv("COLUMNS", columns)
    main(["--topology", str(example_path), "status"])
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= int(columns)
    assert any("127.231.238.3:55671" in line for line in lines)


def test_status_into_a_pipe_keeps_each_row_on_one_line(
    example_path: Path,
    recorded_status: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from skupper_mcp.cli import main

    monkeypatch.delenv("COLUMNS", raising=False)
    main(["--topology", str(example_path), "status"])
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith("rhtevan-work ")]
    assert len(rows) == 1 and "connect timed out" in rows[0] and len(rows[0]) > 120


@pytest.mark.parametrize("terminal", [True, False])
def test_the_bare_command_on_a_terminal_says_what_it_waits_for(
    terminal: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import skupper_mcp.server
    from skupper_mcp.cli import STDIO_HINT, main

    served: list[str] = []
    monkeypatch.setattr(skupper_mcp.server, "serve", lambda *a, **k: served.append("stdio"))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: terminal)
    assert main([]) == 0
    printed = capsys.readouterr()
    assert served == ["stdio"] and printed.out == ""  # stdout stays the protocol's
    assert (STDIO_HINT in printed.err) is terminal
