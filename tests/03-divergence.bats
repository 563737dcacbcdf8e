#!/usr/bin/env bats
# Lab 03: warp divergence.

load test_helper

LAB=03-divergence

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
}

# --- CPU ---------------------------------------------------------------------

@test "03: skeleton and reference differ only inside the student regions" {
    assert_student_regions "$LAB" 2
}

@test "03: --help lists the options and exits 0" {
    run "$REF" --help
    assert_success
    assert_output --partial "--iterations I"
    assert_output --partial "--size N"
}

@test "03: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--iterations 0|from 1 to 100000
--iterations -2|from 1 to 100000
--reps 1001|from 1 to 1000
--size 1.5G|is not a size
--warmup|needs a value
--divergence|unknown option
CASES
}

@test "03: with no GPU visible it exits 2 and says why" {
    CUDA_VISIBLE_DEVICES="" run "$REF"
    assert_failure 2
    assert_output --partial "cannot run here"
}

# --- GPU ---------------------------------------------------------------------

# bats test_tags=gpu
@test "03: the reference passes at the default size" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    for key in nodiv div math-1 math-2 math-3 math-4; do
        assert_equal "$(kv "wrong-elements-$key")" 0
    done
}

# bats test_tags=gpu
@test "03: branch bodies run with all 32 lanes by warp, 8 by thread" {
    require_gpu
    run_reference_once "$LAB"
    assert_equal "$(kv branch-efficiency-nodiv)" 1.0000
    assert_equal "$(kv divergent-branches-nodiv)" 0.0000
    assert_equal "$(kv branch-efficiency-div)" 0.2500
    # Three of the four tests in the chain split the warp; the last one does not.
    assert_equal "$(kv divergent-branches-div)" 0.7500
    # The book's kernels: even/odd threads half the lanes, warps all of them.
    assert_equal "$(kv branch-efficiency-math-1)" 0.5000
    assert_equal "$(kv branch-efficiency-math-2)" 1.0000
    assert_equal "$(kv branch-efficiency-math-3)" 0.5000
    assert_equal "$(kv branch-efficiency-math-4)" 1.0000
}

# bats test_tags=gpu,perf
@test "03: branching by warp is at least ${KIT_MIN_SPEEDUP_DIVERGENCE}x faster than by thread" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv speedup-nodiv-vs-div)" "$KIT_MIN_SPEEDUP_DIVERGENCE" "speedup"
}

# bats test_tags=gpu
@test "03: the skeleton as shipped fails" {
    require_gpu
    run "$SKELETON" --size 1M --reps 1 --warmup 0
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "warp_no_divergence: element"
    assert_output --partial "mathKernel4: element"
}

# bats test_tags=gpu
@test "03: the course's size and an odd size verify" {
    require_gpu
    for size in 4M 100003; do
        run "$REF" --size "$size" --reps 2
        assert_success
        assert_line "result: PASS"
    done
}

# bats test_tags=gpu
@test "03: --csv writes one row per kernel" {
    require_gpu
    local csv="$BATS_TEST_TMPDIR/div.csv"
    run "$REF" --size 1M --reps 1 --csv "$csv"
    assert_success
    run wc -l <"$csv"
    assert_output 7
}
