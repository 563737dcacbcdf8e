#!/usr/bin/env bats
# make grade-class: a folder of submissions, one CSV. Names, archives,
# hostile submissions, resuming, rosters and Slurm run without a GPU, and
# so do the verdicts of the fixtures that are decided before any run; the
# others need a GPU.

setup() {
    load test_helper
    load slurm
    CLASS="$KIT_ROOT/common/grade/grade-class.sh"
}

teardown() {
    slurm_stop
}

has_gpu() { "$KIT_BUILD/bin/kit-query" --check >/dev/null 2>&1; }

# assert_fixture_verdicts OUT FIXTURE...: each fixture's lab got the
# verdict its header expects, with its words in the reason (SKIP for lack
# of a GPU where the verdict needs one and there is none).
assert_fixture_verdicts() {
    local out=$1 f lab want verdict words got_v got_r
    shift
    for f in "$@"; do
        lab=$(fixture_field "$f" lab)
        want=$(fixture_field "$f" expect)
        verdict=${want%% *} words=${want#* }
        if [ "$(fixture_field "$f" decided)" = gpu ] && ! has_gpu; then
            verdict=SKIP words="no usable GPU"
        fi
        got_v=$(csv_field_of "$out/class-labs.csv" "\"$f\",\"$f\",\"\",\"$lab\"" 5)
        got_r=$(csv_field_of "$out/class-labs.csv" "\"$f\",\"$f\",\"\",\"$lab\"" 9)
        [ "$got_v" = "$verdict" ] || fail "$f, $lab: $got_v ($got_r), not $verdict ($words)"
        [[ "$got_r" == *"$words"* ]] || fail "$f, $lab: '$got_r' does not say '$words'"
    done
}

@test "grade-class: bad command lines exit 64 with the reason" {
    run bash "$CLASS" --help
    assert_success
    assert_output --partial "usage: grade-class.sh"
    assert_output --partial "--roster FILE"
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
    # Refused before anything is written: no "out" to be taken for a submission.
    [ ! -e "$BATS_TEST_TMPDIR/subs/out" ] || fail "the refused OUT was created"
    run bash "$CLASS" --roster "$BATS_TEST_TMPDIR/none.csv" "$BATS_TEST_TMPDIR/subs" "$BATS_TEST_TMPDIR/out"
    assert_failure 64
    assert_output --partial "--roster needs a readable file"
}

@test "grade-class: no class grading without a sandbox, unless --no-sandbox" {
    mkdir -p "$BATS_TEST_TMPDIR/subs"
    submission "$BATS_TEST_TMPDIR/subs/ana" preprocessor
    KIT_BWRAP=/nonexistent/bwrap run bash "$CLASS" --labs 01 "$BATS_TEST_TMPDIR/subs" "$BATS_TEST_TMPDIR/out"
    assert_failure 3
    assert_output --partial "no sandbox: bubblewrap (bwrap) is not installed"
    assert_output --partial "--no-sandbox"
    [ ! -d "$BATS_TEST_TMPDIR/out/students/ana" ] || fail "ana was graded without a sandbox"
    KIT_BWRAP=/nonexistent/bwrap run bash "$CLASS" --no-sandbox --reference-build "$KIT_BUILD" --labs 01 \
        "$BATS_TEST_TMPDIR/subs" "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_output --partial "isolation: none: turned off (--no-sandbox)"
    run cat "$BATS_TEST_TMPDIR/out/class.csv"
    assert_line "ana,,0,20,0,1,0,0,graded"
    run grep -c "Isolation: none" "$BATS_TEST_TMPDIR/out/students/ana/report.txt"
    assert_output 1
}

@test "grade-class: every fixture gets its verdict (those decided by a run: on a GPU)" {
    sandbox_works || true
    kit_copy "$BATS_TEST_TMPDIR/kit"
    printf '\n[01-coalescing]\ntime-limit = 20\n' >>"$BATS_TEST_TMPDIR/kit/common/grade/grading.conf"
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    # On a GPU, the fixtures decided by a run are the GPU test's (below).
    if has_gpu; then mapfile -t all < <(fixtures cpu); else mapfile -t all < <(fixtures); fi
    for f in "${all[@]}"; do
        submission "$subs/$f" "$f"
    done
    run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade-class.sh" --reference-build "$KIT_BUILD" \
        "${sandbox_opt[@]}" --labs 01,04 "$subs" "$out"
    echo "$output" >"$KIT_BUILD/grade-class-fixtures.txt"
    [ ${#sandbox_opt[@]} = 1 ] || assert_output --partial "isolation: bubblewrap"
    assert_fixture_verdicts "$out" "${all[@]}"
    # The other lab of each is missing, and says so.
    [ "$(csv_field_of "$out/class-labs.csv" '"no-compile","no-compile","","04-occupancy"' 9)" = \
        "no labs/04-occupancy/occupancy.cu" ]
}

@test "grade-class: hostile submissions and names, rosters, one CSV, and a rerun resumes" {
    sandbox_works || true
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out" t="$BATS_TEST_TMPDIR/t"
    mkdir -p "$subs" "$t"
    # Honest: a folder with labs/, and an archive of the lab folder itself.
    submission "$subs/ana" reference=03-divergence
    mkdir -p "$t/ben" && cp -R "$KIT_ROOT/solutions/03-divergence" "$t/ben/"
    tar -czf "$subs/ben.tar.gz" -C "$t/ben" 03-divergence
    # labs/ a symbolic link to the kit's references, in a folder and an archive.
    mkdir -p "$subs/cem" && ln -s "$KIT_ROOT/solutions" "$subs/cem/labs"
    mkdir -p "$t/dan" && ln -s "$KIT_ROOT/solutions" "$t/dan/labs"
    tar -cf "$subs/dan.tar" -C "$t/dan" labs
    # The lab file itself a link to the reference, beside a fifo.
    mkdir -p "$subs/eda/labs/03-divergence"
    ln -s "$KIT_ROOT/solutions/03-divergence/divergence.cu" "$subs/eda/labs/03-divergence/divergence.cu"
    mkfifo "$subs/eda/labs/03-divergence/pipe.cu"
    # A path out of the archive.
    mkdir -p "$t/fay/x/labs/03-divergence" && cp "$KIT_ROOT/labs/03-divergence/divergence.cu" "$t/fay/x/labs/03-divergence/"
    echo owned >"$t/fay/evil"
    (cd "$t/fay/x" && tar -cPf "$subs/fay.tar" labs ../evil)
    # A name with a newline, and two names that collapse to one: each with
    # a Lab 03 that does not compile.
    broken() {
        mkdir -p "$1/labs/03-divergence"
        { cat "$KIT_ROOT/labs/03-divergence/divergence.cu"; echo 'int broken('; } >"$1/labs/03-divergence/divergence.cu"
    }
    broken "$subs/gil"$'\n'"ana"
    broken "$subs/hal x"
    broken "$subs/hal_x"
    # A damaged archive, and a symbolic link for a submission.
    echo "not an archive" >"$subs/ivy.tar.gz"
    ln -s "$KIT_ROOT/solutions" "$subs/jon"
    # A spreadsheet's roster: a header, quoted names (a comma, a quote),
    # CRLF, an archive named as it is, and a row for nobody.
    printf 'submission,student_id,name\r\nana,s001,Ana Lima\r\nhal_x,s008,"Hal X"\r\nben.tar.gz,s002,"Ben ""B"", Jr."\r\nnobody,s999,No One\r\n' >"$t/roster.csv"

    run bash "$CLASS" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --roster "$t/roster.csv" --labs 03 "$subs" "$out"
    echo "$output" >"$KIT_BUILD/grade-class-hostile.txt"
    # jon was not graded: the exit status says so.
    assert_failure 1
    assert_output --partial "NOT GRADED: jon: a symbolic link, not a submission"
    assert_output --partial "both make 'hal_x'; the second is graded as 'hal_x-2'"
    [ -s "$BATS_TEST_TMPDIR/t/fay/evil" ] && [ ! -e "$subs/evil" ] && [ ! -e "$out/evil" ]
    labs="$out/class-labs.csv"
    reason() { csv_field_of "$labs" "\"$1\"," 9; }
    verdict() { csv_field_of "$labs" "\"$1\"," 5; }
    honest=SKIP
    has_gpu && honest=PASS
    [ "$(verdict ana)" = "$honest" ] || fail "ana: $(verdict ana) $(reason ana)"
    [ "$(verdict ben)" = "$honest" ] || fail "ben: $(verdict ben) $(reason ben)"
    for s in cem dan eda; do
        [ "$(verdict $s)" = FAIL ] || fail "$s: $(verdict $s), not FAIL"
        [[ "$(reason $s)" == "no lab files"* ]] || fail "$s: $(reason $s)"
    done
    [[ "$(reason fay)" == "the archive holds a path outside itself"* ]] || fail "fay: $(reason fay)"
    [ "$(reason ivy)" = "a damaged archive" ] || fail "ivy: $(reason ivy)"
    for s in gil_ana hal_x hal_x-2; do
        [[ "$(reason $s)" == "does not compile"* ]] || fail "$s: $(reason $s)"
    done
    # Nobody else was graded twice, or merged.
    [ "$(grep -c '^"ana",' "$labs")" = 1 ]
    [ "$(wc -l <"$out/class.csv")" = 11 ]
    # The roster's IDs and names in the reports, and in roster.csv.
    run cat "$out/class.csv"
    assert_line --regexp '^ana,s001,'
    assert_line --regexp '^hal_x,s008,0,20,0,1,0,0,graded$'
    [ "$(csv_field_of "$out/roster.csv" '"ana",' 3)" = "Ana Lima" ]
    [ "$(csv_field_of "$out/roster.csv" '"hal_x",' 3)" = "Hal X" ]
    [ "$(csv_field_of "$out/roster.csv" '"ben",' 2)" = s002 ]
    [ "$(csv_field_of "$out/roster.csv" '"ben",' 3)" = 'Ben "B", Jr.' ]
    [ "$(csv_field_of "$out/roster.csv" '"hal_x-2",' 2)" = "" ]
    run grep -c "roster: no submission 'nobody' (ID s999)" "$KIT_BUILD/grade-class-hostile.txt"
    assert_output 1
    run grep -c "roster: no submission 'submission'" "$KIT_BUILD/grade-class-hostile.txt"
    assert_output 0
    # Every student's JUnit file is XML, whatever the names and reasons hold.
    if command -v python3 >/dev/null 2>&1; then
        for f in "$out"/students/*/grades.xml; do
            python3 -c 'import xml.dom.minidom, sys; xml.dom.minidom.parse(sys.argv[1])' "$f" || fail "$f: not XML"
        done
    fi
    # A link instead of a lab file is named in the reason.
    [[ "$(reason eda)" == *"a symbolic link is never taken (labs/03-divergence/divergence.cu)"* ]] || fail "eda: $(reason eda)"
    run grep -c "Student: Ana Lima (ID s001)" "$out/students/ana/report.txt"
    assert_output 1
    for f in report.txt grades.csv grades.tap grades.xml results.json; do
        [ -s "$out/students/ana/$f" ] || fail "ana: no $f"
    done

    # A rerun keeps the graded, and grades a new or changed submission.
    broken "$subs/kim"
    echo "// changed" >>"$subs/ana/labs/03-divergence/divergence.cu"
    rm "$subs/jon"
    run bash "$CLASS" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --roster "$t/roster.csv" --labs 03 "$subs" "$out"
    has_gpu && assert_success || assert_failure 2
    assert_line "grade-class: ben: graded before, kept"
    refute_line "grade-class: ana: graded before, kept"
    assert_output --partial "kim: grading"
    run grep -c '^kim,,0,20,0,1,0,0,graded$' "$out/class.csv"
    assert_output 1
}

@test "grade-class --slurm: a job array on a single-node Slurm gathers the same CSV" {
    sandbox_works || true
    slurm_start "$BATS_TEST_TMPDIR/slurm" || skip "no single-node Slurm here: $slurm_why"
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    submission "$subs/ana" no-compile
    submission "$subs/ben" preprocessor
    echo "not an archive" >"$subs/cem.tar.gz"
    run timeout 900 bash "$CLASS" --slurm --slurm-gres none --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --labs 01 "$subs" "$out"
    assert_success
    assert_output --partial "submitting 3 tasks to Slurm, and waiting for them"
    [ "$(ls "$out"/slurm/task-*.log | wc -l)" = 3 ]
    run cat "$out/class.csv"
    assert_line "ana,,0,20,0,1,0,0,graded"
    assert_line "ben,,0,20,0,1,0,0,graded"
    assert_line "cem,,0,20,0,1,0,0,graded"
    [ "${#lines[@]}" = 4 ]
    # Graded students are not submitted again.
    run timeout 300 bash "$CLASS" --slurm --slurm-gres none --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --labs 01 "$subs" "$out"
    assert_success
    assert_output --partial "every submission is graded already"
}

# bats test_tags=gpu
@test "grade-class on a GPU: the fixtures decided by a run get their verdicts; honest students full marks; nothing left running" {
    require_gpu_unlocked
    kit_copy "$BATS_TEST_TMPDIR/kit"
    printf '\n[01-coalescing]\ntime-limit = 20\n' >>"$BATS_TEST_TMPDIR/kit/common/grade/grading.conf"
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    mapfile -t gpu < <(fixtures gpu)
    for f in "${gpu[@]}"; do
        submission "$subs/$f" "$f"
    done
    submission "$subs/reference" reference=01-coalescing reference=04-occupancy reference=05-streams
    submission "$subs/skeleton" skeleton
    # Lab 05: copy_in skips its copies after the first pipeline run.
    mkdir -p "$subs/skip-copies/labs/05-streams"
    sed -f "$KIT_ROOT/tests/fixtures/lab05/skip-copies.sed" "$KIT_ROOT/solutions/05-streams/streams.cu" \
        >"$subs/skip-copies/labs/05-streams/streams.cu"
    sandbox_works || fail "the GPU tests of the grader need its sandbox: $no_sandbox_why"
    run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade-class.sh" --reference-build "$KIT_BUILD" \
        --labs 01,04,05 "$subs" "$out"
    echo "$output" >"$KIT_BUILD/grade-class-gpu.txt"
    assert_success
    assert_fixture_verdicts "$out" "${gpu[@]}"
    [ "$(csv_field_of "$out/class-labs.csv" '"skip-copies","skip-copies","","05-streams"' 5)" = FAIL ]
    run cat "$out/class.csv"
    assert_line --regexp '^reference,,60,60,3,0,0,20,20,20,graded$'
    assert_line --regexp '^skeleton,,0,60,0,3,0,0,0,0,graded$'
    # Nothing a submission started outlives its grading.
    run pgrep -f "$subs|kit-class\.|/build/(timed|counted)|coalescing --size"
    assert_failure
}
