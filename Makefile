# The two commands of README.md: `make demo` and `make test`. Only Python 3.11 and make needed.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000

# Every dependency comes from the lock files, pinned with hashes (`make lock` regenerates them
# from pyproject.toml, keeping existing pins unless UPGRADE=1), so a fresh machine installs
# exactly what CI tested.
LOCK_FLAGS := --quiet --generate-hashes --strip-extras --allow-unsafe --no-emit-index-url \
	--no-emit-find-links $(if $(UPGRADE),--upgrade)

.PHONY: demo test lint check clean lock

$(STAMP): pyproject.toml requirements.lock requirements-dev.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

lock: $(STAMP)
	$(BIN)/pip-compile $(LOCK_FLAGS) --extra dev -o requirements-dev.lock pyproject.toml
	$(BIN)/pip-compile $(LOCK_FLAGS) -o requirements.lock pyproject.toml

demo: $(STAMP)
	$(BIN)/python manage.py demo --port $(PORT)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) var
