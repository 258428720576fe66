"""``scripts/keys.sh`` run by sh: the open private keys listed one per line, then closed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from skupper_mcp.connectors.shell import quote, script
from skupper_mcp.facts.private_keys import close_keys_command, open_keys, open_keys_listing


def _sh(body: str) -> str:
    done = subprocess.run(["sh", "-c", script(body)], capture_output=True, check=True, timeout=30)
    return done.stdout.decode()


def test_open_keys_are_listed_then_closed(tmp_path: Path) -> None:
    ns = tmp_path / "ns"
    (ns / "input/resources").mkdir(parents=True)
    (ns / "runtime/certs/site").mkdir(parents=True)
    secret = ns / "input/resources/Secret-link.yaml"
    secret.write_text("x")
    secret.chmod(0o644)
    key = ns / "runtime/certs/site/tls.key"
    key.write_text("x")
    key.chmod(0o600)
    odd = ns / "runtime/certs/site/a\nb/tls.key"
    odd.parent.mkdir()
    odd.write_text("x")
    odd.chmod(0o640)
    (ns / "runtime/certs/site/ca.crt").write_text("not a key")
    (ns / "runtime/certs/site/ca.crt").chmod(0o644)
    lines = _sh(open_keys_listing(quote(str(ns)))).split("\n")
    found = {key.mode: key.path for key in open_keys(lines)}
    # the name with a newline is one line, its newline a "?"
    assert found == {
        0o644: "input/resources/Secret-link.yaml",
        0o640: "runtime/certs/site/a?b/tls.key",
    }
    _sh(close_keys_command(quote(str(ns))))
    assert _sh(open_keys_listing(quote(str(ns)))) == ""
    assert secret.stat().st_mode & 0o777 == 0o600 and odd.stat().st_mode & 0o777 == 0o600
    assert (ns / "runtime/certs/site/ca.crt").stat().st_mode & 0o777 == 0o644


def test_a_namespace_without_its_directories_lists_nothing(tmp_path: Path) -> None:
    assert _sh(open_keys_listing(quote(str(tmp_path / "none")))) == ""
