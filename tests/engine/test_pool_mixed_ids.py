"""Pool members that serve different model ids: one judgement (``pools.mixed_ids``) that
the pool's models row says in its reason and diagnose reports as ``pool-mixed-model-ids``,
with the members, their ids and the step that clears it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from pools import chat_pool
from skupper_mcp.engine.findings import RULES, Network
from skupper_mcp.engine.pools import mixed_ids, pool_readings
from skupper_mcp.results import Finding, ModelReading, ModelRow, PoolBackend
from skupper_mcp.topology import Topology, load_topology

STATES = Path(__file__).resolve().parent / "site_states"
POOL = ['POOLS="chat"', 'POOL_CHAT_PROVIDERS="rhel-ai rhtevan-work"', "POOL_CHAT_LOCAL_PORT=9100"]


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Topology:
    path = tmp_path_factory.mktemp("pool") / "topology.env"
    path.write_text((STATES / "topology.env").read_text() + "\n".join(POOL) + "\n")
    return load_topology(path)


def test_mixed_ids_are_different_lists_of_known_members_in_any_order() -> None:
    assert mixed_ids([("a", ["x", "y"]), ("b", ["y", "x"])]) is None
    assert mixed_ids([("a", ["x"]), ("b", [])]) is None  # b's ids not known: nothing to compare
    assert mixed_ids([("a", ["x"]), ("b", ["z"]), ("c", [])]) == [("a", ["x"]), ("b", ["z"])]


def _pool_findings(topology: Topology, served: Mapping[str, list[str] | None]) -> list[Finding]:
    net = Network(topology, {}, [], {}, dict(served))
    return [f for rule in RULES for f in rule(net) if f.id == "pool-mixed-model-ids"]


def test_members_serving_one_model_are_no_finding(topology: Topology) -> None:
    same = {"rhel-ai": ["granite"], "rhtevan-work": ["granite"]}
    assert _pool_findings(topology, same) == []
    assert _pool_findings(topology, {"rhel-ai": ["granite"], "rhtevan-work": None}) == []


def test_members_serving_different_models_are_a_warning_naming_each_and_its_fix(
    topology: Topology,
) -> None:
    served = {
        "rhel-ai": ["granite-3.3-8b-instruct-fp8"],  # its pool profile's model
        "rhtevan-work": ["llama-3.1-8b"],  # not its profile's (granite-3.3-2b-instruct)
    }
    [found] = _pool_findings(topology, served)
    assert (found.severity, found.host, found.site) == ("warning", "local", "local-sandbox")
    assert "pool chat (:9100)" in found.symptom
    assert found.evidence == [
        'rhel-ai serves "granite-3.3-8b-instruct-fp8"; its profile g8b-fp8-spec-128k in the '
        'pool names "granite-3.3-8b-instruct-fp8"',
        'rhtevan-work serves "llama-3.1-8b"; its profile g3b-16k in the pool names '
        '"granite-3.3-2b-instruct"',
    ]
    assert "POOL_CHAT_PROVIDERS" in found.fix
    steps = [(s.kind, s.action, s.profile, s.variable, s.tool) for s in found.next]
    assert steps == [
        ("hosted-model-ctl", "start", "g3b-16k", None, None),  # only the member off its profile
        ("topology", None, None, "POOL_CHAT_PROVIDERS", None),
        ("tool", None, None, None, "test_model"),
    ]


def test_the_pool_row_says_the_same_members_and_ids() -> None:
    def member(host: str, ids: list[str]) -> ModelRow:
        return ModelRow(
            model_ids=ids,
            host=host,
            profile="p",
            site=f"hub-{host}",
            listener_port=9000,
            local_base_url="http://127.0.0.1:9000/v1",
            routing_key=f"model-api-{host}",
            state="serving",
            reason="serving",
            readiness=ModelReading(state="ready", engine="vllm", reason="ready"),
        )

    backends = [
        PoolBackend(provider=h, profile="p", routing_key=f"model-api-{h}", live=True)
        for h in ("rhel-ai", "rhtevan-work")
    ]
    row = member("chat", ["granite"]).model_copy(update={"pool": chat_pool(backends)})
    members = {
        "rhel-ai": member("rhel-ai", ["granite"]),
        "rhtevan-work": member("rhtevan-work", ["llama"]),
    }
    reading = pool_readings(row, members).readiness
    assert reading is not None
    assert 'members serve different model ids (rhel-ai: "granite"; rhtevan-work: "llama")' in (
        reading.reason
    )
