#!/usr/bin/env bats
# Lab 04: occupancy and SM efficiency.

load test_helper

LAB=04-occupancy

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
}

# --- CPU ---------------------------------------------------------------------

@test "04: skeleton and reference differ only inside the student regions" {
    assert_student_regions "$LAB" 3
}

@test "04: the calculator reproduces the course's K40 table, on the CPU" {
    run "$REF" --k40
    assert_success
    assert_line "k40-occupancy-32: 0.2500"
    assert_line "k40-occupancy-64: 0.5000"
    for t in 128 256 512 1024; do
        assert_line "k40-occupancy-$t: 1.0000"
    done
    assert_line "result: PASS"
}

@test "04: the skeleton's calculator fails the K40 table" {
    run "$SKELETON" --k40
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "does not give the course's K40 table"
}

@test "04: --help lists the options and exits 0" {
    run "$REF" --help
    assert_success
    for opt in "--k40" "--launch-illegal" "--iterations I" "--max-elements N" "--size N"; do
        assert_output --partial "$opt"
    done
}

@test "04: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--max-elements 100|must be a power of two
--max-elements 16|from 32 to
--iterations 0|from 1 to 10000000
--k40=yes|takes no value
--occupancy|unknown option
CASES
}

@test "04: with no GPU visible it exits 2 and says why" {
    CUDA_VISIBLE_DEVICES="" run "$REF"
    assert_failure 2
    assert_output --partial "cannot run here"
}

# --- GPU ---------------------------------------------------------------------

# bats test_tags=gpu
@test "04: the reference passes: calculator = runtime everywhere, every output right" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    assert_line "calculator-mismatches: 0"
    assert_line "wrong-elements: 0"
    [ "$(kv calculator-configurations)" -ge 100 ]
}

# bats test_tags=gpu
@test "04: one block keeps one SM busy: SM efficiency 1/SMs" {
    require_gpu
    run_reference_once "$LAB"
    local sms=$(kv sms)
    assert_close "$(kv s1-32-sm-efficiency)" "$(awk -v s="$sms" 'BEGIN { print 1 / s }')" 0.01 \
        "SM efficiency of one block"
}

# bats test_tags=gpu
@test "04: blocks of 1024 threads, one per SM, achieve at most 50% occupancy and trail it" {
    require_gpu
    run_reference_once "$LAB"
    # Scenario 1 at 16,384 elements: 16 blocks of 1024 threads, one per SM.
    # Two such blocks fit (100% theoretical), but one holds 32 of 64 warp
    # slots; warps on the cheap paths finish early, so achieved is lower.
    assert_equal "$(kv s1-16384-theoretical)" 1.0000
    assert_at_least 0.5001 "$(kv s1-16384-achieved)" "50% against achieved"
    assert_at_least "$(kv s1-16384-achieved)" 0.3 "achieved occupancy, one block of 1024 per SM"
}

# bats test_tags=gpu,perf
@test "04: scenario 2 beats scenario 1 at 1,024 and 2,048 elements, with lower occupancy" {
    require_gpu
    run_reference_once "$LAB"
    local n
    for n in 1024 2048; do
        local t1=$(kv "s1-$n-time-ms") t2=$(kv "s2-$n-time-ms")
        assert_at_least "$(awk -v a="$t1" -v b="$t2" 'BEGIN { print a / b }')" \
            "$KIT_MIN_SCENARIO2_SPEEDUP" "scenario 1 over scenario 2 at $n"
        assert_at_least "$(kv "s2-$n-sm-efficiency")" "$(kv "s1-$n-sm-efficiency")" \
            "scenario 2's SM efficiency at $n"
    done
    assert_at_least "$(kv s1-1024-theoretical)" "$(kv s2-1024-theoretical)" "scenario 1's occupancy"
}

# bats test_tags=gpu,perf
@test "04: a partial last wave: one block more takes at least ${KIT_MIN_PARTIAL_WAVE_SLOWDOWN}x longer" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv wave-slowdown)" "$KIT_MIN_PARTIAL_WAVE_SLOWDOWN" "partial wave slowdown"
}

# bats test_tags=gpu
@test "04: 2D shapes: a 16-wide block touches 2 segments per request, 4 sectors as 32-wide" {
    require_gpu
    run_reference_once "$LAB"
    assert_equal "$(kv shape-32x32-segments-per-request)" 1.0000
    assert_equal "$(kv shape-16x16-segments-per-request)" 2.0000
    assert_equal "$(kv shape-32x32-sectors-per-request)" 4.0000
    assert_equal "$(kv shape-16x16-sectors-per-request)" 4.0000
    # (256, 8) is 2048 threads: not launched, and said why.
    assert_line "shape-256x8-valid: no"
    assert_output --partial "not launched: 2048 threads per block, at most 1024"
}

# bats test_tags=gpu
@test "04: --launch-illegal launches (256, 8) as the book does and reports the runtime's error" {
    require_gpu
    run "$REF" --launch-illegal --max-elements 64 --iterations 100 --size 1M --reps 1 --warmup 0
    assert_success
    assert_output --regexp "launch failed: cudaError[A-Za-z]+: 2048 threads per block, at most 1024"
    assert_line "result: PASS"
}

# bats test_tags=gpu
@test "04: the skeleton as shipped fails on the GPU too" {
    require_gpu
    run "$SKELETON" --max-elements 64 --iterations 100 --size 1M --reps 1 --warmup 0
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "the calculator says 0 blocks per SM"
}
