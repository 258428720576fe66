"""Model pools: parsed from topology.env with every problem at once, turned into the
resources each site holds, read back into status rows, and chosen among by the sandbox's
router as the real one does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skupper_mcp.engine.desired.podman import hub_resources, local_base_resources
from skupper_mcp.engine.pools import pool_rows, serving_after_down
from skupper_mcp.errors import ConfigError, ConfigErrors
from skupper_mcp.results import LinkStatus, SiteCondition, SiteStatus
from skupper_mcp.topology import Topology, parse_topology
from skupper_sandbox.router.config import TcpEndpoint
from skupper_sandbox.router.config import parse as parse_router_config
from skupper_sandbox.router.multiaddress import choose_address
from topology_samples import SMALL_TOPOLOGY

ANY_POOL = 'POOLS="chat"\nPOOL_CHAT_PROVIDERS="alpha b-fast"\nPOOL_CHAT_LOCAL_PORT=9100\n'


def topology(extra: str) -> Topology:
    return parse_topology(SMALL_TOPOLOGY + extra, Path("topology.env"))


def problems(extra: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        topology(extra)
    error = caught.value
    found = error.problems if isinstance(error, ConfigErrors) else [error]
    return [str(e) for e in found]


def test_an_any_pool_names_its_members_by_host_or_profile_in_order() -> None:
    [pool] = topology(ANY_POOL).pools
    assert (pool.name, pool.local_port, pool.routing_key, pool.strategy) == (
        "chat",
        9100,
        "pool-chat",
        "any",
    )
    assert [(m.provider, m.profile) for m in pool.members] == [
        ("alpha", "a-big"),
        ("beta", "b-fast"),
    ]


def test_every_problem_of_a_pool_is_reported_at_once() -> None:
    found = problems(
        'POOLS="chat bad_ chat"\n'
        'POOL_CHAT_PROVIDERS="alpha nope"\n'
        "POOL_CHAT_STRATEGY=fastest\n"
        "POOL_CHAT_WEIGHTS=alpha=2\n"
        "POOL_CHAT_PORT=9100\n"
    )
    text = "\n".join(found)
    assert "POOLS: lists pool 'chat' twice" in text
    assert "'bad_' is not valid" in text
    assert "'nope' is no provider host or profile: alpha, beta" in text
    assert "'fastest' is not a strategy" in text
    assert "weights are for strategy weighted, not any" in text
    assert "required: the local port of pool chat" in text
    assert "POOL_CHAT_PORT: unknown variable; did you mean POOL_CHAT_CRC_PORT?" in text


def test_priority_and_weighted_are_refused_below_skupper_2_2() -> None:
    [problem] = problems(ANY_POOL + "POOL_CHAT_STRATEGY=priority\n")
    assert "POOL_CHAT_STRATEGY: strategy priority needs a MultiKeyListener" in problem
    assert "SKUPPER_MIN_VERSION=2.2.0" in problem
    [pool] = topology(ANY_POOL + "POOL_CHAT_STRATEGY=priority\nSKUPPER_MIN_VERSION=2.2.0\n").pools
    assert pool.strategy == "priority"


def test_a_pool_port_key_or_name_that_is_taken_is_refused() -> None:
    [port] = problems(ANY_POOL.replace("9100", "9000"))
    assert "local port 9000 is already used by alpha" in port
    [key] = problems(ANY_POOL + "POOL_CHAT_ROUTING_KEY=model-api-alpha\n")
    assert "is alpha's own routing key" in key
    [name] = problems(ANY_POOL.replace("chat", "a-big").replace("CHAT", "A_BIG"))
    assert "has the name of a host or profile" in name
    [single] = problems(ANY_POOL.replace('"alpha b-fast"', "alpha"))
    assert "at least two providers" in single


def test_an_any_pool_puts_its_key_on_every_member_hub_and_one_listener_locally() -> None:
    topo = topology(ANY_POOL)
    alpha = topo.provider("alpha")
    assert alpha is not None
    connectors = [r for r in hub_resources(alpha, topo.pools) if r["kind"] == "Connector"]
    assert [(c["metadata"]["name"], c["spec"]["port"]) for c in connectors] == [
        ("model-api-alpha", 9000),
        ("pool-chat", 9000),
    ]
    [listener] = [r for r in local_base_resources(topo) if r["metadata"]["name"] == "pool-chat"]
    assert listener["kind"] == "Listener"
    assert listener["spec"] == {"routingKey": "pool-chat", "host": "0.0.0.0", "port": 9100}


def test_priority_and_weighted_pools_are_a_multikeylistener_over_the_members_own_keys() -> None:
    for strategy, keys in (
        ("priority", ["model-api-beta", "model-api-alpha"]),
        ("weighted", {"model-api-beta": 3, "model-api-alpha": 1}),
    ):
        weights = "POOL_CHAT_WEIGHTS=beta=3\n" if strategy == "weighted" else ""
        topo = topology(
            'POOLS="chat"\nPOOL_CHAT_PROVIDERS="beta alpha"\nPOOL_CHAT_LOCAL_PORT=9100\n'
            f"POOL_CHAT_STRATEGY={strategy}\nSKUPPER_MIN_VERSION=2.2.0\n{weights}"
        )
        beta = topo.provider("beta")
        assert beta is not None
        assert [r["kind"] for r in hub_resources(beta, topo.pools)].count("Connector") == 1
        [mkl] = [r for r in local_base_resources(topo) if r["kind"] == "MultiKeyListener"]
        assert mkl["metadata"]["name"] == "pool-chat"
        assert mkl["spec"] == {
            "host": "0.0.0.0",
            "port": 9100,
            "strategy": {strategy: {"routingKeys": keys}},
        }


def _site(host: str, state: SiteCondition) -> SiteStatus:
    return SiteStatus(
        host=host,
        site=f"hub-{host}",
        role="provider",
        platform="podman",
        state=state,
        reachable=True,
    )


def _link(to: str, connected: bool) -> LinkStatus:
    return LinkStatus(
        from_site="local-test",
        to_site=f"hub-{to}",
        endpoint="x:1",
        tcp_probe=connected,
        status="Ready",
        connected=connected,
    )


def test_status_says_which_backends_are_live_and_which_one_is_preferred() -> None:
    topo = topology(
        'POOLS="chat"\nPOOL_CHAT_PROVIDERS="alpha beta"\nPOOL_CHAT_LOCAL_PORT=9100\n'
        "POOL_CHAT_STRATEGY=priority\nSKUPPER_MIN_VERSION=2.2.0\n"
    )
    both = pool_rows(
        topo,
        [_site("alpha", "up"), _site("beta", "up")],
        [_link("alpha", True), _link("beta", True)],
        {"chat": True},
    )
    assert (both[0].state, both[0].preferred) == ("serving", "alpha")
    [pool] = pool_rows(
        topo,
        [_site("alpha", "stopped"), _site("beta", "up")],
        [_link("alpha", False), _link("beta", True)],
        {"chat": True},
    )
    assert (pool.state, pool.preferred) == ("degraded", "beta")
    assert [(b.provider, b.live, b.why) for b in pool.backends] == [
        ("alpha", False, "alpha is stopped"),
        ("beta", True, ""),
    ]
    [none] = pool_rows(topo, [_site("alpha", "stopped"), _site("beta", "stopped")], [], {})
    assert (none.state, none.preferred) == ("down", None)


def test_a_weighted_pools_row_says_why_its_weights_are_not_rebalanced_in_place() -> None:
    topo = topology(
        'POOLS="chat"\nPOOL_CHAT_PROVIDERS="alpha beta"\nPOOL_CHAT_LOCAL_PORT=9100\n'
        "POOL_CHAT_STRATEGY=weighted\nPOOL_CHAT_WEIGHTS=alpha=3\nSKUPPER_MIN_VERSION=2.2.0\n"
    )
    [pool] = pool_rows(
        topo,
        [_site("alpha", "up"), _site("beta", "up")],
        [_link("alpha", True), _link("beta", True)],
        {"chat": True},
    )
    assert pool.detail.startswith("new connections are shared by weight: alpha 75%, beta 25%")
    assert "not rebalanced in place" in pool.detail
    assert (
        "skupper system reload" in pool.detail
        and "drops the pool's open connections" in pool.detail
    )
    assert "site_state_renderer.go@2.2.1" in pool.detail


def test_down_says_whether_a_pool_keeps_serving() -> None:
    topo = topology(ANY_POOL)
    assert serving_after_down(topo, {"alpha"}, {"alpha", "beta"}) == [
        "pool chat (:9100) keeps serving from beta"
    ]
    [line] = serving_after_down(topo, {"alpha"}, {"alpha"})
    assert line.startswith("pool chat (:9100) stops serving")
    assert serving_after_down(topo, set(), {"alpha", "beta"}) == []


MULTI = """[
  ["router", {"id": "r", "mode": "interior"}],
  ["tcpListener", {"name": "multiAddress/p", "host": "0.0.0.0", "port": "9100",
                   "multiAddressStrategy": "priority"}],
  ["listenerAddress", {"name": "p/a", "address": "a", "value": 1,
                       "listener": "multiAddress/p"}],
  ["listenerAddress", {"name": "p/b", "address": "b", "value": 0,
                       "listener": "multiAddress/p"}]
]"""


def test_the_sandbox_router_reads_a_multi_address_listener_and_prefers_by_priority() -> None:
    [listener] = parse_router_config(MULTI).tcp_listeners
    assert (listener.strategy, listener.addresses) == ("priority", (("a", 1), ("b", 0)))
    assert choose_address(listener, lambda key: True) == "a"
    assert choose_address(listener, lambda key: key == "b") == "b"
    assert choose_address(listener, lambda key: False) is None


def test_the_sandbox_router_shares_a_weighted_listener_by_weight_among_reachable_keys() -> None:
    weighted = TcpEndpoint("w", "0.0.0.0", 1, "", "weighted", (("a", 1), ("b", 3)))

    def fixed(n: int) -> Callable[[int], int]:
        return lambda total: n

    picks = [choose_address(weighted, lambda key: True, fixed(n)) for n in range(4)]
    assert picks == ["b", "b", "b", "a"]  # decreasing weight: b takes 3 of the 4 draws
    assert choose_address(weighted, lambda key: key == "a", lambda total: 0) == "a"


def test_the_sandbox_router_refuses_a_listener_with_both_or_neither_address_and_strategy() -> None:
    both = MULTI.replace('"port": "9100",', '"port": "9100", "address": "x",')
    with pytest.raises(Exception, match="Exactly one of the 'address' or 'multiAddressStrategy'"):
        parse_router_config(both)


def test_the_diagram_lists_each_pool_with_its_members() -> None:
    from skupper_mcp.render import topology_diagram

    diagram = topology_diagram(topology(ANY_POOL))
    assert diagram.endswith(
        "POOLS:\n  chat :9100 (any, key pool-chat) over alpha/a-big, beta/b-fast"
    )


def test_an_any_pool_with_a_cluster_port_gets_a_listener_on_the_cluster_too() -> None:
    from skupper_mcp.engine.desired.cluster import base_resources

    cluster = "CRC_SITE_NAME=crc-test\nCRC_MODEL_PORT=8000\n"
    topo = topology(cluster + ANY_POOL + "POOL_CHAT_CRC_PORT=8100\n")
    [listener] = [r for r in base_resources(topo) if r["spec"].get("host") == "model-pool-chat"]
    assert listener["spec"] == {"routingKey": "pool-chat", "host": "model-pool-chat", "port": 8100}
    [taken] = problems(cluster + ANY_POOL + "POOL_CHAT_CRC_PORT=8000\n")
    assert "Kubernetes listener port 8000 is already used for alpha" in taken
    [no_cluster] = problems(ANY_POOL + "POOL_CHAT_CRC_PORT=8100\n")
    assert "needs the Kubernetes site" in no_cluster


def test_the_2_2_loader_refuses_a_multikeylistener_on_a_port_a_listener_maps() -> None:
    """What a strategy change that left the old Listener would meet at reload
    (site_state_validator.go@2.2.0:197-199); 2.1's loader ignores the kind."""
    from skupper_sandbox.emulated.skupper import site_state
    from skupper_sandbox.emulated.skupper.failure import CliFailure

    any_pool = topology(ANY_POOL)
    priority = topology(
        ANY_POOL.replace("alpha b-fast", "alpha beta")
        + "POOL_CHAT_STRATEGY=priority\nSKUPPER_MIN_VERSION=2.2.0\n"
    )
    [listener] = [r for r in local_base_resources(any_pool) if r["metadata"]["name"] == "pool-chat"]
    [mkl] = [r for r in local_base_resources(priority) if r["kind"] == "MultiKeyListener"]
    state = site_state.SiteState(
        site={"kind": "Site", "metadata": {"name": "s"}}, listeners=[listener], others=[mkl]
    )
    site_state.validate(state)
    with pytest.raises(CliFailure) as refused:
        site_state.validate_multi_key_listeners(state)
    assert str(refused.value) == (
        'failed to render site state: port 9100 is already mapped for host "0.0.0.0" '
        '(multikeylistener: "pool-chat")'
    )
    state.listeners = []
    site_state.validate_multi_key_listeners(state)


CLUSTER = "CRC_SITE_NAME=crc-test\nCRC_MODEL_PORT=8000\n"
PRIORITY = (
    'POOLS="chat"\nPOOL_CHAT_PROVIDERS="beta alpha"\nPOOL_CHAT_LOCAL_PORT=9100\n'
    "POOL_CHAT_STRATEGY=priority\nSKUPPER_MIN_VERSION=2.2.0\nPOOL_CHAT_CRC_PORT=8100\n"
)


def test_a_priority_pool_with_a_cluster_port_is_a_multikeylistener_on_the_cluster() -> None:
    """The cluster's controller makes a Service named after the host for it, as for a
    Listener (extended_bindings.go@2.2.0:212-244)."""
    from skupper_mcp.engine.desired.cluster import base_resources

    topo = topology(CLUSTER + PRIORITY)
    [mkl] = [r for r in base_resources(topo) if r["kind"] == "MultiKeyListener"]
    assert mkl["metadata"]["name"] == "pool-chat"
    assert mkl["spec"] == {
        "host": "model-pool-chat",
        "port": 8100,
        "strategy": {"priority": {"routingKeys": ["model-api-beta", "model-api-alpha"]}},
    }


def _cluster_link(to: str, connected: bool | None) -> LinkStatus:
    return LinkStatus(
        from_site="crc-test",
        to_site=to,
        endpoint="x:1",
        tcp_probe=connected,
        status="Ready",
        connected=connected,
    )


def test_the_cluster_row_reaches_hubs_through_the_local_site_with_its_controllers_word() -> None:
    """The cluster links to the local site only (no CRC_DIRECT_LINKS): a hub is live for
    it when that link and the local site's link to the hub are both up. The
    MultiKeyListener's status is read as the controller wrote it."""
    from skupper_mcp.engine.readings import ClusterReading
    from skupper_mcp.engine.scope import site_ref
    from skupper_mcp.sites.kube import KubeState

    topo = topology(CLUSTER + PRIORITY)
    local_site = topo.local.site_name
    mkl = {
        "metadata": {"name": "pool-chat"},
        "status": {
            "status": "Ready",
            "message": "OK",
            "hasDestination": True,
            "strategy": {"priority": {"routingKeysReachable": ["model-api-alpha"]}},
        },
    }
    state = KubeState(version="v1.30", site=None, multi_key_listeners={"pool-chat": mkl})
    reading = ClusterReading(site_ref(topo, "crc"), None, state)  # type: ignore[arg-type]
    [pool] = pool_rows(
        topo,
        [_site("alpha", "up"), _site("beta", "up")],
        [_link("alpha", True), _link("beta", False), _cluster_link(local_site, True)],
        {"chat": True},
        {"crc-test": reading},
    )
    cluster = pool.cluster
    assert cluster is not None
    assert (cluster.site, cluster.port, cluster.service) == (
        "crc-test",
        8100,
        "model-pool-chat.default:8100",
    )
    assert [(b.provider, b.live) for b in cluster.backends] == [("beta", False), ("alpha", True)]
    assert (cluster.state, cluster.preferred) == ("degraded", "alpha")
    assert (cluster.resource, cluster.reachable_keys, cluster.bound) == (
        "Ready",
        ["model-api-alpha"],
        True,
    )
    assert pool.resource is None  # the local site was not read here
    # the cluster's own link down: nothing is reachable from it
    [pool] = pool_rows(
        topo,
        [_site("alpha", "up"), _site("beta", "up")],
        [_link("alpha", True), _link("beta", True), _cluster_link(local_site, False)],
        {"chat": True},
    )
    assert pool.cluster is not None and pool.cluster.state == "down"
    assert pool.cluster.bound is None  # not read: the controller's word is unknown


def test_a_multikeylistener_without_destination_reads_the_same_in_every_releases_words() -> None:
    """2.2.0-2.2.1 leave a new MultiKeyListener with no destination at "Not Operational"
    (Operational set only when hasDestination changes, multikeylistener_types.go@2.2.1:
    221-228); the next release writes "No matching connectors" at once (#2498, on main).
    hasDestination is omitempty, so false is no field: the words are what there is, and
    the pool's row and state are the same for both."""
    from skupper_mcp.engine.readings import ClusterReading
    from skupper_mcp.engine.scope import site_ref
    from skupper_mcp.sites.kube import KubeState

    topo = topology(CLUSTER + PRIORITY)
    rows = {}
    for words in ("Not Operational", "No matching connectors", "not operational"):
        mkl = {
            "metadata": {"name": "pool-chat"},
            "status": {
                "status": "Pending",
                "message": words,
                "strategy": {"priority": {"routingKeysReachable": []}},
            },
        }
        state = KubeState(version="v1.30", site=None, multi_key_listeners={"pool-chat": mkl})
        reading = ClusterReading(site_ref(topo, "crc"), None, state)  # type: ignore[arg-type]
        [pool] = pool_rows(
            topo,
            [_site("alpha", "up"), _site("beta", "up")],
            [_link("alpha", True), _link("beta", True), _cluster_link(topo.local.site_name, True)],
            {"chat": True},
            {"crc-test": reading},
        )
        assert pool.cluster is not None
        rows[words] = pool.cluster
    assert {(r.destination, r.state, r.bound) for r in rows.values()} == {(False, "serving", False)}
    # the status table says what the words mean, whichever they are
    from skupper_mcp.render import status_tables
    from skupper_mcp.results import StatusResult

    for words, row in rows.items():
        status = StatusResult(sites=[], links=[], listeners=[], pools=[row], summary="s")
        table = status_tables(status)
        assert f"Pending: {words} (no connector behind it); keys reachable: none" in table["pools"]
    # without the words or the keys nothing is said; a key reachable, or Ready, is one
    from skupper_mcp.sites.resources import resource_status

    assert resource_status({"status": {"status": "Pending"}}).destination is None
    assert resource_status({"status": {"status": "Error", "message": "x"}}).destination is None
    reached = {"status": "Pending", "strategy": {"priority": {"routingKeysReachable": ["a"]}}}
    assert resource_status({"status": reached}).destination is True
    assert resource_status({"status": {"status": "Ready", "message": "OK"}}).destination is True


def test_the_controllers_multikeylistener_status_keeps_what_it_wrote_until_it_changes() -> None:
    """multikeylistener_types.go@2.2.0:214-268: Operational only when hasDestination
    changes; a weighted listener whose keys never had a connector writes no strategy."""
    from skupper_sandbox.multikey import report

    priority = {"strategy": {"priority": {"routingKeys": ["a", "b"]}}}
    weighted = {"strategy": {"weighted": {"routingKeys": {"a": 3, "b": 1}}}}
    never = report(priority, set(), {})
    assert (never.operational, never.fields) == (
        None,
        {"strategy": {"priority": {"routingKeysReachable": []}}},
    )
    assert report(weighted, set(), {}).fields == {}
    both = report(weighted, {"b", "a"}, {})
    assert both.operational == (True, "OK")
    assert both.fields == {
        "hasDestination": True,
        "strategy": {"weighted": {"routingKeysReachable": {"a": 3, "b": 1}}},
    }
    written = {
        "hasDestination": True,
        "conditions": [{"type": "Operational", "status": "True", "message": "OK"}],
    }
    assert report(priority, {"b"}, written).operational == (True, "OK")  # kept
    lost = report(priority, set(), written)
    assert lost.operational == (False, "No matching connectors")
    assert "hasDestination" not in lost.fields
    # after #2498 (main) a new listener with no destination says so at once
    assert report(priority, set(), {}, every_update=True).operational == (
        False,
        "No matching connectors",
    )


def test_the_one_resource_reader_takes_a_multikeylisteners_reachable_keys_whatever_they_hold() -> (
    None
):
    """Priority keys keep their order; weighted ones come heaviest first; a weighted status
    that never had a key reachable has no map (omitempty); anything else is not reported."""
    from skupper_mcp.sites.resources import resource_status

    def keys(strategy: object) -> tuple[str, ...] | None:
        return resource_status({"status": {"status": "Ready", "strategy": strategy}}).reachable_keys

    assert keys({"priority": {"routingKeysReachable": ["b", "a"]}}) == ("b", "a")
    assert keys({"weighted": {"routingKeysReachable": {"a": 1, "b": 3, "c": 1}}}) == ("b", "a", "c")
    assert keys({"weighted": {}}) == ()
    assert keys({"priority": {"routingKeysReachable": [1, {"x": 2}]}}) is None
    assert keys({"weighted": {"routingKeysReachable": {"a": "3"}}}) is None
    assert keys("priority") is None
    said = resource_status({"status": {"status": "Pending", "message": "Not Operational"}})
    assert (said.text, said.has_destination, said.reachable_keys) == (
        "Pending: Not Operational",
        None,
        None,
    )


def test_the_2_2_1_loader_refuses_another_strategy_for_a_running_multikeylistener() -> None:
    """site_state_validator.go@2.2.1:229-234, against the runtime site state; a new key
    order of the same strategy passes."""
    from skupper_sandbox.emulated.skupper import site_state
    from skupper_sandbox.emulated.skupper.failure import CliFailure

    def mkl(strategy: dict[str, object]) -> dict[str, object]:
        spec = {"host": "0.0.0.0", "port": 9100, "strategy": strategy}
        return {"kind": "MultiKeyListener", "metadata": {"name": "pool-chat"}, "spec": spec}

    running = [mkl({"priority": {"routingKeys": ["a", "b"]}})]
    state = site_state.SiteState(
        site={"kind": "Site", "metadata": {"name": "s"}},
        others=[mkl({"weighted": {"routingKeys": {"a": 1}}})],
    )
    with pytest.raises(CliFailure) as refused:
        site_state.validate_multi_key_listeners(state, running)
    assert str(refused.value) == (
        "failed to render site state: invalid multikeylistener: pool-chat - strategy cannot "
        "be changed"
    )
    site_state.validate_multi_key_listeners(state, [])  # 2.2.0: no such check
    state.others = [mkl({"priority": {"routingKeys": ["b", "a"]}})]
    site_state.validate_multi_key_listeners(state, running)


def test_a_pool_whose_members_have_different_keys_is_refused_with_its_line() -> None:
    """Issue 43 item 5: one port, one key sent; a member with another key file would get
    the preferred member's key (the probe's and the exports')."""
    found = problems(ANY_POOL + "ALPHA_MODEL_API_KEY_FILE=/keys/alpha.key\n")
    [problem] = found
    assert problem.startswith("topology.env:")  # the file and the pool's line
    assert "POOL_CHAT_PROVIDERS: the members have different model API keys" in problem
    assert "alpha ALPHA_MODEL_API_KEY_FILE=/keys/alpha.key" in problem
    assert "beta BETA_MODEL_API_KEY_FILE=(none)" in problem
    both = "ALPHA_MODEL_API_KEY_FILE=/keys/a.key\nBETA_MODEL_API_KEY_FILE=/keys/b.key\n"
    assert "different model API keys" in "\n".join(problems(ANY_POOL + both))
    same = "ALPHA_MODEL_API_KEY_FILE=/keys/one.key\nBETA_MODEL_API_KEY_FILE=/keys/one.key\n"
    [pool] = topology(ANY_POOL + same).pools
    assert [m.provider for m in pool.members] == ["alpha", "beta"]
