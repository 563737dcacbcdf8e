#!/usr/bin/env bats
# make check with the kit's own settings on copies of the references: the
# grader's positive control. Every lab PASSes with full marks, timed beside
# itself. Needs a GPU; takes a few minutes.

setup() {
    load test_helper
}

# bats test_tags=gpu,slow
@test "make check on a GPU: copies of the references PASS with full marks" {
    require_gpu
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" reference
    run make -s -C "$BATS_TEST_TMPDIR/kit" check REPORT="$BATS_TEST_TMPDIR/report"
    echo "$output" >"$KIT_BUILD/check-references.txt"
    assert_success
    for lab in $(kit_labs); do
        assert_line --regexp "^$lab +PASS +20/20 "
    done
    assert_output --partial "Total 100 of 100 points: 5 passed, 0 failed, 0 skipped"
    refute_output --partial "Notes"
    run grep -c '"PASS","20","20"' "$BATS_TEST_TMPDIR/report/grades.csv"
    assert_output 5
}
