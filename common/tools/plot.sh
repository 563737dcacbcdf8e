#!/usr/bin/env bash
# plot.sh TABLE.csv [PICTURE.png]: draws the curve a lab's handout discusses
# from the table the lab wrote with --csv (make run LAB=NN ARGS="--csv
# TABLE.csv"), with gnuplot. Every table starts with the columns gpu, size
# and seed, which go into the title.
#
#   a column segments_per_group   time against G, both on log scales (Lab 02)
#   a column kernel               each kernel's time, as bars on a log scale
#   otherwise                     the fifth column against the fourth
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: plot.sh TABLE.csv [PICTURE.png]" >&2
    exit 64
fi
csv=$1
png=${2:-${csv%.csv}.png}
[ -r "$csv" ] || { echo "plot.sh: cannot read $csv" >&2; exit 64; }
command -v gnuplot >/dev/null 2>&1 || {
    echo "plot.sh: gnuplot is not installed (Debian, Ubuntu: sudo apt-get install gnuplot-nox)" >&2
    exit 2
}

header=$(head -n 1 "$csv")
case $header in gpu,size,seed,*) ;; *)
    echo "plot.sh: $csv is not a table of the kit (its first columns must be gpu,size,seed)" >&2
    exit 64 ;;
esac
[ "$(wc -l <"$csv")" -ge 2 ] || { echo "plot.sh: $csv has no rows" >&2; exit 64; }

# The column number of a name in the header, or nothing.
column() { tr ',' '\n' <<<"$header" | grep -nx "$1" | cut -d: -f1; }
IFS=, read -r gpu size seed _ < <(sed -n 2p "$csv")
title="${gpu//\"/}, size ${size}, seed ${seed}"
x=$(column segments_per_group || true)
k=$(column kernel || true)
t=$(column time_ms || true)

if [ -n "$x" ] && [ -n "$t" ]; then
    plot="set logscale xy 2; set xlabel 'G (segments per group)'; set ylabel 'time (ms)';
          plot '$csv' every ::1 using $x:$t with linespoints pt 7 title 'semi-coalesced'"
elif [ -n "$k" ] && [ -n "$t" ]; then
    plot="set style data histograms; set style fill solid 0.6; set logscale y; set ylabel 'time (ms)';
          set xtics rotate by -35; set bmargin 8;
          plot '$csv' every ::1 using $t:xtic($k) notitle"
else
    xl=$(cut -d, -f4 <<<"$header") yl=$(cut -d, -f5 <<<"$header")
    plot="set xlabel '$xl'; set ylabel '$yl';
          plot '$csv' every ::1 using 4:5 with linespoints pt 7 notitle"
fi

gnuplot <<GNUPLOT
set terminal pngcairo size 1000,600 noenhanced
set output '$png'
set datafile separator ','
set title '$title'
set grid
$plot
GNUPLOT
echo "plot.sh: wrote $png"
