#!/usr/bin/env bash
# count-object.sh TIMED.o TIMED.ptx RUNTIME.ptx OUT.o
#
# The counted object of a student's file from its one compilation: the
# timed object (common/harness/student.cu built with KIT_COUNTED=0) with
# its device code, the .nv_fatbin section, replaced by the same PTX
# instrumented with the kit's counting calls (common/tools/ptx-count.py
# --runtime: whole, the runtime's kit_count_access inside it). Nothing else
# of the object changes: its host code is the timed build's, byte for
# byte, and launches the instrumented kernels by the same names; its
# kit_count_cfg, which the counting calls read, is the one the timed
# build's host code registers.
#
# So that it links into one program beside the timed object, every strong
# symbol it defines becomes local but its two tables, which are renamed:
# kit_student_timed -> kit_student_instrumented and kit_kernels_timed ->
# kit_kernels_instrumented. Weak symbols (kit_program, inline functions)
# stay as they are: the linker keeps one of each.
#
# RUNTIME.ptx: common/lib/kit_count_runtime.cu compiled for TIMED.ptx's
# target (nvcc -arch=sm_XX -rdc=true -maxrregcount=32 -ptx).
#
# One architecture: the one of TIMED.ptx (a build for several keeps the
# first PTX only; the counted object then runs on that one).
#
# Exit status: 0 done, 1 refused or a tool failed (the reason on stderr),
# 64 bad usage.
set -euo pipefail

usage() { echo "usage: count-object.sh TIMED.o TIMED.ptx RUNTIME.ptx OUT.o" >&2; exit 64; }
[ $# = 4 ] || usage
timed=$1 ptx=$2 runtime=$3 out=$4
for f in "$timed" "$ptx" "$runtime"; do
    [ -f "$f" ] || { echo "count-object.sh: no file $f" >&2; exit 64; }
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for tool in ptxas fatbinary objcopy readelf nm python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "count-object.sh: $tool is not on PATH" >&2; exit 1; }
done
arch=$(sed -n 's/^\.target[ \t]*\(sm_[0-9]*[a-z]*\).*/\1/p' "$ptx" | head -n 1)
[ -n "$arch" ] || { echo "count-object.sh: $ptx names no sm_ target" >&2; exit 1; }
# (Each listing is read whole before it is searched: grep -q would stop
# early, and the listing tool's broken pipe would fail the pipeline.)
sections=$(readelf -SW "$timed")
grep -q ' \.nv_fatbin ' <<<"$sections" || { echo "count-object.sh: $timed has no .nv_fatbin section" >&2; exit 1; }
symbols=$(nm --defined-only "$timed")
grep -qE ' [DdRrBb] kit_student_timed$' <<<"$symbols" || { echo "count-object.sh: $timed defines no kit_student_timed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/ptx-count.py" --runtime "$runtime" "$ptx" "$work/counted.ptx"
grep -q '^\.func kit_count_access$' "$work/counted.ptx" ||
    { echo "count-object.sh: $ptx has no access of the student's to count" >&2; exit 1; }
ptxas -arch="$arch" -m64 "$work/counted.ptx" -o "$work/counted.cubin"
fatbinary -64 --create="$work/counted.fatbin" \
    "--image3=kind=elf,sm=${arch#sm_},file=$work/counted.cubin" \
    "--image3=kind=ptx,sm=${arch#sm_},file=$work/counted.ptx"
awk '$2 ~ /^[TDBR]$/ && $3 != "kit_student_timed" && $3 != "kit_kernels_timed" { print $3 }' <<<"$symbols" \
    >"$work/local.txt"
objcopy --update-section .nv_fatbin="$work/counted.fatbin" \
    --localize-symbols="$work/local.txt" "$timed" "$work/counted.o"
objcopy --redefine-sym kit_student_timed=kit_student_instrumented \
    --redefine-sym kit_kernels_timed=kit_kernels_instrumented "$work/counted.o" "$out"
