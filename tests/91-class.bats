#!/usr/bin/env bats
# make grade-class: a folder of submissions, one CSV. Names, archives,
# hostile submissions, resuming, rosters, the LMS's CSVs and Slurm run
# without a GPU; an honest submission's PASS needs one. The fixtures'
# verdicts are in 91-class-fixtures.bats.

setup() {
    load test_helper
    load slurm
    CLASS="$KIT_ROOT/common/grade/grade-class.sh"
}

teardown() {
    slurm_stop
}

has_gpu() { kit_query --check >/dev/null; }

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
    for n in 0 x 100; do
        run bash "$CLASS" --per-gpu "$n" "$BATS_TEST_TMPDIR/subs" "$BATS_TEST_TMPDIR/out"
        assert_failure 64
        assert_output --partial "--per-gpu needs a count from 1 to 99"
    done
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


@test "grade-class: hostile submissions and names, rosters, one CSV, and a rerun resumes" {
    sandbox_works || true
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out" t="$BATS_TEST_TMPDIR/t"
    mkdir -p "$subs" "$t"
    # Names, archives and rosters are this test's subject: Lab 03 graded on
    # its results alone (tests/92 grades the references' speed).
    kit_copy "$BATS_TEST_TMPDIR/kit"
    correctness_only "$BATS_TEST_TMPDIR/kit" 03-divergence
    CLASS="$BATS_TEST_TMPDIR/kit/common/grade/grade-class.sh"
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
    # Names a spreadsheet would take for formulas.
    broken "$subs/+A1+A2"
    broken "$subs/@A1"
    # A damaged archive, and a symbolic link for a submission.
    echo "not an archive" >"$subs/ivy.tar.gz"
    ln -s "$KIT_ROOT/solutions" "$subs/jon"
    # A spreadsheet's roster: a header, quoted names (a comma, a quote),
    # CRLF, an archive named as it is, and a row for nobody.
    printf 'submission,student_id,name\r\nana,s001,Ana Lima\r\nhal_x,s008,"Hal X"\r\nben.tar.gz,s002,"Ben ""B"", Jr."\r\nnobody,s999,No One\r\n' >"$t/roster.csv"

    run bash "$CLASS" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --roster "$t/roster.csv" --labs 03 \
        --per-gpu 3 "$subs" "$out"
    echo "$output" >"$KIT_BUILD/grade-class-hostile.txt"
    assert_output --regexp "grading 3 submissions at a time( on each GPU)? \\("
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
    # The formula names are graded, and no cell of the class's CSV files
    # starts a formula (read with a CSV parser).
    [[ "$(reason "'+A1+A2")" == "does not compile"* ]] || fail "+A1+A2: $(reason "'+A1+A2")"
    [[ "$(reason "'@A1")" == "does not compile"* ]] || fail "@A1: $(reason "'@A1")"
    formulas() {
        python3 -c 'import csv, sys
bad = [c for f in sys.argv[1:] for row in csv.reader(open(f, newline="")) for c in row
       if c[:1] in ("=", "+", "@", "\t", "\r") or (c[:1] == "-" and c != "-")]
print("cells that start a formula:", bad)' "$@"
    }
    run formulas "$out/class.csv" "$labs"
    assert_output "cells that start a formula: []"
    # Negative control: the same names unescaped are found.
    printf 'student,points\n+A1+A2,0\n@A1,0\n' >"$t/unescaped.csv"
    run formulas "$t/unescaped.csv"
    assert_output "cells that start a formula: ['+A1+A2', '@A1']"
    run grep -c "A1" "$out/class.csv"
    assert_output 2
    # Nobody else was graded twice, or merged.
    [ "$(grep -c '^"ana",' "$labs")" = 1 ]
    [ "$(wc -l <"$out/class.csv")" = 13 ]
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
    assert_line "grade-class: cem: graded before, kept"
    refute_line "grade-class: ana: graded before, kept"
    assert_output --partial "kim: grading"
    # A grading that skipped a lab is no grade: a rerun grades it again
    # (where there is a GPU, ben was graded in full and is kept).
    if has_gpu; then
        assert_line "grade-class: ben: graded before, kept"
    else
        assert_line "grade-class: ben: grading"
        run grep -c '^ben,s002,0,20,0,0,1,,incomplete: a lab was skipped$' "$out/class.csv"
        assert_output 1
    fi
    run grep -c '^kim,,0,20,0,1,0,0,graded$' "$out/class.csv"
    assert_output 1
}

@test "grade-class --slurm: a job array on a single-node Slurm: resources and throttle, references built once, a lost task named" {
    sandbox_works || true
    slurm_start "$BATS_TEST_TMPDIR/slurm" || skip "no single-node Slurm here: $slurm_why"
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    submission "$subs/ana" no-compile
    submission "$subs/ben" preprocessor
    echo "not an archive" >"$subs/cem.tar.gz"
    submission "$subs/dan" preprocessor
    # One task at a time; the last one cancelled while it waits, as a task
    # lost with its node would be.
    KIT_SLURM_POLL=1 timeout 900 bash "$CLASS" --slurm --slurm-gres none --slurm-cpus 1 --slurm-mem 500M \
        --slurm-throttle 1 --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --labs 01 "$subs" "$out" \
        >"$BATS_TEST_TMPDIR/first" 2>&1 &
    pid=$!
    for _ in $(seq 300); do [ -s "$out/slurm/job" ] && break; sleep 0.1; done
    job=$(cat "$out/slurm/job")
    scancel "${job}_3"
    wait "$pid" && rc=0 || rc=$?
    run cat "$BATS_TEST_TMPDIR/first"
    [ "$rc" = 1 ] || fail "exit status $rc: $output"
    assert_output --partial "submitting 4 tasks to Slurm (array 0-3%1; each task: 1 CPUs, 500M), and waiting for them"
    assert_output --partial "NOT GRADED: dan: not graded: Slurm task 3 of job $job left no result (see $out/slurm/task-3.log)"
    assert_output --partial "1 submissions NOT GRADED"
    run cat "$out/slurm/task.sh"
    assert_output --partial "export KIT_ARCH=-arch=all-major"
    assert_output --partial -- "--reference-build $(printf '%q' "$KIT_BUILD")"
    run cat "$out/class.csv"
    assert_line "ana,,0,20,0,1,0,0,graded"
    assert_line "ben,,0,20,0,1,0,0,graded"
    assert_line "cem,,0,20,0,1,0,0,graded"
    assert_line --regexp "^dan,,,,,,,,not graded: Slurm task 3 of job $job left no result"
    # The tasks built nothing: the references are those built before the
    # array (the grader says when it builds them; other test files may run
    # beside this one, so the file's time is no evidence).
    run grep -l "building the kit's references" "$out"/slurm/task-*.log
    assert_failure
    # A rerun submits only what is missing, and gathers all.
    run timeout 600 env KIT_SLURM_POLL=1 bash "$CLASS" --slurm --slurm-gres none --slurm-cpus 1 --slurm-mem 500M \
        --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --labs 01 "$subs" "$out"
    assert_success
    assert_output --partial "submitting 1 tasks to Slurm"
    run cat "$out/class.csv"
    assert_line "dan,,0,20,0,1,0,0,graded"
    [ "${#lines[@]}" = 5 ]
    run timeout 300 bash "$CLASS" --slurm --slurm-gres none --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --labs 01 "$subs" "$out"
    assert_success
    assert_output --partial "every submission is graded already"
}

@test "grade-class --slurm: an sbatch that runs nothing leaves every submission NOT GRADED, by name; Lab 08's GPUs said" {
    sandbox_works || true
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out" bin="$BATS_TEST_TMPDIR/bin"
    submission "$subs/ana" preprocessor
    submission "$subs/ben" preprocessor
    # A Slurm that takes the job and loses it: sbatch answers with an ID,
    # squeue lists nothing.
    mkdir -p "$bin"
    printf '#!/bin/sh\necho 4242\n' >"$bin/sbatch"
    printf '#!/bin/sh\nexit 0\n' >"$bin/squeue"
    chmod +x "$bin/sbatch" "$bin/squeue"
    PATH="$bin:$PATH" KIT_SLURM_POLL=1 run bash "$CLASS" --slurm --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" \
        --labs 01 "$subs" "$out"
    assert_failure 1
    assert_output --partial "NOT GRADED: ana: not graded: Slurm task 0 of job 4242 left no result"
    assert_output --partial "NOT GRADED: ben: not graded: Slurm task 1 of job 4242 left no result"
    assert_output --partial "2 submissions NOT GRADED"
    # Not graded: no grade in the LMS files, never a zero.
    run python3 -c 'import csv, sys; print([r[5] for r in csv.reader(open(sys.argv[1]))][1:])' "$out/canvas.csv"
    assert_output "['', '']"
    run python3 -c 'import csv, sys; print([r[5] for r in csv.reader(open(sys.argv[1]))][1:])' "$out/moodle.csv"
    assert_output "['-', '-']"
    # Lab 08 with one GPU per task: said, with how to ask for two; not said
    # where the tasks ask for two.
    PATH="$bin:$PATH" KIT_SLURM_POLL=1 run bash "$CLASS" --slurm --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" \
        --labs 08 "$subs" "$BATS_TEST_TMPDIR/out-08"
    assert_output --partial "08-multi-gpu uses every GPU its task has: with gpu:1 its multi-GPU part is not graded (--slurm-gres gpu:2 asks for two)"
    PATH="$bin:$PATH" KIT_SLURM_POLL=1 run bash "$CLASS" --slurm --slurm-gres gpu:2 --reference-build "$KIT_BUILD" \
        "${sandbox_opt[@]}" --labs 08 "$subs" "$BATS_TEST_TMPDIR/out-08b"
    refute_output --partial "uses every GPU"
    assert_output --partial "gpu:2"
}

@test "grade-class --slurm: a squeue that fails is never taken for an ended job; one Slurm no longer knows has ended" {
    sandbox_works || true
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out" bin="$BATS_TEST_TMPDIR/bin"
    submission "$subs/ana" preprocessor
    mkdir -p "$bin"
    printf '#!/bin/sh\necho 4243\n' >"$bin/sbatch"
    # The controller out of reach: every task may still be running.
    printf '#!/bin/sh\necho "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' \
        >"$bin/squeue"
    chmod +x "$bin/sbatch" "$bin/squeue"
    PATH="$bin:$PATH" KIT_SLURM_POLL=0 KIT_SLURM_TRIES=2 run bash "$CLASS" --slurm --reference-build "$KIT_BUILD" \
        "${sandbox_opt[@]}" --labs 01 "$subs" "$out"
    assert_failure 1
    assert_output --partial "squeue cannot say whether job 4243 has ended (slurm_load_jobs error: Unable to contact slurm controller (connect failure)); run the same command again to gather class.csv"
    refute_output --partial "NOT GRADED"
    [ "$(cat "$out/slurm/job")" = 4243 ]
    # A rerun while squeue still fails grades nothing twice.
    PATH="$bin:$PATH" KIT_SLURM_POLL=0 KIT_SLURM_TRIES=2 run bash "$CLASS" --slurm --reference-build "$KIT_BUILD" \
        "${sandbox_opt[@]}" --labs 01 "$subs" "$out"
    assert_failure 1
    assert_output --partial "squeue cannot say whether Slurm job 4243 of an earlier run has ended"
    # Slurm has forgotten the job: it has ended, and its task left no result.
    printf '#!/bin/sh\necho "slurm_load_jobs error: Invalid job id specified" >&2\nexit 1\n' >"$bin/squeue"
    printf '#!/bin/sh\necho 4244\n' >"$bin/sbatch"
    PATH="$bin:$PATH" KIT_SLURM_POLL=0 KIT_SLURM_TRIES=2 run bash "$CLASS" --slurm --reference-build "$KIT_BUILD" \
        "${sandbox_opt[@]}" --labs 01 "$subs" "$out"
    assert_output --partial "ana: not graded: Slurm task 0 of job 4243 left no result"
    assert_output --partial "NOT GRADED: ana: not graded: Slurm task 0 of job 4244 left no result"
    # A warning on squeue's standard error is not a job in the queue.
    printf '#!/bin/sh\necho "squeue: warning: a setting is deprecated" >&2\nexit 0\n' >"$bin/squeue"
    printf '#!/bin/sh\necho 4245\n' >"$bin/sbatch"
    PATH="$bin:$PATH" KIT_SLURM_POLL=0 KIT_SLURM_TRIES=2 timeout 60 bash "$CLASS" --slurm --reference-build "$KIT_BUILD" \
        "${sandbox_opt[@]}" --labs 01 "$subs" "$out" >"$BATS_TEST_TMPDIR/warn.txt" 2>&1 || true
    run cat "$BATS_TEST_TMPDIR/warn.txt"
    assert_output --partial "NOT GRADED: ana: not graded: Slurm task 0 of job 4245 left no result"
}

@test "make grade-class passes the Slurm resources, the assignment and a chosen ARCH to grade-class" {
    # make -n prints the recipe as written: its lines joined, spaces squeezed.
    recipe() { make -n -s -C "$KIT_ROOT" "$@" | grep -A12 'grade-class.sh' | tr '\\\n\t' '   ' | tr -s ' '; }
    run recipe grade-class SUBMISSIONS=hw1 OUT=out SLURM=1 SLURM_PARTITION=gpu SLURM_ACCOUNT=course \
        SLURM_GRES=gpu:a100:1 SLURM_CPUS=8 SLURM_MEM=32G SLURM_THROTTLE=10 SLURM_OPTIONS="--qos=short --nice=5" \
        ASSIGNMENT="Lab 1 (123)" ARCH=-arch=sm_80
    assert_success
    for want in '--slurm ' '--assignment "Lab 1 (123)"' '--arch "-arch=sm_80"' '--slurm-partition "gpu"' \
        '--slurm-account "course"' '--slurm-gres "gpu:a100:1"' '--slurm-cpus "8"' '--slurm-mem "32G"' \
        '--slurm-throttle "10"' '--slurm-option "--qos=short" --slurm-option "--nice=5"' '-- "hw1" "out"'; do
        assert_output --partial -- "$want"
    done
    # Without ARCH on the command line, grade-class chooses (every major
    # architecture for Slurm's nodes).
    run recipe grade-class SUBMISSIONS=hw1 OUT=out SLURM=1
    assert_success
    assert_output --partial "grade-class.sh --slurm"
    refute_output --partial -- "--arch"
}

@test "grade-class: canvas.csv and moodle.csv as their importers read them, column by column; blanks where a student was not graded in full" {
    sandbox_works || true
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    # The CSVs are this test's subject: Lab 03 graded on its results alone
    # (tests/92 grades the references' speed).
    kit_copy "$BATS_TEST_TMPDIR/kit"
    correctness_only "$BATS_TEST_TMPDIR/kit" 03-divergence
    CLASS="$BATS_TEST_TMPDIR/kit/common/grade/grade-class.sh"
    submission "$subs/ana" preprocessor
    submission "$subs/Ben Ö" reference=03-divergence
    echo "not an archive" >"$subs/cem.tar.gz"
    submission "$subs/dan" preprocessor
    # No roster row: the reports show the submission's own name, UTF-8 and all.
    submission "$subs/Zoë Ñúñez" preprocessor
    # A roster as Canvas exports it, with a `submission` column added; a
    # name and an ID a spreadsheet would read as formulas.
    cat >"$BATS_TEST_TMPDIR/roster.csv" <<'CSV'
Student,ID,SIS User ID,SIS Login ID,Section,Email address,Username,submission
"Lima, Ana",101,S1,ana@u.edu,A,ana@u.edu,ana,ana
Ben Östberg,102,S2,ben@u.edu,B,ben@u.edu,ben,Ben Ö
=cmd|' /C calc'!A0,103,@S3,cem@u.edu,A,cem@u.edu,cem,cem.tar.gz
CSV
    run bash "$CLASS" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --roster "$BATS_TEST_TMPDIR/roster.csv" \
        --assignment "Lab 1 (4567)" --labs 01,03 "$subs" "$out"
    if has_gpu; then assert_success; ben=20; else assert_failure 2; ben=""; fi
    # Without a UTF-8 locale the grader's text is bytes, and names outside
    # ASCII become '?' (lib.sh, one_line).
    utf8=$(locale -a 2>/dev/null | grep -m1 -ixE 'c\.utf-?8|en_us\.utf-?8')
    run python3 - "$out" "$ben" "$utf8" <<'PY'
import csv, sys
out, ben, utf8 = sys.argv[1], sys.argv[2], sys.argv[3]
def rows(name):
    return list(csv.reader(open("%s/%s" % (out, name), encoding="utf-8", newline="")))
# Canvas (canvas-lms app/models/gradebook_importer.rb): the header's first
# cells Student and ID, then SIS User ID and SIS Login ID, the last of the
# student's columns Section; a column "Title (ID)" is the assignment of
# that ID; a row starting "Points Possible" gives its points; an empty
# cell (or "-") is no score.
c = rows("canvas.csv")
assert c[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 1 (4567)"], c[0]
assert "Student" in c[0][0] and "ID" in c[0][1] and "Section" in c[0][4]
assert c[1] == ["Points Possible", "", "", "", "", "40"], c[1]
by_id = {r[1]: r for r in c[2:]}
assert by_id["101"] == ["Lima, Ana", "101", "S1", "ana@u.edu", "A", "0"], by_id["101"]
assert by_id["102"] == ["Ben Östberg", "102", "S2", "ben@u.edu", "B", ben], by_id["102"]
assert by_id["103"] == ["'=cmd|' /C calc'!A0", "103", "'@S3", "cem@u.edu", "A", "0"], by_id["103"]
no_id = sorted(r for r in c[2:] if r[1] == "")
assert no_id == sorted([["Zoë Ñúñez" if utf8 else "Zo?? ??????ez", "", "", "", "", "0"], ["dan", "", "", "", "", "0"]]), no_id
assert len(c) == 7
# Moodle (grade/import/csv: a column mapped to the user's email, username,
# ID number or user id; "-" no grade, for a new grade item too).
m = rows("moodle.csv")
assert m[0] == ["Full name", "Email address", "Username", "ID number", "Submission", "Lab 1 (4567)"], m[0]
by_mail = {r[1]: r for r in m[1:]}
assert by_mail["ana@u.edu"] == ["Lima, Ana", "ana@u.edu", "ana", "101", "ana", "0"], by_mail["ana@u.edu"]
assert by_mail["ben@u.edu"] == ["Ben Östberg", "ben@u.edu", "ben", "102", "Ben___", ben or "-"], by_mail["ben@u.edu"]
assert by_mail["cem@u.edu"][5] == "0"
# The submission's folder name is the grader's key (Submission); the
# person is the name the student gave it.
zoe = "Zo" + "_" * 9 + "ez"
shown = "Zoë Ñúñez" if utf8 else "Zo?? ??????ez"
assert sorted((r[0], r[4]) for r in m[1:] if r[1] == "") == sorted([(shown, zoe), ("dan", "dan")])
assert [r[2] for r in rows("roster.csv") if r[0] == zoe] == [shown]
assert {r[1] for r in rows("class-labs.csv") if r[0] == zoe} == {shown}
# Every text cell neutralised where a spreadsheet would read a formula.
for name in ("canvas.csv", "moodle.csv", "class.csv", "class-labs.csv", "roster.csv"):
    for r in rows(name):
        for v in r:
            assert not v.startswith(("=", "+", "@", "\t", "\r")) and not (v.startswith("-") and v != "-"), (name, v)
print("ok")
PY
    assert_success
    assert_output ok
    # Graded on a GPU: the class's Canvas CSV and the Gradescope results of
    # the student graded in full, kept as the suite's evidence.
    if has_gpu; then
        mkdir -p "$KIT_BUILD/tests/evidence"
        cp "$out/canvas.csv" "$KIT_BUILD/tests/evidence/canvas.csv"
        local f
        for f in "$out"/students/*/results.json; do
            if python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1], encoding="utf-8"))["score"] <= 0)' "$f"; then
                cp "$f" "$KIT_BUILD/tests/evidence/results.json"
            fi
        done
    fi
}

@test "grade-class: a lab graded on every GPU (Lab 08) gets them all; without one, submissions are spread over the GPUs" {
    sandbox_works || true
    local subs="$BATS_TEST_TMPDIR/subs"
    # A submission without lab files: each lab says so, nothing runs.
    mkdir -p "$subs/ana/labs"
    run bash "$CLASS" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --gpus 0,1 --labs 01,08 "$subs" \
        "$BATS_TEST_TMPDIR/out-08"
    assert_output --partial "08-multi-gpu uses every GPU: each submission is graded with all of them (0,1), the other labs on the first"
    assert_output --partial "ana: grading on GPUs 0,1"
    [ "$(csv_field_of "$BATS_TEST_TMPDIR/out-08/class-labs.csv" '"ana","ana","","08-multi-gpu"' 5)" = FAIL ]
    run bash "$CLASS" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --gpus 0,1 --labs 01 "$subs" \
        "$BATS_TEST_TMPDIR/out-01"
    refute_output --partial "uses every GPU"
    assert_output --partial "at a time on each GPU (0,1;"
    assert_line --regexp "^grade-class: ana: grading on GPU [01]$"
}
