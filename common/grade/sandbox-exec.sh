#!/usr/bin/env bash
# sandbox-exec.sh CPU_S DATA_MIB FILE_KIB PROCS KEEP_FD -- COMMAND [ARG...]
#
# The last step before a graded build or program runs (inside the sandbox,
# or on its own where there is none): sets its limits, closes every file
# descriptor it inherited but 0, 1, 2 and KEEP_FD (the harness's result
# channel; '-' for none), then becomes COMMAND. Limits: CPU seconds per
# process, data segment in MiB (0: none), size of any file written in KiB,
# processes and threads of the user (0: none); no core files.
set -u
if [ $# -lt 6 ] || [ "$6" != -- ]; then
    echo "usage: sandbox-exec.sh CPU_S DATA_MIB FILE_KIB PROCS KEEP_FD -- COMMAND..." >&2
    exit 125
fi
cpu=$1 data=$2 file=$3 procs=$4 keep=$5
shift 6
ulimit -c 0
ulimit -t "$cpu" || exit 125
[ "$data" = 0 ] || ulimit -d $((data * 1024)) || exit 125
ulimit -f "$file" || exit 125
[ "$procs" = 0 ] || ulimit -u "$procs" || exit 125
for fd in /proc/self/fd/*; do
    fd=${fd##*/}
    case $fd in
    0 | 1 | 2 | "$keep") ;;
    *[!0-9]*) ;;
    *) eval "exec $fd>&-" 2>/dev/null ;;
    esac
done
exec "$@"
