#!/usr/bin/env bash
# toolkit-matrix.sh [--dir DIR] [--archs "70 75 80 86 89 90"] [--labs "01 02"]:
# builds the kit with an older CUDA toolkit, Debian's CUDA 11.8 (package
# nvidia-cuda-toolkit, from the non-free component), unpacked into DIR
# without installing it, for each architecture in turn, and prints which
# builds and which does not, with the first error. Run on demand (it
# downloads about 900 MB once), not in CI. --first-error LOG prints that
# error for one build log.
#
# Needs apt-get (Debian 12 or newer with non-free in its sources) and the
# host compiler that CUDA 11.8 accepts, g++ 11 (sudo apt-get install g++-11).
set -uo pipefail

# first_error LOG: the first compiler message of a failed build's log, and
# what make was building when it failed (make's own error line names the
# target; in a parallel build the last NVCC line may be another file's).
first_error() {
    awk '/^  (NVCC|LINK) / { what = $2; next }
         /^make.*\*\*\* \[/ { if (msg != "" && target == "") { target = $0
                 sub(/^[^[]*\[[^:]*:[0-9]*: /, "", target); sub(/\].*/, "", target) } next }
         msg == "" && tolower($0) ~ /error|fatal|unsupported|segmentation/ {
             msg = substr($0, 1, 90); first = what }
         END { if (msg == "") exit; w = target != "" ? target : first
               sub(/.*build-sm[0-9]*\//, "", w); print msg " (" w ")" }' "$1"
}

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=common/lab/labs.sh
source "$top/common/lab/labs.sh"
dir=${TMPDIR:-/tmp}/kit-cuda-11.8
archs="70 75 80 86 89 90"
labs=""
while [ $# -gt 0 ]; do
    case $1 in
    --dir | --archs | --labs)
        [ $# -ge 2 ] || { echo "toolkit-matrix.sh: $1 needs a value (see --help)" >&2; exit 64; } ;;
    esac
    case $1 in
    --dir) dir=$2; shift 2 ;;
    --archs) archs=$2; shift 2 ;;
    --labs) labs=$2; shift 2 ;;
    --first-error)
        if [ $# -lt 2 ] || [ ! -r "$2" ]; then
            echo "toolkit-matrix.sh: --first-error needs a readable build log" >&2
            exit 64
        fi
        first_error "$2"
        exit 0 ;;
    --help | -h) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "toolkit-matrix.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done

command -v g++-11 >/dev/null 2>&1 || {
    echo "toolkit-matrix.sh: CUDA 11.8 needs g++ 11 as its host compiler: sudo apt-get install g++-11" >&2
    exit 2
}
root="$dir/root"
if [ ! -x "$root/usr/lib/nvidia-cuda-toolkit/bin/nvcc" ]; then
    mkdir -p "$dir/debs"
    echo "downloading Debian's CUDA 11.8 into $dir (about 900 MB, once)"
    (cd "$dir/debs" && apt-get download nvidia-cuda-toolkit nvidia-cuda-dev libnvvm4 libcudart11.0 \
        libcu++-dev >/dev/null) || {
        echo "toolkit-matrix.sh: apt-get download failed: is non-free in the apt sources, and has" >&2
        echo "  'apt-get update' run since? (Components: main contrib non-free)" >&2
        exit 2
    }
    for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$root"; done
fi

# The unpacked toolkit names its own folders absolutely: point them here.
nvcc_dir="$root/usr/lib/nvidia-cuda-toolkit/bin"
cat >"$nvcc_dir/nvcc.profile" <<PROFILE
NVVMIR_LIBRARY_DIR = $root/usr/lib/nvidia-cuda-toolkit/libdevice
PATH += $nvcc_dir:$root/usr/bin:
INCLUDES += -I$root/usr/include \$(_SPACE_)
LIBRARIES =+ \$(_SPACE_) -L$root/usr/lib/x86_64-linux-gnu/stubs -L$root/usr/lib/x86_64-linux-gnu
PROFILE
nvcc="$nvcc_dir/nvcc -ccbin g++-11"
version=$("$nvcc_dir"/nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')

targets=()
if [ -n "$labs" ]; then
    for want in $labs; do
        while read -r lab; do
            case $lab in "$want"-*) targets+=("solutions/$lab/${lab#*-}") ;; esac
        done < <(kit_labs "$top")
    done
fi

printf '\nCUDA %s (Debian), host compiler %s\n\n' "$version" "$(g++-11 -dumpversion)"
printf '%-8s %-6s %s\n' arch builds "first error"
status=0
for sm in $archs; do
    build="$dir/build-sm$sm"
    log="$dir/build-sm$sm.log"
    # The build directory is relative to the kit: make works from there.
    if [ ${#targets[@]} -gt 0 ]; then want=("${targets[@]/#/$build/}"); else want=(build); fi
    if make -C "$top" --no-print-directory -j"$(nproc)" NVCC="$nvcc" ARCH="-arch=sm_$sm" \
        KIT_BUILD="$build" "${want[@]}" >"$log" 2>&1; then
        printf '%-8s %-6s\n' "sm_$sm" yes
    else
        status=1
        why=$(first_error "$log")
        printf '%-8s %-6s %s\n' "sm_$sm" no "${why:-see the log}"
    fi
done
printf '\nlogs: %s/build-sm*.log\n' "$dir"
exit $status
