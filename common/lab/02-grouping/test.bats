#!/usr/bin/env bats
# Lab 02: grouping - semi-coalesced access and its trade-off.

load ../../../tests/test_helper

LAB=02-grouping

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
}

# --- CPU ---------------------------------------------------------------------

@test "02: the student's file holds only the student's code; the diff is the answers" {
    assert_student_file "$LAB" 15 40
}

@test "02: --help lists the options and exits 0" {
    run "$REF" --help
    assert_success
    assert_output --partial "--segments-per-group G"
    assert_output --partial "--all"
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
--all=1|takes no value
--frobnicate|unknown option
CASES
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
@test "02: the reference passes the sweep at the default size, and stops timing what is clear" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    local g max=$(kv max-segments-per-group) last=$(kv not-timed-from-segments-per-group)
    for ((g = 1; g <= max; g *= 2)); do
        if [ -n "$last" ] && [ "$g" -ge "$last" ]; then
            refute_line --regexp "^time-g-$g-ms:"
            continue
        fi
        assert_equal "$(kv "wrong-elements-g-$g")" 0
        assert_equal "$(kv "bad-timed-runs-g-$g")" 0
        assert_at_least "$(kv "groups-picked-g-$g")" 0.5 "share of groups the warps picked at G=$g"
    done
    # At the default size the sweep reaches random well before the whole
    # array, where memory bounds the kernel (see sweep-hidden).
    [ -n "$last" ] || [ -n "$(kv sweep-hidden)" ] || fail "the sweep timed every G"
}

# bats test_tags=gpu
@test "02: G=1 touches exactly one segment per request, G=16 about 14" {
    require_gpu
    run_reference_once "$LAB"
    assert_equal "$(kv segments-per-request-g-1)" 1.0000
    assert_close "$(kv segments-per-request-g-16)" 13.97 0.1 "G=16 segments per request"
}

# bats test_tags=gpu
@test "02: segments per request follow G (1 - (1 - 1/G)^32) over the sweep" {
    require_gpu
    run_reference_once "$LAB"
    local g max=$(kv max-segments-per-group) want
    for ((g = 1; g <= max; g *= 2)); do
        want=$(kv "expected-segments-per-request-g-$g")
        [ -n "$want" ] || continue
        assert_close "$(kv "segments-per-request-g-$g")" "$want" 0.05 "G=$g segments per request"
    done
}

# bats test_tags=gpu,perf
@test "02: time does not fall as G grows, and stays between coalesced and random" {
    require_gpu
    run_reference_once "$LAB"
    local g max=$(kv max-segments-per-group) full=$(kv time-full-ms) non=$(kv time-non-ms)
    local prev=0 t timed=0
    for ((g = 1; g <= max; g *= 2)); do
        t=$(kv "time-g-$g-ms")
        [ -n "$t" ] || continue
        timed=$((timed + 1))
        # 10% allows for timing noise between neighbouring G.
        assert_at_least "$t" "$(awk -v p="$prev" 'BEGIN { print p * 0.9 }')" "time at G=$g after G/2"
        assert_at_least "$t" "$(awk -v f="$full" 'BEGIN { print f * 0.95 }')" "G=$g against coalesced"
        assert_at_least "$(awk -v n="$non" 'BEGIN { print n * 1.1 }')" "$t" "random against G=$g"
        prev=$t
    done
    [ "$timed" -ge 6 ] || fail "only $timed G were timed"
}

# bats test_tags=gpu
@test "02: the prediction is the model's, and the sweep finds a G within 2x of coalesced" {
    require_gpu
    run_reference_once "$LAB"
    local predicted=$(kv predicted-largest-fast-group) measured=$(kv measured-largest-fast-group)
    [ "$predicted" -ge 1 ] || fail "predicted $predicted"
    # Where G=1 itself is far from coalesced, the program says why (and
    # every G is still timed and checked above).
    [ -z "$(kv sweep-hidden)" ] || skip "$(kv sweep-hidden)"
    [ "$measured" -ge 1 ] || fail "measured $measured"
}

# bats test_tags=gpu
@test "02: default run takes seconds, not minutes" {
    require_gpu
    assert_default_run_quick "$LAB" 40
}

# bats test_tags=gpu
@test "02: the skeleton as shipped fails, pointing at its TODOs" {
    require_gpu
    run "$SKELETON" --size 1M --reps 1 --segments-per-group 16
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "semi_coalesced_access G=16: 1048576 of 1048576 elements are wrong; see TODO(1)"
    assert_output --partial "largest_cached_group: 0 for this GPU"
}

# bats test_tags=gpu
@test "02: TODO(2) at a tie: '<' and '<=' both pass; forgetting a block, an array or the block limit fails" {
    require_gpu
    local fixtures="$KIT_BUILD/tests/fixtures/lab02" f
    for f in strict-tie warps-per-block one-array no-block-limit; do
        assert [ -x "$fixtures/$f" ]
    done
    run "$fixtures/strict-tie" --size 1M --reps 1 --segments-per-group 16
    assert_success
    assert_line "result: PASS"
    # The reference reads "fits" as "<=": the same G, or twice it where the
    # groups fill the L1 exactly (an H100's 256 KiB).
    local strict
    strict=$(kv predicted-largest-fast-group)
    run "$REF" --size 1M --reps 1 --segments-per-group 16
    assert_success
    local loose
    loose=$(kv predicted-largest-fast-group)
    [ "$loose" = "$strict" ] || [ "$loose" = $((2 * strict)) ] || fail "'<=' gives $loose, '<' gives $strict"
    for f in warps-per-block one-array no-block-limit; do
        run "$fixtures/$f" --size 1M --reps 1 --segments-per-group 16
        assert_failure 1
        assert_line "result: FAIL"
        assert_output --partial "largest_cached_group: "
        assert_output --partial "(TODO(2))"
    done
}

# bats test_tags=gpu
@test "02: TODO(1): a warp that draws a new group every iteration fails, though each of its requests stays in one group" {
    require_gpu
    run "$KIT_BUILD/tests/fixtures/lab02/group-each-iteration" --size 1M --reps 1 --segments-per-group 16
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --regexp "G=16: warp [0-9]+ read element [0-9]+ \(group [0-9]+\) and, in thread [0-9]+, element [0-9]+ \(group [0-9]+\).*a warp must stay in one group, every iteration \(TODO\(1\)\)"
    refute_output --partial "largest_cached_group: "
}

# bats test_tags=gpu
@test "02: the course's sizes at G=16 verify: 32,768 and 4,194,304 floats" {
    require_gpu
    for size in 32768 4M; do
        run "$REF" --size "$size" --segments-per-group 16 --reps 2
        assert_success
        assert_line "result: PASS"
        assert_close "$(kv segments-per-request-g-16)" 13.97 0.1 "G=16 at $size"
    done
}

# bats test_tags=gpu
@test "02: odd sizes verify, and --csv writes one row per timed G" {
    require_gpu
    local csv="$BATS_TEST_TMPDIR/sweep.csv"
    run "$REF" --size 100003 --reps 1 --iterations 10 --all --csv "$csv"
    assert_success
    assert_line "result: PASS"
    # 100,003 floats hold 3,125 segments: G runs 1, 2, ..., 2048, 12 values.
    assert_line "max-segments-per-group: 2048"
    run wc -l <"$csv"
    assert_output 13
}
