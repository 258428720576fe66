"""The emulation reads and writes resource files with libyaml where PyYAML has it: only
faster. On every resource file of the recorded site states (what the sandbox's render and
controller wrote), both loaders read the same documents, both emitters write the same text,
and a runtime file read and written again is the file it was."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skupper_mcp.facts.framing import split_frames
from skupper_sandbox.emulated.skupper import resources

RECORDED = Path(__file__).parents[1] / "engine" / "site_states"


def recorded_files() -> list[tuple[str, str, str]]:
    """(tag, name, text) of every resource file in the recorded states (a file's last
    newline is kept where the recording has a blank line after it, as older ones do)."""
    found = []
    for state in sorted(RECORDED.glob("*/*.txt")):
        for frame in split_frames(state.read_text()):
            tag, _, name = frame.argument.partition(" ")
            if frame.tag == "file" and tag in ("input", "runtime"):
                found.append((tag, name, frame.body))
    return found


def test_the_recorded_states_hold_files_of_both_kinds() -> None:
    tags = {tag for tag, _, _ in recorded_files()}
    assert tags == {"input", "runtime"}


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML without libyaml")
def test_libyaml_reads_and_writes_resources_as_the_python_yaml_does() -> None:
    assert resources._LOADER is yaml.CSafeLoader and resources._DUMPER is yaml.CSafeDumper
    files = recorded_files()
    assert len(files) > 20
    for tag, name, text in files:
        fast = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
        assert fast == list(yaml.load_all(text, Loader=yaml.SafeLoader)), name
        for doc in (d for d in fast if d is not None):
            python_text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
            assert resources.dump(doc) == python_text, name
        if tag == "runtime":
            (doc,) = resources.parse_documents(text, name)
            # a frame's body ends where the file's last line does: the newline after it
            # is the frame's (recordings from the one-awk read keep none)
            assert resources.dump(doc) == text.rstrip("\n") + "\n", name
