#!/usr/bin/env bash
# make demo: runs every lab's reference on this GPU with its default
# (device-sized) problem, shows each lab's table, and ends with what this
# GPU showed beside the course's Tesla K40 figure.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KIT_BUILD:-$top/build}
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

if ! gpu=$("$build/bin/kit-query" --check 2>&1); then
    echo "$gpu" >&2
    echo "make demo needs a GPU; the kit's CPU-side tests still run with: make test" >&2
    exit 2
fi
echo "$gpu"
echo

status=0
for lab in "$@"; do
    prog="$build/solutions/$lab/${lab#*-}"
    echo "=== $lab ==========================================================="
    out=$("$prog" 2>&1)
    rc=$?
    [ $rc -eq 0 ] || status=1
    # The human part: everything but the key: value lines.
    grep -Ev '^[a-z0-9-]+: ' <<<"$out"
    printf '%s\n' "$(grep -E '^result: ' <<<"$out" || echo "result: exit status $rc")"
    echo
    {
        printf '%s\n' "$lab"
        printf '  this GPU:   %s\n' "$(sed -n 's/^summary: //p' <<<"$out")"
        # The course's Tesla K40 figure, or, where the course has none, the
        # first thing it says (course-notes, course-fermi, ...).
        if grep -q '^course-k40: ' <<<"$out"; then
            printf '  Tesla K40:  %s\n' "$(sed -n 's/^course-k40: //p' <<<"$out")"
        else
            printf '  the course: %s\n' "$(sed -n 's/^course-[a-z0-9-]*: //p' <<<"$out" | head -n 1)"
        fi
    } >>"$summary"
done

echo "=== what this GPU shows, beside the course ============================"
cat "$summary"
exit $status
