"""Check, without node or the network, that src/skupper_mcp/view/van.html is the build of view/.

view/build.mjs bundles the VAN view (view/src, on the pinned @modelcontextprotocol/ext-apps)
into van.html and records there the SHA-256 of its inputs. This recomputes that digest from
the files as they are, so an input edited (or a package re-pinned) without a rebuild fails
here; and it checks that the CSP's hashes are those of the inline script and style, so the
document a host loads runs its script under a CSP without 'unsafe-inline'. Where view/'s
packages are installed (``npm ci`` in view/), `make lint` also rebuilds in memory and compares
byte for byte (``node build.mjs --check``).
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VIEW = ROOT / "view"
BUNDLE = ROOT / "src" / "skupper_mcp" / "view" / "van.html"
#: Keep in step with INPUTS in view/build.mjs.
INPUTS = ("build.mjs", "package-lock.json", "package.json", "src/van.html", "src/van.js")
STAMP = re.compile(r"<!-- Built by view/build\.mjs [^>]*; inputs sha256:([0-9a-f]{64}) -->")
CSP = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')


def inputs_digest() -> str:
    digest = hashlib.sha256()
    for name in INPUTS:
        digest.update(name.encode() + b"\0")
        digest.update((VIEW / name).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def problems(document: str) -> list[str]:
    found: list[str] = []
    stamp = STAMP.search(document)
    if stamp is None:
        found.append("van.html carries no build stamp: it was not built by view/build.mjs")
    elif stamp.group(1) != inputs_digest():
        found.append(
            "van.html was built from other inputs than view/ holds now: "
            "run `npm ci && npm run build` in view/ and commit van.html"
        )
    csp = CSP.search(document)
    if csp is None:
        return [*found, "van.html has no Content-Security-Policy"]
    policy = {d.split()[0]: d.split()[1:] for d in csp.group(1).split("; ")}
    scripts = re.findall(r"<script>(.*?)</script>", document, re.S)
    styles = re.findall(r"<style>(.*?)</style>", document, re.S)
    if policy.get("default-src") != ["'none'"]:
        found.append("the CSP's default-src is not 'none'")
    if "'unsafe-inline'" in csp.group(1) or "'unsafe-eval'" in csp.group(1):
        found.append("the CSP allows 'unsafe-inline' or 'unsafe-eval'")
    if policy.get("script-src") != [sha256_source(s) for s in scripts]:
        found.append("the CSP's script-src is not the hash of the inline script")
    if policy.get("style-src") != [sha256_source(s) for s in styles]:
        found.append("the CSP's style-src is not the hash of the inline style")
    return found


def main() -> int:
    found = problems(BUNDLE.read_text(encoding="utf-8"))
    for problem in found:
        print(f"{BUNDLE.relative_to(ROOT)}: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
