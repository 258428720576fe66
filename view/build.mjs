// Builds src/skupper_mcp/view/van.html, the VAN view, from src/van.html (the document) and
// src/van.js (its script, on the App class of @modelcontextprotocol/ext-apps): the script and
// the SDK bundled by esbuild into one inline script, so the document loads nothing at run time.
//
// The CSP names the inline script and style by their SHA-256 (no 'unsafe-inline': a script or
// handler inserted at run time does not run). The document records the SHA-256 of its inputs
// (INPUTS below, the lock file pinning every package among them): the repository's check
// (scripts/check_view_bundle.py, in `make lint`) recomputes it without node or the network, so
// an input changed without a rebuild fails there. `node build.mjs --check` rebuilds in memory
// and fails unless the committed document is byte for byte the same (CI, after `npm ci`).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const OUTPUT = join(here, "..", "src", "skupper_mcp", "view", "van.html");
// Keep in step with scripts/check_view_bundle.py.
const INPUTS = ["build.mjs", "package-lock.json", "package.json", "src/van.html", "src/van.js"];

function sha256(text, encoding = "hex") {
  return createHash("sha256").update(text, "utf8").digest(encoding);
}

// The inputs' digest: each file's path and bytes, NUL-separated, in the order above.
export function inputsDigest() {
  const hash = createHash("sha256");
  for (const name of INPUTS) {
    hash.update(name + "\0");
    hash.update(readFileSync(join(here, name)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

async function bundle() {
  const result = await build({
    entryPoints: [join(here, "src", "van.js")],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "none",
    write: false,
    charset: "utf8",
    logLevel: "warning",
  });
  // a "</script" inside the bundle would end the element early
  return result.outputFiles[0].text.trimEnd().replace(/<\/(script)/gi, "<\\/$1");
}

async function document() {
  const template = readFileSync(join(here, "src", "van.html"), "utf8");
  const script = await bundle();
  const style = template.match(/<style>([\s\S]*?)<\/style>/)[1];
  const csp = [
    "default-src 'none'",
    `script-src 'sha256-${sha256(script, "base64")}'`,
    `style-src 'sha256-${sha256(style, "base64")}'`,
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const stamp = `<!-- Built by view/build.mjs (do not edit: edit view/src and rebuild); inputs sha256:${inputsDigest()} -->`;
  return template
    .replace("<!doctype html>\n", `<!doctype html>\n${stamp}\n`)
    .replace("/*VAN_CSP*/", csp)
    .replace("<script>/*VAN_SCRIPT*/</script>", () => `<script>${script}</script>`);
}

const built = await document();
if (process.argv.includes("--check")) {
  if (readFileSync(OUTPUT, "utf8") !== built) {
    console.error(`${OUTPUT} is not what view/ builds: run \`npm ci && npm run build\` in view/`);
    process.exit(1);
  }
  console.log("van.html is what view/ builds");
} else {
  writeFileSync(OUTPUT, built);
  console.log(`wrote ${OUTPUT} (${built.length} bytes)`);
}
