#!/usr/bin/env bash
# make check: grades the student's copies in labs/. Per lab: PASS, FAIL
# with the first reason, or SKIP with the reason; then a summary.
# Exit status: 0 all passed, 1 something failed, 2 nothing failed but
# something could not be graded here (no GPU).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 1
build=${KIT_BUILD:-build}
limit=${KIT_CHECK_TIMEOUT:-600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gpu_reason=""
if ! gpu_out=$("$build/bin/kit-query" --check 2>&1); then
    gpu_reason=${gpu_out#*cannot run here: }
    gpu_reason="no usable GPU: ${gpu_reason%%. *}"
fi

printf '%-18s %-6s %s\n' lab verdict reason
passed=0 failed=0 skipped=0
for lab in "$@"; do
    prog="$build/labs/$lab/${lab#*-}"
    verdict="" reason=""
    if ! make -s --no-print-directory "$prog" >"$work/build.log" 2>&1; then
        verdict=FAIL
        reason="does not compile: $(grep -m1 -E 'error' "$work/build.log" || head -n1 "$work/build.log")"
    elif [ -n "$gpu_reason" ]; then
        verdict=SKIP reason=$gpu_reason
    else
        timeout "$limit" "$prog" >"$work/out" 2>"$work/err"
        rc=$?
        case $rc in
        0) if grep -qx "result: PASS" "$work/out"; then verdict=PASS; else
               verdict=FAIL reason="exited 0 without a result line"; fi ;;
        1) verdict=FAIL reason=$(head -n1 "$work/err")
           [ -n "$reason" ] || reason="wrong result" ;;
        2) verdict=SKIP reason=$(head -n1 "$work/err") ;;
        124) verdict=FAIL reason="timed out after ${limit}s" ;;
        *) verdict=FAIL reason="crashed (exit status $rc): $(head -n1 "$work/err")" ;;
        esac
    fi
    case $verdict in PASS) passed=$((passed + 1)) ;; FAIL) failed=$((failed + 1)) ;; *) skipped=$((skipped + 1)) ;; esac
    printf '%-18s %-6s %s\n' "$lab" "$verdict" "${reason:0:100}"
done
printf '\ncheck: %d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ] || exit 1
[ "$skipped" -eq 0 ] || exit 2
exit 0
