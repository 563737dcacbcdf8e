#!/usr/bin/env bats
# The grading platforms, replayed as far as they run here (no GPU, no
# network): every report format with any name and any text, read back with
# a parser; Gradescope's run_autograder in a /autograder of its own, with
# and without a GPU; GitHub Classroom's workflows with the environment
# GitHub's actions give them, and the instructor's fetching and sending of
# grades against a local stand-in for GitHub's API. The class's LMS exports
# and Slurm are in 91-class.bats.

setup() {
    load test_helper
    GRADE="$KIT_ROOT/common/grade/grade.sh"
    command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (the grader's reports need it)"
}

teardown() {
    [ -z "${fake_pid:-}" ] || kill "$fake_pid" 2>/dev/null || true
}

# report_as NAME REASON DIR: one grading's reports, written as grade.sh
# writes them, for a student NAME whose Lab 02 FAILs for REASON.
report_as() {
    local dir=$3
    mkdir -p "$dir"
    (
        grade_lib
        conf_load "$KIT_ROOT/common/grade/grading.conf"
        work="$BATS_TEST_TMPDIR/work"
        mkdir -p "$work" && echo "run 1: a log line" >"$work/log"
        declare -A lab_v=() lab_p=() lab_r=() lab_x=()
        lab_v[01-coalescing]=PASS lab_p[01-coalescing]=16.4 lab_r[01-coalescing]="" lab_x[01-coalescing]=1.93
        lab_v[02-grouping]=FAIL lab_p[02-grouping]=0 lab_r[02-grouping]=$(one_line "$2") lab_x[02-grouping]=""
        lab_v[03-divergence]=SKIP lab_p[03-divergence]="" lab_r[03-divergence]="no usable GPU: none here" lab_x[03-divergence]=""
        student_name=$(one_line "$1") student_id=$(one_line "+$1") grading_seed=7
        report_mode="in-process: the harness and the student's code share one process"
        report_header=("Student: $student_name" "Mode: $report_mode") report_again="again"
        report_gpu="@GPU" report_isolation=bwrap sandbox_note="bubblewrap"
        reports_write "$dir" 01-coalescing 02-grouping 03-divergence >/dev/null
    )
}

# zip_of DIR PATH ZIP: ZIP holds DIR/PATH, as `cd DIR && zip -r ZIP PATH`
# would make it (python3's zipfile: no zip program needed).
zip_of() {
    python3 - "$@" <<'PY'
import os, sys, zipfile
top, path, out = sys.argv[1:4]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(os.path.join(top, path)):
        for f in files:
            full = os.path.join(root, f)
            z.write(full, os.path.relpath(full, top))
PY
}

@test "reports: any name and any text, through report.txt, CSV, JSON, JUnit and TAP, and back through a parser" {
    # The names as they come, and as every report must give them: UTF-8
    # kept, controls and reordering marks gone, a cell that a spreadsheet
    # would read as a formula neutralised (in CSV only).
    python3 - >"$BATS_TEST_TMPDIR/cases" <<'PY'
import json
cases = [
    ("Ana Lima", "Ana Lima", "Ana Lima"),
    ("Carol \u00d6", "Carol \u00d6", "Carol \u00d6"),
    ("\u674e\u5c0f\u9f8d", "\u674e\u5c0f\u9f8d", "\u674e\u5c0f\u9f8d"),
    ("Jos\u00e9 \u00d1\u00fa\u00f1ez", "Jos\u00e9 \u00d1\u00fa\u00f1ez", "Jos\u00e9 \u00d1\u00fa\u00f1ez"),
    ('=HYPERLINK("http://x","y")', '=HYPERLINK("http://x","y")', "'=HYPERLINK(\"http://x\",\"y\")"),
    ("+A1+A2", "+A1+A2", "'+A1+A2"),
    ("@SUM(A1)", "@SUM(A1)", "'@SUM(A1)"),
    ("-2+3", "-2+3", "'-2+3"),
    ("\tTab", "Tab", "Tab"),
    ("two\nlines # TODO skip", "two lines # TODO skip", "two lines # TODO skip"),
    ("rtl\u202eevil\u200b", "rtlevil", "rtlevil"),
    ("<b>&amp;\"'\\", "<b>&amp;\"'\\", "<b>&amp;\"'\\"),
]
for raw, text, cell in cases:
    print(json.dumps([raw, text, cell]))
PY
    reason=$'does not compile: x.cu(3): error # TODO later\nnot ok 9 - forged\nBail out! stop'
    k=0
    while IFS= read -r line; do
        k=$((k + 1))
        name=$(python3 -c 'import json, sys; sys.stdout.write(json.loads(sys.argv[1])[0])' "$line")
        report_as "$name" "$reason" "$BATS_TEST_TMPDIR/r$k"
    done <"$BATS_TEST_TMPDIR/cases"
    # Invalid UTF-8 from a file name: dropped, the rest kept.
    report_as $'bad\xff\xfebyte' "$reason" "$BATS_TEST_TMPDIR/bad"
    run python3 - "$BATS_TEST_TMPDIR" <<'PY'
import csv, json, sys, xml.etree.ElementTree as ET
top = sys.argv[1]
cases = [json.loads(l) for l in open(top + "/cases", encoding="utf-8")]
cases.append(["", "badbyte", "badbyte"])
formula = ("=", "+", "-", "@", "\t", "\r")
for k, (raw, text, cell) in enumerate(cases, 1):
    d = "%s/r%d" % (top, k) if k <= len(cases) - 1 else top + "/bad"
    rows = list(csv.DictReader(open(d + "/grades.csv", encoding="utf-8", newline="")))
    assert len(rows) == 3, (d, rows)
    assert all(r["student"] == cell for r in rows), (rows[0]["student"], cell)
    for r in rows:
        for v in r.values():
            assert not v.startswith(formula), ("a formula cell", v)
    assert rows[1]["reason"] == "does not compile: x.cu(3): error # TODO later not ok 9 - forged Bail out! stop", rows[1]["reason"]
    assert rows[2]["points"] == "" and rows[0]["points"] == "16.4", "points"
    res = json.load(open(d + "/results.json", encoding="utf-8"))
    assert res["extra_data"]["student"] == text, (res["extra_data"]["student"], text)
    rec = json.load(open(d + "/record.json", encoding="utf-8"))
    assert rec["student"] == text and rec["total"] == 16.4 and rec["skipped"] == 1
    suite = ET.parse(d + "/grades.xml").getroot().find("testsuite")
    assert suite.get("name") == "kit-grading " + text, suite.get("name")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["student"] == text and props["mode"].startswith("in-process")
    tap = open(d + "/grades.tap", encoding="utf-8").read().splitlines()
    assert [l for l in tap if l.startswith("# Student: ")][0].startswith("# Student: " + text), tap[2]
    assert sum(1 for l in tap if l.startswith(("ok ", "not ok "))) == 3, tap
    txt = open(d + "/report.txt", encoding="utf-8").read()
    assert ("Student: " + text) in txt, txt[:200]
print("checked", len(cases))
PY
    assert_success
    assert_output "checked 13"
    # TAP, read by Perl's TAP::Parser: the failing lab fails, whatever its
    # reason says; nothing bails out; the skipped lab skips.
    command -v prove >/dev/null 2>&1 || skip "prove (Perl's TAP::Parser) is not installed"
    for d in "$BATS_TEST_TMPDIR"/r*; do
        run prove -v -e cat "$d/grades.tap"
        assert_failure
        assert_output --partial "Failed test:  2"
        assert_output --partial "(less 1 skipped subtest: 1 okay)"
        refute_output --partial "Bailout"
        refute_output --partial "TODO passed"
    done
}

@test "TAP: a reason cannot carry a directive (negative control: the same line unescaped passes in prove)" {
    command -v prove >/dev/null 2>&1 || skip "prove (Perl's TAP::Parser) is not installed"
    report_as "Ana" "wrong result # TODO the harness's checks failed" "$BATS_TEST_TMPDIR/r"
    run prove -e cat "$BATS_TEST_TMPDIR/r/grades.tap"
    assert_failure
    assert_output --partial "Failed test:  2"
    run grep -c '\\# TODO' "$BATS_TEST_TMPDIR/r/grades.tap"
    assert_output 1
    # The same failing line as the kit wrote it before: a TODO, "successful".
    printf 'TAP version 13\n1..1\nnot ok 1 02-grouping - wrong result # TODO the harness'"'"'s checks failed\n' \
        >"$BATS_TEST_TMPDIR/unescaped.tap"
    run prove -e cat "$BATS_TEST_TMPDIR/unescaped.tap"
    assert_success
    assert_output --partial "All tests successful"
}

@test "a lab file saved with a UTF-8 BOM (and CRLF) is graded; a BOM inside its code is refused" {
    kit_copy "$BATS_TEST_TMPDIR/kit"
    correctness_only "$BATS_TEST_TMPDIR/kit" 03-divergence
    mkdir -p "$BATS_TEST_TMPDIR/kit/labs/03-divergence" "$BATS_TEST_TMPDIR/kit/labs/01-coalescing"
    { printf '\xef\xbb\xbf'; sed 's/$/\r/' "$KIT_ROOT/solutions/03-divergence/divergence.cu"; } \
        >"$BATS_TEST_TMPDIR/kit/labs/03-divergence/divergence.cu"
    # The negative control: the same mark at the start of a line of code.
    sed '40s/^/\xef\xbb\xbf/' "$KIT_ROOT/solutions/01-coalescing/coalescing.cu" \
        >"$BATS_TEST_TMPDIR/kit/labs/01-coalescing/coalescing.cu"
    run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" --report "$BATS_TEST_TMPDIR/r" 01 03
    assert_line --regexp "^01-coalescing +FAIL +0/20 +labs/01-coalescing/coalescing.cu:40: a character outside ASCII in code"
    if kit_query --check >/dev/null; then
        assert_line --regexp "^03-divergence +PASS +20/20"
    else
        # Built, checked and linked: only the runs were left.
        assert_line --regexp "^03-divergence +SKIP +-/20 +no usable GPU"
    fi
}

@test "unpack.py: only lab files leave an archive or a folder, each capped; links, paths outside and oversized archives refused" {
    u="$KIT_ROOT/common/grade/unpack.py" t="$BATS_TEST_TMPDIR"
    labs=(01-coalescing 03-divergence)
    take() { # SUBMISSION [OPTIONS...]: unpacks into a fresh $t/dest
        local src=$1
        shift
        rm -rf "$t/dest" && mkdir -p "$t/dest"
        run python3 "$u" "$@" "$src" "$t/dest" "${labs[@]}"
    }
    # Honest: the lab files, byte for byte, and nothing else.
    mkdir -p "$t/honest/x/labs/03-divergence" "$t/honest/x/labs/01-coalescing" "$t/honest/x/other"
    cp "$KIT_ROOT/solutions/03-divergence/divergence.cu" "$t/honest/x/labs/03-divergence/"
    cp "$KIT_ROOT/labs/01-coalescing/coalescing.cu" "$t/honest/x/labs/01-coalescing/"
    head -c 100000 /dev/urandom >"$t/honest/x/other/data.bin"
    tar -czf "$t/honest.tgz" -C "$t/honest" x
    zip_of "$t/honest" x "$t/honest.zip"
    for src in "$t/honest" "$t/honest.tgz" "$t/honest.zip"; do
        take "$src"
        assert_success
        cmp "$t/dest/03-divergence/divergence.cu" "$KIT_ROOT/solutions/03-divergence/divergence.cu"
        cmp "$t/dest/01-coalescing/coalescing.cu" "$KIT_ROOT/labs/01-coalescing/coalescing.cu"
        [ "$(cd "$t/dest" && find . -type f | sort | tr '\n' ' ')" = "./01-coalescing/coalescing.cu ./03-divergence/divergence.cu " ]
    done
    # A lab file of 10 MiB that compresses to little: at most the limit and
    # one byte leave the archive (the grader then refuses it for its size).
    mkdir -p "$t/bomb/labs/03-divergence"
    head -c $((10 << 20)) /dev/zero >"$t/bomb/labs/03-divergence/divergence.cu"
    zip_of "$t/bomb" labs "$t/bomb.zip"
    take "$t/bomb.zip" --file-limit 1000
    assert_success
    [ "$(stat -c %s "$t/dest/03-divergence/divergence.cu")" = 1001 ]
    # Entries that declare more than the archive may hold: refused unread.
    take "$t/bomb.zip" --scan-bytes 1000000
    assert_failure 1
    assert_output "the archive holds more than 1000000 bytes: not unpacked"
    take "$t/honest.tgz" --max-bytes 100
    assert_failure 1
    assert_output --regexp "^its lab files hold [0-9]+ bytes, more than the 100 a submission may give$"
    # Paths outside the archive, absolute or with ..: the whole archive refused.
    (cd "$t/honest/x" && tar -cPf "$t/out.tar" labs ../../honest.tgz)
    take "$t/out.tar"
    assert_failure 1
    assert_output --partial "the archive holds a path outside itself (../../honest.tgz)"
    python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w"); z.writestr("/abs/labs/03-divergence/divergence.cu", "x"); z.close()' "$t/abs.zip"
    take "$t/abs.zip"
    assert_failure 1
    assert_output --partial "the archive holds a path outside itself"
    # Links, in an archive or a folder: never taken, and named.
    mkdir -p "$t/links/labs/03-divergence"
    ln -s "$KIT_ROOT/solutions/03-divergence/divergence.cu" "$t/links/labs/03-divergence/divergence.cu"
    tar -cf "$t/links.tar" -C "$t/links" labs
    for src in "$t/links" "$t/links.tar"; do
        take "$src"
        assert_failure 1
        assert_output "no lab files (labs/NN-name/name.cu, or NN-name/name.cu) in the submission: a symbolic link is never taken (labs/03-divergence/divergence.cu)"
    done
    # A folder linked from inside the submission is not walked.
    mkdir -p "$t/dirlink"
    ln -s "$KIT_ROOT/solutions" "$t/dirlink/labs"
    take "$t/dirlink"
    assert_failure 1
    assert_output --partial "a symbolic link is never taken (labs)"
    # A damaged archive.
    echo "not an archive" >"$t/damaged.tar.gz"
    take "$t/damaged.tar.gz"
    assert_failure 1
    assert_output "a damaged archive"
}

# ---------------------------------------------------------------------------
# Gradescope
# ---------------------------------------------------------------------------

# fake_autograder ROOT [OPTIONS...]: a Gradescope /autograder at ROOT as
# Gradescope makes it: the zip of make-zip.sh OPTIONS unpacked into
# source/, run_autograder beside it, an empty submission/. The references
# are this kit's build (setup.sh's work), linked.
fake_autograder() {
    local root=$1
    shift
    mkdir -p "$root/source" "$root/submission"
    bash "$KIT_ROOT/common/grade/gradescope/make-zip.sh" "$@" "$BATS_TEST_TMPDIR/ag.zip" >/dev/null ||
        fail "make-zip.sh failed"
    unzip_to "$BATS_TEST_TMPDIR/ag.zip" "$root/source"
    cp "$root/source/run_autograder" "$root/run_autograder"
    if [ -d "$root/source/kit/solutions" ]; then
        mkdir -p "$root/source/kit/build/bin"
        ln -s "$KIT_BUILD/solutions" "$root/source/kit/build/solutions"
        ln -s "$KIT_BUILD/harness" "$root/source/kit/build/harness"
        cp -p "$KIT_BUILD/bin/kit-query" "$root/source/kit/build/bin/"
    fi
}

# fake_gpu ROOT: kit-query of ROOT's kit says there is a GPU (the grade
# then rests on what is decided before any run).
fake_gpu() {
    printf '#!/bin/sh\n[ "$1" = --check ] && exit 0\nprintf "device: Stand-in GPU\\ncompute-capability: 9.0\\nuuid: GPU-0\\n"\n' \
        >"$1/source/kit/build/bin/kit-query"
    chmod +x "$1/source/kit/build/bin/kit-query"
}

# autograde ROOT: run_autograder there, as root would (the sandbox's user
# may not reach the test's folders: root without capabilities instead).
autograde() {
    KIT_SANDBOX_USER=root KIT_AUTOGRADER_ROOT=$1 run bash "$1/run_autograder"
}

@test "Gradescope without a GPU: an autograder failure with the reason, never a zero" {
    root="$BATS_TEST_TMPDIR/autograder"
    fake_autograder "$root"
    submission "$root/submission" reference=03-divergence
    CUDA_VISIBLE_DEVICES="" autograde "$root"
    assert_failure 1
    assert_output --partial "NOT GRADED: no usable GPU here"
    assert_output --partial "Gradescope's autograder machines have no GPU"
    [ ! -e "$root/results/results.json" ] || fail "results.json was written: $(cat "$root/results/results.json")"
    # The positive control: with a GPU, results.json. A lab decided before
    # any run: the stand-in GPU's lock is not the real GPU's, so nothing of
    # this test may run on it.
    fake_gpu "$root"
    rm -rf "$root/submission"
    submission "$root/submission" preprocessor
    autograde "$root"
    assert_success
    [ -s "$root/results/results.json" ]
}

@test "Gradescope with a GPU: results.json with every field, the group's names read as JSON, only the uploaded lab files graded" {
    root="$BATS_TEST_TMPDIR/autograder"
    fake_autograder "$root"
    fake_gpu "$root"
    up="$root/submission"
    # The student's file, breaking a text rule (decided before any run), in
    # a folder whose name holds a newline and "0 ..": a picker splitting
    # names on lines would read "../source/kit/solutions/..." below it.
    nest=$'x\n0 ..'
    mkdir -p "$up/$nest/source/kit/solutions/01-coalescing"
    sed -f "$KIT_ROOT/tests/fixtures/grade/preprocessor.sed" "$KIT_ROOT/solutions/01-coalescing/coalescing.cu" \
        >"$up/$nest/source/kit/solutions/01-coalescing/coalescing.cu"
    # A link to the kit's reference at a shorter path, and a fifo: never taken.
    mkdir -p "$up/01-coalescing"
    ln -s "$root/source/kit/solutions/01-coalescing/coalescing.cu" "$up/01-coalescing/coalescing.cu"
    mkfifo "$up/grouping.cu"
    # Gradescope's metadata on one line, a group of two, names beyond ASCII.
    printf '%s' '{"id": 1, "assignment": {"title": "Lab \"name\": 01", "id": 2}, "users": [{"email": "ana@x.edu", "id": 11, "name": "Ana Lima", "sid": "s001"}, {"email": "bo@x.edu", "id": 12, "name": "Bo \u00d6stberg"}], "previous_submissions": []}' \
        >"$root/submission_metadata.json"
    autograde "$root"
    assert_success
    run python3 - "$root/results/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
for key in ("score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
            "visibility", "stdout_visibility", "extra_data", "tests"):
    assert key in r, key
t = r["tests"]
assert len(t) == 1 and t[0]["name"] == "01-coalescing", t
for key in ("score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
            "visibility", "extra_data"):
    assert key in t[0], key
print(r["score"], t[0]["status"], r["extra_data"]["student"], "|", r["extra_data"]["student_id"], "|", t[0]["output"])
PY
    assert_success
    assert_output --regexp "^0(\.0)? failed Ana Lima, Bo Östberg \| s001, bo@x.edu \| FAIL: labs/01-coalescing/coalescing.cu:1: a preprocessor line"
}

@test "Gradescope without a sandbox: refused unless the autograder was made with --allow-unsandboxed" {
    root="$BATS_TEST_TMPDIR/autograder"
    fake_autograder "$root"
    fake_gpu "$root"
    submission "$root/submission" preprocessor
    KIT_BWRAP=/nonexistent/bwrap autograde "$root"
    assert_failure 1
    assert_output --partial "NOT GRADED: the grading could not be done here"
    assert_output --partial "--allow-unsandboxed"
    [ ! -e "$root/results/results.json" ]
    root2="$BATS_TEST_TMPDIR/autograder2"
    fake_autograder "$root2" --allow-unsandboxed
    fake_gpu "$root2"
    submission "$root2/submission" preprocessor
    KIT_BWRAP=/nonexistent/bwrap autograde "$root2"
    assert_success
    run python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["extra_data"]["isolation"], r["score"])' \
        "$root2/results/results.json"
    assert_output --regexp "^none 0(\.0)?$"
}

@test "Gradescope import: each upload gets the GPU host's grading of exactly its files; other files are not graded" {
    sandbox_works || true
    subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out"
    submission "$subs/ana" preprocessor
    run bash "$KIT_ROOT/common/grade/grade-class.sh" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --labs 01 "$subs" "$out"
    assert_success
    root="$BATS_TEST_TMPDIR/autograder"
    fake_autograder "$root" --graded "$out"
    [ ! -e "$root/source/kit/solutions" ] || fail "the import autograder holds the references"
    # The same file, uploaded on its own: the host's grading.
    cp "$subs/ana/labs/01-coalescing/coalescing.cu" "$root/submission/"
    autograde "$root"
    assert_success
    run python3 - "$root/results/results.json" "$out/students/ana/results.json" <<'PY'
import json, sys
got, want = (json.load(open(p, encoding="utf-8")) for p in sys.argv[1:])
assert got["tests"] == want["tests"] and got["score"] == want["score"]
print(got["output"].splitlines()[0])
PY
    assert_success
    assert_output --partial "Graded on the course's GPU host"
    # One byte more: not what the host graded.
    echo "// changed" >>"$root/submission/coalescing.cu"
    autograde "$root"
    assert_failure 1
    assert_output --partial "NOT GRADED: these files were not graded on the course's GPU host"
    [ ! -e "$root/results/results.json" ]
}

# ---------------------------------------------------------------------------
# GitHub Classroom
# ---------------------------------------------------------------------------

# student_repo DIR WHAT...: a student's repository made from the template
# (the kit without its references), its labs/ as `submission` makes them.
student_repo() {
    local dir=$1
    shift
    mkdir -p "$dir"
    cp -Rp "$KIT_ROOT/Makefile" "$KIT_ROOT/common" "$dir/"
    submission "$dir" "$@"
}

replay() { # WORKFLOW EVENT [PAYLOAD], in the current folder
    python3 -c 'import yaml' 2>/dev/null || skip "PyYAML is not installed (Debian: python3-yaml)"
    run python3 "$KIT_ROOT/tests/classroom_replay.py" "$@"
}

@test "Classroom: the workflow the kit shipped before records nothing (negative control)" {
    student_repo "$BATS_TEST_TMPDIR/repo" reference=01-coalescing
    # Its trusted kit, checked out beside the student's, with the references built.
    kit_copy "$BATS_TEST_TMPDIR/grader"
    ln -s "$KIT_BUILD" "$BATS_TEST_TMPDIR/grader/build"
    cd "$BATS_TEST_TMPDIR/repo"
    REPLAY_REPOS="{\"your-org/cuda-lab-kit-grader\": \"$BATS_TEST_TMPDIR/grader\"}" \
        replay "$KIT_ROOT/tests/fixtures/classroom/classroom-before.yml" push
    assert_failure
    assert_output --partial "no job run-autograding-tests (jobs: grade)"
    assert_output --partial "no repository_dispatch trigger"
    assert_output --partial "no guard"
    assert_output --partial "runs on a self-hosted runner"
    # The grading step, with the command grader's PATH and HOME only: no
    # student name, exit status 64, no points.
    assert_output --partial "grade.sh: --student needs a name"
    assert_output --partial '"lab01": "fail"'
    assert_output --partial '"points": null'
}

@test "Classroom: the students' workflow gives feedback on a push and Classroom the points the instructor's grading sent" {
    student_repo "$BATS_TEST_TMPDIR/repo" preprocessor reference=03-divergence
    cd "$BATS_TEST_TMPDIR/repo"
    replay "$KIT_ROOT/common/grade/classroom/classroom.yml" push
    # Feedback: the broken rule named, no points posted (the reporter
    # posts none where max_score is 0), the job failing.
    assert_output --partial "FAIL 01-coalescing: text rules: labs/01-coalescing/coalescing.cu:1: a preprocessor line"
    assert_output --partial "ok   03-divergence: text rules: keeps the text rules"
    assert_output --partial '"points": null'
    refute_output --partial "no job"
    refute_output --partial "no guard"
    # The positive control of the feedback: a clean repository passes.
    student_repo "$BATS_TEST_TMPDIR/clean" reference=03-divergence
    cd "$BATS_TEST_TMPDIR/clean"
    replay "$KIT_ROOT/common/grade/classroom/classroom.yml" push
    assert_success
    # The instructor's grading, sent: partial points are points.
    payload='{"kit": 1, "total": 36.4, "max_points": 40, "grading_seed": "5", "mode": "in-process", "labs": [{"lab": "01-coalescing", "verdict": "PASS", "points": 16.4, "max_points": 20, "reason": ""}, {"lab": "03-divergence", "verdict": "PASS", "points": 20, "max_points": 20, "reason": ""}]}'
    replay "$KIT_ROOT/common/grade/classroom/classroom.yml" repository_dispatch:kit-grades "$payload"
    assert_success
    assert_output --partial '"points": 36.4, "max_points": 40.0'
    assert_output --partial "ok   01-coalescing (16.4 points): PASS 16.4/20"
}

@test "Classroom: the instructor's side fetches each repository at the deadline, grades its lab files, sends and verifies the points" {
    sandbox_works || true
    t="$BATS_TEST_TMPDIR"
    # Three repositories of the assignment and one of another: ana's last
    # push before the deadline breaks a rule; her later one, the reference,
    # is a commit dated before the deadline but pushed after it (a student's
    # git sets a commit's date: the push's time is GitHub's); bo's holds a
    # link to a file outside and his lab file; cy has no commit; dee's
    # branch moved by a merge before the deadline, a push to another branch,
    # and a back-dated force push after it.
    mk() { # NAME WHAT...: a repository's tarball as GitHub makes one
        local d="$t/tree/$1" n=$1
        shift
        rm -rf "$d" && mkdir -p "$d/org-$n-abc"
        submission "$d/org-$n-abc" "$@"
        tar -czf "$t/$n.tgz" -C "$d" "org-$n-abc"
    }
    mk ana-1 preprocessor && mk ana-2 reference=01-coalescing
    mkdir -p "$t/tree/bo/org-bo-abc/labs/01-coalescing"
    sed -f "$KIT_ROOT/tests/fixtures/grade/no-compile.sed" "$KIT_ROOT/solutions/01-coalescing/coalescing.cu" \
        >"$t/tree/bo/org-bo-abc/labs/01-coalescing/coalescing.cu"
    ln -s /etc/passwd "$t/tree/bo/org-bo-abc/labs/passwd.cu"
    tar -czf "$t/bo.tgz" -C "$t/tree/bo" org-bo-abc
    cat >"$t/state.json" <<EOF
{"org": "course", "token": "t0k3n", "log": "$t/dispatched",
 "repos": [
  {"name": "hw1-ana", "commits": [{"sha": "a1", "date": "2026-12-01T10:00:00Z", "tarball": "$t/ana-1.tgz"},
                                   {"sha": "a2", "date": "2026-12-01T20:00:00Z",
                                    "pushed": "2026-12-02T10:00:00Z", "tarball": "$t/ana-2.tgz"}],
   "classroom_points": [20, 20]},
  {"name": "hw1-bo", "commits": [{"sha": "b1", "date": "2026-11-30T10:00:00Z", "tarball": "$t/bo.tgz"}],
   "classroom_points": [0, 20]},
  {"name": "hw1-cy", "commits": []},
  {"name": "hw1-dee", "commits": [{"sha": "d1", "date": "2026-11-30T10:00:00Z", "tarball": "$t/ana-1.tgz"},
                                   {"sha": "d2", "date": "2026-12-01T12:00:00Z", "type": "pr_merge", "tarball": "$t/ana-1.tgz"},
                                   {"sha": "d3", "date": "2026-12-01T13:00:00Z", "ref": "refs/heads/draft", "tarball": "$t/ana-2.tgz"},
                                   {"sha": "d4", "date": "2026-11-29T10:00:00Z", "pushed": "2026-12-02T09:00:00Z",
                                    "type": "force_push", "tarball": "$t/ana-2.tgz"}]},
  {"name": "hw2-ana", "commits": [{"sha": "c1", "date": "2026-11-30T10:00:00Z", "tarball": "$t/ana-2.tgz"}]}
 ]}
EOF
    python3 "$KIT_ROOT/tests/fake_github.py" "$t/state.json" "$t/port" &
    fake_pid=$!
    for _ in $(seq 50); do [ -s "$t/port" ] && break; sleep 0.1; done
    export GITHUB_API_URL="http://127.0.0.1:$(cat "$t/port")" GH_TOKEN=t0k3n
    cls="$KIT_ROOT/common/grade/classroom/classroom.py"
    run python3 "$cls" fetch --org course --prefix hw1 --before 2026-12-01T23:59:00Z "$t/subs"
    assert_success
    assert_line "classroom: ana: course/hw1-ana at a1"
    assert_line "classroom: bo: course/hw1-bo at b1"
    assert_line "classroom: cy: nothing pushed by 2026-12-01T23:59:00Z: nothing handed in"
    assert_line "classroom: dee: course/hw1-dee at d2"
    run python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ana"]["pushed"])' "$t/subs/.fetched.json"
    assert_output "2026-12-01T10:00:00Z"
    [ "$(ls "$t/subs")" = "$(printf 'ana.tar.gz\nbo.tar.gz\ndee.tar.gz')" ] || fail "fetched: $(ls "$t/subs")"
    run bash "$KIT_ROOT/common/grade/grade-class.sh" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" --labs 01 "$t/subs" "$t/out"
    assert_success
    [ "$(csv_field_of "$t/out/class-labs.csv" '"ana",' 9)" = \
        "labs/01-coalescing/coalescing.cu:1: a preprocessor line or '#' (only '#pragma unroll' or '#pragma unroll N' on a line of its own is allowed)" ]
    [[ "$(csv_field_of "$t/out/class-labs.csv" '"bo",' 9)" == "does not compile"* ]]
    # The points, sent to each student's repository, and what classroom.yml
    # there makes of them: Classroom's points are the grade.
    run python3 "$cls" publish --org course --prefix hw1 "$t/out"
    assert_success
    assert_output "classroom: points sent to 3 repositories"
    run python3 -c 'import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l); b = d["body"]
    print(d["repo"], b["event_type"], b["client_payload"]["total"], b["client_payload"]["max_points"], len(b["client_payload"]))' \
        "$t/dispatched"
    assert_line "hw1-ana kit-grades 0.0 20.0 6"
    assert_line "hw1-bo kit-grades 0.0 20.0 6"
    payload=$(python3 -c 'import json, sys; print(json.dumps(json.loads(open(sys.argv[1]).readline())["body"]["client_payload"]))' "$t/dispatched")
    student_repo "$t/repo" preprocessor
    cd "$t/repo"
    replay "$KIT_ROOT/common/grade/classroom/classroom.yml" repository_dispatch:kit-grades "$payload"
    assert_output --partial '"points": 0.0, "max_points": 20.0'
    # Classroom shows ana 20/20 (her workflow was edited): named; bo's match.
    run python3 "$cls" verify --org course --prefix hw1 "$t/out"
    assert_failure
    assert_line "classroom: course/hw1-ana: Classroom shows 20.0/20.0, the grade is 0.0/20.0"
    refute_output --partial "hw1-bo:"
    # A deadline that is not a time is refused.
    run python3 "$cls" fetch --org course --prefix hw1 --before "Friday noon" "$t/subs3"
    assert_failure 64
    assert_output --partial "--before Friday noon: not a time (e.g. 2026-12-01T23:59:00Z)"
    # A wrong token reads nothing.
    GH_TOKEN=wrong run python3 "$cls" fetch --org course --prefix hw1 "$t/subs2"
    assert_failure
}

@test "Classroom: the workflows keep the trust boundary (the runner, the secrets and inputs on the instructor's side)" {
    python3 -c 'import yaml' 2>/dev/null || skip "PyYAML is not installed (Debian: python3-yaml)"
    run python3 - "$KIT_ROOT/common/grade/classroom" <<'PY'
import re, sys, yaml
d = sys.argv[1]
student = yaml.safe_load(open(d + "/classroom.yml"))
teacher = yaml.safe_load(open(d + "/grade-classroom.yml"))
sj = student["jobs"]["run-autograding-tests"]
assert sj["runs-on"] == "ubuntu-latest", sj["runs-on"]
assert "secrets." not in open(d + "/classroom.yml").read().split("name: Autograding Tests")[1]
tj = teacher["jobs"]["grade"]
assert tj["runs-on"] == ["self-hosted", "gpu"], tj["runs-on"]
on = teacher.get("on", teacher.get(True))
assert list(on) == ["workflow_dispatch"], on
for wf in (student, teacher):
    for job in wf["jobs"].values():
        for step in job["steps"]:
            # Values reach scripts through env, never written into them.
            assert "${{" not in step.get("run", ""), step["run"]
print("ok")
PY
    assert_success
    assert_output ok
}

@test "the platforms' scripts pass shellcheck, and the Python scripts compile" {
    command -v shellcheck >/dev/null 2>&1 || skip "shellcheck is not installed (apt-get install shellcheck)"
    run shellcheck -x "$KIT_ROOT"/common/grade/gradescope/run_autograder "$KIT_ROOT"/common/grade/gradescope/*.sh
    assert_success
    # Compiled in memory: no __pycache__ left in the kit.
    run python3 -c 'import sys
for f in sys.argv[1:]:
    compile(open(f, encoding="utf-8").read(), f, "exec")' "$KIT_ROOT"/common/grade/*.py "$KIT_ROOT"/common/grade/classroom/*.py \
        "$KIT_ROOT"/tests/*.py
    assert_success
}
