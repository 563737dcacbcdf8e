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
# shellcheck shell=bash

gpu_lock_fd="" gpu_gate_fd="" gpu_held=""

# gpu_hold_key UUID: the part of the lock files' names that names the GPU.
gpu_hold_key() { printf '%s' "$1" | tr -c 'A-Za-z0-9._-' _; }

# gpu_hold_forget: in a subshell that is to hold the GPU for itself: its
# parent's descriptors are the parent's hold, not its own.
gpu_hold_forget() { gpu_lock_fd="" gpu_gate_fd="" gpu_held=""; }

# gpu_hold_open LOCK GATE: opens the two files (creating them, readable by
# all, where they are missing). Returns 1 if either cannot be opened.
gpu_hold_open() {
    local f
    for f in "$1" "$2"; do
        [ -e "$f" ] || (umask 022 && : >>"$f") 2>/dev/null
    done
    [ -n "$gpu_lock_fd" ] || exec {gpu_lock_fd}<"$1" || return 1
    [ -n "$gpu_gate_fd" ] || exec {gpu_gate_fd}<"$2" || return 1
}

# gpu_hold -s|-x|-u [WAIT_S]: holds the lock shared (-s) or alone (-x), or
# lets it go (-u), waiting at most WAIT_S seconds (default: as long as it
# takes). From shared to alone the shared hold is let go first, then the
# gate closed: two shared holders that both want to be alone take turns.
# Returns 1 if the wait ran out (nothing is held then).
gpu_hold() {
    local how=$1 limit_opt=()
    [ -z "${2:-}" ] || limit_opt=(-w "$2")
    [ "$how" != "$gpu_held" ] || return 0
    case $how in
    -u)
        [ -z "$gpu_held" ] || flock -u "$gpu_lock_fd"
        ;;
    -x)
        [ -z "$gpu_held" ] || flock -u "$gpu_lock_fd"
        gpu_held=""
        flock "${limit_opt[@]}" -x "$gpu_gate_fd" || return 1
        if ! flock "${limit_opt[@]}" -x "$gpu_lock_fd"; then
            flock -u "$gpu_gate_fd"
            return 1
        fi
        flock -u "$gpu_gate_fd"
        ;;
    -s)
        if [ "$gpu_held" = -x ]; then
            # Alone to shared: nothing is waiting on this holder to let go.
            flock "${limit_opt[@]}" -s "$gpu_lock_fd" || { gpu_held=""; return 1; }
        else
            flock "${limit_opt[@]}" -s "$gpu_gate_fd" || return 1
            if ! flock "${limit_opt[@]}" -s "$gpu_lock_fd"; then
                flock -u "$gpu_gate_fd"
                return 1
            fi
            flock -u "$gpu_gate_fd"
        fi
        ;;
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
