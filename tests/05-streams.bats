#!/usr/bin/env bats
# Lab 05: CUDA streams - overlapping transfers and kernels.

load test_helper

LAB=05-streams

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
}

# --- CPU ---------------------------------------------------------------------

@test "05: skeleton and reference differ only inside the student regions" {
    assert_student_regions "$LAB" 3
}

@test "05: --help lists the options and exits 0" {
    run "$REF" --help
    assert_success
    for opt in "--streams N" "--kernel-work W" "--connections C" "--timeline FILE"; do
        assert_output --partial "$opt"
    done
}

@test "05: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--streams 0|from 1 to 64
--streams 65|from 1 to 64
--streams two|from 1 to 64
--size 32 --streams 33|more chunks than the 32 elements
--kernel-work lots|expected 'auto' or a count
--kernel-work -1|expected 'auto' or a count
--kernel-work 2000000|expected 'auto' or a count
--connections 0|from 1 to 32
--connections 33|from 1 to 32
--timeline=|needs a non-empty value
--pinned|unknown option
CASES
}

@test "05: with no GPU visible it exits 2 and says why" {
    CUDA_VISIBLE_DEVICES="" run "$REF"
    assert_failure 2
    assert_output --partial "cannot run here"
}

# --- GPU ---------------------------------------------------------------------

# bats test_tags=gpu
@test "05: every version verifies at the default size" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    assert_line "wrong-elements: 0"
}

# bats test_tags=gpu,perf
@test "05: pinned copies are at least ${KIT_MIN_PINNED_OVER_PAGEABLE}x faster than pageable ones" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv pinned-vs-pageable-h2d)" "$KIT_MIN_PINNED_OVER_PAGEABLE" "pinned over pageable"
}

# bats test_tags=gpu,perf
@test "05: the pipeline beats pinned serial and comes near its ideal" {
    require_gpu
    run_reference_once "$LAB"
    [ "$(kv copy-engines)" -ge 2 ] ||
        skip "one copy engine: copies in and out cannot overlap (the balanced test covers it)"
    assert_at_least "$(kv speedup-pipeline-vs-pinned)" "$KIT_MIN_PIPELINE_SPEEDUP" "pipeline speedup"
    assert_at_least "$(kv pipeline-fraction-of-ideal)" "$KIT_MIN_PIPELINE_FRACTION_OF_IDEAL" \
        "fraction of the ideal"
}

# bats test_tags=gpu
@test "05: the timeline shows copies running beside kernels" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv overlap-copy-kernel-ms)" 0.001 "copy-kernel overlap (ms)"
    assert_at_least "$(kv max-concurrent-operations)" 2 "operations at once"
}

# bats test_tags=gpu,perf
@test "05: with a kernel as long as the copies, the pipeline hides the kernels" {
    require_gpu
    run "$REF" --kernel-work auto --streams 8 --reps 5 --timeline "$BATS_TEST_TMPDIR/t.csv"
    assert_success
    assert_line "result: PASS"
    assert_at_least "$(kv speedup-pipeline-vs-pinned)" "$KIT_MIN_PIPELINE_SPEEDUP_BALANCED" \
        "balanced pipeline speedup"
    # The kernels hide behind the copies: for most of their time a copy ran too.
    assert_at_least "$(kv overlap-copy-kernel-ms)" \
        "$(awk -v k="$(kv time-kernel-ms)" 'BEGIN { print 0.5 * k }')" "copy-kernel overlap (ms)"
    # The timeline: a header and three operations for each of the 8 chunks.
    run wc -l <"$BATS_TEST_TMPDIR/t.csv"
    assert_output 25
    run head -n 1 "$BATS_TEST_TMPDIR/t.csv"
    assert_output "chunk,operation,start_ms,end_ms"
}

# bats test_tags=gpu
@test "05: one hardware queue (--connections 1) still verifies and reports both orders" {
    require_gpu
    run "$REF" --connections 1 --streams 8 --reps 5
    assert_success
    assert_line "connections: 1"
    assert_line --regexp "^time-depth-first-ms: [0-9.]+$"
    assert_line --regexp "^time-breadth-first-ms: [0-9.]+$"
}

# bats test_tags=gpu
@test "05: the skeleton as shipped fails" {
    require_gpu
    run "$SKELETON" --size 4M --streams 4 --reps 2
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "alloc_pinned returned pageable memory"
    assert_output --partial "no two operations ran at once"
}

# bats test_tags=gpu
@test "05: uneven chunks verify" {
    require_gpu
    run "$REF" --size 1000003 --streams 7 --reps 2
    assert_success
    assert_line "result: PASS"
}
