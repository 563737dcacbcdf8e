#!/usr/bin/env bash
# handout-figures.sh [--run] [--labs LIST] DIR [OUTDIR]: the handouts'
# figures, drawn from the kit's reference on a GPU.
#
#   --run   first runs each lab's reference here (a GPU is needed) and keeps
#           in DIR what the drawing needs: NN-name.csv (--csv), Labs 05's
#           and 08's NN-name.timeline.csv (--timeline), NN-name.output.txt, and
#           NN-name.txt with the command and the date;
#   then    draws every lab whose table DIR holds into OUTDIR (default
#           handouts/figures): NN-name-WHAT.svg, the GPU, the date and the
#           command written under each plot, and prints the Markdown that
#           shows each figure, to paste beside the handout's tables.
#
# Without --run, DIR may hold tables made otherwise, each with its
# NN-name.txt ("command: ..." and "date: ..." lines). The reference runs
# with --seed 1 unless ARGS_NN (e.g. ARGS_05="--seed 1 --streams 8") says
# otherwise. A GPU machine without gnuplot: --run there keeps the tables in
# DIR; draw them where gnuplot is (without --run). Exit status: 0 drawn;
# 2 no GPU for --run, or no gnuplot; 64 bad command line; 65 a table
# cannot be used.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KIT_BUILD:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
run=0 labs_opt=""
while [ $# -gt 0 ]; do
    case $1 in
    --run) run=1; shift ;;
    --labs) [ $# -ge 2 ] || { echo "handout-figures.sh: --labs needs a list" >&2; exit 64; }; labs_opt=$2; shift 2 ;;
    --help | -h) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    -*) echo "handout-figures.sh: unknown option '$1'" >&2; exit 64 ;;
    *) break ;;
    esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: handout-figures.sh [--run] [--labs LIST] DIR [OUTDIR]" >&2
    exit 64
fi
dir=$1
shift

if [ "$run" = 1 ]; then
    mkdir -p "$dir" || exit 64
    make -s --no-print-directory -C "$top" -j"$(nproc 2>/dev/null || echo 2)" KIT_BUILD="$build" solutions tools || exit 3
    if ! gpu=$("$build/bin/kit-query" --check 2>&1); then
        echo "$gpu" >&2
        echo "handout-figures.sh --run: the references must run on a GPU, and the kit cannot use one here" >&2
        exit 2
    fi
    # shellcheck source=common/lab/labs.sh
    source "$top/common/lab/labs.sh"
    mapfile -t labs < <(kit_labs "$top")
    for lab in "${labs[@]}"; do
        nn=${lab%%-*}
        case ",${labs_opt:-$nn}," in *",$nn,"* | *",$lab,"*) ;; *) continue ;; esac
        prog=$build/solutions/$lab/${lab#*-}
        var=ARGS_$nn
        read -r -a extra <<<"${!var:---seed 1}"
        opts=("${extra[@]}" --csv "$dir/$lab.csv")
        shown="${extra[*]} --csv $lab.csv"
        if "$prog" --help 2>&1 | grep -q -- '--timeline'; then
            opts+=(--timeline "$dir/$lab.timeline.csv")
            shown="$shown --timeline $lab.timeline.csv"
        fi
        echo "handout-figures.sh: $lab: make run LAB=$nn REF=1 ARGS=\"$shown\""
        if ! "$prog" "${opts[@]}" >"$dir/$lab.output.txt" 2>&1; then
            echo "handout-figures.sh: $lab: the reference did not pass here (see $dir/$lab.output.txt); not drawn" >&2
            rm -f "$dir/$lab.csv" "$dir/$lab.timeline.csv" "$dir/$lab.txt"
            continue
        fi
        {
            echo "command: make run LAB=$nn REF=1 ARGS=\"$shown\""
            echo "date: $(date '+%Y-%m-%d')"
            echo "cuda: $(sed -n 's/^runtime-version: //p' "$dir/$lab.output.txt")"
        } >"$dir/$lab.txt"
    done
fi

if ! command -v gnuplot >/dev/null 2>&1; then
    [ "$run" = 0 ] || echo "handout-figures.sh: the tables are in $dir; gnuplot is not installed here: draw them where it is, with: bash common/report/handout-figures.sh $dir" >&2
    echo "handout-figures.sh: gnuplot is not installed (Debian, Ubuntu: sudo apt-get install gnuplot-nox)" >&2
    exit 2
fi
exec python3 "$top/common/report/handout_figures.py" "$dir" "$@"
