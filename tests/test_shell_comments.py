"""The shipped scripts are sent without their comment lines (``shell.runnable``): each one
must parse to the same program without them, or a line that looked like a comment was part
of a string (a quoted text, an awk program's data) and dropping it changed what runs.

bash's printer decides it: a script's text, wrapped in a function, is printed back by
``declare -f`` in bash's canonical form, which keeps every word, quoted text and nested
function and no comment. The two forms must print alike; and a line inside a quoted string
that starts with ``#`` is shown to make them differ, so the check can fail.
"""

from __future__ import annotations

import shutil
import subprocess
from importlib.resources import files

import pytest

from skupper_mcp.connectors.shell import LIBRARIES, prelude, runnable, shipped

SCRIPTS = sorted(
    entry.name for entry in files("skupper_mcp.scripts").iterdir() if entry.name.endswith(".sh")
)

needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def printed(text: str) -> str:
    """The script's text as bash's parser reads it: its canonical form, comments gone."""
    done = subprocess.run(
        ["bash", "-c", 'eval "skmcp_whole() {\n$1\n:\n}" && declare -f skmcp_whole', "bash", text],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_bash
@pytest.mark.parametrize("name", SCRIPTS)
def test_a_shipped_script_without_its_comment_lines_is_the_same_program(name: str) -> None:
    assert runnable(name) != shipped(name) or "#" not in shipped(name)
    assert printed(runnable(name)) == printed(shipped(name))


@needs_bash
def test_a_comment_like_line_inside_a_string_is_told_apart() -> None:
    text = "echo 'one\n# two\nthree'\n# a comment\n"
    dropped = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    assert printed(text) != printed(dropped)
    assert printed("echo one\n# a comment\n") == printed("echo one\n")


def test_what_is_sent_has_no_comment_line_and_what_is_installed_keeps_them() -> None:
    sent = [prelude(), *(runnable(name) for name in SCRIPTS)]
    assert not [line for text in sent for line in text.splitlines() if line.lstrip()[:1] == "#"]
    assert all(name in SCRIPTS for name in LIBRARIES)
    # the watch script is written to the host as a file: its text stays whole
    assert shipped("start-watch.sh").lstrip().startswith("#")
