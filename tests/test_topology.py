"""topology.env parsing: the example, its names, defaults and every kind of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from skupper_mcp.errors import ConfigError, ConfigErrors
from skupper_mcp.topology import find_topology_path, load_topology, parse_topology
from topology_samples import SMALL_TOPOLOGY


def test_example_parses_with_the_seed_values(example_path: Path) -> None:
    t = load_topology(example_path)
    assert [p.name for p in t.providers] == ["rhel-ai", "rhtevan-work"]
    rhel = t.providers[0]
    assert (rhel.ssh.user, rhel.ssh.host, rhel.ssh.port) == (
        "cloud-user",
        "rhel-ai.example.com",
        22,
    )
    assert (rhel.inter_router_port, rhel.edge_port, rhel.local_port) == (8000, 8001, 9000)
    assert rhel.default_profile == "g8b-fp8-spec-128k"
    assert list(rhel.profiles) == ["g8b-fp8-spec-128k", "g8b-32k"]
    assert rhel.tmpfs_workaround is True
    assert t.local.site_name == "local-ezhang"
    assert t.kubernetes is not None
    # CRC_MODEL_PORT + CRC_ROUTING_KEY and CRC_RHTEVAN_MODEL_PORT, as in topology.env.example
    assert t.kubernetes.listeners == {"rhel-ai": 8000, "rhtevan-work": 8001}
    assert t.kubernetes.direct_links == ["rhel-ai"]
    assert t.ssh.connect_timeout == 5.0


def test_defaults_fill_in_what_is_not_set() -> None:
    t = parse_topology(SMALL_TOPOLOGY)
    beta = t.providers[1]
    assert beta.site_name == "hub-beta"
    assert beta.routing_key == "model-api-beta"
    assert beta.edge_port == 55672
    assert beta.local_port == 10000
    assert beta.sans == ["127.207.0.3"]
    assert beta.default_profile == "b-fast"
    assert beta.ssh.user is None
    assert t.kubernetes is None
    assert t.local.ssh is None


def test_providers_are_inferred_from_ssh_hosts_without_provider_hosts() -> None:
    text = SMALL_TOPOLOGY.replace('PROVIDER_HOSTS="alpha beta"\n', "")
    assert [p.name for p in parse_topology(text).providers] == ["alpha", "beta"]


def test_quotes_export_comments_and_user_at_host() -> None:
    text = (
        SMALL_TOPOLOGY.replace(
            "ALPHA_SSH_HOST=127.207.0.2", "export ALPHA_SSH_HOST='root@127.207.0.2'  # the GPU box"
        )
        + "LOCAL_SSH_HOST=127.207.0.1\nLOCAL_SSH_PORT=2222\nSSH_ACCEPT_NEW_HOST_KEYS=yes\n"
    )
    t = parse_topology(text)
    assert t.providers[0].ssh.user == "root"
    assert t.local.ssh is not None and t.local.ssh.port == 2222
    assert t.ssh.accept_new_host_keys is True


def test_general_kube_listener_names() -> None:
    text = SMALL_TOPOLOGY + (
        "CRC_SITE_NAME=crc-test\nCRC_ALPHA_PORT=8000\nCRC_BETA_PORT=8001\nCRC_DIRECT_LINKS=beta\n"
        "LOCAL_PUBLIC_HOST=host.crc.testing\n"
    )
    kube = parse_topology(text).kubernetes
    assert kube is not None
    assert kube.listeners == {"alpha": 8000, "beta": 8001}
    assert kube.direct_links == ["beta"]


def test_lookups_and_target_names(example_path: Path) -> None:
    t = load_topology(example_path)
    assert t.host_of("hub-rhel-ai") == "rhel-ai"
    assert t.host_of("crc-ezhang") == "crc"
    assert t.provider_for_profile("g3b-4k").name == "rhtevan-work"  # type: ignore[union-attr]
    assert t.host_names() == ["rhel-ai", "rhtevan-work", "local", "crc"]
    assert "g8b-32k" in t.target_names() and "all" in t.target_names()


def _error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_topology(text, "/etc/topo.env")
    return caught.value


def _line_of(text: str, key: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(key + "="):
            return number
    raise AssertionError(key)


@pytest.mark.parametrize(
    ("old", "new", "variable", "words"),
    [
        ("ALPHA_MODEL_PORT=9000", "ALPHA_MODEL_PORT=70000", "ALPHA_MODEL_PORT", "1-65535"),
        ("ALPHA_MODEL_PORT=9000", "ALPHA_MODEL_PORT=90x", "ALPHA_MODEL_PORT", "1-65535"),
        ("BETA_MODEL_PORT=10000", "BETA_MODEL_PORT=9000", "BETA_MODEL_PORT", "local port"),
        ("LOCAL_SITE_NAME=local-test", "LOCAL_SITE_NAME=Local_Test", "LOCAL_SITE_NAME", "DNS"),
        ("ALPHA_SSH_HOST=127.207.0.2", "ALPHA_SSH_HOST='h;rm -rf /'", "ALPHA_SSH_HOST", "host"),
        ("ALPHA_SSH_HOST=127.207.0.2", "ALPHA_SSH_HOST=$(whoami)", "ALPHA_SSH_HOST", "never run"),
        ("ALPHA_SSH_HOST=127.207.0.2", "ALPHA_SSH_HOST=`id`", "ALPHA_SSH_HOST", "never run"),
        ("ALPHA_PROFILES=", "ALPHA_PROFILE=", "ALPHA_PROFILE", "did you mean ALPHA_PROFILES"),
        (
            "ALPHA_DEFAULT_PROFILE=a-big",
            "ALPHA_DEFAULT_PROFILE=b-fast",
            "ALPHA_DEFAULT_PROFILE",
            "a-big, a-small",
        ),
        (
            'BETA_PROFILES="b-fast=org/beta-fast"',
            'BETA_PROFILES="a-big=org/x"',
            "BETA_PROFILES",
            "unique",
        ),
        (
            "BETA_PUBLIC_HOST=127.207.0.3",
            "BETA_PUBLIC_HOST=127.207.0.2\nBETA_EDGE_PORT=8000",
            "BETA_EDGE_PORT",
            "already a router port",
        ),
        (
            "LOCAL_SITE_NAME=local-test",
            "LOCAL_SITE_NAME=local-test\nLOCAL_SITE_NAME=x",
            "LOCAL_SITE_NAME",
            "set twice",
        ),
        ("BETA_SSH_HOST=127.207.0.3", "BETA_SSH_HOST=a b", "BETA_SSH_HOST", "quoted"),
        (
            "ALPHA_MODEL_PORT=9000",
            "ALPHA_MODEL_PORT=9000\nALPHA_TMPFS_WORKAROUND=maybe",
            "ALPHA_TMPFS_WORKAROUND",
            "true/false",
        ),
        (
            "BETA_SSH_HOST=127.207.0.3",
            "BETA_SSH_HOST=127.207.0.3\nBETA_ROUTING_KEY='k|x'",
            "BETA_ROUTING_KEY",
            "not valid",
        ),
        (
            "BETA_SSH_HOST=127.207.0.3",
            "BETA_SSH_HOST=127.207.0.3\nBETA_MODEL_CONTAINER='c&d'",
            "BETA_MODEL_CONTAINER",
            "container",
        ),
    ],
)
def test_bad_values_name_file_line_variable_and_what_is_valid(
    old: str, new: str, variable: str, words: str
) -> None:
    text = SMALL_TOPOLOGY.replace(old, new)
    assert text != SMALL_TOPOLOGY
    error = _error(text)
    message = str(error)
    assert error.variable == variable
    assert error.path == "/etc/topo.env"
    if error.line is not None:
        assert message.startswith(f"/etc/topo.env:{error.line}: {variable}: ")
    assert words in message


def test_error_points_at_the_offending_line() -> None:
    text = SMALL_TOPOLOGY.replace("ALPHA_MODEL_PORT=9000", "ALPHA_MODEL_PORT=0")
    error = _error(text)
    assert error.line == _line_of(text, "ALPHA_MODEL_PORT")


@pytest.mark.parametrize(
    "key", ["ALPHA_SSH_HOST", "ALPHA_PUBLIC_HOST", "ALPHA_PROFILES", "LOCAL_SITE_NAME"]
)
def test_missing_required_variable_is_named(key: str) -> None:
    lines = [line for line in SMALL_TOPOLOGY.splitlines() if not line.startswith(key + "=")]
    error = _error("\n".join(lines))
    assert error.variable == key
    assert "required" in str(error)


def test_duplicate_kubernetes_listener_port() -> None:
    text = SMALL_TOPOLOGY + "CRC_SITE_NAME=crc-t\nCRC_ALPHA_PORT=8000\nCRC_BETA_PORT=8000\n"
    error = _error(text)
    assert "8000" in str(error) and error.variable in ("CRC_ALPHA_PORT", "CRC_BETA_PORT")


def test_unknown_provider_variable_suggests_provider_hosts() -> None:
    error = _error(SMALL_TOPOLOGY + "GAMMA_SSH_HOST=127.207.0.9\n")
    assert error.variable == "GAMMA_SSH_HOST"
    assert "PROVIDER_HOSTS" in str(error)


def test_lines_that_are_not_assignments() -> None:
    error = _error(SMALL_TOPOLOGY + "echo hello\n")
    assert "KEY=value" in str(error)
    assert error.line == len(SMALL_TOPOLOGY.splitlines()) + 1


def test_path_lookup_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = tmp_path / "cwd"
    (home / ".config" / "skupper-mcp").mkdir(parents=True)
    cwd.mkdir()
    user_file = home / ".config" / "skupper-mcp" / "topology.env"
    user_file.write_text("")
    assert find_topology_path("x.env", environ={}, cwd=cwd, home=home) == Path("x.env")
    env = {"SKUPPER_MCP_TOPOLOGY": "/e.env"}
    assert find_topology_path(None, environ=env, cwd=cwd, home=home) == Path("/e.env")
    assert find_topology_path(None, environ={}, cwd=cwd, home=home) == user_file
    # issue 31: a folder's topology.env never outranks the user's, and is read only when named
    (cwd / "topology.env").write_text("")
    assert find_topology_path(None, environ={}, cwd=cwd, home=home) == user_file
    user_file.unlink()
    with pytest.raises(ConfigError, match=r"read only when named: pass --topology \./topology"):
        find_topology_path(None, environ={}, cwd=cwd, home=home)
    named = {"SKUPPER_MCP_TOPOLOGY": "./topology.env"}
    assert find_topology_path(None, environ=named, cwd=cwd, home=home) == Path("./topology.env")
    (cwd / "topology.env").unlink()
    with pytest.raises(ConfigError, match="--topology"):
        find_topology_path(None, environ={}, cwd=cwd, home=home)


@pytest.mark.parametrize("key", ["SSH_IDENTITY", "SSH_KNOWN_HOSTS", "STATE_DIR"])
def test_a_home_that_cannot_be_expanded_is_a_config_error(key: str) -> None:
    text = SMALL_TOPOLOGY + f"{key}=~no-such-user-here/file\n"
    with pytest.raises(ConfigError, match=rf"{key}: cannot expand '~no-such-user-here/file'"):
        parse_topology(text)


@pytest.mark.parametrize("scope", ["eth0;id", "eth0 x", "eth0|id", "eth0>x"])
def test_an_ipv6_scope_id_is_an_interface_name_and_nothing_else(scope: str) -> None:
    text = SMALL_TOPOLOGY.replace("ALPHA_SSH_HOST=127.207.0.2", f'ALPHA_SSH_HOST="fe80::1%{scope}"')
    with pytest.raises(ConfigError, match=r"ALPHA_SSH_HOST: .* is not a host name or IP address"):
        parse_topology(text)


def test_an_ipv6_address_with_an_interface_scope_is_a_host() -> None:
    text = SMALL_TOPOLOGY.replace("ALPHA_SSH_HOST=127.207.0.2", "ALPHA_SSH_HOST=fe80::1%eth0")
    alpha = parse_topology(text).providers[0]
    assert alpha.ssh is not None and alpha.ssh.host == "fe80::1%eth0"


def test_five_independent_mistakes_are_reported_at_once() -> None:
    text = (
        SMALL_TOPOLOGY.replace("ALPHA_MODEL_PORT=9000", "ALPHA_MODEL_PORT=70000")
        .replace("BETA_INTER_ROUTER_PORT=55671", "BETA_INTER_ROUTER_PORT=55671\nBETA_EDGE_PORT=x")
        .replace("LOCAL_SITE_NAME=local-test", "LOCAL_SITE_NAME=Local_Test")
        + "SSH_ACCEPT_NEW_HOST_KEYS=maybe\n"
        + "LOCAL_LISTENR_HOST=127.0.0.1\n"
    )
    error = _error(text)
    assert isinstance(error, ConfigErrors)
    expected = [
        ("ALPHA_MODEL_PORT", "1-65535"),
        ("BETA_EDGE_PORT", "1-65535"),
        ("LOCAL_SITE_NAME", "DNS-1123"),
        ("SSH_ACCEPT_NEW_HOST_KEYS", "true/false"),
        ("LOCAL_LISTENR_HOST", "did you mean LOCAL_LISTENER_HOST?"),
    ]
    assert [(p.variable, p.line) for p in error.problems] == [
        (variable, _line_of(text, variable)) for variable, _ in expected
    ]
    lines = str(error).splitlines()
    for (variable, words), line in zip(expected, lines, strict=False):
        assert line.startswith(f"/etc/topo.env:{_line_of(text, variable)}: {variable}: ")
        assert words in line
    assert lines[-1] == "(5 problems in /etc/topo.env)"


def test_every_bad_line_is_reported_not_only_the_first() -> None:
    error = _error(SMALL_TOPOLOGY + "echo hello\nX=$(id)\nLOCAL_SITE_NAME=again\n")
    assert isinstance(error, ConfigErrors)
    assert [p.variable for p in error.problems] == [None, "X", "LOCAL_SITE_NAME"]


def test_one_hosts_mistakes_are_each_reported_not_only_its_first() -> None:
    """A provider's required values no longer stop its block at the first bad one: a
    stranger's gpu1 with a bad port, a bad model port and a bad profile list gets three
    lines in one run, and the missing SSH host of another host its own."""
    text = (
        SMALL_TOPOLOGY.replace("ALPHA_MODEL_PORT=9000", "ALPHA_MODEL_PORT=80OO")
        .replace("ALPHA_INTER_ROUTER_PORT=", "ALPHA_INTER_ROUTER_PORT=99999\n#")
        .replace("ALPHA_PROFILES=", "ALPHA_PROFILES=no-model-id\n#")
        .replace("BETA_SSH_HOST=", "#BETA_SSH_HOST=")
    )
    error = _error(text)
    assert isinstance(error, ConfigErrors)
    variables = [p.variable for p in error.problems]
    assert {
        "ALPHA_INTER_ROUTER_PORT",
        "ALPHA_MODEL_PORT",
        "ALPHA_PROFILES",
        "BETA_SSH_HOST",
    } <= set(variables), variables


def test_model_container_defaults_to_hosted_model_and_empty_means_none() -> None:
    t = parse_topology(SMALL_TOPOLOGY + "BETA_MODEL_CONTAINER=\nALPHA_MODEL_API_KEY_FILE=\n")
    alpha, beta = t.providers
    assert alpha.model_container == "hosted-model"  # absent: the default
    assert beta.model_container is None  # set empty: not served by a container
    assert alpha.model_api_key_file is None  # set empty: no key
    quoted = parse_topology(SMALL_TOPOLOGY + 'BETA_MODEL_CONTAINER=""\n')
    assert quoted.providers[1].model_container is None
    named = parse_topology(SMALL_TOPOLOGY + "BETA_MODEL_CONTAINER=vllm\n")
    assert named.providers[1].model_container == "vllm"


def test_model_api_key_file_is_a_path_that_is_not_read_at_parse_time(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-key"
    t = parse_topology(
        SMALL_TOPOLOGY
        + f"ALPHA_MODEL_API_KEY_FILE={missing}\nBETA_MODEL_API_KEY_FILE=~/.config/beta.key\n"
    )
    alpha, beta = t.providers
    assert alpha.model_api_key_file == missing  # the file does not exist: still parses
    assert beta.model_api_key_file == Path.home() / ".config" / "beta.key"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("keys/alpha.key", "absolute or ~/ path"),
        ("'$HOME/alpha.key'", "expansions"),
        ('"/tmp/a\\nb"', "backslash"),
    ],
)
def test_a_bad_model_api_key_file_is_named(value: str, words: str) -> None:
    error = _error(SMALL_TOPOLOGY + f"ALPHA_MODEL_API_KEY_FILE={value}\n")
    assert error.variable == "ALPHA_MODEL_API_KEY_FILE"
    assert words in str(error)


def test_a_key_never_written_in_the_topology_has_no_variable_of_its_own() -> None:
    error = _error(SMALL_TOPOLOGY + "ALPHA_MODEL_API_KEY=sk-abc\n")
    assert error.variable == "ALPHA_MODEL_API_KEY"
    assert "MODEL_API_KEY_FILE" in str(error)  # the did-you-mean points at the file
