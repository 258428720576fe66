"""See the VAN: the HTML document, the MCP App resource, status --html and the topology SVG.

Fast and without a browser: what the page does when it runs is the browser tests' to show.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

import apps_protocol as P
from mcp_client import served
from record_results import HOSTILE
from recorded_results import recorded_operation, recorded_status
from skupper_mcp.topology import load_topology
from skupper_mcp.view import APP_MIME_TYPE, APP_URI, app_html, page_html
from skupper_mcp.view.svg import topology_svg

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

DRAWN = {"setup", "up", "down", "status", "diagnose"}
#: The view's script, from which view/build.mjs bundles van.html.
VIEW_SOURCE = Path(__file__).parents[1] / "view" / "src" / "van.js"


def embedded(document: str) -> object:
    """The JSON page_html embedded, as the page's script reads it."""
    found = re.search(r'<script type="application/json" id="van-data">(.*?)</script>', document)
    assert found is not None
    return json.loads(found.group(1))


def hostile_status() -> dict[str, object]:
    """The status of hosts that write markup (recorded: ``record_results.py``)."""
    return recorded_status("hostile-text").model_dump(mode="json", by_alias=True)


def test_host_text_cannot_close_the_data_element() -> None:
    document = page_html({"status": hostile_status()})
    data = document.split('id="van-data">', 1)[1]
    payload = data.split("</script>", 1)[0]
    assert "<" not in payload and ">" not in payload, "the payload could open or close a tag"
    assert "onerror" in payload  # the text is there, as data
    sites = embedded(document)["status"]["sites"]  # type: ignore[index]
    assert any(HOSTILE in (site["detail"] or "") for site in sites)
    assert "<img" not in document


def test_the_page_renders_host_text_as_text_only() -> None:
    # the bundle as a whole: none of the SDK's code parses markup either
    script = app_html().split("<script>", 1)[1]
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script


def test_the_page_loads_nothing_from_the_network() -> None:
    page = page_html({"status": recorded_status()})
    # the status is data (a host's error may quote a URL, as the recorded cluster's does)
    document = re.sub(r'(id="van-data">).*?(</script>)', r"\1\2", page, flags=re.S)
    assert document != page
    # the bundled SDK names URLs (JSON Schema dialects, its docs) that it never loads: what
    # it may load is the CSP's to say (nothing), and the browser tests see that nothing is
    markup = re.sub(r"<script>.*?</script>", "<script></script>", document, flags=re.S)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", markup, re.I)
    assert not re.search(r"@import|url\(", markup)
    assert re.findall(r"https?://[^\s\"'<>]+", markup) == []
    # the view's own script: the only URL is the SVG namespace, a name, not something loaded
    assert set(re.findall(r"https?://[^\s\"'<>]+", VIEW_SOURCE.read_text())) == {
        "http://www.w3.org/2000/svg"
    }


def test_the_app_has_a_strict_csp_and_the_hooks_the_tests_use() -> None:
    document = app_html()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', document)
    assert csp is not None
    assert "default-src 'none'" in csp.group(1)
    assert "connect-src" not in csp.group(1)
    for hook in ('id="legend"', 'id="van-text"', '"data-site"', '"data-link"', '"data-listener"'):
        assert hook in document
    assert "No result yet" in document
    assert embedded(document) is None
    for method in ("ui/initialize", "ui/notifications/initialized", "ui/notifications/tool-result"):
        assert f'"{method}"' in document


def test_page_html_takes_models_and_keeps_link_aliases() -> None:
    down = recorded_operation("all-up", "down-plan")
    data = embedded(page_html({"status": recorded_status(), "down": down}))
    assert isinstance(data, dict) and list(data) == ["status", "down"]
    assert data["status"]["links"][0]["from"] == "local-sandbox"
    assert data["down"]["plan"] is True


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("declared", [True, False], ids=["apps-client", "plain-client"])
async def test_the_app_resource_and_the_tools_that_name_it(
    example_path: Path, mode: str, declared: bool
) -> None:
    """The ui:// resource with its _meta.ui (prefersBorder, a CSP that allows no domain);
    _meta.ui on the drawn tools and the app-only refresh only for a client that declared
    the extension; the extension advertised where the protocol has the field."""
    extensions = [P.apps_client_extension()] if declared else []
    async with served(example_path, mode, extensions=extensions) as client:
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        tools = (await client.list_tools()).tools
        app = await client.read_resource(APP_URI)
        svg = await client.read_resource("skupper://topology.svg")
        advertised = client.server_capabilities.extensions
        refreshed = await client.call_tool(P.REFRESH_TOOL, {})
        negotiated = client.protocol_version
    ui = {
        "prefersBorder": True,
        "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": []},
    }
    assert resources[APP_URI].mime_type == APP_MIME_TYPE == "text/html;profile=mcp-app"
    assert resources[APP_URI].meta == {"ui": ui}
    assert resources["skupper://topology.svg"].mime_type == "image/svg+xml"
    assert app.contents[0].text == app_html()  # type: ignore[union-attr]
    assert app.contents[0].mime_type == APP_MIME_TYPE
    assert app.contents[0].meta == {"ui": ui}
    ET.fromstring(svg.contents[0].text.encode())  # type: ignore[union-attr]
    if negotiated == "2026-07-28":  # 2025-11-25's ServerCapabilities has no extensions field
        # beside MCP Tasks (mcp_tasks), which every 2026-07-28 client is told of too
        assert advertised == {P.EXTENSION_ID: {}, "io.modelcontextprotocol/tasks": {}}
    meta = {t.name: t.meta for t in tools}
    if declared:
        for name in DRAWN:
            assert meta[name] == {"ui": {"resourceUri": APP_URI}}, name
        assert meta[P.REFRESH_TOOL] == {"ui": {"resourceUri": APP_URI, "visibility": ["app"]}}
        assert all(not meta[name] for name in set(meta) - DRAWN - {P.REFRESH_TOOL})
        assert not refreshed.is_error
        assert refreshed.structured_content is not None
        assert {"sites", "links", "listeners"} <= set(refreshed.structured_content)
    else:
        assert P.REFRESH_TOOL not in meta, "an app-only tool offered to a client without apps"
        assert all(not m for m in meta.values()), meta
        assert refreshed.is_error  # not theirs to call
        assert "call status instead" in refreshed.content[0].text  # type: ignore[union-attr]


@pytest.fixture
def status_html(example_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], int]:
    """``status --html TARGET`` on the recorded status (no host read): its exit code."""
    from skupper_mcp.cli import main
    from skupper_mcp.engine import Engine

    async def status(self: Engine, readiness: bool = False):
        return recorded_status()

    monkeypatch.setattr(Engine, "status", status)
    return lambda target: main(["--topology", str(example_path), "status", "--html", str(target)])


def test_status_html_writes_the_page(
    status_html: Callable[[Path], int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "van.html"
    code = status_html(target)
    assert code == 3  # rhtevan-work and the cluster are unreachable in the recording
    assert capsys.readouterr().out.strip() == f"wrote {target}"
    data = embedded(target.read_text())
    assert isinstance(data, dict)
    assert [s["host"] for s in data["status"]["sites"]] == [
        "rhel-ai",
        "rhtevan-work",
        "local",
        "crc",
    ]


def test_html_into_a_missing_directory_says_so(
    status_html: Callable[[Path], int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "nowhere" / "van.html"
    assert status_html(target) == 2
    assert "cannot write" in capsys.readouterr().err


def test_the_svg_names_every_host_and_escapes_them(example_path: Path) -> None:
    topology = load_topology(example_path)
    picture = topology_svg(topology)
    root = ET.fromstring(picture.encode())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    sites = {g.get("data-site") for g in root.iter("{http://www.w3.org/2000/svg}g")}
    hosts = {topology.local.name, *(p.name for p in topology.providers)}
    if topology.kubernetes is not None:
        hosts.add(topology.kubernetes.name)
    assert hosts <= sites
    assert "<script" not in picture
    # a name with markup in it stays text
    hostile = topology.model_copy(
        update={"local": topology.local.model_copy(update={"site_name": "<b>&x</b>"})}
    )
    text = "".join(ET.fromstring(topology_svg(hostile).encode()).itertext())
    assert "<b>&x</b>" in text


@pytest.mark.parametrize("verb", sorted(DRAWN))
def test_the_drawn_verbs_take_html(verb: str) -> None:
    from skupper_mcp.cli import build_parser

    args = build_parser().parse_args([verb, "--html", "van.html"])
    assert args.html == Path("van.html")


def test_other_verbs_do_not_take_html() -> None:
    from skupper_mcp.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["logs", "local", "--html", "van.html"])


# --- The view reads the typed fields (issue 30) ------------------------------------------


def _script() -> str:
    """The view's own script, as written (the bundle minifies it; that the bundle is built
    from it is scripts/check_view_bundle.py's to say)."""
    return VIEW_SOURCE.read_text()


def _array(name: str) -> list[str]:
    found = re.search(rf"var {name} = \[([^\]]*)\]", _script())
    assert found is not None, f"van.html lost its {name} list"
    return re.findall(r'"([^"]+)"', found.group(1))


def test_the_view_compares_no_host_text() -> None:
    """What is drawn comes from the typed fields, never from a host's words: no read of the
    unit, container or controller text, no lower-casing or matching of a link's status."""
    script = _script()
    assert "toLowerCase" not in script
    assert not re.search(r"\.(container|router|controller)\b", script)
    assert not re.search(r"\.test\(\s*str\(l\.status\)", script)
    assert not re.search(r"\.status\)\s*===", script)
    for field in ("x.state", "l.connected", "x.state_reason"):
        assert field in script, f"the view does not read {field}"


def test_the_view_draws_every_site_condition() -> None:
    from typing import get_args

    from skupper_mcp.results import SiteCondition

    conditions = list(get_args(SiteCondition))
    assert _array("STATES")[: len(conditions)] == conditions
    assert "not-reported" in _array("STATES") and "not-read" in _array("STATES")


def _colours(block: str) -> dict[str, str]:
    return dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-f]{6})", block))


def _contrast(a: str, b: str) -> float:
    def lum(colour: str) -> float:
        def channel(i: int) -> float:
            c = int(colour[i : i + 2], 16) / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_each_state_has_a_colour_of_its_own_that_reads(scheme: str) -> None:
    """Each coloured site state (all but not-reported, drawn as a dashed outline): its own
    colour, its name on it at 4.5:1 at least (WCAG AA text), and 3:1 against a box."""
    style = app_html().split("<style>", 1)[1].split("</style>", 1)[0]
    light, dark = style.split("@media (prefers-color-scheme: dark)", 1)
    dark, host_dark = dark.split(':root[data-theme="dark"]', 1)
    # the host's dark theme and the system's are the same colours
    assert _colours(dark) == _colours(host_dark.split("}", 1)[0])
    colours = _colours(light if scheme == "light" else dark)
    states = [s for s in _array("STATES") if s != "not-reported"]
    by_state = {s: colours[s] for s in states}
    assert len(set(by_state.values())) == len(by_state), f"two states share a colour: {by_state}"
    for state, colour in by_state.items():
        assert _contrast(colour, colours["on-state"]) >= 4.5, (scheme, state)
        assert _contrast(colour, colours["box"]) >= 3, (scheme, state)


def test_page_html_draws_diagnose_and_plans_as_they_are() -> None:
    from van_results import diagnose_findings, up_plan_after_down

    diagnose, plan = diagnose_findings(), up_plan_after_down()
    data = embedded(page_html({"diagnose": diagnose.status, "up": plan.status}))
    assert isinstance(data, dict)
    # what the engine said, carried as it said it (router-killed's diagnose, provider-down's plan)
    assert [s.get("state") for s in data["diagnose"]["sites"]] == ["stale", "up", "up"]
    assert data["up"]["plan"] is True
    assert [s["changed"] for s in data["up"]["sites"]] == [True, False, False]


def _bundle_check():
    import importlib.util

    path = Path(__file__).parents[1] / "scripts" / "check_view_bundle.py"
    spec = importlib.util.spec_from_file_location("check_view_bundle", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_view_is_the_build_of_view_and_its_csp_names_its_code() -> None:
    """What make lint checks, and that the check can fail: an edited script, a CSP with
    'unsafe-inline', an input changed since the build."""
    check = _bundle_check()
    document = app_html()
    assert check.problems(document) == []
    edited = document.replace("<script>", "<script>window.x=1;", 1)
    assert any("hash of the inline script" in p for p in check.problems(edited))
    loose = document.replace("script-src ", "script-src 'unsafe-inline' ", 1)
    assert any("'unsafe-inline'" in p for p in check.problems(loose))
    stale = re.sub(r"inputs sha256:[0-9a-f]{64}", "inputs sha256:" + "0" * 64, document)
    assert any("other inputs" in p for p in check.problems(stale))
