#!/usr/bin/env bash
# count-object.sh TIMED.o TIMED.ptx RUNTIME OUT.o
#
# The counted object of a student's file from its one compilation: the
# timed object (common/harness/student.cu built with KIT_COUNTED=0) with
# its device code, the .nv_fatbin section, replaced by the same PTX
# instrumented with the kit's counting calls (common/tools/ptx-count.py
# --runtime: whole, the runtime's kit_count_access inside it). Nothing else
# of the object changes: its host code is the timed build's, byte for
# byte, but for the names it registers the kernels by (kit_timed::transpose
# becomes kit_count::transpose, in the PTX too); its kit_count_cfg, which
# the counting calls read, is the one the timed build's host code
# registers and configure_counting sets.
#
# So that it links into one program beside the timed object, every strong
# symbol it defines becomes local but its two tables, which are renamed:
# kit_student_timed -> kit_student_counted and kit_kernels_timed ->
# kit_kernels_counted. Weak symbols (kit_program, inline functions) stay as
# they are: the linker keeps one of each, and the host code is the same.
#
# Beside OUT.o it writes the module, for the grader's judge: OUT.fatbin and
# OUT.ptx (the instrumented PTX, which names the kernels).
#
# RUNTIME: common/lib/kit_count_runtime.cu compiled for TIMED.ptx's target
# (nvcc -arch=sm_XX -rdc=true -ptx), or a folder that
# holds it as sm_XX.ptx: compiled there first if it is not (one build at a
# time: flock), or, where the folder cannot be made or written, in a
# temporary one.
# NVCC names the compiler (default: nvcc); ptxas and fatbinary are taken
# from beside it, else from PATH.
#
# One architecture: the one of TIMED.ptx (a build for several keeps the
# first PTX only; the counted object then runs on that one, or where the
# driver can compile that PTX).
#
# Exit status: 0 done, 1 refused or a tool failed (the reason on stderr),
# 64 bad usage.
set -euo pipefail

usage() { echo "usage: count-object.sh TIMED.o TIMED.ptx RUNTIME OUT.o" >&2; exit 64; }
[ $# = 4 ] || usage
timed=$1 ptx=$2 runtime=$3 out=$4
for f in "$timed" "$ptx"; do
    [ -f "$f" ] || { echo "count-object.sh: no file $f" >&2; exit 64; }
done
case $runtime in
*.ptx) [ -f "$runtime" ] || { echo "count-object.sh: no file $runtime" >&2; exit 64; } ;;
*) mkdir -p "$runtime" 2>/dev/null || true ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvcc=${NVCC:-nvcc}
nvcc_dir=$(dirname "$(command -v "${nvcc%% *}" 2>/dev/null || echo /nonexistent/nvcc)")
tool() { if [ -x "$nvcc_dir/$1" ]; then echo "$nvcc_dir/$1"; else command -v "$1"; fi; }
for t in ptxas fatbinary objcopy readelf nm python3; do
    tool "$t" >/dev/null || { echo "count-object.sh: $t is not on PATH (nor beside $nvcc)" >&2; exit 1; }
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

# compile_runtime FILE: the runtime as PTX for $arch, into FILE.
compile_runtime() {
    $nvcc -arch="$arch" -rdc=true -I"$here/../lib" -ptx \
        "$here/../lib/kit_count_runtime.cu" -o "$1"
}
if [ -f "$runtime" ]; then
    rt=$runtime
else
    rt=$runtime/$arch.ptx
    if [ ! -f "$rt" ]; then
        if [ -d "$runtime" ] && [ -w "$runtime" ] && command -v flock >/dev/null 2>&1; then
            (
                flock 9
                [ -f "$rt" ] || { compile_runtime "$rt.tmp.$$" && mv -f "$rt.tmp.$$" "$rt"; }
            ) 9>"$runtime/.lock"
        else
            rt=$work/runtime.ptx
            compile_runtime "$rt"
        fi
    fi
fi

# (A file with no access to count, a skeleton's, gives its module as it is.)
python3 "$here/ptx-count.py" --runtime "$rt" "$ptx" "$work/instrumented.ptx"
# The counted copies are named kit_count::... (the timed ones kit_timed::...),
# so that a profile, the judge and the grader tell them apart: a name of the
# same length, in the PTX and where the host code registers it.
sed 's/_ZN9kit_timed/_ZN9kit_count/g' "$work/instrumented.ptx" >"$work/counted.ptx"
"$(tool ptxas)" -arch="$arch" -m64 "$work/counted.ptx" -o "$work/counted.cubin"
"$(tool fatbinary)" -64 --create="$work/counted.fatbin" \
    "--image3=kind=elf,sm=${arch#sm_},file=$work/counted.cubin" \
    "--image3=kind=ptx,sm=${arch#sm_},file=$work/counted.ptx"
awk '$2 ~ /^[TDBR]$/ && $3 != "kit_student_timed" && $3 != "kit_kernels_timed" { print $3 }' <<<"$symbols" \
    >"$work/local.txt"
# The names the host code registers the kernels and variables by (strings
# in .rodata*), renamed as in the PTX.
update=()
while read -r s; do
    objcopy --dump-section "$s=$work/section" "$timed" "$work/dump.o"
    python3 -c 'import sys; p = sys.argv[1]; b = open(p, "rb").read(); open(p, "wb").write(b.replace(b"_ZN9kit_timed", b"_ZN9kit_count"))' "$work/section"
    mv "$work/section" "$work/section.$s"
    update+=(--update-section "$s=$work/section.$s")
done < <(awk '/^ *\[/ { sub(/^ *\[ *[0-9]*\] */, ""); if ($1 ~ /^\.rodata/) print $1 }' <<<"$sections")
objcopy --update-section .nv_fatbin="$work/counted.fatbin" "${update[@]}" \
    --localize-symbols="$work/local.txt" "$timed" "$work/counted.o"
objcopy --redefine-sym kit_student_timed=kit_student_counted \
    --redefine-sym kit_kernels_timed=kit_kernels_counted "$work/counted.o" "$work/out.o"
cp "$work/counted.fatbin" "${out%.o}.fatbin"
cp "$work/counted.ptx" "${out%.o}.ptx"
mv -f "$work/out.o" "$out"
