#!/usr/bin/env bash
# lab-args.sh LAB KEY: the options grading.conf gives lab LAB under KEY
# (e.g. sanitize-args: a small, quick run), with every drawn placeholder
# fixed: {seed} -> 1, {size:LO:HI} -> LO, {int:LO:HI} and
# {pow2:LO:HI} -> LO. `make sanitize` and `make profile` use it.
set -euo pipefail

conf="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/grade/grading.conf"
[ $# -eq 2 ] || { echo "usage: lab-args.sh LAB KEY" >&2; exit 64; }
awk -v lab="[$1]" -v key="$2" '
    /^\[/ { section = $1; next }
    section == lab && $1 == key && $2 == "=" { sub(/^[^=]*=[ \t]*/, ""); line = $0 }
    END { print line }' "$conf" |
    sed -E 's/\{seed\}/1/g; s/\{size:([0-9]+):[0-9]+\}/\1/g; s/\{(int|pow2):([0-9]+):[0-9]+\}/\2/g'
