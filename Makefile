PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test lint types unit demo bench clean venv hostdeps

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

unit: $(STAMP)
	$(VENV)/bin/pytest -q

# The machine's part of the suite (sshd, iptables, curl): installed when missing, as root.
hostdeps:
	bash scripts/host-deps.sh

test: hostdeps lint types unit

demo: $(STAMP)
	$(PY) -m skupper_mcp.demo

bench: $(STAMP)
	$(PY) bench/lifecycle.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
