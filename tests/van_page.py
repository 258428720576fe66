"""What the VAN view's browser tests read off a page: every element of the view's DOM
contract with its state, and whether the page stayed clean (no console error, no request
out, no dialog). Shared by the view's tests and the lifecycle's status --html test."""

from __future__ import annotations

from browser import Page

#: Every element of the contract, with its state and whether it takes room on the screen.
ELEMENTS_JS = """(() => {
  const seen = (el) => { const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return (r.width > 0 || r.height > 0) && s.visibility !== "hidden" && s.display !== "none"; };
  // a listener's row may also say which site it is on: a site is [data-site] alone
  const all = (attr, not) => Array.from(document.querySelectorAll(
      "[" + attr + "]" + (not ? ":not([" + not + "])" : ""))).map((el) => ({
    key: el.getAttribute(attr), state: el.getAttribute("data-state"), seen: seen(el),
    plan: el.getAttribute("data-plan"), text: el.textContent }));
  const one = (sel) => { const el = document.querySelector(sel);
    return el ? {seen: seen(el), text: el.textContent} : null; };
  return {sites: all("data-site", "data-listener"), links: all("data-link"),
    listeners: all("data-listener"),
    legend: one("#legend"), vanText: one("#van-text"), where: one("#where"),
    planned: one("#plan"),
    body: document.body ? document.body.innerText : "",
    bodyText: document.body ? document.body.textContent : "",
    images: document.querySelectorAll("img").length,
    scrollWidth: document.documentElement.scrollWidth};
})()"""

#: Each site's box (its state, its plan, its text and its findings) and the lines above the
#: diagram: where the VAN is now, what a plan would change, the lifecycle stage marked.
SITES_JS = """(() => {
  const out = {};
  document.querySelectorAll("[data-site]:not([data-listener])").forEach((g) => {
    out[g.getAttribute("data-site")] = {state: g.getAttribute("data-state"),
      plan: g.getAttribute("data-plan"), text: g.textContent,
      findings: Array.from(g.querySelectorAll("[data-finding]")).map((f) =>
        [f.getAttribute("data-finding"), f.getAttribute("data-severity")])};
  });
  return {sites: out, where: document.getElementById("where").textContent,
    plan: document.getElementById("plan").textContent,
    now: (document.querySelector("#lifecycle li.now") || {}).textContent || null};
})()"""


def assert_clean(page: Page, where: str) -> None:
    page.pump()
    assert page.console_errors == [], f"{where}: errors in the console: {page.console_errors}"
    assert page.left_the_page() == [], f"{where}: requests left the page: {page.left_the_page()}"
    assert page.dialogs == [], f"{where}: dialogs opened: {page.dialogs}"
