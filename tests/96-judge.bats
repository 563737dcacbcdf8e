#!/usr/bin/env bats
# The kit's judge (common/lib/kit_judge.h) and its worker
# (common/harness/worker.cu): a lab's harness built to grade, which never
# runs the student's code, and the process that does. Without a GPU their
# protocol still runs: Lab 04's calculators are host functions, so
# `--calculator-only` goes through judge and worker with no GPU at all.

setup() {
    load test_helper
    JUDGE04="$KIT_BUILD/judge/04-occupancy/judge"
    EXEC="$KIT_ROOT/common/grade/sandbox-exec.sh"
    W="$BATS_TEST_TMPDIR"
}

# judge04 WORKER_ARGV_FILE ARGS...: Lab 04's judge with that worker.
judge04() {
    local argv=$1
    shift
    KIT_JUDGE_WORKER="$argv" KIT_JUDGE_WORKER_LOG="$W/worker.log" "$JUDGE04" "$@"
}

@test "judge: Lab 04's calculators through judge and worker: the reference passes, the skeleton fails, on the CPU" {
    worker_cmd "$W/ref" "$KIT_BUILD/solutions/04-occupancy/worker"
    run judge04 "$W/ref" --calculator-only --seed 7
    assert_success
    assert_line "result: PASS"
    assert_line "throttle-cpu-mismatches: 0"
    worker_cmd "$W/skel" "$KIT_BUILD/labs/04-occupancy/worker"
    run judge04 "$W/skel" --calculator-only --seed 7
    assert_failure 1
    assert_line "result: FAIL"
    refute_line "throttle-cpu-mismatches: 0"
}

@test "judge: without its worker's command it says it is the grader's, exit 64; the worker alone says so too" {
    run "$JUDGE04" --calculator-only
    assert_failure 64
    assert_output --partial "this is the kit's judge"
    run "$KIT_BUILD/solutions/04-occupancy/worker"
    assert_failure 64
    assert_output --partial "the kit's judge starts it"
}

@test "judge: a worker that breaks the protocol, stops, or names another lab fails the lab, saying so" {
    # Garbage on the socket.
    cat >"$W/junk.sh" <<'SH'
#!/bin/bash
printf 'result: PASS\nresult-token: 0\n' >&3
sleep 5
SH
    worker_cmd "$W/junk" bash "$W/junk.sh"
    run judge04 "$W/junk" --calculator-only --seed 1
    assert_failure 1
    assert_output --partial "broke the kit's protocol"
    refute_line "result: PASS"
    # Gone at once.
    worker_cmd "$W/gone" bash -c 'echo "my own words: error of mine" >&2; exit 3'
    run judge04 "$W/gone" --calculator-only --seed 1
    assert_failure 1
    assert_output --partial "the student's code stopped (exit status 3) during the worker's start: my own words: error of mine"
    # Another lab's worker.
    worker_cmd "$W/other" "$KIT_BUILD/solutions/01-coalescing/worker"
    run judge04 "$W/other" --calculator-only --seed 1
    assert_failure 1
    assert_output --partial "broke the kit's protocol"
}

@test "judge: host memory reaches Labs 05 and 08's workers only as a described memfd; a descriptor on any other message stops the worker" {
    # tests/fake_judge.py speaks the protocol as the judge does (kit_proto.h).
    local lab
    for lab in 05-streams 08-multi-gpu; do
        run python3 "$KIT_ROOT/tests/fake_judge.py" "$KIT_BUILD/solutions/$lab/worker" host-map
        assert_success
        assert_line "hello: yes"
        assert_line "mapped: yes"
        assert_line "released: yes"
        assert_line "worker-exit: 0"
        run python3 "$KIT_ROOT/tests/fake_judge.py" "$KIT_BUILD/solutions/$lab/worker" map-without-fd
        assert_line "worker-exit: 1"
        assert_output --partial "a host buffer the judge did not describe"
        run python3 "$KIT_ROOT/tests/fake_judge.py" "$KIT_BUILD/solutions/$lab/worker" fd-on-call
        assert_line "worker-exit: 1"
        assert_output --partial "a descriptor the judge did not describe"
    done
}

@test "judge: the worker gets neither the result channel nor its token, and no descriptor but the socket" {
    cat >"$W/spy.sh" <<'SH'
#!/bin/bash
env
echo "fds: $(ls /proc/self/fd | sort -n | tr '\n' ' ')"
exit 9
SH
    worker_cmd "$W/spy" bash "$W/spy.sh"
    exec {chan}>"$W/channel"
    KIT_RESULT_FD=$chan KIT_RESULT_TOKEN=s3cr3t-token run judge04 "$W/spy" --calculator-only --seed 1
    exec {chan}>&-
    assert_failure 1
    run cat "$W/worker.log"
    refute_output --partial "s3cr3t-token"
    refute_output --partial "KIT_RESULT"
    refute_output --partial "KIT_JUDGE"
    # 0, 1, 2, the socket (3), and the one ls itself opens.
    assert_line --regexp "^fds: 0 1 2 3 [0-9]+ $"
    run cat "$W/channel"
    refute_output --partial "result: PASS"
}

@test "judge: a worker of the judge's own user cannot read the judge's memory or environment (/proc)" {
    command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (util-linux)"
    [ "$(id -u)" = 0 ] || skip "needs root, to run judge and worker as one unprivileged user"
    # A folder the unprivileged user reaches (the test's own may not be).
    W=$(mktemp -d /tmp/kit-judge-test.XXXXXX)
    chmod 755 "$W"
    cat >"$W/peek.sh" <<'SH'
#!/bin/bash
judge=$PPID
cat "/proc/$judge/environ" >/dev/null 2>&1 && echo "read the judge's environment"
head -c 64 "/proc/$judge/mem" >/dev/null 2>&1 && echo "read the judge's memory"
ls "/proc/$judge/fd" >/dev/null 2>&1 && echo "listed the judge's descriptors"
echo "peeked at $judge"
exit 9
SH
    chmod a+rx "$W/peek.sh"
    cp "$EXEC" "$W/exec.sh" && chmod 755 "$W/exec.sh"
    EXEC="$W/exec.sh" worker_cmd "$W/peek" bash "$W/peek.sh"
    chmod a+r "$W/peek"
    touch "$W/worker.log" && chmod a+rw "$W/worker.log" "$W"
    # The judge too, where that user reaches it (the build may be in a
    # folder only root may enter).
    cp "$JUDGE04" "$W/judge" && chmod 755 "$W/judge"
    run setpriv --reuid=65534 --regid=65534 --clear-groups env KIT_JUDGE_WORKER="$W/peek" \
        KIT_JUDGE_WORKER_LOG="$W/worker.log" KIT_RESULT_TOKEN=s3cr3t "$W/judge" --calculator-only --seed 1
    assert_failure 1
    run cat "$W/worker.log"
    assert_output --partial "peeked at"
    refute_output --partial "read the judge's"
    refute_output --partial "listed the judge's"
    rm -rf "$W"
}

@test "judge: the worker and everything it started end with the judge" {
    cat >"$W/linger.sh" <<'SH'
#!/bin/bash
sleep 3019 &
exec 3>&-
sleep 3020
SH
    worker_cmd "$W/linger" bash "$W/linger.sh"
    run timeout 10 bash -c 'KIT_JUDGE_WORKER="$1" KIT_JUDGE_WORKER_LOG="$2" "$3" --calculator-only --seed 1' _ \
        "$W/linger" "$W/worker.log" "$JUDGE04"
    assert_failure
    sleep 1
    run pgrep -f "sleep 30(19|20)"
    assert_failure
}

# bats test_tags=gpu
@test "judge: the worker's kernels start after the judge's own work is done, however late the GPU runs it" {
    require_gpu
    # The two processes' streams are not ordered with each other: Lab 03's
    # partition (the worker's) indexes with the class starts that the
    # judge's kernels have just written over the kit's poison. With 3 ms of
    # GPU work put before the judge's own work after each answer
    # (KIT_JUDGE_TEST_DELAY_US, as a GPU busy with other processes delays
    # it), a judge that did not wait for its own work let the worker's
    # kernel index with the poison: an illegal address.
    worker_cmd "$W/ref" "$KIT_BUILD/solutions/03-divergence/worker"
    run env KIT_JUDGE_TEST_DELAY_US=3000 KIT_JUDGE_WORKER="$W/ref" KIT_JUDGE_WORKER_LOG="$W/worker.log" \
        KIT_JUDGE_MODULE_TIMED="$KIT_BUILD/solutions/03-divergence/timed.fatbin" \
        KIT_JUDGE_MODULE_COUNTED="$KIT_BUILD/solutions/03-divergence/counted.fatbin" \
        "$KIT_BUILD/judge/03-divergence/judge" --size 1000003 --seed "$RANDOM" --work 64 --reps 2
    assert_success
    assert_line "result: PASS"
}
