#!/usr/bin/env bash
# lab-args.sh LAB KEY: the options lab LAB's grading settings give under KEY
# (its common/lab/LAB/lab.conf, then common/grade/grading.conf; e.g.
# sanitize-args: a small, quick run), with every drawn placeholder fixed:
# {seed} -> 1, {size:LO:HI} -> LO, {int:LO:HI} and {pow2:LO:HI} -> LO.
# `make sanitize` and `make profile` use it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: lab-args.sh LAB KEY" >&2; exit 64; }
# shellcheck source=common/grade/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/grade/lib.sh"
conf_load "$kit_grade_dir/grading.conf" || exit 64
conf_get "$1" "$2" | sed -E 's/\{seed\}/1/g; s/\{size:([0-9]+):[0-9]+\}/\1/g; s/\{(int|pow2):([0-9]+):[0-9]+\}/\2/g'
echo
