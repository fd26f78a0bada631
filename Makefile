# pifarm: `make demo` runs the app with a simulated farm; `make test` runs every test.
# Both install what they need first (Debian packages as root, then a virtualenv).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Debian packages: sshd/sudo/iproute2 for the simulated Pis, the benchmark tools they run,
# busybox to check the probe script on coreutils-free boards,
# Chromium for the browser tests, gcc for building Python wheels when needed,
# debootstrap for the i386 root of the 32-bit simulated Pis.
APT_PACKAGES := python3-venv openssh-server openssh-client sudo iproute2 procps busybox debootstrap \
	iperf3 openssl sysbench stress-ng 7zip flac lame openvpn wireguard-tools wireguard-go \
	ethtool nftables fio chromium chromium-driver gcc libc6-dev make
# bench/ scripts that check a target: the benchmark engine's (issue 7), then the campaign pages',
# the API's and the comparison page's.
ENGINE_BENCH := engine_overhead fleet_scaling campaign_create iperf3_through_pifarm known_answers \
	repeatability campaign_repeat retry_large campaign_pages api_measurements comparison_page \
	share_page
export PIFARM_PLAYWRIGHT_BROWSER ?= /usr/bin/chromium
# The suite's processes (pytest-xdist). Most heavy tests wait on simulated boards, SSH and
# browsers rather than compute, so more processes than cores still shortens the run.
TEST_PROCESSES ?= 4
# The suite runs on its own SQLite and embedded Redis, whatever the shell exports: it empties
# its Redis between tests. Each pytest-xdist process gets a data directory of its own below
# var/test (pifarm/settings.py). tests/test_team_server.py uses local servers itself.
# Bytecode cached: where the environment turns it off (PYTHONDONTWRITEBYTECODE), every test
# process compiled every module again, 6 s of each one's start.
SUITE := env -u DATABASE_URL -u REDIS_URL -u PYTHONDONTWRITEBYTECODE \
	PIFARM_DATA_DIR=$(CURDIR)/var/test $(PY) -m pytest

.PHONY: setup system venv demo test test-fast lint docs bench clean

setup: system venv

system:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages: $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

demo: setup
	$(PY) manage.py migrate --no-input -v0
	$(PY) manage.py collectstatic --no-input -v0
	$(PY) manage.py demo

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@# The layers in one direction (pyproject.toml); cycles within them: tests/test_layers.py.
	$(VENV)/bin/lint-imports
	# The 32-bit nodes' i386 root first: built once per machine and cached (~1.5 min, 600 MB).
	$(PY) -m pisim build-root
	@# Three parts. What a simulated board's speed shows depends on the host's free CPU, and
	@# Chromium drops a page's loads when a farm adds or removes its bridge (ERR_NETWORK_CHANGED)
	@# (tests/tiers.py). So: everything else in parallel; then the browser tests that start no
	@# farm, in parallel with each other only (no farm comes or goes meanwhile); then the
	@# speeds and the browser tests with a farm, one at a time. A part that PYTEST_ARGS leaves
	@# without tests (pytest's exit status 5) is no failure.
	$(SUITE) -n $(TEST_PROCESSES) -m "not measures and not browser" $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(SUITE) -n 2 -m "browser and not pisim and not measures" $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(SUITE) -m "measures or (browser and pisim)" $(PYTEST_ARGS) || [ $$? -eq 5 ]

# The loop after every change: no simulated farm, worker, browser or real tool (tests/tiers.py).
# Work stealing: a worker left with the tail of one long module hands it on to the other.
test-fast: venv
	$(SUITE) -n 2 --dist worksteal -m "not pisim and not browser and not worker and not slow" $(PYTEST_ARGS)

bench: setup
	$(PY) -m pip install -q -r requirements-bench.txt
	$(PY) bench/probe_fanout.py
	$(PY) bench/busy_board_wait.py
	$(PY) bench/input_costs.py
	$(PY) bench/sim_clock_scaling.py
	$(PY) bench/cpu_period.py
	@# The engine's figures: each script exits 1 when it misses its target; all of them run,
	@# then make fails naming those that missed.
	@missed=; for script in $(ENGINE_BENCH); do \
		$(PY) bench/$$script.py || missed="$$missed $$script"; \
	done; \
	if [ -n "$$missed" ]; then echo "targets missed:$$missed"; exit 1; fi

# docs/benchmarks.md from the catalog (tests/test_docs.py fails when it has drifted).
docs: venv
	$(PY) manage.py benchmarks --markdown > docs/benchmarks.md

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

clean:
	-$(PY) -m pisim down --all
	rm -rf var/test
