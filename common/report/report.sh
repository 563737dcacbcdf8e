#!/usr/bin/env bash
# report.sh: what `make report` runs. For each lab (every lab, or --labs),
# builds your program and the kit's reference, runs the reference and then
# yours with the same seed and the same sizes (and ARGS), and writes one
# page with the figures each handout discusses: your curves beside the
# reference's, the course's Tesla K40 figure where the course has one
# (common/report/report_page.py). Needs a GPU; python3 for the page;
# gnuplot for the figures (without it the page says what to install and
# holds the tables).
#
#   make report                    every lab
#   make report LAB=01             one lab (LAB=01,05: several)
#   make report LAB=05 SEED=42     a seed of your choosing (default: drawn, printed)
#   make report LAB=01 ARGS="--size 4M"
#
# Exit status: 0 the page is written; 2 nothing to run here (no GPU, no
# python3); 3 the page could not be written; 64 a bad command line.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 3
build=${KIT_BUILD:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
make_cmd=${MAKE:-make}
timeout_s=${KIT_REPORT_TIMEOUT:-900}

usage() {
    cat <<'EOF'
usage: report.sh [--labs LIST] [--seed S] [--out DIR] [-- ARGS...]

Runs your program and the reference of each lab with the same seed and
sizes, and writes DIR/report.html (default build/report): the figures each
handout discusses, yours beside the reference's. ARGS go to both programs.
EOF
}

die_usage() { echo "report.sh: $*" >&2; echo "report.sh: see report.sh --help" >&2; exit 64; }

labs_opt="" seed="" out=""
while [ $# -gt 0 ]; do
    case $1 in
    --help | -h) usage; exit 0 ;;
    --labs) [ $# -ge 2 ] || die_usage "--labs needs a list"; labs_opt=$2; shift 2 ;;
    --seed)
        [[ $# -ge 2 && $2 =~ ^[0-9]{1,19}$ ]] || die_usage "--seed needs a whole number"
        seed=$2; shift 2 ;;
    --out) [[ $# -ge 2 && -n $2 ]] || die_usage "--out needs a folder"; out=$2; shift 2 ;;
    --) shift; break ;;
    *) die_usage "unknown option '$1'" ;;
    esac
done
args=("$@")
out=${out:-$build/report}

# shellcheck source=common/lab/labs.sh
source common/lab/labs.sh
mapfile -t all_labs < <(kit_labs .)
# resolve_lab WANT: the lab WANT names: 01, 1, 01-coalescing or coalescing.
resolve_lab() {
    local l
    for l in "${all_labs[@]}"; do
        if [ "$1" = "$l" ] || [ "$1" = "${l%%-*}" ] || [ "0$1" = "${l%%-*}" ] || [ "$1" = "${l#*-}" ]; then
            echo "$l"
            return 0
        fi
    done
    return 1
}
labs=()
if [ -n "$labs_opt" ]; then
    for want in ${labs_opt//,/ }; do
        lab=$(resolve_lab "$want") || die_usage "there is no lab '$want'; the labs are ${all_labs[*]}"
        labs+=("$lab")
    done
else
    labs=("${all_labs[@]}")
fi

command -v python3 >/dev/null 2>&1 || {
    echo "report.sh: the page is written by python3, which is not installed (Debian, Ubuntu: sudo apt-get install python3)" >&2
    exit 2
}

# A GPU first: without one nothing runs, and no empty page is written.
mkdir -p "$build" || exit 3
"$make_cmd" -s --no-print-directory KIT_BUILD="$build" "$build/bin/kit-query" >/dev/null 2>"$build/.report-query.log" || {
    cat "$build/.report-query.log" >&2
    echo "report.sh: kit-query does not build" >&2
    exit 3
}
if ! gpu=$("$build/bin/kit-query" --check 2>&1); then
    echo "$gpu" >&2
    echo "make report runs your programs and the reference on a GPU, and the kit cannot use one here:" >&2
    echo "nothing was run and no page was written. Run it on a machine with an NVIDIA GPU (a lab PC, a" >&2
    echo "cluster node, Colab); here, make test runs the kit's CPU-side tests." >&2
    exit 2
fi

[ -n "$seed" ] || seed=$(($(od -An -N4 -tu4 /dev/urandom) % 1000000000 + 1))
case $out in /*) ;; *) out=$top/$out ;; esac
rm -rf "$out"
mkdir -p "$out" || exit 3
"$build/bin/kit-query" >"$out/gpu.txt" 2>&1
{
    echo "date: $(date '+%Y-%m-%d %H:%M %Z')"
    echo "seed: $seed"
    echo "args: ${args[*]}"
    echo "labs: ${labs[*]}"
} >"$out/run.txt"
echo "make report: $(sed -n 's/^device: //p' "$out/gpu.txt"); seed $seed${args[*]:+; ARGS: ${args[*]}}"
command -v gnuplot >/dev/null 2>&1 ||
    echo "make report: gnuplot is not installed, so the page will hold tables, not figures (Debian, Ubuntu: sudo apt-get install gnuplot-nox)"

# build SIDE LAB DIR: builds labs/ or solutions/ LAB; its status and log in DIR.
build_side() {
    local side=$1 lab=$2 dir=$3
    "$make_cmd" -s --no-print-directory -j"${KIT_JOBS:-2}" KIT_BUILD="$build" \
        "$build/$side/$lab/${lab#*-}" >"$dir/build.log" 2>&1
    echo $? >"$dir/build.status"
}

# run_side PROGRAM DIR OPTIONS...: runs it, its table, timeline and output in DIR.
run_side() {
    local prog=$1 dir=$2
    shift 2
    local cmd=("$prog" "$@" --csv "$dir/table.csv")
    [ "$has_timeline" = 0 ] || cmd+=(--timeline "$dir/timeline.csv")
    cmd+=("${args[@]}")
    printf '%q ' "${cmd[@]}" | sed -e "s#$top/##g" -e 's/ $//' >"$dir/command"
    timeout -k 10 "$timeout_s" "${cmd[@]}" >"$dir/output.txt" 2>&1
    echo $? >"$dir/status"
}

# kv FILE KEY: the value of a `key: value` line.
kv() { sed -n "s/^$2: //p" "$1" 2>/dev/null | tail -n 1; }

# verdict DIR: what a run said, in a word or two.
verdict() {
    local st
    [ -f "$1/status" ] || { echo "not run"; return; }
    st=$(cat "$1/status")
    case $st in
    0 | 1) kv "$1/output.txt" result | grep . || echo "exit status $st" ;;
    124) echo "did not finish in $timeout_s s" ;;
    *) echo "exit status $st" ;;
    esac
}

for lab in "${labs[@]}"; do
    name=${lab#*-}
    ref_dir=$out/$lab/reference stu_dir=$out/$lab/student
    mkdir -p "$ref_dir" "$stu_dir"
    echo "make report: $lab: building"
    build_side solutions "$lab" "$ref_dir"
    build_side labs "$lab" "$stu_dir"
    ref=$build/solutions/$lab/$name stu=$build/labs/$lab/$name
    if [ "$(cat "$ref_dir/build.status")" != 0 ]; then
        echo "make report: $lab: the reference does not build (see $ref_dir/build.log)"
        continue
    fi
    help=$("$ref" --help 2>&1)
    has_timeline=0
    grep -q -- '--timeline' <<<"$help" && has_timeline=1
    echo "make report: $lab: running the reference"
    run_side "$ref" "$ref_dir" --seed "$seed"
    # The student's program: the same seed, and the sizes the reference chose.
    same=(--seed "$seed")
    for pair in size:size matrix:matrix; do
        opt=${pair%%:*} key=${pair#*:} value=$(kv "$ref_dir/output.txt" "$key")
        [ -n "$value" ] || continue
        grep -q -- "--$opt " <<<"$help" || continue
        case " ${args[*]} " in *" --$opt "* | *" --$opt="*) continue ;; esac
        same+=("--$opt" "$value")
    done
    if [ "$(cat "$stu_dir/build.status")" != 0 ]; then
        echo "make report: $lab: your file does not build: $(grep -m1 -i 'error' "$stu_dir/build.log" || tail -n 1 "$stu_dir/build.log")"
    else
        echo "make report: $lab: running your program"
        run_side "$stu" "$stu_dir" "${same[@]}"
    fi
    printf 'make report: %s: your program %s; the reference %s\n' "$lab" "$(verdict "$stu_dir")" "$(verdict "$ref_dir")"
done

python3 "$top/common/report/report_page.py" "$out" --kit "$top"
rc=$?
case $rc in
0) echo "make report: open $out/report.html in a browser" ;;
65) echo "make report: the page is written ($out/report.html), but a table could not be read (above)"; exit 3 ;;
*) echo "make report: the page could not be written" >&2; exit 3 ;;
esac
