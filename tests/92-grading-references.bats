#!/usr/bin/env bats
# make check with the kit's own settings on copies of the references: the
# grader's positive control, in both of its modes. Every lab of
# common/labs.txt PASSes with full marks, timed beside itself, in the
# sandbox; graded again under compute-sanitizer (new draws), each gets the
# same verdict and points within 1. Needs a GPU.

setup() {
    load test_helper
    NLABS=$(kit_labs | wc -l)
}

# assert_references_pass REPORT_DIR: the output of make check gives every
# lab PASS and full marks, and so does its grades.csv (this replaces
# $output: check the output first).
assert_references_pass() {
    assert_success
    for lab in $(kit_labs); do
        assert_line --regexp "^$lab +PASS +20/20 "
    done
    assert_output --partial "Total $((NLABS * 20)) of $((NLABS * 20)) points: $NLABS passed, 0 failed, 0 skipped"
    assert_output --partial "Isolation: bubblewrap"
    run grep -c '"PASS","20","20"' "$1/grades.csv"
    assert_output "$NLABS"
}

# bats test_tags=gpu,slow
@test "make check on a GPU: copies of the references PASS with full marks in a sandbox, and again under SANITIZE=1, alike" {
    require_gpu
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" reference
    SECONDS=0
    run make -s -C "$BATS_TEST_TMPDIR/kit" check REPORT="$BATS_TEST_TMPDIR/report-1"
    { echo "$output"; echo "graded in $SECONDS s"; cat "$BATS_TEST_TMPDIR/report-1/report.txt"; } >"$KIT_BUILD/check-references.txt"
    assert_references_pass "$BATS_TEST_TMPDIR/report-1"

    # Again (new draws), with compute-sanitizer first where the toolkit has
    # it: the same verdicts, points within 1.
    mode=SANITIZE=1
    command -v compute-sanitizer >/dev/null || mode=SANITIZE=0
    SECONDS=0
    run make -s -C "$BATS_TEST_TMPDIR/kit" check "$mode" REPORT="$BATS_TEST_TMPDIR/report-2"
    { echo "$output"; echo "graded in $SECONDS s"; cat "$BATS_TEST_TMPDIR/report-2/report.txt"; } >"$KIT_BUILD/check-references-sanitize.txt"
    [ "$mode" = SANITIZE=0 ] || assert_output --partial "with compute-sanitizer"
    assert_references_pass "$BATS_TEST_TMPDIR/report-2"
    for lab in $(kit_labs); do
        a=$(csv_field_of "$BATS_TEST_TMPDIR/report-1/grades.csv" "\"$lab\"" 5)
        b=$(csv_field_of "$BATS_TEST_TMPDIR/report-2/grades.csv" "\"$lab\"" 5)
        awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }' || fail "$lab: $a, then $b points"
    done
}
