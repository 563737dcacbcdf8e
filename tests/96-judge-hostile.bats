#!/usr/bin/env bats
# The judge against native code that got past the text rules and the
# object checks. These files (tests/fixtures/labNN/hostile-*.sed) would be
# refused by the grader before any run; the tests build them as workers
# (make test-tools) and give them to the judge as the grader would, so
# that what is tested is the judge and the sandbox alone: a student file
# that beats the rules still cannot raise its verdict.
#
# Lab 04's calculator runs through judge and worker without a GPU, so the
# forging, killing and filling files are CPU tests; the GPU ones are Lab
# 05's busy GPU (the bars the pipeline is judged against), Lab 08's busy
# host link (its scaling's bar, on two GPUs), Lab 06's forged counts and
# Lab 01's work left running.

setup() {
    load test_helper
    EXEC="$KIT_ROOT/common/grade/sandbox-exec.sh"
    FIX="$KIT_BUILD/tests/fixtures"
    W="$BATS_TEST_TMPDIR"
}

# sandboxed_worker_cmd FILE WORKER: worker_cmd's command inside bubblewrap,
# as the grader builds it (common/grade/lib.sh: worker_sandbox_cmd with
# grading.conf's limits, the run's token in the grader's environment as
# grade.sh has it); skips where bubblewrap cannot run.
sandboxed_worker_cmd() {
    local cap
    sandbox_or_skip
    cap=$(conf_get 04-occupancy output-limit)
    sb_extra=(--ro-bind "$(dirname "$2")" "$(dirname "$2")")
    KIT_RESULT_TOKEN=hostile-test-token worker_sandbox_cmd 60 0 "${cap:-65536}" -- "$2"
    printf '%s\0' "${sb_cmd[@]}" >"$1"
}

# judge_with LAB ARGV_FILE ARGS...: LAB's judge with that worker, holding
# a result channel ($W/channel) and a token, as the grader runs it.
judge_with() {
    local lab=$1 argv=$2
    shift 2
    : >"$W/channel"
    exec {chan}>"$W/channel"
    KIT_RESULT_FD=$chan KIT_RESULT_TOKEN=hostile-test-token KIT_JUDGE_WORKER="$argv" \
        KIT_JUDGE_WORKER_LOG="$W/worker.log" run "$KIT_BUILD/judge/$lab/judge" "$@"
    exec {chan}>&-
}

# refute_forged [sandboxed]: nothing the worker did reached the channel,
# the token or the judge. Without a sandbox its parent is the judge, and
# every reach for it is refused; inside bubblewrap its parent is the
# sandbox's own first process, and the judge is not in its PID namespace
# at all (what it reaches there holds nothing of the judge's).
refute_forged() {
    run cat "$W/channel"
    refute_output --partial "result: PASS"
    run cat "$W/worker.log"
    assert_output --partial "hostile: the token in my environment: none"
    refute_output --partial "found the token"
    refute_output --partial "hostile-test-token"
    if [ "${1:-}" = sandboxed ]; then
        assert_line "hostile: my parent: bwrap"
    else
        assert_line "hostile: my parent: judge"
        assert_output --partial "hostile: ptrace of the judge: refused"
        assert_output --partial "hostile: the judge's memory map: closed"
        assert_output --partial "hostile: the judge's memory: closed"
        refute_output --partial "the judge's environment: read"
        refute_output --partial "through the judge's descriptor"
    fi
}

@test "hostile: a worker that forges a PASS from inside (descriptors, /proc, ptrace) FAILs; without a sandbox, as the judge's own unprivileged user" {
    command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (util-linux)"
    [ "$(id -u)" = 0 ] || skip "needs root, to run judge and worker as one unprivileged user"
    W=$(mktemp -d /tmp/kit-hostile-test.XXXXXX)
    chmod 755 "$W"
    cp "$EXEC" "$W/exec.sh"
    cp "$FIX/lab04/hostile-forge.worker" "$KIT_BUILD/solutions/04-occupancy/worker" \
        "$KIT_BUILD/judge/04-occupancy/judge" "$W/"
    chmod 755 "$W"/*
    EXEC="$W/exec.sh" worker_cmd "$W/forge" "$W/hostile-forge.worker"
    EXEC="$W/exec.sh" worker_cmd "$W/ref" "$W/worker"
    : >"$W/worker.log" && : >"$W/channel"
    chmod a+rw "$W/worker.log" "$W/channel" && chmod a+r "$W/forge" "$W/ref"
    # The judge writes its verdict to descriptor 9, the channel.
    run setpriv --reuid=65534 --regid=65534 --clear-groups bash -c \
        'exec 9>>"$1/channel"; KIT_RESULT_FD=9 KIT_RESULT_TOKEN=hostile-test-token KIT_JUDGE_WORKER="$1/$2" KIT_JUDGE_WORKER_LOG="$1/worker.log" "$1/judge" --calculator-only --seed 3' \
        _ "$W" forge
    assert_failure 1
    assert_line "result: FAIL"
    refute_forged
    # Positive control: the reference's worker, the same way.
    : >"$W/channel"
    run setpriv --reuid=65534 --regid=65534 --clear-groups bash -c \
        'exec 9>>"$1/channel"; KIT_RESULT_FD=9 KIT_RESULT_TOKEN=hostile-test-token KIT_JUDGE_WORKER="$1/$2" KIT_JUDGE_WORKER_LOG="$1/worker.log" "$1/judge" --calculator-only --seed 3' \
        _ "$W" ref
    assert_success
    run cat "$W/channel"
    assert_output --partial "result: PASS"
    rm -rf "$W"
}

@test "hostile: a worker that forges a PASS from inside FAILs in the grader's sandbox (bubblewrap); the reference passes there" {
    sandboxed_worker_cmd "$W/forge" "$FIX/lab04/hostile-forge.worker"
    judge_with 04-occupancy "$W/forge" --calculator-only --seed 4
    assert_failure 1
    assert_line "result: FAIL"
    refute_forged sandboxed
    sandboxed_worker_cmd "$W/ref" "$KIT_BUILD/solutions/04-occupancy/worker"
    judge_with 04-occupancy "$W/ref" --calculator-only --seed 4
    assert_success
    run cat "$W/channel"
    assert_output --partial "result: PASS"
}

@test "hostile: a worker that kills its judge leaves no verdict (the grader's FAIL); in the sandbox the judge is out of its reach" {
    worker_cmd "$W/kill" "$FIX/lab04/hostile-kill-judge.worker"
    judge_with 04-occupancy "$W/kill" --calculator-only --seed 5
    # Killed by SIGKILL: 128 + 9.
    assert_failure 137
    run cat "$W/channel"
    refute_output --partial "result: PASS"
    run cat "$W/worker.log"
    assert_output --partial "hostile: SIGKILL to my parent"
    # Inside bubblewrap its parent is the sandbox's own: the judge lives on
    # and says FAIL.
    sandboxed_worker_cmd "$W/kill-sb" "$FIX/lab04/hostile-kill-judge.worker"
    judge_with 04-occupancy "$W/kill-sb" --calculator-only --seed 5
    assert_failure 1
    assert_line "result: FAIL"
    run cat "$W/channel"
    refute_output --partial "result: PASS"
}

@test "hostile: a worker that fills every place it can write stays within the sandbox's caps, and leaves nothing on the host" {
    sandboxed_worker_cmd "$W/fill" "$FIX/lab04/hostile-fill.worker"
    judge_with 04-occupancy "$W/fill" --calculator-only --seed 6
    assert_failure 1
    assert_line "result: FAIL"
    run cat "$W/worker.log"
    assert_output --partial "hostile: wrote"
    # It writes file after file into every place (each file capped by the
    # sandbox's file size) until the place is full: the sandbox's /tmp
    # (KIT_SANDBOX_TMP_MIB, 256 MiB by default; its folder and $HOME are
    # there too) and /dev/shm (64 MiB) take it all; /var/tmp is read-only.
    local tmp_cap=$((${KIT_SANDBOX_TMP_MIB:-256} << 20)) shm_cap=$((64 << 20)) total=0 n place
    while read -r n place; do
        case $place in
        /var/tmp) [ "$n" -le 0 ] || fail "it wrote $n bytes to the host's /var/tmp" ;;
        *) [ "$n" -lt 0 ] || total=$((total + n)) ;;
        esac
    done < <(sed -n 's/^hostile: wrote \(-\{0,1\}[0-9]*\) bytes to \(.*\)$/\1 \2/p' "$W/worker.log")
    [ "$total" -le $((tmp_cap + shm_cap)) ] || fail "$total bytes written in all, past /tmp's and /dev/shm's caps"
    # The attack itself ran: the caps, not the file size, stopped it.
    [ "$total" -ge $((64 << 20)) ] || fail "only $total bytes written: the attack did not run"
    # Nothing of it on the host: no file of its names in any place it
    # wrote to, nor in its run folder. (The free space of the host's /tmp is
    # no measure here: the suite's other tests build in it meanwhile.)
    local d
    for d in /tmp /dev/shm /var/tmp "$HOME" "$KIT_ROOT"; do
        ! compgen -G "$d/hostile-fill-*" >/dev/null || fail "$d holds its files on the host"
    done
    [ -z "$(find "$W" -name 'hostile-fill-*' -print -quit)" ] || fail "its run folder holds its files on the host"
}

# bats test_tags=gpu
@test "hostile: Lab 05 with a thread that keeps the GPU busy while the kit times its bars FAILs by the clock, as the grader's timed runs judge it; the reference passes" {
    require_gpu_alone
    on_wsl2 && skip "WSL 2: the overlap by the clock is judged only where the kit's own pipeline overlaps; $KIT_WSL_OVERLAP_WHY"
    # 16M elements: at 8M the pipeline could save about 0.87 ms on an H100,
    # under the 1 ms (MIN_GAIN_MS) below which the gain is not judged.
    worker_cmd "$W/busy" "$FIX/lab05/hostile-busy-gpu.worker"
    judge_with 05-streams "$W/busy" --size 16M --streams 4 --focus depth-first-4 --seed 7
    assert_failure 1
    assert_line "result: FAIL"
    assert_line "pipeline-gain-judged: yes"
    assert_output --regexp "depth-first, 4 chunks: [0-9.]+ ms at its fastest against [0-9.]+ ms serial .* it won back -?[0-9]+% of what overlapping could"
    worker_cmd "$W/ref" "$KIT_BUILD/solutions/05-streams/worker"
    judge_with 05-streams "$W/ref" --size 16M --streams 4 --focus depth-first-4 --seed 7
    assert_success
    assert_line "pipeline-gain-judged: yes"
}

# bats test_tags=gpu
@test "hostile: Lab 08 with a thread that keeps a host link busy while the kit measures the links FAILs by the judge's clock: the links are measured again with it gone" {
    # The fixture's GPUs run one after the other; its thread, started
    # before main, copies to GPU 1 whenever gpus_add is not running, to make
    # the links look as if they did not scale, so that the scaling would
    # not be judged.
    require_gpus 2 alone
    skip_on_wsl "$KIT_WSL_MULTI_GPU_WHY"
    local links_ref links_alone
    worker_cmd "$W/ref" "$KIT_BUILD/solutions/08-multi-gpu/worker"
    judge_with 08-multi-gpu "$W/ref" --gpus 2 --seed 7
    assert_success
    [ "$(kv scaling-judged)" = yes ] || skip "the scaling is not judged here, for the reference either: $(kv host-link-scaling)x links"
    links_ref=$(kv host-link-scaling)
    worker_cmd "$W/busy" "$FIX/lab08/hostile-busy-links.worker"
    judge_with 08-multi-gpu "$W/busy" --gpus 2 --seed 7
    assert_failure 1
    assert_line "result: FAIL"
    assert_line "scaling-judged: yes"
    assert_output --partial "but the host links carry"
    # The bar is the links' own: within a tenth of the reference's run.
    assert_close "$(kv host-link-scaling)" "$links_ref" "$(awk -v l="$links_ref" 'BEGIN { print l / 10 }')" \
        "the host links' scaling measured beside the hostile worker"
    # The negative control: run as its own program, where the kit measures
    # the links once, with the thread alive, the bar is lowered.
    run "$FIX/lab08/hostile-busy-links" --gpus 2 --seed 7
    links_alone=$(kv host-link-scaling)
    awk -v a="$links_alone" -v r="$links_ref" 'BEGIN { exit !(a ~ /^[0-9.]+$/ && a < 0.9 * r) }' ||
        fail "the thread did not lower the links' scaling in its own program ($links_alone against $links_ref): the test shows nothing"
}

# bats test_tags=gpu
@test "hostile: counts forged from inside (Lab 06's conflict counted away) pass the count checks, as the README says; the judge's clock still times the conflicted kernel" {
    # Counts are made in the student's own GPU context, which can reach
    # them: the fixture takes its bank conflict's wavefronts back out. What
    # it cannot reach is the judge's clock: its transpose_padded is timed as
    # what it is, the plain tile's kernel, as slow as the kit's own
    # conflicted transpose_shared of the same run.
    require_gpu_alone
    local ratio_ref ratio_forged
    worker_cmd "$W/ref" "$KIT_BUILD/solutions/06-shared-memory/worker"
    # The default matrix (from the L2, beyond it): the judge's own cost of
    # a timed run (its round trip to the worker) weighs little beside the
    # kernel there (an H100, 2026-11-28: padded/plain 0.86 through the
    # judge at --matrix 4096, where the kernels took 49 and 84 us; the
    # program alone, 0.59 there and 0.62 at its default 8192).
    judge_with 06-shared-memory "$W/ref" --seed 9
    assert_success
    ratio_ref=$(awk -v p="$(kv time-padded-ms)" -v s="$(kv time-shared-ms)" 'BEGIN { printf "%.3f", p / s }')
    awk -v r="$ratio_ref" 'BEGIN { exit !(r < 0.85) }' ||
        skip "the padded tile is not clearly faster than the plain one on this GPU (padded/plain $ratio_ref)"
    worker_cmd "$W/forge" "$FIX/lab06/hostile-forge-counts.worker"
    judge_with 06-shared-memory "$W/forge" --seed 9
    assert_line "result: PASS"
    assert_line "shared-load-wavefronts-per-request-padded: 1.0000"
    assert_line "shared-load-wavefronts-per-request-shared: 32.0000"
    ratio_forged=$(awk -v p="$(kv time-padded-ms)" -v s="$(kv time-shared-ms)" 'BEGIN { printf "%.3f", p / s }')
    assert_close "$ratio_forged" 1.0 0.15 "the forged padded kernel's time against the plain tile's (reference: $ratio_ref)"
}

# bats test_tags=gpu
@test "hostile: GPU work a worker's own thread keeps queuing ends with the judge: no process, no GPU context left" {
    # Alone: its thread's kernels would slow other tests' timings.
    require_gpu_alone
    worker_cmd "$W/linger" "$FIX/lab01/hostile-linger.worker"
    judge_with 01-coalescing "$W/linger" --size 1M --seed 8 --reps 1
    assert_output --regexp "result: (PASS|FAIL)"
    run cat "$W/worker.log"
    assert_output --partial "hostile: the thread started"
    sleep 1
    run pgrep -f "hostile-linger.worker"
    assert_failure
    if command -v nvidia-smi >/dev/null 2>&1; then
        run nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader
        refute_output --partial "hostile-linger"
    fi
}
