#!/usr/bin/env bash
# Make (or bring up to date) the project's venv from the hashed lock files.
#
# usage: scripts/install_venv.sh PYTHON VENV
#
# The installer is installed first, from its own hashed lock: a venv made by any Python 3.11
# starts with whatever pip that interpreter bundles, and an old pip resolves a lock differently
# (pip 23.2 treats an extra such as `google-auth[requests]` as a separate, unpinned requirement,
# so the install then depends on what the registry holds that day). Every step's output goes to
# VENV/install.log; on this kind of machine pip warns once per package about registry locations
# it skips, so a failure is shown without those lines, with the log's path and what to do.
set -euo pipefail

python="${1:?usage: install_venv.sh PYTHON VENV}"
venv="${2:?usage: install_venv.sh PYTHON VENV}"
root="$(cd "$(dirname "$0")/.." && pwd)"
log="$venv/install.log"
noise='is ignored: it is neither a file nor a directory'

step() {  # step "what it does" command...
  local what="$1"
  shift
  printf '  %s\n' "$what"
  printf '\n## %s\n$ %s\n' "$what" "$*" >>"$log"
  local start
  start=$(wc -l <"$log")
  if ! "$@" >>"$log" 2>&1; then
    printf '\n' >&2
    # The failing step's own output, without the registry-location warnings.
    tail -n "+$((start + 1))" "$log" | grep -v -e "$noise" | tail -n 40 >&2
    printf '\nInstall failed while: %s.\n' "$what" >&2
    printf 'What to do: the error is above and the full output is in %s; check that the package\n' "$log" >&2
    printf 'registry is reachable, then run `make clean` and the same make command again.\n' >&2
    exit 1
  fi
}

if [ ! -x "$venv/bin/python" ]; then
  if ! "$python" -m venv "$venv" 2>/tmp/install-venv-$$.err; then
    cat /tmp/install-venv-$$.err >&2
    rm -f /tmp/install-venv-$$.err
    printf '\nCould not make a venv with %s: install Python 3.11 with its venv module\n' "$python" >&2
    printf '(on Debian: apt-get install python3.11-venv), or name one with make PYTHON=/path/to/python3.11.\n' >&2
    exit 1
  fi
  rm -f /tmp/install-venv-$$.err
fi
: >"$log"

echo "Installing into $venv (full output: $log)"
pip_install=("$venv/bin/python" -m pip install --quiet --no-input --require-hashes)
step "the installer (pip, setuptools, wheel) from requirements-bootstrap.lock" \
  "${pip_install[@]}" --no-deps -r "$root/requirements-bootstrap.lock"

# The bootstrap must have taken before anything else is resolved with it.
want="$(sed -n 's/^pip==\([^ ]*\).*/\1/p' "$root/requirements-bootstrap.lock")"
have="$("$venv/bin/python" -m pip --version | cut -d' ' -f2)"
if [ "$have" != "$want" ]; then
  printf 'The venv runs pip %s, not the locked %s: the installer bootstrap did not take.\n' \
    "$have" "$want" >&2
  printf 'What to do: run `make clean` and the same make command again.\n' >&2
  exit 1
fi

step "the locked packages from requirements-dev.lock" \
  "${pip_install[@]}" -r "$root/requirements-dev.lock"
step "the project itself (editable)" \
  "$venv/bin/python" -m pip install --quiet --no-input --no-deps --no-build-isolation -e "$root"
echo "Installed: pip $have and $(grep -c '^[A-Za-z0-9_.-]*==' "$root/requirements-dev.lock") locked packages."
