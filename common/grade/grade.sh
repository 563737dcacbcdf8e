#!/usr/bin/env bash
# make check: grades the labs of one student (labs/ of this copy of the kit,
# or --labs-dir); make grade-class runs it once per submission.
#
# The grade rests only on what the kit itself observed:
#   - the student's whole file must keep the text rules (rules.awk) and is
#     compiled with the kit's own harness and flags (make graded-objects);
#     what the compiler made must keep the object rules: no code before
#     main, no inline assembly, no names outside its own code, no call the
#     lab does not allow (lib.sh: object_check; grading.conf);
#   - every build of student code and every run is in a sandbox (bubblewrap:
#     no network, private /tmp, the kit read-only, references and reports
#     hidden, a PID namespace, limits), and says so in the report;
#   - each run's verdict and times come from the harness's own result
#     channel (a descriptor and a token the grader sets up before the
#     program starts), never from the program's output; a lab is skipped
#     only for a reason the grader found itself (no usable GPU);
#   - sizes and seeds are drawn for this grading (printed: --seed repeats
#     them); speed is compared with the kit's reference in the same grading,
#     runs in turn, times only from runs whose every timed run was checked.
#
# Exit status: 0 every lab passed, 1 a lab failed, 2 nothing failed but a
# lab could not be graded here (no GPU), 3 the grading could not be done
# (the kit's references do not build, or no sandbox where one is required),
# 64 bad command line.
set -uo pipefail

grade_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
kit_top=$(cd "$grade_dir/../.." && pwd -P)
# shellcheck source=common/grade/lib.sh
source "$grade_dir/lib.sh"

usage() {
    cat <<'EOF'
usage: grade.sh [options] [lab ...]

Grades each lab (all of common/lab/, or those named: 01-coalescing or 01)
of a student's labs/ and prints PASS, FAIL with the first reason, or SKIP
with the reason, the points of each lab and the total. `make check` runs it.

options:
  --seed S          grading seed: repeats an earlier grading's sizes and seeds
  --sanitize        also run each lab under compute-sanitizer, once per tool its
                    settings name (sanitize-tools: memcheck; racecheck too
                    where blocks share memory)
  --report DIR      write report.txt, grades.csv, grades.tap (TAP), grades.xml
                    (JUnit) and results.json (Gradescope)
  --student NAME    the student's name in the reports (default: the user's name)
  --student-id ID   the student's ID in the reports (an LMS's)
  --labs-dir DIR    the student's labs/ folder (default: labs/ of this kit)
  --origin TEXT     what the reports call that folder (default: its path)
  --no-sandbox      grade without isolation (said in every report)
  --require-sandbox stop (exit 3) where the sandbox cannot run
  --hide PATH       a path student code must not see (repeatable)
  --jobs N          labs built at once (default: half the CPU cores)
  --conf FILE       grading settings (default: common/grade/grading.conf; each
                    lab's own, common/lab/NN-name/lab.conf, are read first)
  --reference-build DIR
                    where the references and tools are built (default: build)
  --help            print this help and exit

exit status: 0 all passed, 1 a lab failed, 2 a lab could not be graded here,
3 the grading could not be done, 64 bad command line.
EOF
}

die_usage() {
    echo "grade.sh: $*" >&2
    echo "grade.sh: see grade.sh --help" >&2
    exit 64
}

log() { printf '%s\n' "$*" >>"$work/log"; }

# progress TEXT: what the grading is doing, a line per step, on stderr.
progress() { printf 'grade: %s\n' "$*" >&2; }

# make_path PATH ALIAS: PATH as make must be given it, for make run in the
# kit: relative to the kit where it lies inside it; elsewhere, where it
# holds a space (make cannot name such a target), the link ALIAS made to it.
make_path() {
    case $1 in
    "$kit_top") printf '.' ;;
    "$kit_top"/*) printf '%s' "${1#"$kit_top"/}" ;;
    *" "*) ln -sfn "$1" "$2" && printf '%s' "$2" ;;
    *) printf '%s' "$1" ;;
    esac
}

# ---------------------------------------------------------------------------
# Building one lab (runs in the background, beside the other labs): writes
# $work/labs/LAB/status: "OK", or "FAIL<TAB>reason" or "SKIP<TAB>reason".
# ---------------------------------------------------------------------------

build_lab() {
    local lab=$1 name=${1#*-} dir="$work/labs/$1" file limit shown rc b first
    shown="labs/$lab/$name.cu"
    file="$labs_dir/$lab/$name.cu"
    status() { printf '%s\t%s\n' "$1" "$2" >"$dir/status"; }
    if [ ! -f "$kit_top/common/lab/$lab/harness.cu" ]; then
        status SKIP "the kit's lab $lab is not built from a harness yet, so it is not graded"
        return
    fi
    if [ -L "$file" ]; then
        status FAIL "$shown is a symbolic link; hand in the file itself"
        return
    fi
    if [ ! -f "$file" ]; then
        status FAIL "no $shown"
        return
    fi
    limit=$(conf_get "$lab" source-limit)
    head -c $((${limit:-262144} + 1)) -- "$file" >"$dir/src/$name.cu" 2>/dev/null ||
        { status FAIL "$shown cannot be read"; return; }
    # A UTF-8 byte order mark, which Windows editors write first, is no
    # part of the program: dropped from the copy that is checked and built.
    sed -i '1s/^\xEF\xBB\xBF//' "$dir/src/$name.cu"
    source_check "$dir/src/$name.cu" "$lab"
    if [ -n "$rule_reason" ]; then
        status FAIL "$shown${rule_line:+:$rule_line}: $rule_reason"
        return
    fi
    sandbox_own "$dir/build"
    local make_args=(-s --no-print-directory -C "$kit_top" GRADED_LAB="$lab" STUDENT_SRC="$dir/src/$name.cu"
        GRADED_DIR="$dir/build" STUDENT_SHOWN="$shown" KIT_BUILD="$(make_path "$ref_build" "$dir/build/ref")"
        NVCC="$KIT_NVCC" NVCCFLAGS="$KIT_NVCC_FLAGS" ARCH="$KIT_ARCH")
    local btime bmem
    btime=$(conf_get "$lab" build-time-limit)
    bmem=$(conf_get "$lab" build-memory-limit)
    sb_extra=(--ro-bind "$dir/src" "$dir/src")
    sandboxed "$btime" "$btime" "$bmem" 65536 0 - "$dir/build" "$dir/build" -- \
        nice -n 10 make -j2 "${make_args[@]}" graded-objects >"$dir/build.log" 2>&1
    rc=$run_rc
    sed -i -e "s|$dir/src/$name.cu|$shown|g" -e "s|$kit_top/||g" "$dir/build.log" 2>/dev/null
    if [ "$rc" != 0 ]; then
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            status FAIL "does not compile within $btime s"
        elif [ "$rc" = 153 ]; then
            status FAIL "does not compile: the compiler's output grew past 64 MiB"
        else
            first=$(grep -m1 -E '(error|Error)' "$dir/build.log")
            status FAIL "does not compile: $(one_line "${first:-$(head -n 1 "$dir/build.log")}")"
        fi
        return
    fi
    for b in timed counted; do
        object_check "$dir/build/$b.o" "$b" "$lab" "$dir/build/keep-$b" "$dir/src/$name.cu"
        if [ -n "$obj_reason" ]; then
            status FAIL "$shown $obj_reason"
            return
        fi
    done
    rm -rf "$dir/build/keep-timed" "$dir/build/keep-counted"
    sandboxed "$btime" "$btime" "$bmem" 65536 0 - "$dir/build" "$dir/build" -- \
        nice -n 10 make "${make_args[@]}" graded >>"$dir/build.log" 2>&1
    rc=$run_rc
    sed -i -e "s|$dir/src/$name.cu|$shown|g" -e "s|$kit_top/||g" "$dir/build.log" 2>/dev/null
    if [ "$rc" != 0 ]; then
        first=$(grep -m1 -E '(error|undefined)' "$dir/build.log")
        status FAIL "does not link: $(one_line "${first:-$(tail -n 1 "$dir/build.log")}")"
        return
    fi
    status OK ""
}

# ---------------------------------------------------------------------------
# Running one lab's programs (one lab at a time, holding the GPU)
# ---------------------------------------------------------------------------

# run_one WHO PROG ARGS [sanitize]: runs PROG (student or reference) with
# ARGS; sets rd (its run folder) and run_rc. Where the lab is judged
# (judge_mode), the lab's judge runs outside the sandbox, holding the
# result channel, and starts PROG's worker (PROG's folder/worker) inside it,
# with no folder it may write and no descriptor but its socket; otherwise
# PROG itself runs in the sandbox and writes the channel.
run_one() {
    local who=$1 prog=$2 args=$3 mode=${4:-} rfd wall cmd=() cpu worker started=${EPOCHREALTIME:-} own_hold=""
    runs=$((runs + 1))
    rd="$dir/run-$runs"
    mkdir -p "$rd"
    gpu_busy=""
    # A run that times nothing holds the GPU shared for itself alone, so
    # that a timing waiting for the GPU waits for one run, not a grading;
    # alone (gpu_mode_for) under CUDA MPS, where a fatal fault of one
    # client ends the work of every client beside it, and where the lab's
    # checked verdict rests on times.
    if gpu_hold_opened && [ -z "$gpu_held" ]; then
        if ! gpu_hold_logged "$(gpu_mode_for "$lab")"; then
            gpu_busy="the GPU stayed busy with other runs for ${gpu_lock_wait} s${gpu_lock_note:+ ($gpu_lock_note)}"
            run_rc=125
            log "run $runs ($who): not run: $gpu_busy"
            return
        fi
        own_hold=yes
    fi
    : >"$rd/out"
    : >"$rd/err"
    : >"$rd/result"
    : >"$rd/worker.log"
    sandbox_own "$rd"
    KIT_RESULT_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    wall=$limit
    # CPU seconds: RLIMIT_CPU counts every thread of the process (the
    # harness checks results on all cores), so the wall limit on each core.
    cpu=$(((wall + 5) * $(nproc 2>/dev/null || echo 1)))
    sb_extra=(--ro-bind "$(dirname "$prog")" "$(dirname "$prog")")
    exec {rfd}>"$rd/result"
    # compute-sanitizer cannot follow memory one process shares with another:
    # its run (a check that can only fail a lab) is the lab's own program.
    if lab_judged "$lab" && [ "$judge_mode" = judge ] && [ "$mode" != sanitize ]; then
        worker="$(dirname "$prog")/worker"
        if [ "$mode" = sanitize ]; then
            wall=$(conf_get "$lab" sanitize-time-limit)
            cmd=(env KIT_UNDER_SANITIZER="$sanitize_tool" compute-sanitizer --tool "$sanitize_tool" --error-exitcode 99 --print-limit 4)
        fi
        worker_sandbox_cmd "$cpu" "$mem" "$cap" -- "${cmd[@]}" "$worker"
        printf '%s\0' "${sb_cmd[@]}" >"$rd/worker.argv"
        local modules
        modules=$(dirname "$prog")
        # shellcheck disable=SC2086
        # The judge's output is capped, softly: it raises the cap for the
        # sealed memfds it shares host memory through (kit_judge.h).
        (
            gpu_hold_close
            ulimit -S -f "$cap" 2>/dev/null
            exec env KIT_RESULT_FD="$rfd" KIT_RESULT_TOKEN="$KIT_RESULT_TOKEN" KIT_JUDGE_WORKER="$rd/worker.argv" \
                KIT_JUDGE_WORKER_LOG="$rd/worker.log" KIT_JUDGE_MODULE_TIMED="$modules/timed.fatbin" \
                KIT_JUDGE_MODULE_COUNTED="$modules/counted.fatbin" \
                timeout -k 5 "$wall" "$ref_build/judge/$lab/judge" $args
        ) </dev/null >"$rd/out" 2>"$rd/err"
        run_rc=$?
    else
        if [ "$mode" = sanitize ]; then
            wall=$(conf_get "$lab" sanitize-time-limit)
            cmd=(env KIT_UNDER_SANITIZER="$sanitize_tool" compute-sanitizer --tool "$sanitize_tool" --error-exitcode 99 --print-limit 4 --log-file "$rd/sanitizer.log")
        fi
        # shellcheck disable=SC2206
        cmd+=("$prog" $args)
        gpu_hold_closing sandboxed "$wall" "$cpu" "$mem" "$cap" 1 "$rfd" "$rd" "$rd" -- "${cmd[@]}" \
            >"$rd/out" 2>"$rd/err"
    fi
    exec {rfd}>&-
    [ -z "$own_hold" ] || gpu_unlock
    sb_extra=()
    run_seconds=""
    [ -z "$started" ] || run_seconds=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    log "run $runs ($who): ${mode:+compute-sanitizer --tool $sanitize_tool }$(basename "$prog") $args"
    log "  exit status $run_rc${run_seconds:+ after $run_seconds s}"
}

# judge_probe LAB...: decides judge_mode before the first run: "judge"
# where the kit's judge of the first judged lab, with the kit's own worker
# (the reference's), grades a small case here; "in-process" (judge_why says
# why) where it cannot, e.g. where the GPU cannot be shared between two
# processes. The student's code has no say in it.
judge_mode=in-process judge_why="no lab graded here is judged"
judge_probe() {
    local l probe="" args saved_runs=${runs:-0} saved_dir=${dir:-} saved_lab=${lab:-} key cache line
    for l in "$@"; do
        if lab_judged "$l"; then probe=$l; break; fi
    done
    [ -n "$probe" ] || return 0
    # What the probe found holds for an hour, for this GPU, this kit's judge
    # and worker, the same sandbox and the same MPS settings.
    cache="$ref_build/judge/$probe/probe"
    key="${gpu_uuid:-gpu0} ${CUDA_VISIBLE_DEVICES:-all} ${CUDA_MPS_PIPE_DIRECTORY:-} $([ -d /tmp/nvidia-mps ] && echo mps)"
    key+=" $sandbox ${sandbox_user:-} $(stat -c %Y "$ref_build/judge/$probe/judge" "$ref_build/solutions/$probe/worker" 2>/dev/null | tr '\n' ' ')"
    if line=$(cat "$cache" 2>/dev/null) && [ "${line%%|*}" = "$key" ]; then
        IFS='|' read -r _ l judge_mode judge_why <<<"$line"
        if [ $(($(date +%s) - l)) -lt 3600 ]; then
            log "judge probe: $judge_mode (found within the hour${judge_why:+: $judge_why})"
            return 0
        fi
    fi
    judge_mode=judge lab=$probe dir="$work/probe" runs=0 limit=120 mem=0
    cap=$(conf_get "$probe" output-limit)
    mkdir -p "$dir" && sandbox_own "$dir"
    args=$(bash "$kit_top/common/tools/lab-args.sh" "$probe" sanitize-args)
    run_one probe "$ref_build/solutions/$probe/${probe#*-}" "$args"
    judge "$run_rc" "$rd" 120 "$cap" "$probe" 1
    if [ "$verdict" != PASS ]; then
        judge_mode=in-process
        judge_why="the kit's judge could not grade its own reference here ($what${detail:+: $detail})"
        log "judge probe: $judge_why"
    else
        judge_why=""
    fi
    printf '%s|%s|%s|%s\n' "$key" "$(date +%s)" "$judge_mode" "$(one_line "$judge_why" | tr '|' '/')" \
        >"$cache" 2>/dev/null
    runs=$saved_runs dir=$saved_dir lab=$saved_lab
}

# mode_note LAB...: how these labs were graded, for the reports.
mode_note() {
    local l judged=() inproc=()
    if [ -n "$gpu_reason" ]; then
        printf 'no program ran here (%s)' "$gpu_reason"
        return
    fi
    for l in "$@"; do
        if lab_judged "$l" && [ "$judge_mode" = judge ]; then judged+=("${l%%-*}"); else inproc+=("${l%%-*}"); fi
    done
    if [ ${#judged[@]} -gt 0 ]; then
        printf 'judge (labs %s): verdicts, inputs, checks and times by the kit'"'"'s judge; the student'"'"'s code ran in a worker process of its own' "${judged[*]}"
        [ ${#inproc[@]} = 0 ] || printf '; '
    fi
    if [ ${#inproc[@]} -gt 0 ]; then
        printf 'in-process (labs %s): the kit'"'"'s harness and the student'"'"'s code in one process' "${inproc[*]}"
        if [ "$judge_mode" != judge ]; then
            printf ' (%s)' "$judge_why"
        else
            printf ' (their student code is host code that drives the GPU: not judged yet)'
        fi
    fi
}

# lab_judged LAB: its verdicts come from the kit's judge (its contract does
# not leave the student's host code driving the GPU; Makefile: JUDGED).
lab_judged() { ! grep -q KIT_STUDENT_HOST_CODE "$kit_top/common/lab/$1/contract.h"; }

# log_detail: the first lines of the last run's errors, for the report; and
# of what the student's code printed, where it ran in a worker.
log_detail() {
    {
        head -n 6 "$rd/err" | while IFS= read -r l; do printf '    stderr: %s\n' "$(one_line "${l:0:200}")"; done
        head -n 6 "$rd/worker.log" | while IFS= read -r l; do printf '    student code: %s\n' "$(one_line "${l:0:200}")"; done
        cat "$rd/sanitizer.log" "$rd/worker.log" 2>/dev/null | grep -m 3 -E '^=+ +(Invalid|ERROR|Error|Program hit)' |
            while IFS= read -r l; do printf '    compute-sanitizer: %s\n' "$(one_line "${l:0:200}")"; done
    } >>"$work/log"
}

# judged WHO WHERE: judges the last run (KIT_RESULT_TOKEN must still be
# its token); sets verdict, reason.
judged() {
    local seed
    if [ -n "${gpu_busy:-}" ]; then
        verdict=SKIP reason=$gpu_busy what="" detail=""
        return
    fi
    seed=$(sed -n 's/.*--seed \([0-9]*\).*/\1/p' <<<"$2")
    judge "$run_rc" "$rd" "$wall_used" "$cap" "$lab" "$seed"
    log "  $1: $verdict${what:+: $what}${detail:+: $detail}"
    log_detail
    reason_at "at ${2:-the defaults}"
}

# metric_of: the metric of the last run if the harness verified every run
# that timed it (empty if not). Where the metric is a row's time
# (time-KEY-ms, the median of its timed repeats), the row's fastest repeat
# (time-KEY-min-ms) where the harness reports it: the judge's clock spans
# the worker's answer too, and a busy host (builds beside the grading)
# slows some repeats of either program, never speeds one.
metric_of() {
    local key value
    value=${chan[$metric]:-}
    key=${metric_row:-}
    if [ -n "$key" ] && [ "$metric" = "time-$key-ms" ] && [ -n "${chan[time-$key-min-ms]:-}" ]; then
        value=${chan[time-$key-min-ms]}
    fi
    if [ -n "$key" ] && { [ "${chan[bad-timed-runs-$key]:-x}" != 0 ] || [ "${chan[wrong-elements-$key]:-x}" != 0 ]; }; then
        value=""
    fi
    [[ $value =~ ^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] && printf '%s' "$value"
}

# lab_setup LAB: the settings of a built lab's runs (run_one's and
# judged's globals, and these), its run count kept from its checked runs.
lab_setup() {
    lab=$1 name=${1#*-}
    dir="$work/labs/$lab" runs=${lab_runs[$lab]:-0}
    prog="$dir/build/$name"
    ref="$ref_build/solutions/$lab/$name"
    max=$(conf_get "$lab" points)
    limit=$(conf_get "$lab" time-limit) wall_used=$limit
    cap=$(conf_get "$lab" output-limit)
    mem=$(conf_get "$lab" memory-limit)
    metric=$(conf_get "$lab" metric) metric_row=$(conf_get "$lab" metric-row)
    # The row the metric times: metric-row, or KEY of time-KEY-ms.
    if [ -z "$metric_row" ] && [[ $metric =~ ^time-(.+)-ms$ ]]; then metric_row=${BASH_REMATCH[1]}; fi
}

# grade_checks LAB: the checked runs of a built lab (the GPU shared): sets
# verdict, reason, points; speed=yes where its speed is still to be timed
# (grade_speed, with every lab's timed runs, the GPU alone).
grade_checks() {
    local lab name prog ref args i max mincc
    lab_setup "$1"
    verdict=FAIL points=0 ratio="" speed=""
    rng_seed $((grading_seed * 100 + 10#${lab%%-*}))
    log "== $lab"
    mincc=$(conf_get "$lab" min-compute-capability)
    if [ -n "$mincc" ] && awk -v a="$gpu_cc" -v b="$mincc" 'BEGIN { exit !(a + 0 < b + 0) }'; then
        verdict=SKIP reason="needs compute capability $mincc; this GPU has $gpu_cc"
        return
    fi

    if [ "$sanitize" = 1 ]; then
        # Each tool the lab names (sanitize-tools: memcheck everywhere;
        # racecheck where blocks share memory), one run each.
        for sanitize_tool in $(conf_get "$lab" sanitize-tools); do
            expand_args "$(conf_get "$lab" sanitize-args)"
            args=$drawn
            run_one student "$prog" "$args" sanitize
            wall_used=$(conf_get "$lab" sanitize-time-limit)
            if [ "$run_rc" = 99 ] || grep -qsE '^=+ +(Invalid|Error: Race|ERROR: Race)' "$rd/sanitizer.log" "$rd/worker.log"; then
                log_detail
                local first
                first=$(one_line "$(cat "$rd/sanitizer.log" "$rd/worker.log" 2>/dev/null |
                    grep -m1 -E '^=+ +(Invalid|Error|ERROR)' | sed -E 's/^=+ +//')")
                case $sanitize_tool in
                racecheck) reason="a data race in shared memory at $args (compute-sanitizer racecheck: threads of a block read what others write with no barrier between): $first" ;;
                *) reason="out-of-bounds memory access at $args (compute-sanitizer $sanitize_tool): $first" ;;
                esac
                return
            fi
            judged student "$args under compute-sanitizer $sanitize_tool"
            [ "$verdict" = PASS ] || return
        done
        sanitize_tool=memcheck
        wall_used=$limit
    fi

    for ((i = 1; i <= $(conf_get "$lab" random-runs); i++)); do
        expand_args "$(conf_get "$lab" random-args)"
        args=$drawn
        run_one student "$prog" "$args"
        judged student "$args"
        [ "$verdict" = PASS ] || return
    done
    if [ "$(conf_get "$lab" default-run)" = yes ]; then
        run_one student "$prog" ""
        judged student ""
        [ "$verdict" = PASS ] || return
    fi

    if [ -z "$metric" ] || [ "$metric" = none ]; then
        points=$max
        return
    fi
    speed=yes
}

# grade_speed LAB: the timed runs of a lab whose checked runs passed, the
# GPU alone: the reference and the student in turn (ABBA), same options.
# Each times the metric's row until steady and runs every other row once
# (--focus): the checked runs checked them already. Sets verdict, reason,
# points, ratio.
grade_speed() {
    local lab name prog ref args p who value refs=() mine=() t_ref t_mine
    local max full zero share slow pairs clear
    lab_setup "$1"
    verdict=FAIL points=0 ratio=""
    # Draws of their own, apart from the checked runs'.
    rng_seed $(((grading_seed * 100 + 10#${lab%%-*}) * 2 + 1))
    full=$(conf_get "$lab" full-marks-within)
    zero=$(conf_get "$lab" no-speed-marks-beyond)
    share=$(conf_get "$lab" speed-share)
    slow=$(conf_get "$lab" too-slow-beyond)
    pairs=$(conf_get "$lab" perf-pairs)
    clear=$(conf_get "$lab" perf-clear)
    log "== $lab: the timed runs, with the GPU alone"
    for ((p = 1; p <= pairs; p++)); do
        # Pairs come two at a time (ABBA: reference first, then student
        # first), so that which program ran first cancels out. Two more only
        # where they could change the points: the ratio so far lies within
        # perf-clear of a boundary (full-marks-within, no-speed-marks-beyond,
        # too-slow-beyond) or between them.
        if [ "$p" -gt 2 ] && [ $(((p - 1) % 2)) = 0 ] && [ -n "$clear" ] && [ "$clear" != 0 ]; then
            speed_ratio 4
            if [ -n "$ratio" ] && speed_clear "$ratio" "$full" "$zero" "$slow" "$clear"; then
                log "clear after $((p - 1)) of $pairs pair(s): ${ratio}x is more than $clear of itself from every boundary of the points"
                break
            fi
        fi
        expand_args "$(conf_get "$lab" perf-args)"
        args="$drawn${metric_row:+ --focus $metric_row}"
        for who in $([ $((p % 2)) = 1 ] && echo "reference student" || echo "student reference"); do
            if [ "$who" = reference ]; then
                run_one reference "$ref" "$args"
                judged reference "$args"
                if [ "$verdict" != PASS ]; then
                    verdict=SKIP reason="the kit's reference failed here, so speed was not graded: $reason"
                    return
                fi
                value=$(metric_of)
                if [ -z "$value" ]; then
                    verdict=SKIP reason="the lab's metric (its lab.conf or grading.conf): the reference's harness reports no verified $metric"
                    return
                fi
                refs+=("$value")
            else
                run_one student "$prog" "$args"
                judged student "$args, timed beside the reference"
                [ "$verdict" = PASS ] || return
                value=$(metric_of)
                if [ -z "$value" ]; then
                    verdict=FAIL reason="its $metric was not verified by the harness (every timed run must be checked)"
                    return
                fi
                mine+=("$value")
            fi
            log "  $metric: $value ms"
        done
    done
    speed_ratio 2
    log "$metric: student fastest $t_mine ms, reference fastest $t_ref ms: ${ratio:-?}x"
    if [ -z "$ratio" ]; then
        verdict=FAIL reason="its $metric could not be compared with the reference's"
    elif awk -v r="$ratio" -v z="$slow" 'BEGIN { exit !(r > z) }'; then
        verdict=FAIL points=0
        reason="too slow against the reference: ${ratio}x its $metric (FAIL beyond ${slow}x)"
    else
        verdict=PASS reason="" points=$(speed_points "$ratio" "$max" "$share" "$full" "$zero")
    fi
}

# lab_verdict LAB WHAT: keeps the lab's verdict, reason, points and ratio,
# and logs them (with WHAT: the runs' time); a lab whose speed is still to
# be timed is logged then.
lab_verdict() {
    [ "$verdict" = FAIL ] && points=0
    [ "$verdict" = SKIP ] && points=""
    lab_v[$1]=$verdict lab_p[$1]=$points lab_r[$1]=$(one_line "$reason") lab_x[$1]=$ratio
    if [ "${speed:-}" = yes ]; then
        log "checked runs passed; its speed next (${2})"
    else
        log "verdict: $verdict ${points:--}/$(conf_get "$1" points)${reason:+: $reason} ($2)"
    fi
}

# ---------------------------------------------------------------------------
# The whole grading
# ---------------------------------------------------------------------------

main() {
    local report="" conf_file="$grade_dir/grading.conf" sandbox_mode=auto jobs=""
    # How the labs are built and run, named in every report.
    report_mode="in-process: the harness and the student's code share one process"
    local labs=() all_labs=() lab want hides=()
    grading_seed="" sanitize=0 sanitize_tool=memcheck ref_build="" labs_dir="$kit_top/labs" origin=""
    student_name=${USER:-$(id -un 2>/dev/null || echo student)} student_id=""
    while [ $# -gt 0 ]; do
        case $1 in
        --help | -h) usage; exit 0 ;;
        --seed)
            [ $# -ge 2 ] || die_usage "--seed needs a value"
            [[ $2 =~ ^[0-9]{1,15}$ ]] || die_usage "--seed '$2': expected a whole number"
            grading_seed=$((10#$2)); shift 2 ;;
        --sanitize) sanitize=1; shift ;;
        --report)
            [[ $# -ge 2 && -n $2 ]] || die_usage "--report needs a directory"
            report=$2; shift 2 ;;
        --student)
            [[ $# -ge 2 && -n $2 ]] || die_usage "--student needs a name"
            student_name=$2; shift 2 ;;
        --student-id) [ $# -ge 2 ] || die_usage "--student-id needs a value"; student_id=$2; shift 2 ;;
        --labs-dir)
            [[ $# -ge 2 && -d $2 ]] || die_usage "--labs-dir needs a folder"
            labs_dir=$(cd "$2" && pwd -P); shift 2 ;;
        --origin)
            [[ $# -ge 2 && -n $2 ]] || die_usage "--origin needs a text"
            origin=$2; shift 2 ;;
        --no-sandbox) sandbox_mode=none; shift ;;
        --require-sandbox) [ "$sandbox_mode" = none ] || sandbox_mode=require; shift ;;
        --hide) [ $# -ge 2 ] || die_usage "--hide needs a path"; hides+=("$2"); shift 2 ;;
        --jobs)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die_usage "--jobs needs a number"
            jobs=$2; shift 2 ;;
        --conf) [ $# -ge 2 ] || die_usage "--conf needs a file"; conf_file=$2; shift 2 ;;
        --reference-build)
            [ $# -ge 2 ] || die_usage "--reference-build needs a directory"
            ref_build=$2; shift 2 ;;
        -*) die_usage "unknown option '$1'" ;;
        *) labs+=("$1"); shift ;;
        esac
    done
    conf_load "$conf_file" || exit 64
    mapfile -t all_labs < <(kit_labs "$kit_top")
    if [ ${#labs[@]} -gt 0 ]; then
        local named=()
        for want in "${labs[@]}"; do
            lab=$(lab_resolve "$want" "${all_labs[@]}") || die_usage "no lab '$want' (labs: ${all_labs[*]})"
            named+=("$lab")
        done
        labs=("${named[@]}")
    else
        labs=("${all_labs[@]}")
    fi
    [ -n "$grading_seed" ] || grading_seed=$(($(od -An -N4 -tu4 /dev/urandom) % 1000000000 + 1))
    [ -n "$jobs" ] || jobs=$((($(nproc 2>/dev/null || echo 2) + 1) / 2))
    student_name=$(one_line "$student_name") student_id=$(one_line "$student_id")

    : "${KIT_NVCC:=nvcc}" "${KIT_NVCC_FLAGS:=-O3 -lineinfo}"
    ref_build=${ref_build:-${KIT_BUILD:-$kit_top/build}}
    mkdir -p "$ref_build" && ref_build=$(cd "$ref_build" && pwd -P)
    if [ -z "${KIT_ARCH:-}" ]; then
        KIT_ARCH=$(make -s --no-print-directory -C "$kit_top" NVCC="$KIT_NVCC" print-arch 2>/dev/null | tail -n 1)
    fi
    KIT_ARCH=$(concrete_arch "$KIT_ARCH")
    # A folder whose path holds no space: make names files in it.
    local tmp=${TMPDIR:-/tmp}
    [[ $tmp != *" "* ]] || tmp=/tmp
    work=$(mktemp -d "$tmp/kit-grade.XXXXXX") && work=$(cd "$work" && pwd -P)
    # The sandbox's user (uid 65534, as root) must reach its own folders.
    chmod 711 "$work"
    trap 'rm -rf "$work"' EXIT
    : >"$work/log"

    # The references of the labs graded here, and kit-query, built from this
    # copy of the kit (make names targets relative to it: its path may hold
    # a space, which make cannot).
    local targets=() make_ref ref_make
    ref_make=$(make_path "$ref_build" "$work/ref-build")
    targets=("$ref_make/bin/kit-query")
    for lab in "${labs[@]}"; do
        targets+=("$ref_make/solutions/$lab/${lab#*-}")
        ! lab_judged "$lab" ||
            targets+=("$ref_make/judge/$lab/judge" "$ref_make/judge/$lab/worker.o" "$ref_make/solutions/$lab/worker")
    done
    make_ref=(make -s --no-print-directory -C "$kit_top" KIT_BUILD="$ref_make" NVCC="$KIT_NVCC"
        NVCCFLAGS="$KIT_NVCC_FLAGS" ARCH="$KIT_ARCH")
    if ! "${make_ref[@]}" -q "${targets[@]}" >/dev/null 2>&1; then
        progress "building the kit's references of ${labs[*]} (once)"
        if ! "${make_ref[@]}" -j"$(nproc 2>/dev/null || echo 2)" "${targets[@]}" >"$work/ref-build.log" 2>&1; then
            cat "$work/ref-build.log" >&2
            echo "grade.sh: the kit's own references do not build here; see above" >&2
            exit 3
        fi
    fi

    [ -z "$report" ] || { mkdir -p "$report" && hides+=("$report"); } || exit 3
    sandbox_probe_log="$work/.probe"
    if ! sandbox_setup "$kit_top" "$ref_build" "$work" "$sandbox_mode" "${hides[@]}"; then
        echo "grade.sh: no sandbox: $sandbox_why. Class grading needs one (bubblewrap, and user namespaces);" >&2
        echo "grade.sh: grading without isolation must be asked for: --no-sandbox" >&2
        exit 3
    fi

    # Is there a GPU the kit's own programs can use, in the sandbox?
    local gpu_name="none usable" gpu_uuid="" gpu_uuids="" qdir="$work/query"
    gpu_reason="" gpu_cc=0
    mkdir -p "$qdir" && sandbox_own "$qdir"
    sb_extra=()
    sandboxed 120 120 0 1024 1 - "$qdir" "$qdir" -- "$ref_build/bin/kit-query" >"$qdir/out" 2>&1
    if [ "$run_rc" = 0 ]; then
        gpu_cc=$(sed -n 's/^compute-capability: //p' "$qdir/out")
        gpu_uuid=$(sed -n 's/^uuid: //p' "$qdir/out")
        gpu_uuids=$(sed -n 's/^uuids: //p' "$qdir/out")
        gpu_name="$(one_line "$(sed -n 's/^device: //p' "$qdir/out")") (compute capability $gpu_cc)"
    else
        gpu_reason=$(grep -m1 'cannot run here' "$qdir/out" | sed 's/.*cannot run here: //')
        gpu_reason="no usable GPU: $(one_line "${gpu_reason:-$(head -n 1 "$qdir/out")}")"
        gpu_reason=${gpu_reason%%. *}
    fi

    # Every lab built at once (half the cores: each build runs two nvcc).
    local running=0 started=$SECONDS
    progress "compiling ${#labs[@]} lab file(s) of ${origin:-$labs_dir}, $jobs at a time"
    for lab in "${labs[@]}"; do
        mkdir -p "$work/labs/$lab/src" "$work/labs/$lab/build"
        build_lab "$lab" &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then
            wait -n
            running=$((running - 1))
        fi
    done
    wait
    log "built in $((SECONDS - started)) s"
    progress "compiled in $((SECONDS - started)) s"

    # Then the checked runs, one lab after the other, sharing the GPU with
    # other runs that time nothing; then every lab's timed runs, the GPU
    # alone (one wait for it, not one per lab).
    local held="" timed=()
    declare -gA lab_v=() lab_p=() lab_r=() lab_x=() lab_runs=()
    for lab in "${labs[@]}"; do
        local st lab_started=$SECONDS
        st=$(cat "$work/labs/$lab/status" 2>/dev/null || printf 'FAIL\tthe build stopped without a status')
        verdict=${st%%$'\t'*} reason=${st#*$'\t'} points=0 ratio="" speed=""
        log "== $lab"
        [ -s "$work/labs/$lab/build.log" ] && log "$(sed 's/^/  build: /' "$work/labs/$lab/build.log" | head -n 20)"
        if [ "$verdict" = OK ]; then
            if [ -n "$gpu_reason" ]; then
                verdict=SKIP reason=$gpu_reason
            else
                if [ -z "$held" ]; then
                    # shellcheck disable=SC2086
                    if ! gpu_lock "$(conf_get all gpu-wait)" ${gpu_uuids:-${gpu_uuid:-gpu0}}; then
                        gpu_reason="the GPU stayed busy with another grading ${gpu_lock_note:+($gpu_lock_note)}"
                        verdict=SKIP reason=$gpu_reason
                    else
                        judge_probe "${labs[@]}"
                        if under_mps; then
                            gpu_run_mode=-x
                            log "the GPU is shared through CUDA MPS: each run holds it alone (a fatal fault of one MPS client ends the work of every client; NVIDIA's MPS documentation, error containment)"
                        fi
                        # From here each run holds the GPU for itself (run_one).
                        gpu_unlock
                    fi
                    held=yes
                fi
                if [ "$verdict" != SKIP ]; then
                    progress "$lab: running on the GPU"
                    grade_checks "$lab"
                    lab_runs[$lab]=$runs
                    [ "$speed" != yes ] || timed+=("$lab")
                fi
            fi
        fi
        lab_verdict "$lab" "checked runs: $((SECONDS - lab_started)) s"
    done
    if [ ${#timed[@]} -gt 0 ]; then
        local alone=yes started=$SECONDS
        progress "the timed runs of ${#timed[@]} lab(s), the GPU alone"
        gpu_alone || alone=""
        for lab in "${timed[@]}"; do
            if [ -n "$alone" ]; then
                grade_speed "$lab"
            else
                verdict=SKIP reason="the GPU stayed busy with other runs, so speed was not graded${gpu_lock_note:+ ($gpu_lock_note)}"
            fi
            speed=""
            lab_verdict "$lab" "timed runs"
        done
        log "timed runs: $((SECONDS - started)) s"
    fi
    gpu_unlock

    local again l
    if [ "$labs_dir" = "$(cd "$kit_top/labs" 2>/dev/null && pwd -P)" ]; then
        again="make check SEED=$grading_seed"
        if [ ${#labs[@]} -ne ${#all_labs[@]} ]; then
            again+=" LAB="
            for l in "${labs[@]}"; do again+="${l%%-*},"; done
            again=${again%,}
        fi
        [ "$sanitize" = 0 ] || again+=" SANITIZE=1"
        [ "$sandbox_mode" != none ] || again+=" (with --no-sandbox)"
    else
        # Another folder of labs (a class's submission, an upload): grade.sh
        # itself, on that folder.
        again="bash common/grade/grade.sh --seed $grading_seed"
        [ "$sanitize" = 0 ] || again+=" --sanitize"
        [ "$sandbox_mode" != none ] || again+=" --no-sandbox"
        if [ -n "$origin" ]; then again+=" --labs-dir \"the labs of $origin\""; else again+=" --labs-dir $labs_dir"; fi
        for l in "${labs[@]}"; do again+=" ${l%%-*}"; done
    fi
    report_mode=$(mode_note "${labs[@]}")
    report_header=(
        "Student: $student_name${student_id:+ (ID $student_id)}; labs from ${origin:-$labs_dir}"
        "GPU $gpu_name; grading seed $grading_seed$([ "$sanitize" = 0 ] || echo ", with compute-sanitizer")"
        "Isolation: $sandbox_note"
        "Mode: $report_mode"
    )
    # Where it ran: a Linux host, or WSL 2 and what it shares (platform.sh).
    local platform_line
    platform_line=$(grade_platform_line "$ref_build/bin/kit-query")
    [ -z "$platform_line" ] || report_header+=("$platform_line")
    report_again="The same sizes and seeds again: $again"
    report_gpu=$gpu_name report_isolation=$sandbox
    reports_screen "${labs[@]}"
    if [ -n "$report" ]; then
        reports_write "$report" "${labs[@]}" || exit 3
    fi
    local failed=0 skipped=0
    for lab in "${labs[@]}"; do
        case ${lab_v[$lab]} in FAIL) failed=1 ;; SKIP) skipped=1 ;; esac
    done
    [ "$failed" = 0 ] || exit 1
    [ "$skipped" = 0 ] || exit 2
    exit 0
}

if [ "${KIT_GRADE_LIB:-0}" != 1 ]; then
    main "$@"
fi
