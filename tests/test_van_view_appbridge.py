"""The MCP App in headless Chromium as hosts drive it: through the official ``AppBridge``
(tests/appbridge_host.py, from the ext-apps version view/ pins) and through the minimal test
host (tests/apps_host.py).

What a host asks of the view: it follows the host's theme (the initialize result's, then
``host-context-changed``); it refreshes through the app-only ``view_refresh`` tool, and shows
no Refresh to a host that cannot call server tools; it offers full screen only where the
host does; it posts nothing to a parent whose origin it cannot tell (never to ``"*"``); its
CSP has no ``'unsafe-inline'``, so a script or handler inserted at run time does not run.
Screenshots at 1280 and 400 px, dark, are kept with the other view screenshots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import apps_protocol as P
from appbridge_host import bridge_page, require_appbridge
from apps_host import HOST_URL, call_tool_result, host_page
from browser import Page
from van_page import ELEMENTS_JS, assert_clean
from van_results import SCENARIOS, Scenario, provider_down

pytestmark = pytest.mark.browser

WIDE = (1280, 900)
NARROW = (400, 900)
HOSTS = ["appbridge", "test-host"]
#: The page background of each theme (view/src/van.html's --bg).
BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(22, 25, 29)"}

SITE_DRAWN = "document.querySelector('[data-site]:not([data-listener])') !== null"

#: What the view shows of itself: theme, background, its two buttons, the CSP.
SEEN_JS = """(() => {
  const shown = (id) => { const el = document.getElementById(id);
    return !!el && !el.hidden && el.getBoundingClientRect().width > 0; };
  const csp = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
  return {theme: document.documentElement.getAttribute("data-theme"),
    background: getComputedStyle(document.body).backgroundColor,
    refresh: shown("refresh"), fullscreen: shown("fullscreen"),
    fullscreenText: document.getElementById("fullscreen").textContent,
    displayMode: document.documentElement.getAttribute("data-display-mode"),
    message: document.getElementById("message").textContent,
    csp: csp ? csp.getAttribute("content") : null};
})()"""


def _size(page: Page, size: tuple[int, int]) -> None:
    page.resize(*size)


def open_in_host(
    page: Page,
    host: str,
    first: Scenario,
    refresh: Scenario | None = None,
    *,
    capabilities: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
) -> int:
    """The view in ``host`` (appbridge or test-host), drawn; its frame's context."""
    from skupper_mcp.view import app_html

    _size(page, WIDE)
    result = call_tool_result(first.as_dict())
    answer = call_tool_result((refresh or first).as_dict())
    if host == "appbridge":
        require_appbridge()
        html = bridge_page(
            app_html(),
            result,
            {P.REFRESH_TOOL: answer},
            host_capabilities=capabilities,
            host_context=context,
        )
    else:
        html = host_page(
            app_html(), result, answer, host_capabilities=capabilities, host_context=context
        )
    page.serve(HOST_URL, html)
    page.open(HOST_URL)
    frame = page.frame_context()
    page.wait_for(SITE_DRAWN, context_id=frame, what="a site drawn", timeout=20)
    # the buttons are decided once the initialize answer is in
    page.wait_for(
        f"(window.__appMessages || []).some(m => m && m.method === {json.dumps(P.INITIALIZED)})",
        what="ui/notifications/initialized",
    )
    return frame


def seen(page: Page, frame: int) -> dict[str, Any]:
    value = page.evaluate(SEEN_JS, frame)
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("host", HOSTS)
def test_the_view_follows_the_host_theme(host: str, page: Page) -> None:
    frame = open_in_host(page, host, provider_down(), context={"theme": "dark"})
    now = seen(page, frame)
    assert (now["theme"], now["background"]) == ("dark", BACKGROUND["dark"]), now
    for theme in ("light", "dark"):
        change = {"theme": theme}
        if host == "appbridge":
            page.evaluate(f"window.__setHostContext({json.dumps(change)})")
        else:
            page.evaluate(f"window.__hostContextChanged({json.dumps(change)})")
        page.wait_for(
            f"getComputedStyle(document.body).backgroundColor === {json.dumps(BACKGROUND[theme])}",
            context_id=frame,
            what=f"the {theme} background after host-context-changed",
        )
    assert_clean(page, f"{host}: theme")


@pytest.mark.parametrize("host", HOSTS)
def test_refresh_goes_through_the_app_only_tool(host: str, page: Page) -> None:
    first, second = provider_down(), SCENARIOS[0]()  # rhel-ai stopped, then all up
    frame = open_in_host(page, host, first, second)
    page.wait_for("!document.getElementById('refresh').hidden", context_id=frame)
    page.evaluate("document.getElementById('refresh').click()", frame)
    page.wait_for(
        "document.querySelector('[data-site=\"rhel-ai\"]:not([data-listener])')"
        "?.getAttribute('data-state') === 'up'",
        context_id=frame,
        what="the refreshed status drawn (rhel-ai up)",
    )
    calls = [
        m["params"]["name"]
        for m in page.evaluate("window.__appMessages")
        if isinstance(m, dict) and m.get("method") == P.TOOLS_CALL
    ]
    assert calls == [P.REFRESH_TOOL], calls
    if host == "appbridge":
        assert page.evaluate("window.__toolCalls") == [P.REFRESH_TOOL]
    assert_clean(page, f"{host}: refresh")


@pytest.mark.parametrize("host", HOSTS)
def test_no_refresh_for_a_host_that_cannot_call_tools(host: str, page: Page) -> None:
    frame = open_in_host(page, host, provider_down(), capabilities={"logging": {}})
    page.pump(0.3)
    now = seen(page, frame)
    assert now["refresh"] is False, "Refresh shown to a host without serverTools"
    assert now["fullscreen"] is False, "Full screen shown to a host that offers only inline"
    assert_clean(page, f"{host}: no serverTools")


def test_full_screen_where_the_host_offers_it(page: Page) -> None:
    context = {"displayMode": "inline", "availableDisplayModes": ["inline", "fullscreen"]}
    frame = open_in_host(page, "appbridge", provider_down(), context=context)
    page.wait_for("!document.getElementById('fullscreen').hidden", context_id=frame)
    page.evaluate("document.getElementById('fullscreen').click()", frame)
    page.wait_for(
        "document.documentElement.getAttribute('data-display-mode') === 'fullscreen'",
        context_id=frame,
        what="the view in full screen",
    )
    assert seen(page, frame)["fullscreenText"] == "Exit full screen"
    page.evaluate("document.getElementById('fullscreen').click()", frame)
    page.wait_for(
        "document.documentElement.getAttribute('data-display-mode') === 'inline'",
        context_id=frame,
        what="the view back inline",
    )
    assert page.evaluate("window.__displayModes") == ["fullscreen", "inline"]
    assert_clean(page, "full screen")


def test_the_csp_has_hashes_and_an_inserted_script_does_not_run(page: Page) -> None:
    frame = open_in_host(page, "appbridge", provider_down())
    csp = seen(page, frame)["csp"]
    assert csp is not None and "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp, csp
    assert "script-src 'sha256-" in csp and "style-src 'sha256-" in csp, csp
    page.evaluate(
        """(() => {
          const s = document.createElement("script");
          s.textContent = "window.__inserted = 'script ran'";
          document.body.appendChild(s);
          const img = document.createElement("img");
          img.setAttribute("onerror", "window.__inserted = 'handler ran'");
          img.setAttribute("src", "data:,not-an-image");
          document.body.appendChild(img);
          const b = document.createElement("b");
          b.setAttribute("style", "color: rgb(1, 2, 3)");
          document.body.appendChild(b);
        })()""",
        frame,
    )
    page.pump(0.5)
    assert page.evaluate("window.__inserted === undefined", frame), "an inserted script ran"
    assert (
        page.evaluate("getComputedStyle(document.querySelector('body > b')).color", frame)
        != "rgb(1, 2, 3)"
    ), "an inserted style attribute applied"
    refused = [e for e in page.console_errors if "Content Security Policy" in e]
    assert refused, f"the CSP refused nothing: {page.console_errors}"


def test_a_parent_of_unknown_origin_is_sent_nothing(page: Page) -> None:
    """A data: page's origin is opaque: the view cannot name it as postMessage's target, and
    it posts to no one rather than to "*"."""
    from skupper_mcp.view import app_html

    scenario = provider_down()
    page.open(host_page(app_html(), call_tool_result(scenario.as_dict())))
    frame = page.frame_context()
    page.wait_for(
        "document.getElementById('message').textContent.includes('origin')",
        context_id=frame,
        what="the view saying it cannot tell its host's origin",
    )
    page.pump(0.5)
    assert page.evaluate("window.__appMessages") == [], "the view posted to a parent it cannot name"


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["1280", "400"])
def test_dark_screenshots_through_the_appbridge(
    size: tuple[int, int], page: Page, artefacts: Path
) -> None:
    scenario = SCENARIOS[0]()
    frame = open_in_host(page, "appbridge", scenario, context={"theme": "dark"})
    layout = "narrow" if size[0] < 640 else "wide"
    path = page.screenshot(
        artefacts / f"appbridge-dark-{size[0]}x{size[1]}.png",
        *size,
        ready=f"document.querySelector('#diagram svg[data-layout=\"{layout}\"]') !== null",
        context_id=frame,
    )
    assert path.stat().st_size > 0
    found = page.evaluate(ELEMENTS_JS, frame)
    assert found["scrollWidth"] <= size[0] + 1, f"scrolls sideways at {size[0]} px"
    assert {s["key"] for s in found["sites"]} >= set(scenario.sites)
    assert seen(page, frame)["background"] == BACKGROUND["dark"]
    cut = page.evaluate(
        "Array.from(document.querySelectorAll('#diagram text'))"
        ".map((t) => t.textContent).filter((t) => t.endsWith('\u2026'))",
        frame,
    )
    assert cut == [] or all(not t.startswith(":") for t in cut), f"cut off: {cut}"
    listeners = page.evaluate(
        "Array.from(document.querySelectorAll('[data-listener]')).map((g) => g.textContent)",
        frame,
    )
    for port in scenario.listeners:
        line = next(t for t in listeners if t.startswith(f":{port}"))
        # its last word drawn whole: the state, or the model's base URL after it
        assert "serving" in line, f"the listener line lost its state: {line!r}"
        assert line.rstrip().endswith(("serving", "/v1")), f"the listener line is cut: {line!r}"
    if layout == "narrow":  # each link written in its dialling box, naming where it goes
        rows = page.evaluate(
            "Array.from(document.querySelectorAll('[data-link-row]')).map((g) =>"
            " [g.getAttribute('data-link-row'), g.getAttribute('data-state'), g.textContent])",
            frame,
        )
        assert {r[0] for r in rows} == set(scenario.links), rows
        assert all(r[1] == "connected" and r[2].endswith(": connected") for r in rows), rows
    assert_clean(page, f"appbridge dark {size[0]}")
