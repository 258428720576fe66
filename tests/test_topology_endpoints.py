"""Several model endpoints on one provider host (issue 48): ``<PREFIX>_ENDPOINTS`` and each
endpoint's ``<PREFIX>_<ENDPOINT>_...`` variables, and every mistake in them reported with
the others, with its line and variable."""

from __future__ import annotations

import pytest

from skupper_mcp.errors import ConfigError, ConfigErrors
from skupper_mcp.topology import parse_topology
from topology_samples import SMALL_TOPOLOGY, TWO_ENDPOINTS_TOPOLOGY


def _problems(text: str) -> list[tuple[str | None, int | None, str]]:
    with pytest.raises(ConfigError) as caught:
        parse_topology(text, "/etc/topo.env")
    error = caught.value
    found = error.problems if isinstance(error, ConfigErrors) else [error]
    return [(p.variable, p.line, str(p)) for p in found]


def _line_of(text: str, key: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(key + "="):
            return number
    raise AssertionError(key)


def test_the_single_port_form_is_one_endpoint_named_none() -> None:
    t = parse_topology(SMALL_TOPOLOGY)
    assert [(e.label, e.name, e.prefix) for e in t.model_endpoints()] == [
        ("alpha", None, "ALPHA"),
        ("beta", None, "BETA"),
    ]
    alpha = t.providers[0]
    assert not alpha.multi_endpoint
    only = alpha.endpoints[0]
    assert (only.model_port, only.local_port, only.routing_key, only.model_container) == (
        9000,
        9000,
        "model-api-alpha",
        "hosted-model",
    )
    assert t.model_endpoint("alpha") == only
    assert t.model_endpoint("alpha/chat") is None


def test_each_endpoint_has_its_own_port_key_local_port_profiles_and_container() -> None:
    t = parse_topology(TWO_ENDPOINTS_TOPOLOGY)
    alpha = t.providers[0]
    assert alpha.multi_endpoint
    rows = [
        (e.label, e.model_port, e.local_port, e.routing_key, e.default_profile, e.model_container)
        for e in alpha.endpoints
    ]
    assert rows == [
        ("alpha/chat", 9000, 9000, "model-api-alpha-chat", "a-big", "hosted-model-chat"),
        ("alpha/embed", 9001, 9001, "model-api-alpha-embed", "a-embed", "hosted-model-embed"),
    ]
    # the host's profiles are every endpoint's; each profile names its endpoint
    assert list(alpha.profiles) == ["a-big", "a-small", "a-embed"]
    assert alpha.endpoint_of_profile("a-embed") == alpha.endpoints[1]
    assert t.model_endpoint("alpha/embed") == alpha.endpoints[1]
    assert t.model_endpoint("alpha") is None  # a host with endpoints is named with one
    assert {"alpha/chat", "alpha/embed"} <= set(t.target_names())


def test_an_endpoint_keeps_the_settings_it_is_given() -> None:
    text = TWO_ENDPOINTS_TOPOLOGY + (
        "ALPHA_MODEL_HOST=10.1.0.5\n"
        "ALPHA_EMBED_LOCAL_PORT=9501\n"
        "ALPHA_EMBED_ROUTING_KEY=embeddings\n"
        "ALPHA_EMBED_MODEL_CONTAINER=\n"
        "ALPHA_EMBED_MODEL_API_KEY_FILE=/keys/embed.key\n"
    )
    chat, embed = parse_topology(text).providers[0].endpoints
    assert chat.model_host == embed.model_host == "10.1.0.5"  # the host's, by default
    assert (embed.local_port, embed.routing_key, embed.model_container) == (
        9501,
        "embeddings",
        None,
    )
    assert str(embed.model_api_key_file) == "/keys/embed.key"
    assert chat.model_api_key_file is None


def test_endpoint_mistakes_are_reported_together_with_line_and_variable() -> None:
    text = (
        TWO_ENDPOINTS_TOPOLOGY.replace(
            'ALPHA_ENDPOINTS="chat embed"', 'ALPHA_ENDPOINTS="chat embed Not_A_Name"'
        )
        .replace("ALPHA_EMBED_MODEL_PORT=9001", "ALPHA_EMBED_MODEL_PORT=9000")
        .replace("BETA_MODEL_PORT=10000", "BETA_MODEL_PORT=1OOOO")
        + "ALPHA_EMBED_ROUTING_KEY=model-api-alpha-chat\n"
        + "ALPHA_PROFILES=x=y\n"
        + "ALPHA_EMBED_PROFILE=a\n"
    )
    found = _problems(text)
    variables = [(variable, line) for variable, line, _ in found]
    assert variables == sorted(variables, key=lambda v: v[1] or 0)
    expected = {
        "ALPHA_ENDPOINTS": "endpoint name",
        "ALPHA_EMBED_MODEL_PORT": "already the model port of alpha/chat",
        "BETA_MODEL_PORT": "1-65535",
        "ALPHA_EMBED_ROUTING_KEY": "already used by alpha/chat",
        "ALPHA_PROFILES": "set ALPHA_<ENDPOINT>_PROFILES",
        "ALPHA_EMBED_PROFILE": "did you mean ALPHA_EMBED_PROFILES?",
    }
    for variable, words in expected.items():
        lines = [(line, said) for v, line, said in found if v == variable]
        assert lines, (variable, found)
        line, said = lines[0]
        assert line == _line_of(text, variable), (variable, found)
        assert words in said, (variable, said)


def test_two_endpoints_on_one_local_port_or_a_key_two_hosts_use() -> None:
    same_local = TWO_ENDPOINTS_TOPOLOGY + "ALPHA_EMBED_LOCAL_PORT=10000\n"
    [(variable, _, said)] = _problems(same_local)
    assert variable == "BETA_MODEL_PORT" and "already used by alpha/embed" in said
    shared_key = TWO_ENDPOINTS_TOPOLOGY + "BETA_ROUTING_KEY=model-api-alpha-embed\n"
    [(variable, _, said)] = _problems(shared_key)
    assert variable == "BETA_ROUTING_KEY" and "already used by alpha/embed" in said


def test_an_endpoint_prefix_that_is_another_hosts_is_refused() -> None:
    text = TWO_ENDPOINTS_TOPOLOGY.replace(
        'PROVIDER_HOSTS="alpha beta"', 'PROVIDER_HOSTS="alpha beta alpha-chat"'
    ) + (
        "ALPHA_CHAT_SSH_HOST=127.207.0.4\n"
        "ALPHA_CHAT_PUBLIC_HOST=127.207.0.4\n"
        "ALPHA_CHAT_INTER_ROUTER_PORT=8000\n"
    )
    found = _problems(text)
    assert any(v == "ALPHA_ENDPOINTS" and "ALPHA_CHAT_" in said for v, _, said in found), found


def test_an_endpoint_list_that_names_one_twice_or_none() -> None:
    twice = TWO_ENDPOINTS_TOPOLOGY.replace('"chat embed"', '"chat embed chat"')
    assert any("twice" in said for v, _, said in _problems(twice) if v == "ALPHA_ENDPOINTS")
    empty = TWO_ENDPOINTS_TOPOLOGY.replace('"chat embed"', '""')
    assert any("no endpoint" in said for v, _, said in _problems(empty) if v == "ALPHA_ENDPOINTS")


def test_cluster_listeners_name_an_endpoint() -> None:
    text = TWO_ENDPOINTS_TOPOLOGY + (
        "CRC_SITE_NAME=crc-test\nCRC_ALPHA_EMBED_PORT=8101\nCRC_ALPHA_CHAT_PORT=8100\n"
        "CRC_BETA_PORT=8102\n"
    )
    kube = parse_topology(text).kubernetes
    assert kube is not None
    assert kube.listeners == {"alpha/embed": 8101, "alpha/chat": 8100, "beta": 8102}
    by_key = TWO_ENDPOINTS_TOPOLOGY + (
        "CRC_SITE_NAME=crc-test\nCRC_MODEL_PORT=8100\nCRC_ROUTING_KEY=model-api-alpha-embed\n"
    )
    kube = parse_topology(by_key).kubernetes
    assert kube is not None and kube.listeners == {"alpha/embed": 8100}
    # a host with endpoints has no listener of its own name
    whole = TWO_ENDPOINTS_TOPOLOGY + "CRC_SITE_NAME=crc-test\nCRC_ALPHA_PORT=8100\n"
    assert [v for v, _, _ in _problems(whole)] == ["CRC_ALPHA_PORT"]


def test_the_agent_is_told_the_endpoints_it_may_name() -> None:
    from skupper_mcp.naming import Names
    from skupper_mcp.server import instructions

    names = Names.of(parse_topology(TWO_ENDPOINTS_TOPOLOGY))
    assert names.endpoints == ("alpha/chat", "alpha/embed")
    assert "alpha/chat, alpha/embed" in names.model_routes()
    assert "model endpoints (alpha/chat, alpha/embed" in instructions(names)
    single = Names.of(parse_topology(SMALL_TOPOLOGY))
    assert single.endpoints == () and "several model endpoints" not in instructions(single)


def test_mistakes_of_every_kind_are_named_in_one_error_not_in_rounds() -> None:
    """A host with a bad value of its own does not hide the clashes across hosts: names,
    values, ports, keys, profiles and pools are all checked in the one run, each mistake
    with its line, its variable and what to do (before, the port and key clashes came out
    only once every host parsed: a second and a third run)."""
    text = (
        TWO_ENDPOINTS_TOPOLOGY.replace(
            "ALPHA_EMBED_MODEL_PORT=9001", "ALPHA_EMBED_MODEL_PORT=9000"
        ).replace("BETA_INTER_ROUTER_PORT=55671", "BETA_INTER_ROUTER_PORT=5567x")
        + "ALPHA_EMBED_MODLE_HOST=127.0.0.1\n"
        + "ALPHA_EMBED_LOCAL_PORT=45671\n"
        + "BETA_ROUTING_KEY=model-api-alpha-chat\n"
        + 'POOLS="granite"\nPOOL_GRANITE_PROVIDERS="alpha beta"\nPOOL_GRANITE_LOCAL_PORT=10000\n'
        + "ALPHA_RERANK_MODEL_PORT=9005\n"
        + "ALPHA_EMBD_PROFILES=x=y\n"
        + 'BETA_PROFILES="b-fast=org/beta-fast a-embed=org/x"\n'
    ).replace('BETA_PROFILES="b-fast=org/beta-fast"\n', "")
    with pytest.raises(ConfigErrors) as caught:
        parse_topology(text, "/etc/topo.env")
    error = caught.value
    found = [(p.variable, p.line, str(p)) for p in error.problems]
    expected = {
        "ALPHA_EMBED_MODEL_PORT": "already the model port of alpha/chat",
        "BETA_INTER_ROUTER_PORT": "expected 1-65535",
        "ALPHA_EMBED_MODLE_HOST": "did you mean ALPHA_EMBED_MODEL_HOST?",
        "ALPHA_EMBED_LOCAL_PORT": "router port (LOCAL_EDGE_PORT",
        "BETA_ROUTING_KEY": "already used by alpha/chat",
        "POOL_GRANITE_LOCAL_PORT": "already used by beta",
        "ALPHA_RERANK_MODEL_PORT": "'rerank' is not one of ALPHA_ENDPOINTS (chat embed)",
        "ALPHA_EMBD_PROFILES": "did you mean ALPHA_EMBED_PROFILES?",
        "BETA_PROFILES": "also a profile of alpha/embed",
    }
    for variable, words in expected.items():
        said = [(line, message) for v, line, message in found if v == variable]
        assert said, (variable, found)
        line, message = said[0]
        assert line == _line_of(text, variable), (variable, found)
        assert words in message and "/etc/topo.env" in message, (variable, message)
    assert len(found) == len(expected), found
    # the one error's text names every one, in the file's order
    text_of_all = str(error)
    assert all(variable in text_of_all for variable in expected)


def test_an_endpoint_variable_of_a_single_port_host_says_how_to_declare_endpoints() -> None:
    [(variable, _, said)] = _problems(SMALL_TOPOLOGY + "ALPHA_EMBED_MODEL_PORT=9001\n")
    assert variable == "ALPHA_EMBED_MODEL_PORT"
    assert 'ALPHA_ENDPOINTS="chat embed"' in said and "set by ALPHA_MODEL_PORT" in said
