"""Shell helpers: what reaches a remote shell is validated, quoted, and prefixed."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skupper_mcp.connectors.shell import (
    ENV_PRELUDE,
    join,
    prelude,
    quote,
    safe_token,
    script,
)
from skupper_mcp.errors import ConfigError

#: The category of lone surrogates, which no shell argument can hold.
SURROGATES: tuple[Literal["Cs"]] = ("Cs",)


def sh(command: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["sh", "-c", command], capture_output=True, check=True, env=env)
    return done.stdout.decode()


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=SURROGATES, blacklist_characters="\x00"),
        max_size=40,
    )
)
def test_quoted_value_reaches_the_shell_unchanged(value: str) -> None:
    assert sh(f"printf %s {quote(value)}") == value


def test_join_keeps_each_argument_whole() -> None:
    argv: list[str | int] = ["a b", "$(id)", "it's", ";rm -rf /", 9000]
    assert sh(f"for a in {join(argv)}; do printf '<%s>' \"$a\"; done") == (
        "<a b><$(id)><it's><;rm -rf /><9000>"
    )


@pytest.mark.parametrize("value", ["rhel-ai", "10.0.0.5", "user@host", "a:b/c=d+e,f", "hub_site.1"])
def test_plain_tokens_are_accepted(value: str) -> None:
    assert safe_token(value, "host") == value


@pytest.mark.parametrize("value", ["", "a b", "x;y", "$(id)", "`id`", "a'b", 'a"b', "a\nb", "a|b"])
def test_shell_metacharacters_are_a_config_error_naming_the_value(value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        safe_token(value, "RHEL_AI_SSH_HOST")
    assert "RHEL_AI_SSH_HOST" in str(raised.value)


SHOW = 'echo "$XDG_RUNTIME_DIR|$DBUS_SESSION_BUS_ADDRESS|$SKUPPER_PLATFORM"; '
SHOW += 'echo "$SKMCP_DATA|$SKMCP_UNITS|$SKMCP_CTL"'


def as_user(tmp_path: Path, uid: int, **extra: str) -> dict[str, str]:
    """An environment whose `id -u` answers ``uid`` (the prelude decides the layout on it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_dir / "id").chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": "/home/u", **extra}


def test_prelude_gives_a_user_the_rootless_layout_and_its_bus(tmp_path: Path) -> None:
    out = sh(script(SHOW), env=as_user(tmp_path, 1000)).splitlines()
    assert out == [
        "/run/user/1000|unix:path=/run/user/1000/bus|podman",
        "/home/u/.local/share/skupper|/home/u/.config/systemd/user|systemctl --user",
    ]


def test_prelude_gives_root_the_rootful_layout_and_the_system_manager(tmp_path: Path) -> None:
    out = sh(script(SHOW), env=as_user(tmp_path, 0)).splitlines()
    assert out == ["||podman", "/var/lib/skupper|/etc/systemd/system|systemctl"]


def test_prelude_keeps_values_the_login_already_set(tmp_path: Path) -> None:
    env = as_user(
        tmp_path,
        1000,
        XDG_RUNTIME_DIR="/tmp/rt",
        SKUPPER_PLATFORM="docker",
        XDG_DATA_HOME="/data",
        XDG_CONFIG_HOME="/config",
    )
    out = sh(script(SHOW), env=env).splitlines()
    assert out == [
        "/tmp/rt|unix:path=/tmp/rt/bus|docker",
        "/data/skupper|/config/systemd/user|systemctl --user",
    ]


def test_script_starts_with_the_prelude() -> None:
    assert script("a", "b").splitlines() == [*prelude().splitlines(), "a", "b"]
    assert script("a").splitlines()[0] == ENV_PRELUDE
