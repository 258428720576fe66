PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test lint types unit e2e demo bench clean venv hostdeps

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/lint-imports

types: $(STAMP)
	$(VENV)/bin/mypy src

# Both halves run on WORKERS pytest-xdist processes: most of a test's time is waiting on
# routers and hosts, not CPU (3 on 2 cores: the e2e half leaves them about 20 % idle). A
# file's tests, and each part of the lifecycle directory (a world each), stay on one worker,
# in order (tests/conftest.py). WORKERS=0 runs them in this process.
WORKERS ?= 3

# The fast half: no sandbox world, no OpenSSH (tests/conftest.py marks what needs them).
unit: $(STAMP)
	$(VENV)/bin/pytest -q -n $(WORKERS) -m "not sandbox and not openssh"

# The end-to-end half: sandbox worlds, the lifecycle suite, MCP against a world, OpenSSH.
e2e: $(STAMP)
	$(VENV)/bin/pytest -q -n $(WORKERS) -m "sandbox or openssh"

# The machine's part of the suite (sshd, iptables, curl): installed when missing, as root.
hostdeps:
	bash scripts/host-deps.sh

test: hostdeps lint types unit e2e

demo: $(STAMP)
	$(PY) -m skupper_mcp.demo

bench: $(STAMP)
	$(PY) bench/lifecycle.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
