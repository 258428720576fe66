"""Shell helpers: what reaches a remote shell is validated, quoted, and prefixed."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skupper_mcp.connectors.shell import ENV_PRELUDE, join, quote, safe_token, script
from skupper_mcp.errors import ConfigError


def sh(command: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["sh", "-c", command], capture_output=True, check=True, env=env)
    return done.stdout.decode()


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        max_size=40,
    )
)
def test_quoted_value_reaches_the_shell_unchanged(value: str) -> None:
    assert sh(f"printf %s {quote(value)}") == value


def test_join_keeps_each_argument_whole() -> None:
    argv = ["a b", "$(id)", "it's", ";rm -rf /", 9000]
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


def test_prelude_sets_the_runtime_dir_that_systemctl_user_needs() -> None:
    out = sh(
        script('echo "$XDG_RUNTIME_DIR|$DBUS_SESSION_BUS_ADDRESS|$SKUPPER_PLATFORM"'),
        env={"PATH": "/usr/bin:/bin"},
    )
    uid = sh("id -u").strip()
    assert out.strip() == f"/run/user/{uid}|unix:path=/run/user/{uid}/bus|podman"


def test_prelude_keeps_values_the_login_already_set() -> None:
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": "/tmp/rt", "SKUPPER_PLATFORM": "docker"}
    out = sh(script('echo "$XDG_RUNTIME_DIR|$DBUS_SESSION_BUS_ADDRESS|$SKUPPER_PLATFORM"'), env=env)
    assert out.strip() == "/tmp/rt|unix:path=/tmp/rt/bus|docker"


def test_script_starts_with_the_prelude() -> None:
    assert script("a", "b").splitlines() == [ENV_PRELUDE, "a", "b"]
