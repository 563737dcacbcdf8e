#!/usr/bin/env bash
# Runs the kit's test suite: what `make test` and CI run. Sets up Bats if
# it is missing, runs the given .bats files (all of tests/ by default), and
# ends with one line: "tests: N passed, N failed, N skipped". A skipped
# test is never counted as passed; KIT_REQUIRE_GPU=1 turns every skip for a
# missing GPU into a failure, KIT_REQUIRE_GPU=2 also every skip for a
# missing second GPU.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
# Bats installed with npm puts no bats command on PATH, and its libraries
# where Bats does not look: use them from npm's folder.
if command -v npm >/dev/null 2>&1; then
    npm_root=$(npm root -g 2>/dev/null)
    if ! command -v bats >/dev/null 2>&1 && [ -x "$npm_root/bats/bin/bats" ]; then
        export PATH="$npm_root/bats/bin:$PATH"
    fi
    if [ -f "$npm_root/bats-support/load.bash" ]; then
        export BATS_LIB_PATH="${BATS_LIB_PATH:-/usr/lib/bats:/usr/local/lib/bats}:$npm_root"
    fi
fi
bash "$here/setup-bats.sh" || exit 1

export KIT_BUILD="${KIT_BUILD:-$top/build}"
mkdir -p "$KIT_BUILD"
log="$KIT_BUILD/tests.tap"

if [ $# -eq 0 ]; then
    set -- "$here"/*.bats
fi
# shellcheck disable=SC2086
bats --tap ${BATS_FLAGS:-} "$@" | tee "$log"
status=${PIPESTATUS[0]}

awk '
    /^ok / { if ($0 ~ /# skip/) skipped++; else passed++ }
    /^not ok / { failed++ }
    END { printf "tests: %d passed, %d failed, %d skipped\n", passed, failed, skipped }
' "$log"
exit "$status"
