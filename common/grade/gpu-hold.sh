# gpu-hold.sh - how a GPU's lock is held: sourced by lib.sh (the grader)
# and by the kit's tests (tests/test_helper.bash), so that both keep the
# same rules.
#
# A GPU's lock is two files in a lock folder: LOCK, held shared by runs
# whose figures are only results (they may run side by side) and alone by
# runs that are timed (nothing else on the GPU); and GATE, which a holder
# that waits to be alone closes, so that no new shared holder comes in
# meanwhile: a stream of result checks cannot keep a timing waiting for
# ever. Shared holders pass through the gate; nobody holds the gate while
# holding the lock, so the two cannot wait on each other. Both are flocks:
# they go with their holder, whatever way it ends.
#
# A process that sees several GPUs holds every one's lock, taken one GPU
# after the other in one order (gpu_hold_keys): its work may go to any of
# them (Lab 08 uses them all; a test's program sees them all), so a timing
# on one of them must wait for it. Holders that take their GPUs in the same
# order cannot wait on each other.
#
# shellcheck shell=bash

gpu_lock_fds=() gpu_gate_fds=() gpu_held="" gpu_hold_why=""

# gpu_hold_key UUID: the part of the lock files' names that names the GPU.
gpu_hold_key() { printf '%s' "$1" | tr -c 'A-Za-z0-9._-' _; }

# gpu_hold_keys UUID...: the keys of those GPUs, one per line, in the one
# order every holder takes them in (so two holders of several GPUs never
# wait on each other), each once.
gpu_hold_keys() {
    local u
    for u in "$@"; do gpu_hold_key "$u" && echo; done | LC_ALL=C sort -u
}

# gpu_hold_forget: in a subshell that is to hold the GPUs for itself: its
# parent's descriptors are the parent's hold, not its own.
gpu_hold_forget() { gpu_lock_fds=() gpu_gate_fds=() gpu_held=""; }

# gpu_hold_opened: whether a lock is open (gpu_hold_open).
gpu_hold_opened() { [ ${#gpu_lock_fds[@]} -gt 0 ]; }

# gpu_hold_open LOCK GATE [LOCK GATE]...: opens each GPU's two files
# (creating them, readable by all, where they are missing), in the order
# given: a process that sees several GPUs holds them all, since its work
# may go to any of them (gpu_hold_keys gives the order). Returns 1 if one
# cannot be opened.
gpu_hold_open() {
    local f fd
    while [ $# -ge 2 ]; do
        for f in "$1" "$2"; do
            [ -e "$f" ] || (umask 022 && : >>"$f") 2>/dev/null
        done
        exec {fd}<"$1" || return 1
        gpu_lock_fds+=("$fd")
        exec {fd}<"$2" || return 1
        gpu_gate_fds+=("$fd")
        shift 2
    done
}

# gpu_hold_open_gpus DIR UUID...: opens the locks in DIR of the GPUs named,
# each once, in gpu_hold_keys's order. Returns 1 if one cannot be opened,
# or is a symbolic link (gpu_hold_why says so).
gpu_hold_open_gpus() {
    local dir=$1 key files=()
    shift
    gpu_hold_why=""
    while read -r key; do
        if [ -L "$dir/gpu-$key.lock" ] || [ -L "$dir/gpu-$key.gate" ]; then
            # shellcheck disable=SC2034 # read by the grader (lib.sh)
            gpu_hold_why="$dir/gpu-$key.lock or .gate is a symbolic link: not used"
            return 1
        fi
        files+=("$dir/gpu-$key.lock" "$dir/gpu-$key.gate")
    done < <(gpu_hold_keys "$@")
    gpu_hold_open "${files[@]}"
}

# gpu_hold_closing CMD...: runs CMD with the locks' descriptors closed, so
# that nothing it starts holds or lets go of them.
gpu_hold_closing() {
    local fd close=""
    for fd in "${gpu_lock_fds[@]}" "${gpu_gate_fds[@]}"; do close+=" $fd<&-"; done
    eval "\"\$@\"$close"
}

# gpu_hold_close: in a subshell about to start what must not hold the
# locks: closes their descriptors there.
gpu_hold_close() {
    local fd
    for fd in "${gpu_lock_fds[@]}" "${gpu_gate_fds[@]}"; do exec {fd}<&-; done
}

# gpu_hold_waited_for: whether a holder waits to have a GPU alone (it
# closes that GPU's gate, which shared holders pass through).
gpu_hold_waited_for() {
    local fd
    for fd in "${gpu_gate_fds[@]}"; do
        if flock -n -s "$fd"; then flock -u "$fd"; else return 0; fi
    done
    return 1
}

# gpu_hold_one -s|-x I LIMIT_OPT...: the Ith GPU's lock, through its gate.
gpu_hold_one() {
    local how=$1 i=$2
    shift 2
    flock "$@" "$how" "${gpu_gate_fds[$i]}" || return 1
    if ! flock "$@" "$how" "${gpu_lock_fds[$i]}"; then
        flock -u "${gpu_gate_fds[$i]}"
        return 1
    fi
    flock -u "${gpu_gate_fds[$i]}"
}

# gpu_hold -s|-x|-u [WAIT_S]: holds every open GPU's lock shared (-s) or
# alone (-x), or lets them go (-u), waiting at most WAIT_S seconds for each
# (default: as long as it takes). From shared to alone the shared holds are
# let go first, then each gate closed in turn: two shared holders that both
# want to be alone take turns. Returns 1 if a wait ran out (nothing is held
# then).
gpu_hold() {
    local how=$1 limit_opt=() i fd
    [ -z "${2:-}" ] || limit_opt=(-w "$2")
    [ "$how" != "$gpu_held" ] || return 0
    case $how in
    -u | -x)
        if [ -n "$gpu_held" ]; then
            for fd in "${gpu_lock_fds[@]}"; do flock -u "$fd"; done
        fi
        gpu_held=""
        ;;&
    -x | -s)
        for i in "${!gpu_lock_fds[@]}"; do
            if [ "$gpu_held" = -x ]; then
                # Alone to shared: nothing is waiting on this holder to let go.
                flock "${limit_opt[@]}" -s "${gpu_lock_fds[$i]}" && continue
            elif gpu_hold_one "$how" "$i" "${limit_opt[@]}"; then
                continue
            fi
            for fd in "${gpu_lock_fds[@]}"; do flock -u "$fd"; done
            gpu_held=""
            return 1
        done
        ;;
    -u) ;;
    *) return 1 ;;
    esac
    if [ "$how" = -u ]; then gpu_held=""; else gpu_held=$how; fi
}

# under_mps: this machine's CUDA programs share the GPU through a CUDA MPS
# server (its control pipe is there, or a share of the SMs is asked for).
# There a fatal fault of one client ends the work of every client beside it,
# so the grader runs each program with the GPU alone.
under_mps() {
    [ -n "${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-}" ] || [ -e "${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/control" ]
}
