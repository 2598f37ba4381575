# Set-up and checks. Every target installs what it needs first (venvs, the package, its extras).
PYTHON_VERSIONS ?= 3.11 3.12 3.13
PYTEST_ARGS ?= -x -q
SHELL := /bin/bash

.PHONY: test fuzz demo bench gpu-wheels gpu-check clean

# .venv-X.Y/.stamp is rebuilt when pyproject.toml changes; when only the C hook changes (setup.py,
# src/sot/_eval_frame.c) the package is reinstalled in place, which rebuilds the extension.
.venv-%/.stamp: pyproject.toml setup.py src/sot/_eval_frame.c
	@if [ -f $@ ] && [ -z "$(filter pyproject.toml,$?)" ]; then \
	  .venv-$*/bin/python -m pip install -q -e '.[test,examples]' && touch $@; exit $$?; \
	fi; \
	py=$$(scripts/find-python $*); \
	if [ -z "$$py" ]; then echo "python$* not found"; exit 1; fi; \
	rm -rf .venv-$*; "$$py" -m venv .venv-$* && \
	.venv-$*/bin/python -m pip install -q --upgrade pip && \
	.venv-$*/bin/python -m pip install -q -e '.[test,examples]' && touch $@

test:
	@ran=0; failed=""; \
	for v in $(PYTHON_VERSIONS); do \
	  if [ -z "$$(scripts/find-python $$v)" ]; then echo "== Python $$v: not found, skipped"; continue; fi; \
	  echo "== Python $$v"; \
	  if ! $(MAKE) -s .venv-$$v/.stamp; then failed="$$failed $$v(setup)"; continue; fi; \
	  ran=$$((ran+1)); \
	  HYPOTHESIS_PROFILE=ci SOT_STRICT=1 .venv-$$v/bin/python -m pytest $(PYTEST_ARGS) tests || failed="$$failed $$v"; \
	done; \
	if [ $$ran -eq 0 ]; then echo "no supported Python (3.11-3.13) found"; exit 1; fi; \
	if [ -n "$$failed" ]; then echo "FAILED on:$$failed"; exit 1; fi; \
	echo "all tests passed on $$ran Python version(s)"

.venv/.stamp: pyproject.toml setup.py src/sot/_eval_frame.c
	@py=""; for v in 3.11 3.13 3.12; do py=$$(scripts/find-python $$v); [ -n "$$py" ] && break; done; \
	if [ -z "$$py" ]; then echo "no supported Python (3.11-3.13) found"; exit 1; fi; \
	rm -rf .venv; "$$py" -m venv .venv && .venv/bin/python -m pip install -q --upgrade pip && \
	.venv/bin/python -m pip install -q -e '.[test,examples]' && touch $@

# The Hypothesis tests with fresh random examples (the "explore" profile of tests/conftest.py) on one Python.
fuzz: .venv/.stamp
	HYPOTHESIS_PROFILE=explore .venv/bin/python -m pytest $(PYTEST_ARGS) $$(grep -l '^from hypothesis' tests/test_*.py)

demo: .venv/.stamp
	@mkdir -p build
	.venv/bin/sot run --report build/sot-report.json examples/train_mlp.py
	.venv/bin/sot report build/sot-report.json

# First the side-by-side table (PaddlePaddle and PyTorch beside ours where .venv has them), then each benchmark.
bench: .venv/.stamp
	.venv/bin/python benchmarks/side_by_side.py
	@for f in benchmarks/[!_]*.py; do [ $$f = benchmarks/side_by_side.py ] && continue; \
	  echo "== $$f"; .venv/bin/python $$f || exit 1; done

# The wheel a GPU machine without a package index lacks (Python 3.12, x86-64), for scripts/gpu-check.
gpu-wheels: .venv/.stamp
	.venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
	  --platform manylinux2014_x86_64 -d .whl "bytecode==$$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("bytecode"))')"

# On a machine with a GPU: build the hook, run the tests marked gpu and benchmarks/gpu.py (see the script).
gpu-check:
	scripts/gpu-check

clean:
	rm -rf .venv .venv-* build src/*.egg-info
