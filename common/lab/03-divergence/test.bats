#!/usr/bin/env bats
# Lab 03: warp divergence.

load ../../../tests/test_helper

LAB=03-divergence

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
    FIXTURES="$KIT_BUILD/tests/fixtures/lab03"
}

# The fixtures' runs: a size that is no multiple of the warp or the block
# (31,250 full warps and one of 3 elements), a short part 1 and part 2.
FIXTURE_ARGS=(--size 1000003 --reps 1 --iterations 10 --work 4)

# --- CPU: the source, the command line, the no-GPU path ---------------------

@test "03: the student's file holds only the student's code; the diff is the answers" {
    assert_student_file "$LAB" 15 45
}

@test "03: TODO(1) and TODO(2) ask for the mapping: neither the file nor the handout before its Discussion prints it" {
    local file="$KIT_ROOT/labs/$LAB/divergence.cu" before
    before=$(sed '/^## Discussion$/q' "$KIT_ROOT/handouts/$LAB.md")
    grep -q '^## Discussion$' <<<"$before" || fail "the handout has no Discussion"
    local pattern='tid *% *4|tid */ *32|tid *>> *5\) *& *3|warp 0 adds|first warp adds'
    run grep -nE "$pattern" "$file"
    assert_failure 1
    run grep -nE "$pattern" <<<"$before"
    assert_failure 1
    # The reference holds the course's answers, the Discussion explains them.
    grep -qE 'tid % 4' "$KIT_ROOT/solutions/$LAB/divergence.cu" || fail "the reference branches otherwise"
    sed -n '/^## Discussion$/,$p' "$KIT_ROOT/handouts/$LAB.md" | grep -q '(tid / 32) % 4' ||
        fail "the Discussion does not give the course's branch by warp"
}

@test "03: the fixtures are built, each a small change of the reference" {
    local f
    for f in div-runs-of-8 div-by-warp div-one-store nodiv-quarter-warps nodiv-two-paths nodiv-warp-pairs \
        nodiv-shift-mask nodiv-block; do
        assert [ -x "$FIXTURES/$f" ]
        run diff "$KIT_ROOT/solutions/$LAB/divergence.cu" "$FIXTURES/$f.cu"
        assert_failure 1
        [ "$(grep -c '^[<>]' <<<"$output")" -le 10 ] || fail "fixture $f changes more than a few lines"
    done
}

@test "03: --help lists the options and exits 0" {
    for prog in "$REF" "$SKELETON"; do
        run "$prog" --help
        assert_success
        assert_output --partial "--size N"
        assert_output --partial "--iterations I"
        assert_output --partial "--work W"
    done
}

@test "03: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--size banana|is not a size
--size 16|it must be from 32 to
--size 2^40|out of range
--size|needs a value
--iterations 0|from 1 to 100000
--iterations -2|from 1 to 100000
--work 0|from 1 to 4096
--work 5000|from 1 to 4096
--work many|from 1 to 4096
--warmup 2|unknown option '--warmup'
--divergence|unknown option '--divergence'
CASES
}

# --- GPU: the reference at its default size ---------------------------------

# bats test_tags=gpu
@test "03: the reference passes at the default size, every result checked" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    local size=$(kv size) key w
    [ $((size & (size - 1))) -eq 0 ] || fail "default size $size is not a power of two"
    [ "$size" -ge 4194304 ] || fail "default size $size is below the course's 4,194,304"
    for key in div nodiv math-1 math-2 math-3 math-4 math-4-as-printed count partition scatter; do
        assert_equal "$(kv "wrong-elements-$key")" 0
        assert_equal "$(kv "bad-timed-runs-$key")" 0
    done
    for w in 1 2 4 8 16 32 64; do
        for key in mixed sorted reorganised; do
            assert_equal "$(kv "wrong-elements-$key-w$w")" 0
            assert_equal "$(kv "bad-timed-runs-$key-w$w")" 0
        done
    done
}

# bats test_tags=gpu
@test "03: branch bodies run with all 32 lanes by warp, 8 by thread" {
    require_gpu
    run_reference_once "$LAB"
    # Positive: by warp, every body with the whole warp. Negative: by
    # thread, four bodies of 8 lanes, the same counter reading 25%.
    assert_equal "$(kv lanes-per-body-nodiv)" 1.0000
    assert_equal "$(kv lanes-per-body-div)" 0.2500
    # One store request per warp and iteration by warp, four by thread.
    local size=$(kv size)
    assert_equal "$(kv store-requests-nodiv)" $((100 * size / 32))
    assert_equal "$(kv store-requests-div)" $((4 * 100 * size / 32))
    # The paths, from the operation that gave each element: by warp, every
    # warp on one and a quarter of the elements on each; by thread, every
    # warp split 8 lanes to each, none on one.
    assert_equal "$(kv one-path-warps-nodiv)" $((size / 32))
    assert_equal "$(kv elements-per-op-nodiv)" "$((size / 4)) $((size / 4)) $((size / 4)) $((size / 4))"
    assert_equal "$(kv even-warps-div)" $((size / 32))
    assert_equal "$(kv one-path-warps-div)" 0
}

# bats test_tags=gpu,perf
@test "03: branching by warp is at least ${KIT_MIN_SPEEDUP_DIVERGENCE}x faster than by thread" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv speedup-nodiv-vs-div)" "$KIT_MIN_SPEEDUP_DIVERGENCE" "speedup"
}

# bats test_tags=gpu
@test "03: the book's kernels: half the threads take the if; mathKernel4 as printed none" {
    require_gpu
    run_reference_once "$LAB"
    local k
    for k in 1 2 3 4; do
        assert_equal "$(kv "took-if-math-$k")" 0.5000
    done
    assert_equal "$(kv took-if-math-4-as-printed)" 0.0000
}

# bats test_tags=gpu
@test "03: part 2: grouped by class, process_by_class runs whole warps and gives the same results" {
    require_gpu
    run_reference_once "$LAB"
    # Mixed at random: about 8 lanes per body (32 over the 4 classes a warp holds).
    assert_close "$(kv lanes-per-body-mixed)" 0.25 0.005 "lanes per body, mixed"
    # Grouped: at most 3 warps of the whole array hold two classes.
    assert_at_least "$(kv lanes-per-body-sorted)" 0.999 "lanes per body, grouped"
    # Every result of the reorganisation equals the host's, bit for bit, at every work.
    local w
    for w in 1 2 4 8 16 32 64; do
        assert_equal "$(kv "wrong-elements-reorganised-w$w")" 0
    done
}

# bats test_tags=gpu,perf
@test "03: part 2: grouping pays at work 64 and not at work 1" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv speedup-sorted-w64)" "$KIT_MIN_SPEEDUP_GROUPED" "grouped over mixed, work 64"
    assert_at_least "$(kv speedup-reorganised-w64)" "$KIT_MIN_SPEEDUP_REORGANISED" \
        "reorganised over mixed, work 64"
    # At one step per element the kernel waits on memory, and the
    # reorganisation's extra passes over it cost more than divergence.
    awk -v v="$(kv speedup-reorganised-w1)" 'BEGIN { exit !(v ~ /^[0-9.]+$/ && v < 1) }' ||
        fail "the reorganisation paid at work 1 ($(kv speedup-reorganised-w1)x)"
    [ "$(kv crossover-work)" != none ] || fail "no crossover in the sweep"
}

# bats test_tags=gpu
@test "03: default run takes seconds, not minutes" {
    require_gpu
    assert_default_run_quick "$LAB" 15
}

# --- GPU: the skeleton fails, other sizes and options -----------------------

# bats test_tags=gpu
@test "03: the skeleton as shipped fails, pointing at its TODOs" {
    require_gpu
    run "$SKELETON" --size 1M --work 4
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "warp_divergence: 1048576 of 1048576 elements are wrong; see TODO(1)"
    assert_output --partial "warp_no_divergence: 1048576 of 1048576 elements are wrong; see TODO(2)"
    assert_output --partial "mathKernel4: 524288 of 1048576 elements are wrong; see TODO(3)"
    assert_output --partial "partition_by_class: 1048576 of 1048576 elements are wrong; see TODO(4)"
    # The given kernels still pass: the failure is the TODOs'.
    assert_line "wrong-elements-math-1: 0"
    assert_line "wrong-elements-mixed-w4: 0"
}

# bats test_tags=gpu
@test "03: TODO(1): warps that do not split, or bodies that share one store, fail naming TODO(1); runs of 8 lanes pass" {
    require_gpu
    # By warp where the course diverges: right results, no warp split.
    run "$FIXTURES/div-by-warp" "${FIXTURE_ARGS[@]}"
    assert_failure 1
    assert_line "result: FAIL"
    assert_line "wrong-elements-div: 0"
    assert_line "even-warps-div: 0"
    assert_output --partial "warp_divergence: 31250 of 31250 warps did not split evenly over the four paths; the first, warp 0 (elements 0 to 31), ran A + B with 32 lanes, A - B with 0, A * B with 0, A / B with 0: every warp must take all four paths, as many lanes on each (TODO(1))"
    refute_output --partial "(TODO(2))"
    # Four paths per warp, but the store after the chain: one request per
    # warp and iteration where each path's body should make its own.
    run "$FIXTURES/div-one-store" "${FIXTURE_ARGS[@]}"
    assert_failure 1
    assert_line "result: FAIL"
    assert_line "wrong-elements-div: 0"
    assert_line "even-warps-div: 31250"
    assert_output --regexp "warp_divergence: its branch bodies ran with [0-9.]+ lanes each, though its warps split four ways: each path's body must make its own store, with that path's lanes \(TODO\(1\)\)"
    refute_output --partial "(TODO(2))"
    # An honest choice other than the course's: runs of 8 threads, the same
    # four bodies of 8 lanes (31,250 full warps, a last one of 3 lanes on one path).
    run "$FIXTURES/div-runs-of-8" "${FIXTURE_ARGS[@]}"
    assert_success
    assert_line "result: PASS"
    assert_line "even-warps-div: 31250"
    assert_line "lanes-per-body-div: 0.2500"
    assert_line "store-requests-div: $((10 * (4 * 31250 + 1)))"
    # The reference at the same size: the last warp's 3 lanes on 3 paths.
    run "$REF" "${FIXTURE_ARGS[@]}"
    assert_success
    assert_line "result: PASS"
    assert_line "store-requests-div: $((10 * (4 * 31250 + 3)))"
}

# bats test_tags=gpu
@test "03: TODO(2): warps that diverge, or two operations of four, fail naming TODO(2); other warp-uniform choices pass" {
    require_gpu
    # A quarter of every warp on each path: the shares right, every full warp split.
    run "$FIXTURES/nodiv-quarter-warps" "${FIXTURE_ARGS[@]}"
    assert_failure 1
    assert_line "result: FAIL"
    assert_line "wrong-elements-nodiv: 0"
    assert_line "one-path-warps-nodiv: 1"
    assert_output --partial "warp_no_divergence: 31250 of 31251 warps took more than one path; the first, warp 0 (elements 0 to 31), ran A + B with "
    assert_output --partial ": all the threads of a warp must take the same path (TODO(2))"
    refute_output --partial "must get about a quarter"
    refute_output --partial "(TODO(1))"
    # The course's two-way branch by warp in the four-way chain: no warp
    # split, half the elements added, half subtracted, the last warp (3
    # elements, warp 31,250) adding.
    run "$FIXTURES/nodiv-two-paths" "${FIXTURE_ARGS[@]}"
    assert_failure 1
    assert_line "result: FAIL"
    assert_line "wrong-elements-nodiv: 0"
    assert_line "one-path-warps-nodiv: 31251"
    assert_line "elements-per-op-nodiv: 500003 500000 0 0"
    assert_output --partial "warp_no_divergence: its warps ran A + B on 500003 of the 1000003 elements, A - B on 500000, A * B on 0, A / B on 0: each operation must get about a quarter of them (from 1/8 to 3/8, give or take 1024 elements, one block) (TODO(2))"
    refute_output --partial "took more than one path"
    refute_output --partial "(TODO(1))"
    # Honest choices other than the course's: every warp on one path, each
    # operation on its quarter give or take a block, one store request per
    # warp and iteration.
    local f
    for f in nodiv-warp-pairs nodiv-shift-mask nodiv-block; do
        run "$FIXTURES/$f" "${FIXTURE_ARGS[@]}"
        assert_success
        assert_line "result: PASS"
        assert_line "one-path-warps-nodiv: 31251"
        assert_line "store-requests-nodiv: $((10 * 31251))"
    done
    # Whole blocks: 977 of them, the last of 579 elements adding.
    assert_line "elements-per-op-nodiv: 250435 249856 249856 249856"
}

# bats test_tags=gpu
@test "03: the course's size and sizes that are no multiple of the block or the warp verify" {
    require_gpu
    for size in 4194304 1000003 33; do
        run "$REF" --size "$size" --reps 2 --iterations 10 --work 8
        assert_success
        assert_line "size: $size"
        assert_line "result: PASS"
    done
}

# bats test_tags=gpu
@test "03: --seed is used and printed; --work runs one work; --csv writes the table" {
    require_gpu
    local csv="$BATS_TEST_TMPDIR/table.csv"
    run "$REF" --size 1M --reps 2 --seed 42 --work 16 --csv "$csv"
    assert_success
    assert_line "seed: 42"
    assert_line "reps-div: 2"
    assert_line --regexp "^time-reorganised-w16-ms: [0-9.]+$"
    refute_line --regexp "^time-mixed-w8-ms:"
    run head -n 1 "$csv"
    assert_output "gpu,size,seed,part,kernel,work,time_ms,lanes_per_body,correct"
    # 7 kernels of part 1, 3 steps and 3 rows per work of part 2, the header.
    run wc -l <"$csv"
    assert_output 14
    run sed -n 2p "$csv"
    assert_output --regexp '^"[^"]+",1048576,42,1,warp_divergence,100,'
}
