#!/usr/bin/env bats
# make check with the kit's own settings on copies of the references: the
# grader's positive control, in both of its modes. Every lab of
# common/lab/ PASSes with full marks, timed beside itself, in the
# sandbox. Graded again under compute-sanitizer (new draws), Labs 03 and 08
# (one of shared memory and counted builds, one of streams; the quickest to
# grade) get the same verdict and points within 1: the mode's positive
# control. That compute-sanitizer finds nothing in any reference is tested
# in 00-kit.bats (make sanitize), to keep the suite within one GPU session
# of ten minutes. Needs a GPU.

setup() {
    load test_helper
}

# assert_references_pass REPORT_DIR LAB...: the output of make check gives
# each LAB PASS and full marks, and so does its grades.csv (this replaces
# $output: check the output first).
assert_references_pass() {
    local report=$1 lab
    shift
    assert_success
    for lab in "$@"; do
        assert_line --regexp "^$lab +PASS +20/20 "
    done
    assert_output --partial "Total $(($# * 20)) of $(($# * 20)) points: $# passed, 0 failed, 0 skipped"
    assert_output --partial "Isolation: bubblewrap"
    run grep -c '"PASS","20","20"' "$report/grades.csv"
    assert_output "$#"
}

# bats test_tags=gpu,slow
@test "make check on a GPU: copies of the references PASS with full marks in a sandbox; Labs 03 and 08 again under SANITIZE=1, alike" {
    require_gpu_unlocked
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" reference
    SECONDS=0
    run make -s -C "$BATS_TEST_TMPDIR/kit" check REPORT="$BATS_TEST_TMPDIR/report-1"
    { echo "$output"; echo "graded in $SECONDS s"; cat "$BATS_TEST_TMPDIR/report-1/report.txt"; } >"$KIT_BUILD/check-references.txt"
    mapfile -t labs < <(kit_labs)
    assert_references_pass "$BATS_TEST_TMPDIR/report-1" "${labs[@]}"
    # Each timed run times the graded row until steady, the others once:
    # two pairs (ABBA), or four where the first two's ratio was not clear.
    want=8
    awk '/^== 01-coalescing/ { lab = 1 } /^== 02-/ { lab = 0 }
        lab && /^clear after 2 of 4 pair\(s\): / { found = 1 } END { exit !found }' \
        "$BATS_TEST_TMPDIR/report-1/report.txt" && want=4
    run grep -c -- "--matrix 8192 --focus row-sums-coalesced$" "$BATS_TEST_TMPDIR/report-1/report.txt"
    assert_output "$want"
    # The checked runs shared the GPU; the timed runs had it alone: in
    # Lab 01's log every run with --focus comes after that line, none before.
    run awk '/^== 01-coalescing/ { lab = 1 } /^== 02-/ { lab = 0 }
        lab && /the timed runs, with the GPU alone/ { alone = 1 }
        lab && /^run [0-9]+ / { if (/--focus/ && alone) t++; else if (/--focus/ || alone) bad++; else c++ }
        END { printf "%d checked, %d timed, %d out of place\n", c, t, bad }' "$BATS_TEST_TMPDIR/report-1/report.txt"
    assert_output --regexp "^[1-9][0-9]* checked, $want timed, 0 out of place\$"
    # Lab 05's timed runs time the serial in full beside the pipeline, so
    # its overlap by the clock can be judged there (the checked runs, one
    # run of each row, say they cannot).
    run awk '/^== 05-streams: the timed runs/ { t = 1; next } /^== / { t = 0 }
        t && /^run [0-9]+ / && /--focus depth-first-/ { runs++ }
        t && /the pipeline.s time is not judged: too few timed runs/ { few++ }
        END { printf "%d timed, %d with too few runs\n", runs, few }' "$BATS_TEST_TMPDIR/report-1/report.txt"
    assert_output --regexp "^[1-9][0-9]* timed, 0 with too few runs\$"

    # Again (new draws), with compute-sanitizer first where the toolkit has
    # it: the same verdicts, points within 1. The timed runs were the first
    # grading's subject: this one grades on results alone, so that it needs
    # the GPU alone for nothing.
    correctness_only "$BATS_TEST_TMPDIR/kit" 03-divergence 08-multi-gpu
    mode=SANITIZE=1
    command -v compute-sanitizer >/dev/null || mode=SANITIZE=0
    SECONDS=0
    run make -s -C "$BATS_TEST_TMPDIR/kit" check "$mode" LAB=03,08 REPORT="$BATS_TEST_TMPDIR/report-2"
    { echo "$output"; echo "graded in $SECONDS s"; cat "$BATS_TEST_TMPDIR/report-2/report.txt"; } >"$KIT_BUILD/check-references-sanitize.txt"
    [ "$mode" = SANITIZE=0 ] || assert_output --partial "with compute-sanitizer"
    assert_references_pass "$BATS_TEST_TMPDIR/report-2" 03-divergence 08-multi-gpu
    for lab in 03-divergence 08-multi-gpu; do
        a=$(csv_field_of "$BATS_TEST_TMPDIR/report-1/grades.csv" "\"$lab\"" 5)
        b=$(csv_field_of "$BATS_TEST_TMPDIR/report-2/grades.csv" "\"$lab\"" 5)
        awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }' || fail "$lab: $a, then $b points"
    done
}
