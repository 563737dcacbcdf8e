# Sourced by test_helper.bash: where the tests run (a Linux host, WSL 2)
# and what a test does about it. The facts come from the kit itself
# (`kit-query --platform`, common/lib/kit_platform.h); the reasons a test
# gives for skipping on WSL 2 name their source, and are kept here, in one
# place, beside the thresholds they excuse.
#
# shellcheck shell=bash
# shellcheck disable=SC2034 # the reasons are read by the .bats files

# What WSL 2 changes, each from the documentation that says so. Nothing of
# it was measured by the kit (README.md, "Windows").
KIT_WSL_OVERLAP_WHY="Windows schedules the GPU's work (WSL 2 reaches the GPU through the Windows driver, \
Microsoft: \"DirectX is coming to the Windows Subsystem for Linux\"); copy/kernel overlap and stream \
timings there are not measured"
KIT_WSL_PINNED_WHY="pinned host memory is limited (NVIDIA, CUDA on WSL User Guide, \"Known Limitations for \
Linux CUDA Applications\") and copies go through the Windows driver; pinned against pageable not measured"
KIT_WSL_MULTI_GPU_WHY="several GPUs at once through WSL 2 are not documented for CUDA (Microsoft, \"GPU \
accelerated ML training in WSL\": several GPUs are reached \"one at a time\"); not measured"

# kit_platform_kv KEY: the value of KEY in `kit-query --platform` (which
# honours KIT_TEST_ROOT, the tests' stand-in for a machine's files).
kit_platform_kv() {
    "$KIT_BUILD/bin/kit-query" --platform 2>/dev/null | sed -n "s/^$1: //p"
}

# on_wsl2: the tests run on WSL 2.
on_wsl2() { [ "$(kit_platform_kv platform)" = wsl2 ]; }

# skip_on_wsl REASON: skips the test on WSL 2, saying why; elsewhere it does
# nothing. Not a missing GPU: KIT_REQUIRE_GPU does not turn it into a failure.
skip_on_wsl() {
    on_wsl2 || return 0
    skip "WSL 2: $1"
}

# platform_root DIR LAYOUT [FILE TEXT]: DIR becomes a machine's root as the
# kit reads it (KIT_TEST_ROOT=DIR): FILE (version: /proc/version, osrelease:
# /proc/sys/kernel/osrelease) holding TEXT, and the library layout LAYOUT
# (tests/fixtures/platform/layouts.txt), recorded from real machines.
platform_root() {
    local dir=$1 layout=$2 file=${3:-} text=${4:-} kind path target found=""
    mkdir -p "$dir/proc/sys/kernel"
    case $file in
    version) printf '%s\n' "$text" >"$dir/proc/version" ;;
    osrelease) printf '%s\n' "$text" >"$dir/proc/sys/kernel/osrelease" ;;
    "") ;;
    *) echo "platform_root: no file '$file'" >&2; return 1 ;;
    esac
    while IFS='|' read -r name kind path target; do
        [ "$name" = "$layout" ] || continue
        found=yes
        mkdir -p "$dir$(dirname "$path")"
        case $kind in
        file) : >"$dir$path" ;;
        link) ln -s "$target" "$dir$path" ;;
        none) ;;
        esac
    done < <(grep -v '^[[:space:]]*\(#\|$\)' "$KIT_ROOT/tests/fixtures/platform/layouts.txt")
    [ -n "$found" ] || { echo "platform_root: no layout '$layout'" >&2; return 1; }
}
