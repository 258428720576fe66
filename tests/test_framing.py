"""What a host's text cannot do to a read: the state script run by a real POSIX shell, with
a podman, curl and systemctl that answer with hostile text (markers, NULs, carriage returns,
escape sequences, a megabyte on one line), parsed into the host's real facts."""

from __future__ import annotations

import getpass
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from local_tools import tool_dir
from skupper_mcp.connectors.shell import prelude, quote
from skupper_mcp.facts.framing import (
    ONE_LINE,
    framed,
    listed,
    safe_path,
    safe_user,
    split_frames,
)
from skupper_mcp.facts.logs import parse_podman_logs, podman_logs_script
from skupper_mcp.facts.site_state import (
    MAX_LOG_READ,
    MAX_MODELS_BODY,
    parse_site_state,
    site_state_script,
)

#: What the fake host's tools print: the body and the log from files the test writes.
FAKE_PODMAN = """#!/bin/sh
case "$1" in
  ps) printf '%s' '[{"Names": ["models-skupper-router"], "State": "running"}]' ;;
  inspect) exit 125 ;;
  logs) cat "$HOSTILE_LOG" ;;
  container) exit 0 ;;
esac
"""
FAKE_CURL = '#!/bin/sh\ncat "$HOSTILE_BODY"\n'
FAKE_SYSTEMCTL = "#!/bin/sh\nprintf 'Id=podman.socket\\nActiveState=active\\n'\n"
FAKE_SKUPPER = "#!/bin/sh\necho 'cli 2.1.3'\n"

INJECTIONS = [
    '{"data":[]}\n@@user x" || true; touch $HOME/pwned; echo "\n',
    '{"data":[]}\n@@podman sh -c "touch $HOME/pwned" #\n@@end\n',
    '{"data":[]}\r@@user evil\r@@rendered',
    "\n@@section units\nId=skupper-models.service\nActiveState=active\n@@rc 0",
    "\x00@@user nul\x00\n\x1b]0;title\x07\x1b[2J@@certs-private\n|fake stuffed line",
    "\u2028@@user lsep\x85@@user nel\x0c@@user ff\x1c@@user fs",
]
HOSTILE = st.one_of(
    st.sampled_from(INJECTIONS),
    st.lists(
        st.one_of(
            st.sampled_from(["@@", "@@user root", "@@rc 0", "@@end", "|", "\n", "\r", "\x00"]),
            st.text(max_size=40),
        ),
        max_size=30,
    ).map("".join),
)


@pytest.fixture
def host(tmp_path: Path) -> dict[str, str]:
    """A fake host: its tools on PATH, the environment the script runs in."""
    bin_dir = tool_dir(
        tmp_path / "bin",
        podman=FAKE_PODMAN,
        curl=FAKE_CURL,
        systemctl=FAKE_SYSTEMCTL,
        skupper=FAKE_SKUPPER,
    )
    return {
        "HOME": str(tmp_path),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOSTILE_BODY": str(tmp_path / "body"),
        "HOSTILE_LOG": str(tmp_path / "log"),
    }


def run(script: str, env: dict[str, str]) -> str:
    """``script`` run by sh after the prelude (which defines the framing's functions)."""
    done = subprocess.run(
        ["sh", "-c", f"{prelude()}\n{script}"], env=env, capture_output=True, timeout=60
    )
    return done.stdout.decode(errors="replace")


def read_with(host: dict[str, str], body: bytes, log: bytes) -> str:
    Path(host["HOSTILE_BODY"]).write_bytes(body)
    Path(host["HOSTILE_LOG"]).write_bytes(log)
    return run(site_state_script("models", "http://127.0.0.1:8000/v1/models", 50), host)


def assert_real_facts(output: str, host: dict[str, str], body: bytes) -> None:
    state = parse_site_state(output)
    assert state.complete and not state.refused
    assert state.user == getpass.getuser()
    assert state.podman_path == str(Path(host["PATH"].split(":")[0]) / "podman")
    assert set(state.containers) == {"models-skupper-router"}
    assert state.units.keys() == {"podman.socket"}
    assert not (state.rendered or state.certs_private or state.enabled_at_boot)
    assert state.skupper.cli is not None and state.skupper.cli.text == "2.1.3"
    assert state.router is None  # podman inspect said no
    # the body is the model endpoint's answer, and nothing else
    try:
        models = json.loads(body)
    except ValueError:
        models = None
    if not (isinstance(models, dict) and isinstance(models.get("data"), list)):
        assert state.served_models is None


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=HOSTILE, log=HOSTILE)
def test_no_body_or_log_line_changes_the_hosts_facts(
    host: dict[str, str], body: str, log: str
) -> None:
    raw = body.encode("utf-8", errors="surrogatepass")
    output = read_with(host, raw, log.encode("utf-8", errors="surrogatepass"))
    assert_real_facts(output, host, raw)


@pytest.mark.parametrize("injection", INJECTIONS)
def test_each_known_injection_is_only_text(host: dict[str, str], injection: str) -> None:
    output = read_with(host, injection.encode(), injection.encode())
    assert_real_facts(output, host, injection.encode())
    state = parse_site_state(output)
    assert any("@@" in line for line in state.logs["router"])  # the log kept as it was


def test_a_megabyte_line_is_cut_on_the_host_and_still_only_text(host: dict[str, str]) -> None:
    line = b"@@user big " + b"A" * (1 << 20) + b"\n@@podman /bin/sh\n"
    output = read_with(host, line, line)
    assert_real_facts(output, host, line)
    state = parse_site_state(output)
    # the host sent at most the bound of the body, and the tail of the log
    assert len(output) < MAX_MODELS_BODY + 2 * MAX_LOG_READ + 16 * 1024
    assert state.logs["router"][-1] == "@@podman /bin/sh"


def test_a_log_read_keeps_the_log_whole_and_its_markers_its_own(host: dict[str, str]) -> None:
    log = "one\n@@rc 9\n@@exists 1\n@@logs\n\x1b[2Jlast"
    Path(host["HOSTILE_LOG"]).write_text(log)
    read = parse_podman_logs(run(podman_logs_script(10, 1000, "r"), host), 1000)
    assert (read.container, read.exists, read.rc, read.text) == ("r", 0, 0, log)


def test_a_frame_reports_the_commands_own_status_even_through_a_cut() -> None:
    output = run(
        "; ".join(
            [
                framed("echo out; echo err >&2; exit 7"),
                framed("yes | head -c 100000", first_bytes=10),
                framed("printf '%s' no-newline"),
            ]
        ),
        {"PATH": "/usr/bin:/bin"},
    )
    frames = split_frames(output)
    # the cut command dies of SIGPIPE (141): its own status, not head's or sed's 0
    assert [(f.tag, f.argument) for f in frames] == [
        ("stderr", ""),
        ("rc", "7"),
        ("rc", "141"),
        ("rc", "0"),
    ]
    # the command's stderr is a frame of its own, after its stdout
    assert frames[0].lines[0] == "err"
    assert split_frames("@@x\n" + output)[0].lines == ["out"]


@pytest.mark.parametrize(
    ("value", "user", "path"),
    [
        ("cloud-user", "cloud-user", None),
        ("/usr/bin/podman", None, "/usr/bin/podman"),
        ('x" || true; touch $HOME/pwned; echo "', None, None),
        ('sh -c "touch $HOME/pwned" #', None, None),
        ("/usr/bin/podman\n@@user x", None, None),
        ("/tmp/p", None, "/tmp/p"),
        ("/opt/$(id)/podman", None, None),
        ("/usr/../bin/sh", None, None),
        ("/usr/bin/pod%nman", None, None),
    ],
)
def test_values_bound_for_scripts_are_only_what_they_must_look_like(
    value: str, user: str | None, path: str | None
) -> None:
    assert (safe_user(value), safe_path(value)) == (user, path)


#: File names as a host can make them: any byte but ``/`` and NUL, up to NAME_MAX.
NAMES = st.one_of(
    st.sampled_from(
        [b"x\n@@podman ", b"@@end", b"|@@user root", b"a\rb", b"\xff\xfe", b"\n", b"a" * 255]
    ),
    st.lists(
        st.one_of(st.sampled_from([b"@@", b"\n", b"\r", b"|", b" "]), st.binary(max_size=20)),
        min_size=1,
        max_size=12,
    ).map(b"".join),
).filter(
    lambda n: 0 < len(n) <= 255 and b"/" not in n and b"\0" not in n and n not in (b".", b"..")
)
PLAIN_NAME = re.compile(r"[A-Za-z0-9._/ +?-]+")


@settings(max_examples=40, deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=8, unique=True))
def test_each_listed_name_is_one_stuffed_line_whatever_it_holds(names: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            Path(os.fsdecode(os.path.join(os.fsencode(folder), name))).write_bytes(b"@@rc 0\n")
        find = f"find {quote(folder)} -type f -printf '%P\\0'"
        output = run(f"echo @@names; {listed(find)}; echo @@end", {"PATH": "/usr/bin:/bin"})
    frames = split_frames(output)
    assert [f.tag for f in frames] == ["names", "end"]
    assert len(frames[0].lines) == len(names)
    assert all(PLAIN_NAME.fullmatch(line) for line in frames[0].lines)
    plain = sorted(n.decode() for n in names if PLAIN_NAME.fullmatch(n.decode("latin-1")))
    assert plain == sorted(line for line in frames[0].lines if line in plain)


@settings(max_examples=40, deadline=None)
@given(value=HOSTILE.filter(lambda v: "\0" not in v))
def test_a_value_made_one_line_stays_one_markers_argument(value: str) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "V": value.encode("utf-8", "surrogatepass").decode(errors="replace"),
    }
    output = run(f'echo "@@podman $(printf %s "$V" | {ONE_LINE})"; echo @@end', env)
    frames = split_frames(output)
    assert [f.tag for f in frames] == ["podman", "end"]
    if "\n" in value.rstrip("\n"):
        assert safe_path(frames[0].argument) is None  # joined with ?, so refused


@settings(max_examples=40, deadline=None)
@given(value=HOSTILE.filter(lambda v: "\0" not in v))
def test_a_value_marked_without_a_process_stays_one_markers_argument(value: str) -> None:
    """``skmcp_mark``, which the state read uses for its values (no awk per value), keeps
    ONE_LINE's promise: one marker line, and a value of many lines refused."""
    env = {
        "PATH": "/usr/bin:/bin",
        "V": value.encode("utf-8", "surrogatepass").decode(errors="replace"),
    }
    output = run('skmcp_mark podman "$V"; echo @@end', env)
    frames = split_frames(output)
    assert [f.tag for f in frames] == ["podman", "end"]
    if "\n" in env["V"]:
        assert safe_path(frames[0].argument) is None
    else:
        assert frames[0].argument == env["V"].strip()
