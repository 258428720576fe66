"""The diagram, the Markdown resources and the CLI tables show the topology's real values."""

from __future__ import annotations

from pathlib import Path

import pytest

from recorded_results import recorded_status
from skupper_mcp.render import (
    check_text,
    diagnose_text,
    markdown_table,
    status_markdown,
    status_text,
    text_table,
    topology_diagram,
    topology_markdown,
    wrap_text,
)
from skupper_mcp.results import (
    Check,
    CheckResult,
    DiagnoseResult,
    Finding,
    ListenerStatus,
    NextStep,
    StatusResult,
)
from skupper_mcp.topology import load_topology


def test_diagram_has_the_van_tree_with_real_values(example_path: Path) -> None:
    diagram = topology_diagram(load_topology(example_path))
    lines = diagram.splitlines()
    assert lines[0] == "LOCAL: local-ezhang (localhost, podman)"
    assert "  ├── link → hub-rhel-ai" in lines
    assert "  │     port:  8000 (AMQPS)" in lines
    assert "  │     Listener :9000 ← model-api-rhel-ai" in lines
    assert "  └── link → hub-rhtevan-work" in lines
    assert "CRC: crc-ezhang (kubernetes, skupper-models, context crc-admin)" in lines
    # rhtevan-work reaches the cluster through the local site (no direct link)
    local_link = lines.index("  └── link → local-ezhang")
    assert "host.crc.testing (192.168.127.254)" in lines[local_link + 1]
    assert "Listener :8001 ← model-api-rhtevan-work" in "\n".join(lines[local_link:])
    assert "Service: model-listener-rhtevan-work.skupper-models:8001" in diagram


def test_topology_markdown_has_diagram_sites_and_routing(example_path: Path) -> None:
    text = topology_markdown(load_topology(example_path))
    assert "```\nLOCAL: local-ezhang" in text
    assert "| hub-rhel-ai | rhel-ai | podman | provider | 8000 | 9000 |" in text
    assert "| rhtevan-work | 10000 | model-api-rhtevan-work | g3b-16k | g3b-16k, g3b-4k |" in text


def test_text_table_aligns_columns() -> None:
    table = text_table(["A", "Long header"], [["value", 1], [None, True]])
    lines = table.splitlines()
    assert lines[0] == "A      Long header"
    assert lines[2] == "value  1"
    assert lines[3] == "-      yes"


def test_markdown_table_escapes_pipes() -> None:
    assert markdown_table(["x"], [["a|b"]]).splitlines()[2] == "| a\\|b |"


def test_status_markdown_shows_each_sites_state_and_why() -> None:
    """router-killed's status as the engine gave it: rhel-ai stale, its link not connected."""
    status = recorded_status("router-killed")
    stale = next(s for s in status.sites if s.host == "rhel-ai")
    assert stale.state == "stale" and stale.state_reason, stale
    text = status_markdown(status)
    assert (
        f"| rhel-ai | hub-rhel-ai | provider | podman | stale ({stale.state_reason}) | "
        f"{stale.controller} | {stale.router} | {stale.container} |" in text
    )
    link = next(link for link in status.links if link.to_site == "hub-rhel-ai")
    assert link.connected is False, link
    assert (
        f"| {link.from_site} | hub-rhel-ai | {link.endpoint} | no | not connected ({link.status}) |"
        in text
    )
    for action in status.model_actions:
        assert f"- {action.action} `{action.profile}` on {action.host}: {action.reason}" in text
    assert status.model_actions, "the recorded status has no hosted-model-ctl action"
    assert f'"from": "{link.from_site}"' in status.model_dump_json(indent=1)


def test_check_text_shows_failures_and_hints() -> None:
    result = CheckResult(
        topology="DIAGRAM",
        checks=[Check(name="ssh", site="rhel-ai", status="fail", detail="refused", hint="fix it")],
        ok=False,
        summary="1 failed",
    )
    text = check_text(result)
    assert text.startswith("DIAGRAM")
    assert "rhel-ai  ssh    FAIL    refused  fix it" in text
    assert text.endswith("precheck FAILED: 1 failed")


@pytest.mark.parametrize("width", [80, 120])
def test_status_text_fits_the_terminal(width: int) -> None:
    status = recorded_status()
    unlimited = status_text(status)
    assert max(map(len, unlimited.splitlines())) > 120  # what a pipe gets: one line per row
    text = status_text(status, width)
    assert max(map(len, text.splitlines())) <= width
    words = ("hub-rhtevan-work", "127.231.238.3:55671", "timed", "g8b-fp8-spec-128k", "stale")
    for word in words:
        assert word in text, word  # wrapped, not cut off


def test_a_narrow_table_wraps_long_cells_within_their_column() -> None:
    table = text_table(["Host", "Detail"], [["gpu2", "connect timed out after 5.0s"]], 20)
    assert table.splitlines() == [
        "Host  Detail",
        "----  --------------",
        "gpu2  connect timed",
        "      out after 5.0s",
    ]


def test_a_table_too_wide_for_its_columns_becomes_blocks() -> None:
    headers = ["Host", "Controller", "Router", "Container", "Reachable"]
    table = text_table(headers, [["gpu1", "active", "active", "running", True]], 30)
    assert table.splitlines() == [
        "Host:       gpu1",
        "Controller: active",
        "Router:     active",
        "Container:  running",
        "Reachable:  yes",
    ]


def test_a_table_that_fits_is_unchanged_by_a_width() -> None:
    rows: list[list[str | int | bool | None]] = [["value", 1], [None, True]]
    assert text_table(["A", "Long header"], rows, 80) == text_table(["A", "Long header"], rows)


def test_diagnose_text_wraps_each_line_under_its_label() -> None:
    finding = Finding(
        id="link-refused",
        site="hub-gpu2",
        host="gpu2",
        severity="error",
        symptom="the link to hub-gpu2 is down",
        evidence=["router: connection refused by 198.51.100.7:55671 " * 3],
        cause="nothing listens on the inter-router port of gpu2 " * 2,
        fix="start the router on gpu2",
        next=[NextStep(kind="tool", text='up(target="gpu2")', tool="up")],
    )
    result = DiagnoseResult(target="all", findings=[finding], ok=False, summary="1 error")
    text = diagnose_text(result, 80)
    assert max(map(len, text.splitlines())) <= 80
    assert "    evidence: router: connection refused" in text
    assert "\n              " in text  # a wrapped line continues under its text, not its label
    assert len(diagnose_text(result).splitlines()) < len(text.splitlines())


def test_a_closing_listener_is_told_apart_from_a_serving_one() -> None:
    from skupper_mcp.engine.listeners import closing, listener_row
    from skupper_mcp.facts.router_release import route_hold
    from skupper_mcp.render import operation_text, status_text
    from skupper_mcp.results import OperationResult

    state = closing("rhel-ai", "local", 5, route_hold(None, None))
    lingering = listener_row("local", 9000, "k-a", True, "rhel-ai", state)
    serving = ListenerStatus(
        site="local", port=10000, routing_key="k-b", bound=True, provider="b", state="serving"
    )
    down = OperationResult(
        operation="down", target="rhel-ai", ok=True, sites=[], summary="s", listeners=[lingering]
    )
    text = operation_text(down)
    assert "listener :9000 (rhel-ai) on local: closing: bound, but rhel-ai's router" in text
    assert "within 58 s" in text
    status = status_text(
        StatusResult(sites=[], links=[], listeners=[lingering, serving], summary="s")
    )
    assert "State" in status and "closing" in status and "serving" in status


def test_status_shows_each_listeners_model_and_url() -> None:
    """The model ids the provider's site read listed, and the base URL to call them at."""
    status = recorded_status("all-up")
    local = [li for li in status.listeners if li.site == "local-sandbox"]
    assert local and all(li.model_ids and li.base_url for li in local)
    markdown = status_markdown(status)
    text = status_text(status)
    for li in local:
        assert li.base_url is not None
        assert li.base_url.endswith(f":{li.port}/v1")
        for shown in (markdown, text):
            assert li.base_url in shown
        assert li.model_ids[0] in text


def test_a_table_never_cuts_a_word_or_an_address() -> None:
    rows = [["local", "127.231.238.3:55671", "connect timed out after 5.0s"]]
    table = text_table(["Host", "Endpoint", "Detail"], rows, 40)
    assert "127.231.238.3:55671" in table and "timed" in table
    assert max(map(len, table.splitlines())) <= 40
    for line in table.splitlines():
        assert line == line.rstrip()


def test_a_table_whose_words_cannot_fit_becomes_blocks_before_it_would_cut_one() -> None:
    rows = [["hub-rhtevan-work", "127.231.238.3:55671", "connected"]]
    table = text_table(["Site", "Endpoint", "Status"], rows, 30)
    assert table.splitlines()[0].startswith("Site:")  # the "Header: value" layout
    assert "127.231.238.3:55671" in table and "hub-rhtevan-work" in table


def test_a_word_wider_than_the_terminal_stands_whole_under_its_header() -> None:
    path = "/home/someone/.local/share/skupper/namespaces/default/runtime"
    table = text_table(["Host", "Path"], [["gpu1", path]], 30)
    assert table.splitlines() == ["Host: gpu1", "Path:", path]


def test_a_summary_wraps_at_spaces_to_the_width() -> None:
    text = "down: rhel-ai; up: local (changed 1 of 2 sites); local listener :9000 closing"
    wrapped = wrap_text(text, 30)
    assert max(map(len, wrapped.splitlines())) <= 30
    assert wrapped.split() == text.split()
    assert wrap_text(text, None) == text


@pytest.mark.parametrize("render", [status_text, status_markdown])
def test_a_healthy_sites_state_cell_says_up_once_not_its_controller_and_router_again(
    render: object,
) -> None:
    """The State cell of a healthy site is ``up``: that its router runs under its unit and
    the controller runs is what the Controller and Router cells say; the JSON keeps it."""
    status = recorded_status("all-up")
    assert {s.state for s in status.sites} == {"up"}
    assert all(s.state_reason for s in status.sites)  # the JSON still says why
    text = render(status)  # type: ignore[operator]
    assert "the router runs under its unit" not in text, text
    assert "active (running)" in text


def test_a_site_that_came_back_by_itself_still_says_so_in_its_state_cell() -> None:
    from skupper_mcp.render import _state_text
    from skupper_mcp.vocabulary import SITE_UP_CLUSTER, SITE_UP_PODMAN

    back = "it came back by itself after the host rebooted (no up since the last up)"
    assert _state_text("up", f"{SITE_UP_PODMAN}; {back}") == f"up ({back})"
    assert _state_text("up", SITE_UP_CLUSTER) == "up"
    assert _state_text("stopped", "stopped by down, as asked") == (
        "stopped (stopped by down, as asked)"
    )
