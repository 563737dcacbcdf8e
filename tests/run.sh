#!/usr/bin/env bash
# Runs the kit's test suite: what `make test` and CI run. Sets up Bats if
# it is missing, runs the given .bats files (by default every lab's
# common/lab/NN-name/test.bats and all of tests/), and
# ends with one line: "tests: N passed, N failed, N skipped". A skipped
# test is never counted as passed; KIT_REQUIRE_GPU=1 turns every skip for a
# missing GPU into a failure, KIT_REQUIRE_GPU=2 also every skip for a
# missing second GPU.
#
# The files run side by side, KIT_TEST_JOBS at a time (default: half the
# CPU cores, 2 to 8: more filled 16 cores with builds for the first minute
# and took longer on an H100), each in a Bats of its own, longest first (by the
# last run's times, kept in the build folder). The GPU is shared by lock
# (tests/test_helper.bash): tests that only check results hold it together,
# a test whose figures are times holds it alone, and so does the grader
# while it runs programs; so timings are taken with nothing else on the
# GPU, and everything else overlaps. A line per file says how it went; the
# whole TAP stream follows, in file order, then the totals.
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
export KIT_BUILD="${KIT_BUILD:-$top/build}"
results="$KIT_BUILD/tests/results"
log="$KIT_BUILD/tests.tap"
times="$KIT_BUILD/tests/times"

# test_name FILE: what a test file is called in the results: a lab's
# common/lab/NN-name/test.bats is NN-name, tests/NAME.bats is NAME.
test_name() {
    case $1 in
    */test.bats) basename "$(dirname "$1")" ;;
    *) basename "$1" .bats ;;
    esac
}

# test_path FILE: the file's path from the kit's top, for people.
test_path() {
    local p
    p=$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")
    printf '%s' "${p#"$(cd "$top" && pwd -P)"/}"
}

# run_file FILE: its TAP into results/NAME.tap, its seconds into
# results/NAME.time, and a line that says how it went, with a line for
# each test that failed (a run cut short still names them).
run_file() {
    local f=$1 name start rc
    name=$(test_name "$f")
    start=$SECONDS
    # shellcheck disable=SC2086
    bats --tap --timing ${BATS_FLAGS:-} "$f" >"$results/$name.tap" 2>&1
    rc=$?
    echo "$((SECONDS - start)) $name.bats" >"$results/$name.time"
    awk -v f="$(test_path "$f")" -v s="$((SECONDS - start))" -v rc="$rc" '
        /^ok / { if ($0 ~ /# skip/) k++; else p++ }
        /^not ok / { n++; failed = failed "\n  " $0 }
        END { printf "%s: %d passed, %d failed, %d skipped (%d s)%s%s\n", f, p, n, k, s,
              (rc != 0 && n == 0) ? ", bats exited " rc : "", failed }' "$results/$name.tap"
}
if [ "${1:-}" = --one ]; then
    run_file "$2"
    exit 0
fi

bash "$here/setup-bats.sh" || exit 1
rm -rf "$results"
mkdir -p "$results"
# The GPU's lock, shared by the tests and the grader they start (a sticky,
# world-writable folder, as the grader wants it).
export KIT_LOCK_DIR="${KIT_LOCK_DIR:-$KIT_BUILD/tests/locks}"
mkdir -p "$KIT_LOCK_DIR" && chmod 1777 "$KIT_LOCK_DIR"
# Who held the GPU when (test_helper.bash, the grader): where time went.
export KIT_LOCK_LOG="$KIT_BUILD/tests/gpu-holds.log"
: >"$KIT_LOCK_LOG"
# kit-query's answers, asked once for the run (tests/test_helper.bash).
export KIT_QUERY_CACHE="$KIT_BUILD/tests/kit-query"
rm -rf "$KIT_QUERY_CACHE" && mkdir -p "$KIT_QUERY_CACHE"

if [ $# -eq 0 ]; then
    set -- "$top"/common/lab/[0-9][0-9]-*/test.bats "$here"/*.bats
fi
jobs=${KIT_TEST_JOBS:-$(($(nproc 2>/dev/null || echo 2) / 2))}
[ "$jobs" -ge 2 ] 2>/dev/null || jobs=2
[ "$jobs" -le 8 ] || jobs=8

# Longest first: the last run's seconds per file, or where there is none
# here yet those of tests/expected-times (unknown files first).
known=$times
[ -s "$known" ] || known=$here/expected-times
order=$(for f in "$@"; do
    t=$(awk -v f="$(test_name "$f").bats" '$2 == f { t = $1 } END { print t + 0 }' "$known" 2>/dev/null)
    [ -n "$t" ] && [ "$t" != 0 ] || t=100000
    printf '%s\t%s\n' "$t" "$f"
done | sort -t "$(printf '\t')" -k1,1nr | cut -f2-)

printf '%s\n' "$order" | xargs -d '\n' -P "$jobs" -n 1 bash "$here/run.sh" --one

# The TAP stream, in file order, numbered again; the totals. A file that
# ran no plan (Bats could not load it) is a failure of its own.
for f in "$@"; do
    name=$(test_name "$f")
    if [ ! -f "$results/$name.tap" ] || ! grep -qE '^1\.\.[0-9]+$' "$results/$name.tap"; then
        echo "not ok 0 $(test_path "$f"): Bats ran no test of it"
        sed 's/^/# /' "$results/$name.tap" 2>/dev/null
        continue
    fi
    cat "$results/$name.tap"
done | awk '
    /^1\.\.[0-9]+$/ { next }
    /^(ok|not ok) [0-9]+/ { n++; sub(/^(ok|not ok) [0-9]+/, ($1 == "ok" ? "ok " : "not ok ") n) }
    { lines[++k] = $0 }
    END { print "1.." n; for (i = 1; i <= k; i++) print lines[i] }' >"$log"
status=0
grep -q '^not ok ' "$log" && status=1
cat "$log"
# The times kept: this run's files, and the others' from before.
{
    cat "$results"/*.time 2>/dev/null
    awk 'FNR == NR { ran[$2] = 1; next } !($2 in ran)' <(cat "$results"/*.time 2>/dev/null) "$times" 2>/dev/null
} >"$times.new" && mv "$times.new" "$times"

# Where the time went: the slowest tests (Bats --timing), kept with the
# hold log for a look after the run.
sed -nE 's/^(ok|not ok) [0-9]+ (.*) in ([0-9]+)ms( # skip.*)?$/\3\t\2/p' "$log" |
    sort -t "$(printf '\t')" -k1,1nr >"$KIT_BUILD/tests/slowest"
echo "# the slowest tests (s):"
head -8 "$KIT_BUILD/tests/slowest" | awk -F '\t' '{ printf "#   %5.1f  %s\n", $1 / 1000, $2 }'
python3 "$here/gpu_holds.py" "$KIT_LOCK_LOG" 8 2>/dev/null || true

awk '
    /^ok / { if ($0 ~ /# skip/) skipped++; else passed++ }
    /^not ok / { failed++ }
    END { printf "tests: %d passed, %d failed, %d skipped\n", passed, failed, skipped }
' "$log"
exit "$status"
