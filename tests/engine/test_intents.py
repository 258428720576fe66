"""What the user last asked of each site, kept private in STATE_DIR (engine/store/intents.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from skupper_mcp.engine.store.intents import Intent, Intents
from skupper_mcp.errors import LocalStateError


def test_the_last_write_asked_of_each_site_is_kept_privately(tmp_path: Path) -> None:
    intents = Intents(tmp_path / "state", tmp_path / "topology.env")
    assert intents.read("rhel-ai", "hub-rhel-ai") is None
    intents.record({"rhel-ai": ("hub-rhel-ai", "up"), "local": ("local-site", "up")})
    intents.record({"rhel-ai": ("hub-rhel-ai", "down")})
    assert intents.read("rhel-ai", "hub-rhel-ai") == "down"
    assert intents.read("local", "local-site") == "up"
    folder = intents.folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(os.listdir(folder)) == ["local.json", "rhel-ai.json"]
    assert all(stat.S_IMODE((folder / n).stat().st_mode) == 0o600 for n in os.listdir(folder))
    # another topology file has records of its own
    other = Intents(tmp_path / "state", tmp_path / "other.env")
    assert other.read("rhel-ai", "hub-rhel-ai") is None


def test_a_record_that_is_not_ours_counts_as_nothing_asked(tmp_path: Path) -> None:
    intents = Intents(tmp_path / "state", tmp_path / "topology.env")
    intents.record({"rhel-ai": ("hub-rhel-ai", "down")})
    assert intents.read("rhel-ai", "another-site") is None  # the host now has another site
    record = intents.folder / "rhel-ai.json"
    for text in ("{not json", '{"site": "hub-rhel-ai", "asked": "reboot"}', "[]", "\xff"):
        record.write_text(text)
        assert intents.read("rhel-ai", "hub-rhel-ai") is None, text


def test_a_planted_link_is_never_followed(tmp_path: Path) -> None:
    intents = Intents(tmp_path / "state", tmp_path / "topology.env")
    intents.record({"local": ("local-site", "up")})
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    (intents.folder / "rhel-ai.json.new").symlink_to(target)
    with pytest.raises(LocalStateError):
        intents.record({"rhel-ai": ("hub-rhel-ai", "down")})
    assert target.read_text() == "keep"
    (intents.folder / "local.json").unlink()
    (intents.folder / "local.json").symlink_to(target)
    assert intents.read("local", "local-site") is None  # refused, and said in the log


def test_the_boot_id_goes_with_what_was_asked(tmp_path: Path) -> None:
    intents = Intents(tmp_path / "state", tmp_path / "topology.env")
    boot = "6f1c2a9e-0d4b-4c1e-9a53-2b7f0c8d1e42"
    intents.record({"rhel-ai": ("hub-rhel-ai", "up"), "crc": ("crc-site", "up")}, {"rhel-ai": boot})
    assert intents.last("rhel-ai", "hub-rhel-ai") == Intent("up", boot)
    assert intents.last("crc", "crc-site") == Intent("up", None)  # no boot id: not known
    assert intents.read("rhel-ai", "hub-rhel-ai") == "up"
