#!/usr/bin/env bats
# make check: one student's copy, the gradings that run programs (beside
# 90-grading.bats, which holds the grader's parts: the two files run side
# by side).

setup() {
    load test_helper
    GRADE="$KIT_ROOT/common/grade/grade.sh"
    LABS=$(kit_labs | tr '\n' ' ')
    NLABS=$(kit_labs | wc -l)
}

@test "make check LAB=03 --student: one lab, the student's name in the reports" {
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" skeleton
    run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" --student "Ana Lima" --student-id s123 \
        --report "$BATS_TEST_TMPDIR/r" 03
    refute_line --regexp "^01-coalescing"
    assert_output --partial "Student: Ana Lima (ID s123)"
    assert_output --partial "LAB=03"
    [ "$(csv_field_of "$BATS_TEST_TMPDIR/r/grades.csv" '"03-divergence"' 1)" = "Ana Lima" ]
    [ "$(csv_field_of "$BATS_TEST_TMPDIR/r/grades.csv" '"03-divergence"' 2)" = s123 ]
    # Another folder of labs: the reports name it and say how to grade it again.
    mkdir -p "$BATS_TEST_TMPDIR/ana/labs"
    cp -R "$BATS_TEST_TMPDIR/kit/labs/03-divergence" "$BATS_TEST_TMPDIR/ana/labs/"
    run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" --labs-dir "$BATS_TEST_TMPDIR/ana/labs" \
        --origin "submission ana" --seed 7 03
    assert_output --partial "labs from submission ana"
    assert_output --partial 'bash common/grade/grade.sh --seed 7'
    assert_output --partial '--labs-dir "the labs of submission ana" 03'
    refute_output --partial "make check SEED=7"
}

# bats test_tags=gpu
@test "make check on a GPU: the shipped skeletons FAIL, each with its first reason" {
    require_gpu_unlocked
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" skeleton
    run make -s -C "$BATS_TEST_TMPDIR/kit" check
    assert_failure
    # Each says why; nearly all "wrong result at OPTIONS".
    for lab in $LABS; do
        assert_line --regexp "^$lab +FAIL +0/20 +[a-z]"
    done
    assert_line --regexp "^01-coalescing +FAIL +0/20 +wrong result at --"
    assert_output --partial "Total 0 of $((NLABS * 20)) points: 0 passed, $NLABS failed, 0 skipped"
}

# bats test_tags=gpu
# The references under SANITIZE=1 (the positive control): tests/92.
@test "make check SANITIZE=1 on a GPU: a read past the end is named" {
    require_gpu_unlocked
    command -v compute-sanitizer >/dev/null || skip "compute-sanitizer not found (it comes with the CUDA toolkit)"
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" off-by-one
    run make -s -C "$BATS_TEST_TMPDIR/kit" check LAB=01 SANITIZE=1
    assert_failure
    assert_line --regexp "^01-coalescing +FAIL +0/20 +out-of-bounds memory access at --size [0-9]+ .*\(compute-sanitizer memcheck\)"
    assert_output --partial "SANITIZE=1"
}

@test "grade.sh with no GPU visible: labs that compile SKIP with the reason, exit 2" {
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" reference=03-divergence
    CUDA_VISIBLE_DEVICES="" run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" 03
    assert_failure 2
    assert_line --regexp "^03-divergence +SKIP +-/20 +no usable GPU: "
    assert_output --partial "0 passed, 0 failed, 1 skipped"
}

@test "Gradescope: the autograder zip holds what setup.sh builds, and the kit in it builds the references" {
    run bash "$KIT_ROOT/common/grade/gradescope/make-zip.sh" "$BATS_TEST_TMPDIR/ag.zip"
    assert_success
    mkdir "$BATS_TEST_TMPDIR/ag" && unzip_to "$BATS_TEST_TMPDIR/ag.zip" "$BATS_TEST_TMPDIR/ag"
    [ -x "$BATS_TEST_TMPDIR/ag/run_autograder" ] || fail "no run_autograder"
    # setup.sh's make command, dry: every file it needs is in the zip.
    target=$(sed -n 's|^make -C /autograder/source/kit [^ ]* ARCH=[^ ]* \(.*\)$|\1|p' "$BATS_TEST_TMPDIR/ag/setup.sh")
    [ -n "$target" ] || fail "setup.sh has no make command"
    run env -u KIT_BUILD make -n -C "$BATS_TEST_TMPDIR/ag/kit" ARCH=-arch=sm_75 $target
    assert_success
    # What run_autograder's grader builds is what setup.sh built.
    assert_output --partial "build/bin/kit-query"
}
