#!/usr/bin/env bats
# Lab 02: grouping - semi-coalesced access and its trade-off.

load test_helper

LAB=02-grouping

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
}

# --- CPU ---------------------------------------------------------------------

@test "02: skeleton and reference differ only inside the student regions" {
    assert_student_regions "$LAB" 2
}

@test "02: --help lists the options and exits 0" {
    run "$REF" --help
    assert_success
    assert_output --partial "--segments-per-group G"
    assert_output --partial "--csv FILE"
}

@test "02: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--segments-per-group 3|must be a power of two
--segments-per-group 0|from 1 to
--segments-per-group 12|must be a power of two
--segments-per-group x|from 1 to
--size 4M --segments-per-group|needs a value
--size nope|is not a size
--frobnicate|unknown option
CASES
}

@test "02: with no GPU visible it exits 2 and says why" {
    CUDA_VISIBLE_DEVICES="" run "$REF"
    assert_failure 2
    assert_output --partial "cannot run here"
}

# --- GPU ---------------------------------------------------------------------

# bats test_tags=gpu
@test "02: a G larger than size/32 segments is rejected once the size is known" {
    require_gpu
    run "$REF" --size 32768 --segments-per-group 2048
    assert_failure 64
    assert_output --partial "a group cannot be larger than the array, 1024 segments"
}

# bats test_tags=gpu
@test "02: the reference passes the whole sweep at the default size" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    local g max=$(kv max-segments-per-group)
    for ((g = 1; g <= max; g *= 2)); do
        assert_equal "$(kv "wrong-elements-g-$g")" 0
    done
}

# bats test_tags=gpu
@test "02: G=1 touches exactly one segment per request, G=16 about 14" {
    require_gpu
    run_reference_once "$LAB"
    assert_equal "$(kv segments-per-request-g-1)" 1.0000
    assert_close "$(kv segments-per-request-g-16)" 14.0 0.5 "G=16 segments per request"
}

# bats test_tags=gpu
@test "02: segments per request follow G (1 - (1 - 1/G)^32) over the sweep" {
    require_gpu
    run_reference_once "$LAB"
    local g max=$(kv max-segments-per-group)
    for ((g = 1; g <= max; g *= 2)); do
        local want
        want=$(kv "expected-segments-per-request-g-$g")
        assert_close "$(kv "segments-per-request-g-$g")" "$want" 0.05 "G=$g segments per request"
    done
}

# bats test_tags=gpu,perf
@test "02: time does not fall as G grows, and stays between coalesced and random" {
    require_gpu
    run_reference_once "$LAB"
    local g max=$(kv max-segments-per-group) full=$(kv time-full-ms) non=$(kv time-non-ms)
    local prev=0
    for ((g = 1; g <= max; g *= 2)); do
        local t
        t=$(kv "time-g-$g-ms")
        # 10% allows for timing noise between neighbouring G.
        assert_at_least "$t" "$(awk -v p="$prev" 'BEGIN { print p * 0.9 }')" "time at G=$g after G/2"
        assert_at_least "$t" "$full" "G=$g against coalesced"
        assert_at_least "$(awk -v n="$non" 'BEGIN { print n * 1.1 }')" "$t" "random against G=$g"
        prev=$t
    done
}

# bats test_tags=gpu
@test "02: the skeleton as shipped fails" {
    require_gpu
    run "$SKELETON" --size 1M --reps 1 --warmup 0 --segments-per-group 16
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "segments per request"
}

# bats test_tags=gpu
@test "02: the course's sizes at G=16 verify: 32,768 and 4,194,304 floats" {
    require_gpu
    for size in 32768 4M; do
        run "$REF" --size "$size" --segments-per-group 16 --reps 2
        assert_success
        assert_line "result: PASS"
        assert_close "$(kv segments-per-request-g-16)" 14.0 0.5 "G=16 at $size"
    done
}

# bats test_tags=gpu
@test "02: odd sizes verify, and --csv writes one row per G" {
    require_gpu
    local csv="$BATS_TEST_TMPDIR/sweep.csv"
    run "$REF" --size 100003 --reps 1 --warmup 0 --iterations 10 --csv "$csv"
    assert_success
    assert_line "result: PASS"
    # 100,003 floats hold 3,125 segments: G runs 1, 2, ..., 2048, 12 values.
    assert_line "max-segments-per-group: 2048"
    run wc -l <"$csv"
    assert_output 13
}
