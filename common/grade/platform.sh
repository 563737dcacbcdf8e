# platform.sh - where the grader runs (a Linux host, WSL 2), for the
# sandbox and the reports; sourced by lib.sh. Nothing here runs on its own.
#
# The facts come from `kit-query --platform` (common/lib/kit_platform.h:
# the kernel's release and the WSL driver's library), which needs no GPU.
#
# shellcheck shell=bash
# shellcheck disable=SC2034 # sets its callers' globals

# gpu_device_nodes ROOT: the device nodes a sandboxed run needs to reach
# the GPU, one a line: /dev/nvidia* on a Linux host; on WSL 2 /dev/dxg, the
# paravirtual GPU through which the Windows driver serves it (Microsoft,
# "DirectX is coming to the Windows Subsystem for Linux": dxgkrnl "exposes
# the /dev/dxg device to user mode Linux"). ROOT: / (the tests: another).
gpu_device_nodes() {
    local root=${1%/} dev
    for dev in "$root"/dev/nvidia* "$root"/dev/dxg; do
        [ -e "$dev" ] && printf '%s\n' "${dev#"$root"}"
    done
    return 0
}

# grade_platform KIT_QUERY: asks KIT_QUERY --platform and sets
#   platform         linux, wsl2 or wsl1 ("" when it could not say)
#   platform_words   the platform for people
#   platform_ipc     yes, or no (why): can two processes share GPU memory
#   platform_judge_mode       full, or degraded (why): what a judge that keeps
#                    student code in a worker process of its own can do
#                    here. Degraded where GPU memory cannot be shared with
#                    the worker (WSL 2): the worker's outputs come back
#                    through host memory and its times are its own.
grade_platform() {
    local out
    platform="" platform_words="" platform_ipc="" platform_judge_mode=""
    out=$("$1" --platform 2>/dev/null) || return 1
    platform=$(sed -n 's/^platform: //p' <<<"$out")
    platform_words=$(sed -n 's/^platform-words: //p' <<<"$out")
    platform_ipc=$(sed -n 's/^ipc: //p' <<<"$out")
    [ -n "$platform" ] && [ -n "$platform_ipc" ] || return 1
    if [ "$platform_ipc" = yes ]; then
        platform_judge_mode=full
    else
        platform_judge_mode="degraded (no GPU memory shared between processes: ${platform_ipc#no (}"
    fi
}

# grade_platform_line KIT_QUERY: the report's line on the platform, or
# nothing where kit-query cannot tell.
grade_platform_line() {
    grade_platform "$1" || return 0
    if [ "$platform" = linux ]; then
        printf 'Platform: %s\n' "$platform_words"
    else
        printf 'Platform: %s; GPU memory shared between processes: %s\n' "$platform_words" "$platform_ipc"
    fi
}
