#!/usr/bin/env bats
# make grade-class: a folder of submissions, one CSV. Folders, archives and
# broken submissions, resuming, and Slurm run without a GPU; the fixtures'
# verdicts need one.

setup() {
    load test_helper
    load slurm
    CLASS="$KIT_ROOT/common/grade/grade-class.sh"
}

teardown() {
    slurm_stop
}

# A class of five: a folder with labs/, an archive, a damaged archive, a
# folder with no labs, and the kit itself one folder down.
five_students() {
    local subs=$1
    mkdir -p "$subs"
    submission "$subs/ana" no-compile
    submission "$BATS_TEST_TMPDIR/ben" fake-pass reference=03-divergence
    tar -czf "$subs/ben.tar.gz" -C "$BATS_TEST_TMPDIR/ben" labs
    echo "not an archive" >"$subs/cem.tar.gz"
    mkdir -p "$subs/dora/homework"
    mkdir -p "$subs/eve/cuda-kit"
    submission "$subs/eve/cuda-kit" skeleton
}

@test "grade-class: bad command lines exit 64 with the reason" {
    run bash "$CLASS" --help
    assert_success
    assert_output --partial "usage: grade-class.sh"
    mkdir -p "$BATS_TEST_TMPDIR/subs"
    run bash "$CLASS" "$BATS_TEST_TMPDIR/subs"
    assert_failure 64
    assert_output --partial "expected SUBMISSIONS and OUT"
    run bash "$CLASS" "$BATS_TEST_TMPDIR/nowhere" "$BATS_TEST_TMPDIR/out"
    assert_failure 64
    assert_output --partial "is not a folder"
    run bash "$CLASS" --labs 01,09 "$BATS_TEST_TMPDIR/subs" "$BATS_TEST_TMPDIR/out"
    assert_failure 64
    assert_output --partial "no lab '09'"
    run bash "$CLASS" "$BATS_TEST_TMPDIR/subs" "$BATS_TEST_TMPDIR/subs/out"
    assert_failure 64
    assert_output --partial "OUT must not be inside SUBMISSIONS"
}

@test "grade-class: folders and archives, broken ones on their own, one CSV, and a rerun resumes" {
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    five_students "$subs"
    run bash "$CLASS" --labs 03 "$subs" "$out"
    assert_success
    assert_output --partial "5 submissions"
    assert_output --partial "cem: a damaged archive"
    assert_output --partial "dora: no labs/ folder and no lab folders"

    run cat "$out/class.csv"
    assert_line --index 0 "student,points,max_points,passed,failed,skipped,03-divergence,status"
    assert_line --index 1 "ana,0,20,0,1,0,0,graded"
    assert_line --index 3 "cem,0,20,0,1,0,0,graded"
    assert_line --index 4 "dora,0,20,0,1,0,0,graded"
    [ "${#lines[@]}" = 6 ]
    labs="$out/class-labs.csv"
    [[ "$(csv_field_of "$labs" '"ana"' 7)" == "does not compile: labs/03-divergence/divergence.cu(34): error"* ]]
    [ "$(csv_field_of "$labs" '"cem"' 7)" = "a damaged archive" ]
    if "$KIT_BUILD/bin/kit-query" --check >/dev/null 2>&1; then
        assert_line --index 2 "ben,20,20,1,0,0,20,graded"
        assert_line --index 5 "eve,0,20,0,1,0,0,graded"
    else
        assert_line --index 2 "ben,0,20,0,0,1,,incomplete: a lab was skipped"
        assert_line --index 5 "eve,0,20,0,0,1,,incomplete: a lab was skipped"
    fi
    for s in ana ben eve; do
        for f in report.txt grades.csv grades.tap grades.xml; do
            [ -s "$out/students/$s/$f" ] || fail "$s: no $f"
        done
    done
    # Only the lab sources came from the submission: the student's own
    # Makefile or headers never reach the grading.
    run grep -c "Grading labs/ of ${TMPDIR:-/tmp}/kit-class" "$out/students/ana/report.txt"
    assert_output 1

    # A rerun keeps the graded, and grades a new or changed submission.
    cp "$out/class.csv" "$BATS_TEST_TMPDIR/first.csv"
    submission "$subs/fay" no-compile
    echo "// changed" >>"$subs/ana/labs/03-divergence/divergence.cu"
    run bash "$CLASS" --labs 03 "$subs" "$out"
    assert_success
    assert_output --partial "ben: graded before, kept"
    assert_output --partial "eve: graded before, kept"
    refute_output --partial "ana: graded before, kept"
    assert_output --partial "fay: grading"
    run diff <(grep -v '^fay,' "$out/class.csv") "$BATS_TEST_TMPDIR/first.csv"
    assert_success
    run grep -c '^fay,0,20,0,1,0,0,graded$' "$out/class.csv"
    assert_output 1
}

@test "grade-class --slurm: a job array on a single-node Slurm gathers the same CSV" {
    slurm_start "$BATS_TEST_TMPDIR/slurm" || skip "no single-node Slurm here: $slurm_why"
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    five_students "$subs"
    run timeout 900 bash "$CLASS" --slurm --slurm-gres none --labs 03 "$subs" "$out"
    assert_success
    assert_output --partial "submitting 5 tasks to Slurm, and waiting for them"
    [ "$(ls "$out"/slurm/task-*.log | wc -l)" = 5 ]
    run cat "$out/class.csv"
    assert_line --index 1 "ana,0,20,0,1,0,0,graded"
    assert_line --index 3 "cem,0,20,0,1,0,0,graded"
    [ "${#lines[@]}" = 6 ]
    # Graded students are not submitted again.
    run timeout 300 bash "$CLASS" --slurm --slurm-gres none --labs 03 "$subs" "$out"
    assert_success
    assert_output --partial "every submission is graded already"
}

# bats test_tags=gpu
@test "grade-class on a GPU: every fixture gets its verdict; the reference full marks" {
    require_gpu
    # The kit with a short time limit for the lab the hang is in.
    kit_copy "$BATS_TEST_TMPDIR/kit"
    cp -R "$KIT_ROOT/labs" "$BATS_TEST_TMPDIR/kit/"
    printf '\n[03-divergence]\ntime-limit = 30\n' >>"$BATS_TEST_TMPDIR/kit/common/grade/grading.conf"
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    fixtures=$(cd "$KIT_ROOT/tests/fixtures" && ls -d */ | tr -d /)
    for f in $fixtures; do
        submission "$subs/$f" "$f"
    done
    submission "$subs/reference" reference=01-coalescing reference=03-divergence
    submission "$subs/skeleton" skeleton
    run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade-class.sh" --labs 01,03,04,05 "$subs" "$out"
    assert_success
    labs="$out/class-labs.csv"
    for f in $fixtures; do
        while read -r lab verdict words; do
            got_verdict=$(csv_field_of "$labs" "\"$f\",\"$lab\"" 3)
            got_reason=$(csv_field_of "$labs" "\"$f\",\"$lab\"" 7)
            [ "$got_verdict" = "$verdict" ] || fail "$f, $lab: $got_verdict ($got_reason), not $verdict"
            [[ "$got_reason" == *"$words"* ]] || fail "$f, $lab: '$got_reason' does not say '$words'"
        done <"$KIT_ROOT/tests/fixtures/$f/expect"
    done
    # The harness edits are reported, and did not help.
    [[ "$(csv_field_of "$labs" '"harness-edit","01-coalescing"' 8)" == "code outside the student regions differs"* ]]
    run cat "$out/class.csv"
    assert_line --regexp '^reference,40,80,2,2,0,20,20,0,0,graded$'
    assert_line --regexp '^skeleton,0,80,0,4,0,0,0,0,0,graded$'
}
