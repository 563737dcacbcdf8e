#!/usr/bin/env bats
# Lab 06: shared memory - transpose, bank conflicts, pitched arrays.

load ../../../tests/test_helper

LAB=06-shared-memory

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
}

# --- CPU -----------------------------------------------------------------------

@test "06: the student's file holds only the student's code; the diff is the answers" {
    assert_student_file "$LAB" 15 50
}

@test "06: --help lists the options and exits 0" {
    run "$REF" --help
    assert_success
    assert_output --partial "--matrix N"
    assert_output --partial "--reps R"
}

@test "06: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--matrix 31|from 32 to 32768
--matrix 40000|from 32 to 32768
--matrix x|from 32 to 32768
--size 4M|unknown option '--size'
--seed -1|not an unsigned integer
CASES
}

# --- GPU -----------------------------------------------------------------------

# bats test_tags=gpu
@test "06: the reference passes at the default size: every version verifies, every timed run too" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    for key in copy naive shared padded plain pitched; do
        assert_equal "$(kv "wrong-elements-$key")" 0
    done
    for key in copy naive shared padded; do
        assert_equal "$(kv "bad-timed-runs-$key")" 0
    done
}

# bats test_tags=gpu
@test "06: 32 wavefronts per shared load for the plain tile's column, 1 for the padded one" {
    require_gpu
    run_reference_once "$LAB"
    assert_equal "$(kv shared-load-wavefronts-per-request-shared)" 32.0000
    assert_equal "$(kv shared-load-wavefronts-per-request-padded)" 1.0000
    assert_equal "$(kv shared-store-wavefronts-per-request-shared)" 1.0000
    assert_equal "$(kv shared-store-wavefronts-per-request-padded)" 1.0000
    # Global memory: naive stores a column (32 segments), the tiles one each.
    assert_equal "$(kv store-segments-per-request-naive)" 32.0000
    assert_equal "$(kv store-segments-per-request-padded)" 1.0000
    assert_equal "$(kv segments-per-request-padded)" 1.0000
}

# bats test_tags=gpu
@test "06: the bank rules: 32 banks, broadcast, 64-bit accesses in two phases" {
    require_gpu
    run_reference_once "$LAB"
    assert_equal "$(kv bank-wavefronts-float-1)" 1
    assert_equal "$(kv bank-wavefronts-float-2)" 2
    assert_equal "$(kv bank-wavefronts-float-32)" 32
    assert_equal "$(kv bank-wavefronts-float-33)" 1
    assert_equal "$(kv bank-wavefronts-float-0)" 1
    assert_equal "$(kv bank-wavefronts-double-1)" 2
    assert_equal "$(kv bank-wavefronts-double-16)" 32
}

# bats test_tags=gpu,perf
@test "06: the padded tile reaches ${KIT_MIN_PADDED_FRACTION_OF_COPY} of the copy; naive is clearly slower" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv fraction-of-copy-padded)" "$KIT_MIN_PADDED_FRACTION_OF_COPY" "padded against copy"
    assert_at_least "$(kv speedup-padded-over-naive)" "$KIT_MIN_SPEEDUP_PADDED_OVER_NAIVE" "padded against naive"
}

# bats test_tags=gpu
@test "06: a pitched allocation aligns every row: 1 segment per request, against more when packed" {
    require_gpu
    run_reference_once "$LAB"
    local pitch=$(kv pitch-bytes-pitched)
    [ $((pitch % 128)) -eq 0 ] || fail "the pitch $pitch is no multiple of 128"
    assert_equal "$(kv pitch-bytes-plain)" 4000
    assert_close "$(kv segments-per-request-pitched)" 1 0.01 "pitched rows"
    assert_at_least "$(kv segments-per-request-plain)" 1.5 "packed rows of 4,000 bytes"
}

# bats test_tags=gpu
@test "06: default run takes seconds, not minutes" {
    require_gpu
    assert_default_run_quick "$LAB" 20
}

# bats test_tags=gpu
@test "06: the skeleton as shipped fails, pointing at its TODOs" {
    require_gpu
    run "$SKELETON" --matrix 256
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "transpose_naive: 65536 of 65536 elements are wrong; see TODO(3)"
    assert_output --partial "transpose_shared: 65536 of 65536 elements are wrong; see TODO(1) and TODO(3)"
    assert_output --partial "transpose_padded: 65536 of 65536 elements are wrong; see TODO(2) and TODO(3)"
    assert_output --partial "cudaMallocPitch: scale_rows: element 0 (row 0, column 0)"
    assert_output --partial "(TODO(4))"
}

# bats test_tags=gpu
@test "06: TODO(3): a launch whose blocks do not match the kernel's loop fails, pointing at TODO(3); ROWS = 16 passes" {
    require_gpu
    run "$KIT_BUILD/tests/fixtures/lab06/naive-square-block" --matrix 1000 --reps 1
    assert_failure 1
    assert_line "result: FAIL"
    assert_line "wrong-elements-naive: 0"
    assert_output --partial "transpose_naive: its threads read 3952000 and wrote 3952000 elements of the 1000000"
    assert_output --partial "(TODO(3))"
    # The shared kernels' launches are right in it, and not blamed.
    refute_output --partial "transpose_shared: its threads"
    run "$KIT_BUILD/tests/fixtures/lab06/rows-16" --matrix 1000 --reps 1
    assert_success
    assert_line "result: PASS"
    run "$REF" --matrix 1000 --reps 1
    assert_success
    assert_line "result: PASS"
}

# bats test_tags=gpu
@test "06: a tile padded only when counted (by sizeof, by an overload) is counted as it is timed: its conflict shows, and it FAILs naming TODO(2)" {
    require_gpu
    local f
    for f in counted-sizeof counted-overload; do
        run "$KIT_BUILD/tests/fixtures/lab06/$f" --matrix 256 --reps 1
        assert_failure 1
        assert_line "result: FAIL"
        assert_equal "$(kv shared-load-wavefronts-per-request-padded)" 32.0000
        assert_output --partial "transpose_padded: 32.00 wavefronts per shared load"
        assert_output --partial "(TODO(2))"
    done
    # Their positive control: the reference, padded in every build.
    run "$REF" --matrix 256 --reps 1
    assert_success
    assert_equal "$(kv shared-load-wavefronts-per-request-padded)" 1.0000
}

# bats test_tags=gpu
@test "06: graded as a class's file would be (sandbox, judge and worker), the tile padded only when counted FAILs naming TODO(2)" {
    require_gpu_unlocked
    sandbox_works || fail "the GPU tests of the grader need its sandbox: $no_sandbox_why"
    local d="$BATS_TEST_TMPDIR/sub" conf="$BATS_TEST_TMPDIR/grading.conf"
    mkdir -p "$d/labs/$LAB"
    sed -f "$KIT_ROOT/tests/fixtures/lab06/counted-sizeof.sed" "$KIT_ROOT/solutions/$LAB/shared-memory.cu" \
        >"$d/labs/$LAB/shared-memory.cu"
    { cat "$KIT_ROOT/common/grade/grading.conf"; printf '\n[%s]\nmetric = none\n' "$LAB"; } >"$conf"
    run bash "$KIT_ROOT/common/grade/grade.sh" --reference-build "$KIT_BUILD" --labs-dir "$d/labs" \
        --conf "$conf" --report "$BATS_TEST_TMPDIR/r" "$LAB"
    assert_failure 1
    assert_line --regexp "^$LAB +FAIL "
    assert_output --partial "TODO(2)"
}

# bats test_tags=gpu
@test "06: make check SANITIZE=1 runs racecheck too: a tile without its barrier FAILs, naming the race" {
    require_gpu_unlocked
    command -v compute-sanitizer >/dev/null 2>&1 ||
        skip "compute-sanitizer is not on PATH (it comes with the CUDA toolkit): the race cannot be seen"
    sandbox_works || fail "the GPU tests of the grader need its sandbox: $no_sandbox_why"
    local d="$BATS_TEST_TMPDIR/sub" conf="$BATS_TEST_TMPDIR/grading.conf"
    mkdir -p "$d/labs/$LAB"
    sed -f "$KIT_ROOT/tests/fixtures/lab06/no-barrier.sed" "$KIT_ROOT/solutions/$LAB/shared-memory.cu" \
        >"$d/labs/$LAB/shared-memory.cu"
    grep -q __syncthreads "$d/labs/$LAB/shared-memory.cu" && fail "the fixture kept a barrier"
    # Results alone: the race is the subject, not the speed.
    { cat "$KIT_ROOT/common/grade/grading.conf"; printf '\n[%s]\nmetric = none\n' "$LAB"; } >"$conf"
    run bash "$KIT_ROOT/common/grade/grade.sh" --reference-build "$KIT_BUILD" --labs-dir "$d/labs" \
        --conf "$conf" --sanitize --report "$BATS_TEST_TMPDIR/r" "$LAB"
    assert_failure 1
    assert_line --regexp "^$LAB +FAIL "
    assert_output --partial "a data race in shared memory"
    assert_output --partial "racecheck"
    # The reference, the same way: memcheck and racecheck find nothing.
    cp "$KIT_ROOT/solutions/$LAB/shared-memory.cu" "$d/labs/$LAB/shared-memory.cu"
    run bash "$KIT_ROOT/common/grade/grade.sh" --reference-build "$KIT_BUILD" --labs-dir "$d/labs" \
        --conf "$conf" --sanitize --report "$BATS_TEST_TMPDIR/r2" "$LAB"
    assert_success
    assert_line --regexp "^$LAB +PASS +20/20"
    run grep -c "compute-sanitizer --tool \(memcheck\|racecheck\) " "$BATS_TEST_TMPDIR/r2/report.txt"
    assert_output 2
}

# bats test_tags=gpu
@test "06: TODO(4): rows indexed cols apart, not pitch, pass where rows are packed and fail in cudaMallocPitch's" {
    require_gpu
    run "$KIT_BUILD/tests/fixtures/lab06/no-pitch" --matrix 256
    assert_failure 1
    assert_line "result: FAIL"
    refute_output --partial "cudaMalloc, rows packed: scale_rows"
    assert_output --regexp "cudaMallocPitch: scale_rows: element [0-9]+ \(row [1-9][0-9]*, column [0-9]+\) is .*row r starts pitch = [0-9]+ floats after row r - 1 \(TODO\(4\)\)"
    # The reference, the same run.
    run "$REF" --matrix 256
    assert_success
    refute_output --partial "(TODO(4))"
}

# bats test_tags=gpu
@test "06: sizes that are no multiple of the tile verify; --csv writes a row per kernel" {
    require_gpu
    local csv="$BATS_TEST_TMPDIR/t.csv"
    for n in 33 1000; do
        run "$REF" --matrix "$n" --reps 2 --csv "$csv"
        assert_success
        assert_line "matrix: $n"
        assert_line "result: PASS"
    done
    run wc -l <"$csv"
    assert_output 5
}

# bats test_tags=gpu
@test "06: compute-sanitizer racecheck finds the race of a tile without its barrier, none in the reference" {
    require_gpu_unlocked
    command -v compute-sanitizer >/dev/null 2>&1 || skip "compute-sanitizer is not installed (it comes with the CUDA toolkit)"
    local dir="$BATS_TEST_TMPDIR/racy"
    mkdir -p "$dir"
    # The reference with its barriers removed: a student's first try.
    sed '/__syncthreads();/d' "$KIT_ROOT/solutions/$LAB/shared-memory.cu" >"$dir/shared-memory.cu"
    run make -s -C "$KIT_ROOT" --no-print-directory KIT_BUILD="$KIT_BUILD" graded GRADED_LAB="$LAB" \
        STUDENT_SRC="$dir/shared-memory.cu" GRADED_DIR="$dir/bin"
    assert_success
    # Built: now the GPU, shared (a timing elsewhere waits for these runs,
    # not for a compiler).
    kit_gpu_lock -s
    run compute-sanitizer --tool racecheck --error-exitcode 99 "$dir/bin/shared-memory" --matrix 64 --reps 1
    assert_failure 99
    assert_output --regexp "(hazard|Race reported)"
    run compute-sanitizer --tool racecheck --error-exitcode 99 "$REF" --matrix 64 --reps 1
    assert_success
    assert_output --regexp "RACECHECK SUMMARY: 0 hazards|ERROR SUMMARY: 0 errors"
}
