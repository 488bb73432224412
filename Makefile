# The two commands of README.md: `make demo` and `make test`. Only Python 3.11 and make needed.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000

# Every dependency comes from the lock files, pinned with hashes (`make lock` regenerates them
# from pyproject.toml, keeping existing pins unless UPGRADE=1), so a fresh machine installs
# exactly what CI tested. The installer comes first, from requirements-bootstrap.lock, so the
# same lock resolves the same way whichever pip the interpreter bundles.
LOCK_FLAGS := --quiet --generate-hashes --strip-extras --allow-unsafe --no-emit-index-url \
	--no-emit-find-links $(if $(UPGRADE),--upgrade)

.PHONY: install demo test lint typecheck check clean lock

$(STAMP): pyproject.toml requirements-bootstrap.lock requirements.lock requirements-dev.lock \
		scripts/install_venv.sh
	@scripts/install_venv.sh $(PYTHON) $(VENV)
	@touch $(STAMP)

install: $(STAMP)

lock: $(STAMP)
	$(BIN)/pip-compile $(LOCK_FLAGS) --extra dev -o requirements-dev.lock pyproject.toml
	$(BIN)/pip-compile $(LOCK_FLAGS) -o requirements.lock pyproject.toml
	$(BIN)/pip-compile $(LOCK_FLAGS) -o requirements-bootstrap.lock requirements-bootstrap.in

demo: $(STAMP)
	$(BIN)/python manage.py demo --port $(PORT)

# The suite in TEST_PROCESSES processes (0: in this one); tests that start workers, inject faults
# or drive the browser run one after another in one of them (tests/lanes.py). Two on PostgreSQL;
# one on the embedded SQLite, where the whole suite in two processes still breaks the release
# guards' reinstall between tests (docs/testing.md).
TEST_PROCESSES ?= $(if $(DATABASE_URL),2,0)
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadgroup $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python manage.py makemigrations --check --dry-run

# stats/, core/ and llm/ (the settings in pyproject.toml's [tool.mypy]).
typecheck: $(STAMP)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) var
