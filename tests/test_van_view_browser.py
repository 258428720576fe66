"""The VAN view in a real browser (headless Chromium): what a person sees, offline.

The page (``skupper_mcp.view.page_html``, what ``status --html`` writes) and the MCP App
(``skupper_mcp.view.app_html``, ``ui://skupper/van.html``) are loaded with the network
emulated offline. For each recorded VAN (tests/van_results.py): every site, link and
listener is there with the state it is in, the legend and the text alternative are shown,
nothing was logged as an error and no request left the page. Screenshots, wide and narrow,
are kept under ``$SKMCP_ARTEFACTS/van-view`` (else a temporary directory, printed).

Through a minimal MCP Apps host (tests/apps_host.py) the app initializes, renders the
tool-result it is sent, and its Refresh button's ``tools/call`` for ``status`` is sent and
its answer rendered. Text a host wrote (a site's detail, a link's status) stays text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import apps_protocol as P
from apps_host import call_tool_result, host_page
from browser import Browser, Page, chromium
from van_page import ELEMENTS_JS, assert_clean
from van_results import SCENARIOS, Scenario, hostile_text, provider_down

pytestmark = pytest.mark.browser

WIDE = (1280, 900)
NARROW = (400, 900)


def _view() -> Any:
    return pytest.importorskip(
        "skupper_mcp.view", reason="skupper_mcp.view (the VAN view, issue 26) is not here yet"
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    p = browser.new_page()
    yield p
    browser.close_page(p)


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = os.environ.get("SKMCP_ARTEFACTS")
    path = Path(base) / "van-view" if base else tmp_path_factory.mktemp("van-view")
    path.mkdir(parents=True, exist_ok=True)
    print(f"VAN view screenshots: {path}")
    return path


# --- What a person sees ------------------------------------------------------------------


def check_view(seen: dict[str, Any], scenario: Scenario, where: str) -> None:
    """Every site, link and listener of the scenario, in its state; legend; text."""

    def by_key(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {str(item["key"]): item for item in items}

    groups = [
        ("site", by_key(seen["sites"]), {k: v for k, v in scenario.sites.items()}),
        ("link", by_key(seen["links"]), dict(scenario.links.items())),
        ("listener", by_key(seen["listeners"]), {str(k): v for k, v in scenario.listeners.items()}),
    ]
    for kind, shown, expected in groups:
        assert set(shown) == set(expected), (
            f"{where}: {kind}s shown {sorted(shown)}, expected {sorted(expected)}"
        )
        for key, states in expected.items():
            item = shown[key]
            assert item["state"] in states, (
                f"{where}: {kind} {key} shows data-state={item['state']!r}, expected one of "
                f"{sorted(states)}"
            )
            assert item["seen"], f"{where}: {kind} {key} takes no room on the screen"
    assert seen["legend"] and seen["legend"]["seen"], f"{where}: no visible #legend"
    assert seen["legend"]["text"].strip(), f"{where}: the legend says nothing"
    assert seen["vanText"] is not None, f"{where}: no #van-text (the text alternative)"
    for host, site in ((s.host, s.site) for s in scenario.status.sites):
        text = seen["vanText"]["text"]
        assert host in text or site in text, f"{where}: #van-text does not mention {host}"
    for text in scenario.texts:
        assert text in seen["bodyText"], f"{where}: {text!r} is not shown"


def shots(page: Page, artefacts: Path, name: str, frame: int | None = None) -> None:
    for width, height in (WIDE, NARROW):
        # the page draws its diagram for the width it has: below 640 px consumers stack
        # above providers, so a narrow shot waits for that redraw and checks it happened
        layout = "narrow" if width < 640 else "wide"
        ready = f"document.querySelector('#diagram svg[data-layout=\"{layout}\"]') !== null"
        path = page.screenshot(
            artefacts / f"{name}-{width}x{height}.png",
            width,
            height,
            ready=ready,
            context_id=frame,
        )
        assert path.stat().st_size > 0
        scroll = page.evaluate("document.documentElement.scrollWidth", frame)
        assert scroll <= width + 1, f"{name} at {width}px scrolls sideways ({scroll}px wide)"
    page.call(  # back to wide for whatever the test looks at next
        "Emulation.setDeviceMetricsOverride",
        width=WIDE[0],
        height=WIDE[1],
        deviceScaleFactor=1,
        mobile=False,
    )


# --- The page (status --html) ------------------------------------------------------------


@pytest.mark.parametrize("make", SCENARIOS, ids=lambda f: f.__name__)
def test_page_shows_the_van(make, page: Page, artefacts: Path) -> None:  # type: ignore[no-untyped-def]
    view = _view()
    scenario = make()
    page.call(
        "Emulation.setDeviceMetricsOverride",
        width=WIDE[0],
        height=WIDE[1],
        deviceScaleFactor=1,
        mobile=False,
    )
    page.open(view.page_html({"status": scenario.as_dict()}))
    page.wait_for(
        "document.querySelector('[data-site]:not([data-listener])') !== null", what="a site drawn"
    )
    check_view(page.evaluate(ELEMENTS_JS), scenario, f"page {scenario.name}")
    shots(page, artefacts, f"page-{scenario.name}")
    assert_clean(page, f"page {scenario.name}")


def test_page_keeps_hostile_text_as_text(page: Page, artefacts: Path) -> None:
    view = _view()
    scenario = hostile_text()
    page.open(view.page_html({"status": scenario.as_dict()}))
    page.wait_for(
        "document.querySelector('[data-site]:not([data-listener])') !== null", what="a site drawn"
    )
    seen = page.evaluate(ELEMENTS_JS)
    check_view(seen, scenario, "hostile page")
    assert seen["images"] == 0, "a host's text made an <img> element"
    page.pump(0.3)  # an onerror would fire now
    shots(page, artefacts, "page-hostile")
    assert_clean(page, "hostile page")


# --- The MCP App, in a host ---------------------------------------------------------------


def _messages(page: Page) -> list[dict[str, Any]]:
    return page.evaluate("window.__appMessages") or []


def _open_app(page: Page, first: Scenario, refresh: Scenario | None = None) -> int:
    """Load the app in the test host; once it drew the first result, its frame's context."""
    view = _view()
    html = host_page(
        view.app_html(),
        call_tool_result(first.as_dict()),
        call_tool_result(refresh.as_dict()) if refresh else None,
    )
    page.open(html)
    page.wait_for(
        f"(window.__appMessages || []).some(m => m && m.method === {json.dumps(P.INITIALIZED)})",
        what="the app's ui/notifications/initialized",
    )
    frame = page.frame_context()
    page.wait_for(
        "document.querySelector('[data-site]:not([data-listener])') !== null",
        context_id=frame,
        what="a site drawn",
    )
    return frame


def test_app_initializes_and_renders_the_tool_result(page: Page, artefacts: Path) -> None:
    scenario = provider_down()
    frame = _open_app(page, scenario)
    messages = _messages(page)
    init = [m for m in messages if m.get("method") == P.INITIALIZE]
    assert len(init) == 1, f"expected one {P.INITIALIZE} request, got {messages}"
    assert "id" in init[0], f"{P.INITIALIZE} must be a request (with an id)"
    params = init[0].get("params") or {}
    assert params.get("protocolVersion"), f"{P.INITIALIZE} without protocolVersion: {params}"
    assert params.get("appInfo", {}).get("name"), f"{P.INITIALIZE} without appInfo: {params}"
    assert "appCapabilities" in params, f"{P.INITIALIZE} without appCapabilities: {params}"
    methods = [m.get("method") for m in messages]
    assert methods.index(P.INITIALIZE) < methods.index(P.INITIALIZED)
    assert all(m.get("jsonrpc") == "2.0" for m in messages), messages
    assert page.evaluate("window.__hostErrors") == []
    check_view(page.evaluate(ELEMENTS_JS, frame), scenario, "app")
    shots(page, artefacts, "app-provider-down", frame)
    assert_clean(page, "app")


def test_app_refresh_calls_status_and_renders_its_answer(page: Page, artefacts: Path) -> None:
    first, second = provider_down(), SCENARIOS[0]()  # rhel-ai stopped, then all up
    frame = _open_app(page, first, second)
    clicked = page.evaluate(
        """(() => {
          const b = document.querySelector('[data-action="refresh"], #refresh') ||
            Array.from(document.querySelectorAll("button")).find((el) =>
              /refresh/i.test(el.textContent + (el.getAttribute("aria-label") || "")));
          if (!b) return false;
          b.click();
          return true;
        })()""",
        frame,
    )
    assert clicked, "the app has no Refresh button"
    page.wait_for(
        f"window.__appMessages.some(m => m && m.method === {json.dumps(P.TOOLS_CALL)})",
        what="the app's tools/call",
    )
    calls = [m for m in _messages(page) if m.get("method") == P.TOOLS_CALL]
    assert len(calls) == 1, calls
    assert "id" in calls[0], "tools/call must be a request (with an id)"
    assert calls[0]["params"]["name"] == P.STATUS_TOOL, calls[0]
    page.wait_for(
        "document.querySelector('[data-site=\"rhel-ai\"]:not([data-listener])')"
        "?.getAttribute('data-state') === 'up'",
        context_id=frame,
        what="the refreshed status drawn (rhel-ai up)",
    )
    check_view(page.evaluate(ELEMENTS_JS, frame), second, "app after refresh")
    assert_clean(page, "app refresh")


def test_app_keeps_hostile_text_as_text(page: Page, artefacts: Path) -> None:
    scenario = hostile_text()
    frame = _open_app(page, scenario)
    seen = page.evaluate(ELEMENTS_JS, frame)
    check_view(seen, scenario, "hostile app")
    assert seen["images"] == 0, "a host's text made an <img> element in the app"
    page.pump(0.3)
    shots(page, artefacts, "app-hostile", frame)
    assert_clean(page, "hostile app")
