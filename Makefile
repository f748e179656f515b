# Tokens on the Sphere — the two commands of the README, and a few more.
#   make run    install what is missing, serve on http://localhost:8501 (kernels compile in the background)
#   make test   install what is missing (incl. Debian chromium), run unit, page and browser tests
SHELL := /bin/bash
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
ADDRESS ?= 127.0.0.1
SERVE_FLAGS := --server.port $(PORT) --server.address $(ADDRESS) --server.headless true \
               --server.fileWatcherType none --browser.gatherUsageStats false
PYTEST_FLAGS ?= -q
# Numba's fallback layer "workqueue" aborts the server when sessions run parallel kernels at once;
# "threadsafe" picks OpenMP or TBB and fails loudly if neither loads (ui.server.serve sets it too).
NUMBA_LAYER := NUMBA_THREADING_LAYER=threadsafe

.PHONY: help prereqs prereqs-test run notebook serve-class test lint lint-fix test-loaded test-fast e2e screenshots bench classroom latency warm lock image-check scale-check capacity clean

help:
	@echo "make run | make notebook PAGE=<stem> | make serve-class | make test | make lint | make lint-fix | make test-loaded | make test-fast | make e2e | make screenshots | make bench | make classroom | make latency | make lock | make image-check | make scale-check | make capacity | make clean"

# What make needs before it can install anything itself (Linux, Python 3.11 with venv/pip, libgomp1;
# for the tests apt-get with root or sudo): said in words, with the command that installs it.
prereqs:
	@scripts/check_prereqs.sh $(PYTHON)
prereqs-test:
	@scripts/check_prereqs.sh --test $(PYTHON)

# The venv without pip (ensurepip alone cost ~8 s of CPU, 39 s under load, of a fresh `make run`).
$(BIN)/python:
	$(PYTHON) -m venv --without-pip $(VENV)

# Everything is installed from hashed lock files (make lock writes them from requirements*.txt):
# requirements.lock (the app), requirements-dev.lock (app + tests), requirements-uv.lock (the
# installer). pip bootstraps uv from its lock, then uv installs the rest (a fresh venv: ~4x faster
# than pip); both refuse a package that is not pinned or whose hash differs.
LOCK     := requirements.lock
DEV_LOCK := requirements-dev.lock
UV_LOCK  := requirements-uv.lock
UV       := $(BIN)/uv
UV_INSTALL = $(UV) pip install -q --require-hashes --python $(BIN)/python
LOCK_FLAGS = --generate-hashes --python-version 3.11 --universal -q --custom-compile-command "make lock" \
             $(if $(UPGRADE),--upgrade,)

# uv from its hashed lock by the host's pip (pip >= 22.3 installs into another interpreter), or, when
# the host has no such pip, by the venv's own pip (ensurepip first).
$(UV): $(UV_LOCK) | $(BIN)/python
	$(PYTHON) -m pip --python $(BIN)/python install -q --disable-pip-version-check --require-hashes \
	  --no-deps -r $(UV_LOCK) 2>/dev/null || { $(BIN)/python -m ensurepip >/dev/null && \
	  $(BIN)/python -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r $(UV_LOCK); }
	@touch $@

$(VENV)/.installed: $(LOCK) | $(UV)
	$(UV_INSTALL) -r $(LOCK)
	@touch $@

$(VENV)/.installed-dev: $(DEV_LOCK) $(LOCK) | $(UV)
	$(UV_INSTALL) -r $(DEV_LOCK)
	@$(BIN)/python -m pip --version >/dev/null 2>&1 || $(BIN)/python -m ensurepip >/dev/null  # tests, image-check use pip
	@touch $@ $(VENV)/.installed

# Regenerate the lock files from requirements*.txt (the pins there win; `make lock UPGRADE=1`
# also moves the unpinned transitive packages to their newest versions). Commit the result.
lock: | $(UV)
	$(UV) pip compile requirements.txt $(LOCK_FLAGS) -o $(LOCK)
	$(UV) pip compile requirements-dev.txt $(LOCK_FLAGS) -o $(DEV_LOCK)
	$(UV) pip compile requirements-uv.txt $(LOCK_FLAGS) -o $(UV_LOCK)

# One lesson view as a Jupyter notebook: notebooks/<PAGE>.ipynb (ignored by git), e.g.
#   make notebook PAGE=two_point LANG=zh ARGS="beta=2.5 theta0=0.8"
# The values are validated as the page validates a URL's; ANSWERS=1 adds the worked answers.
PAGE ?= two_point
LANG ?= en
ARGS ?=
# ARGS reaches the script through the environment, never through the shell (any text is safe there).
notebook: export NOTEBOOK_ARGS = $(ARGS)
notebook: $(VENV)/.installed
	$(BIN)/python scripts/make_notebook.py "$(PAGE)" --lang "$(LANG)" $(if $(ANSWERS),--answers,)

# Fill the Numba cache now (one process per core). `make run` does not wait for it: the server
# answers at once and compiles the kernels in the background (sim/warm.py, ui/server/serve.py).
warm: $(VENV)/.installed
	$(NUMBA_LAYER) $(BIN)/python -m sim.warm

run: prereqs $(VENV)/.installed
	@[ "$(ADDRESS)" = 127.0.0.1 ] || [ "$(ADDRESS)" = localhost ] || $(BIN)/python -m ui.kit.share $(PORT)
	$(NUMBA_LAYER) $(BIN)/python -m ui.server.serve $(SERVE_FLAGS)

# A classroom: serve on every network interface and print the addresses students open.
serve-class:
	@$(MAKE) --no-print-directory run ADDRESS=0.0.0.0

# Unit + page tests in two processes, then the browser tests in E2E_WORKERS processes, each with its
# own server and Chromium on free ports (a browser test mostly waits for a page: four of them keep
# two cores busy; a module with module-scoped servers or tabs stays on one worker, see
# tests/e2e/test_instructor.py). Each run prints its 25 slowest tests.
E2E_WORKERS ?= 4
PYTEST_RUN := $(NUMBA_LAYER) $(BIN)/python -m pytest $(PYTEST_FLAGS) -p no:cacheprovider --durations=25
test: prereqs-test $(VENV)/.installed-dev
	@$(MAKE) --no-print-directory lint
	@t0=$$(date +%s); scripts/ensure_chromium.sh > .ensure.log 2>&1 && scripts/ensure_redis.sh >> .ensure.log 2>&1 & \
	  apt=$$!; $(NUMBA_LAYER) $(BIN)/python -m sim.warm; w=$$?; wait $$apt; a=$$?; cat .ensure.log; rm -f .ensure.log; \
	  echo "set-up: kernels warmed while Chromium and Redis were checked/installed, $$(( $$(date +%s) - t0 )) s"; \
	  [ $$w = 0 ] && [ $$a = 0 ]
	@$(PYTEST_RUN) -n 2 --ignore=tests/e2e tests; rc=$$?; \
	  if [ $$rc = 5 ]; then echo "pytest collected no tests: that is a failure here" >&2; exit 1; fi; \
	  [ $$rc = 0 ] || exit $$rc
	@$(PYTEST_RUN) -n $(E2E_WORKERS) --dist loadgroup tests/e2e; rc=$$?; \
	  if [ $$rc = 5 ]; then echo "pytest collected no browser tests: that is a failure here" >&2; exit 1; fi; \
	  exit $$rc

# ruff's lint rules and its formatter, as pyproject.toml sets them ([tool.ruff.*]); `make lint-fix`
# applies the lint's safe fixes and formats the tree.
lint: $(VENV)/.installed-dev
	$(BIN)/python -m ruff check --no-cache .
	$(BIN)/python -m ruff format --check --no-cache .

lint-fix: $(VENV)/.installed-dev
	$(BIN)/python -m ruff check --fix .
	$(BIN)/python -m ruff format .

# The whole suite with every core kept busy by a CPU hog at normal priority: it must pass so too.
test-loaded: $(VENV)/.installed-dev
	scripts/with_hogs.sh $(MAKE) --no-print-directory test

test-fast: $(VENV)/.installed-dev
	@scripts/ensure_redis.sh
	$(NUMBA_LAYER) $(BIN)/python -m pytest $(PYTEST_FLAGS) -n 2 --ignore=tests/e2e tests

e2e: $(VENV)/.installed-dev
	@scripts/ensure_chromium.sh
	@scripts/ensure_redis.sh
	$(PYTEST_RUN) -n $(E2E_WORKERS) --dist loadgroup tests/e2e

# Full-page screenshots of every page (1400 px, both languages; 390 px) into screenshots/, for a
# person to look at: the browser tests take them only when asked (E2E_SHOTS=1).
screenshots: $(VENV)/.installed-dev
	@scripts/ensure_chromium.sh
	E2E_SHOTS=1 $(PYTEST_RUN) -n $(E2E_WORKERS) tests/e2e/test_browser.py tests/e2e/test_phone.py -k "link_language or phone"

bench: $(VENV)/.installed-dev
	@for b in bench/engine.py bench/gaussian_width.py bench/nonnormal.py bench/depth_sum.py bench/measures.py; do \
	  [ -f $$b ] && { echo "== $$b"; $(BIN)/python $$b; }; done; true

# The Docker image, built with Debian's buildah (no Docker engine needed) and proven: hadolint, non-root,
# /_stcore/health, index page, warm Numba cache, a mounted APP_PARAMS_FILE applied, every page renders.
# Needs root (apt-get, buildah chroot). Minutes the first time (debootstrap base cached in .build/):
# not part of `make test`.
image-check: $(VENV)/.installed-dev
	scripts/image_check.sh

# Three replicas behind nginx with the sticky configuration of deploy/nginx.conf, on loopback;
# one replica is killed mid-run (about 1.5 minutes). Then a class on three replicas sharing Redis:
# 30 students, push + answers, the busiest replica killed, push + answers again (about 1.5 minutes).
scale-check: $(VENV)/.installed-dev
	@scripts/ensure_redis.sh
	$(BIN)/python scripts/scale_check.py
	$(BIN)/python scripts/scale_class.py

# Optional: how many students one replica serves (steady classroom load on one server).
capacity: $(VENV)/.installed-dev
	$(BIN)/python scripts/replica_capacity.py

# Issue-7 benchmarks (minutes; not tests): 50 websocket sessions x every page, and the latency table.
classroom: $(VENV)/.installed-dev
	$(BIN)/python bench/classroom.py -n 50

latency: $(VENV)/.installed-dev
	@scripts/ensure_chromium.sh
	$(BIN)/python bench/latency.py

clean:
	rm -rf $(VENV) .pytest_cache screenshots artifacts .build
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
