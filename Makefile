PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help client-tools test test-first test-worlds lint types unit e2e lifecycle demo bench clean venv hostdeps view view-packages bytecode

# Both distributions of the repository, editable: the product with what the tests need, and
# the sandbox (sandbox/: the simulator the tests and the demo run against).
$(STAMP): pyproject.toml sandbox/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]' -e ./sandbox
	touch $(STAMP)

venv: $(STAMP)

# What each target does (the tests: docs/testing.md; the code: docs/architecture.md)
help:
	@echo "make demo       a sandbox VAN, then setup --check, setup (twice), up, status, test-model,"
	@echo "                down --plan, down of one provider and down, each printed (sandbox/src/skupper_sandbox/demo.py)"
	@echo "make test       hostdeps, lint, types, unit (test-first), then e2e and lifecycle (test-worlds)"
	@echo "make lint       ruff check and format, import-linter's contracts, shellcheck, the VAN view's build check"
	@echo "make types      mypy over src, sandbox/src and tests"
	@echo "make unit       the tests that need no world, build, browser or product process (WORKERS=3)"
	@echo "make e2e        sandbox worlds, OpenSSH, processes, the wheel, the browser; not tests/lifecycle (E2E_WORKERS=4)"
	@echo "make lifecycle  tests/lifecycle on this machine's real podman where it runs (LIFECYCLE_WORKERS=2)"
	@echo "make bytecode   compile src and sandbox/src once (e2e, lifecycle and demo do it first)"
	@echo "make hostdeps   what the end-to-end suite needs from the machine (scripts/host-deps.sh, as root)"
	@echo "make venv       .venv with both distributions, editable; make clean removes it"
	@echo "make client-tools  the LiteLLM proxy, opencode and cn in .tools/ for the exports' tests (. .tools/env)"
	@echo "make view       rebuild src/skupper_mcp/view/van.html from view/ (npm ci, then node build.mjs)"
	@echo "make bench      bench/lifecycle.py: setup, up and down timed on 2 and 8 providers"

lint: $(STAMP)
	$(VENV)/bin/ruff check src sandbox/src tests bench
	$(VENV)/bin/ruff format --check src sandbox/src tests bench
	# the product's functions stay under McCabe 15 (the emulation's parsers of podman's and
	# systemd's own options are not held to it)
	$(VENV)/bin/ruff check --select C901 --config 'lint.mccabe.max-complexity=15' src
	$(VENV)/bin/lint-imports
	# every tracked script (not CI's) is POSIX sh: the product's run on any host, and the
	# repository's own under the machine's sh
	shellcheck -s sh src/skupper_mcp/scripts/*.sh
	git ls-files -z '*.sh' ':!:.ci/' ':!:src/skupper_mcp/scripts/' | xargs -0 -r shellcheck -s sh
	# the VAN view (src/skupper_mcp/view/van.html) is the build of view/: its recorded inputs
	# digest and its CSP hashes, without node or the network; rebuilt and compared byte for
	# byte too where view/'s packages are installed (make view-packages: npm ci, as CI does)
	$(PY) scripts/check_view_bundle.py
	if [ -d view/node_modules ]; then cd view && node build.mjs --check; fi

# view/'s pinned packages (@modelcontextprotocol/ext-apps, esbuild) from its lock file: to
# rebuild the view (make view), and for the browser tests' AppBridge host
view-packages:
	cd view && npm ci --no-audit --no-fund

# The real tools the exports are for, in .tools/ (about 1.2 GB; `. .tools/env` points the
# tests at them): tests/sandbox/test_exports_in_tools.py skips, saying so, without them
client-tools:
	sh scripts/client-tools.sh .tools

# Rebuild src/skupper_mcp/view/van.html from view/src (commit the result)
view: view-packages
	cd view && node build.mjs

types: $(STAMP)
	$(VENV)/bin/mypy src sandbox/src
	$(VENV)/bin/mypy tests

# The three parts run on pytest-xdist processes (WORKERS, E2E_WORKERS, LIFECYCLE_WORKERS):
# most of an e2e test's time is waiting on routers and hosts, not CPU. On 2 cores the e2e
# part left them 32 % idle on 3 workers and takes 7:02 instead of 7:49 on 4 (25 % idle); the
# unit part gains nothing past 3. A file's tests, and each part of the lifecycle directory (a
# world each), stay on one worker, in order (tests/conftest.py). WORKERS=0 runs each part in
# this process.
WORKERS ?= 3
E2E_WORKERS ?= $(if $(filter 0,$(WORKERS)),0,4)

# The fast half: no sandbox world or component (tests/sandbox/), no OpenSSH, no build, no
# browser, no Python process of the product started (tests/conftest.py marks what needs them).
unit: $(STAMP)
	$(VENV)/bin/pytest -q -n $(WORKERS) -m "not sandbox and not openssh and not packaging and not browser and not spawns"

# The end-to-end half: sandbox worlds and the simulator's components (real routers, the
# podman and systemd imitations), MCP against a world, OpenSSH, the CLI and the stdio and
# HTTP servers as processes,
# the wheel built (python -m build) and installed in a fresh venv (tests/test_wheel.py), and
# the VAN view in headless Chromium (tests/test_van_view_browser.py).
# The browser tests keep their screenshots of the VAN view here (SKMCP_ARTEFACTS), for a
# person to look at after the run: each recorded case at 1280 and 400 px, and status --html
# drawn from a live sandbox.
ARTEFACTS ?= $(CURDIR)/artefacts

# The e2e half's worlds keep the emulated podman unless a test asks for real
# (tests/sandbox/test_real_podman_world.py does); the lifecycle suite runs after it, on its
# own, on this machine's real podman where it runs a container (auto; docs/sandbox.md 4a):
# its root host rootful, the other hosts rootless under Unix users made for the world.
# Inside the e2e half's four workers on 2 cores, two runs in three lost a lifecycle world's
# setup to SSH channels that did not open within the product's 5 s: the product's own event
# loop was held 5-13 s by the kubernetes client's import while a channel's answer waited, and
# the deadline counted wall time. Both are fixed (docs/sandbox.md 4a). Run beside the e2e
# half, the two took 19 minutes against 20 one after the other (docs/testing.md): together
# they are CPU-bound, so the lifecycle stays apart. `make lifecycle LIFECYCLE_PODMAN=real`
# fails where real podman cannot run (scripts/host-deps.sh installs podman, runc and
# uidmap); `emulated` runs it on the imitation.
# The worlds' halves print their slowest steps (a world's setup is its first test's setup):
# what a run's log needs to show where its time went (docs/testing.md, "Where the time goes")
DURATIONS ?= --durations=15 --durations-min=20
SANDBOX_PODMAN ?= emulated
LIFECYCLE_PODMAN ?= auto
LIFECYCLE_WORKERS ?= $(if $(filter 0,$(WORKERS)),0,2)

# The product's and the sandbox's modules compiled once before the worlds' half and the demo, into their
# __pycache__ (ignored by git): the half starts a Python process of them for every CLI call,
# sandbox daemon and model server, and where PYTHONDONTWRITEBYTECODE is set (as in some
# shells and containers) each start compiled every module it imports from source again,
# about 0.2 s of CPU each (docs/testing.md, "Where the time goes"). compileall writes them
# whatever that variable says and skips a module whose compiled form is current.
bytecode: $(STAMP)
	$(PY) -m compileall -q src sandbox/src

e2e: $(STAMP) bytecode
	SKMCP_SANDBOX_PODMAN=$(SANDBOX_PODMAN) SKMCP_ARTEFACTS=$(ARTEFACTS) $(VENV)/bin/pytest -q -n $(E2E_WORKERS) $(DURATIONS) --ignore=tests/lifecycle -m "sandbox or openssh or packaging or browser or spawns"

lifecycle: $(STAMP) bytecode
	SKMCP_LIFECYCLE_PODMAN=$(LIFECYCLE_PODMAN) SKMCP_SANDBOX_PODMAN=$(SANDBOX_PODMAN) SKMCP_ARTEFACTS=$(ARTEFACTS) $(VENV)/bin/pytest -q -n $(LIFECYCLE_WORKERS) $(DURATIONS) tests/lifecycle

# The machine's part of the suite (sshd, iptables, curl, a C compiler, chromium, the login
# shells, shellcheck, podman with runc and uidmap): installed when missing, as root.
hostdeps:
	sh scripts/host-deps.sh

# make test in two stages: what needs no world (hostdeps, lint, types, unit), then the
# worlds' half (e2e, then lifecycle). .ci/run downloads the client tools beside the first:
# only the second needs them. (lint beside types would save only lint's own time: 1.4 s of
# CPU against mypy's 38 s, fresh, on this machine; unit keeps both cores busy by itself.)
test-first: hostdeps lint types unit

test-worlds: e2e lifecycle

test:
	$(MAKE) --no-print-directory test-first
	$(MAKE) --no-print-directory test-worlds

demo: $(STAMP) bytecode
	$(PY) -m skupper_sandbox.demo

bench: $(STAMP)
	$(PY) bench/lifecycle.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
