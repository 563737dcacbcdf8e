#!/usr/bin/env bats
# make check: one student's copy. The grader's parts (splicing, region
# rules, drawn sizes, verdicts, points, reports) run without a GPU; the
# verdicts that need a program to run need one.

setup() {
    load test_helper
    GRADE="$KIT_ROOT/common/grade/grade.sh"
    LABS=$(kit_labs | tr '\n' ' ')
}

@test "grade.sh: --help, and bad command lines exit 64 with the reason" {
    run bash "$GRADE" --help
    assert_success
    assert_output --partial "usage: grade.sh"
    assert_output --partial "--seed S"
    while IFS='|' read -r args reason; do
        # shellcheck disable=SC2086
        run bash "$GRADE" $args
        assert_failure 64
        assert_output --partial "$reason"
    done <<'EOF'
--seed banana|expected a whole number
--seed|needs a value
--frobnicate|unknown option '--frobnicate'
09-nothing|no lab '09-nothing'
--report|needs a directory
EOF
    run make -s -C "$KIT_ROOT" check LAB=42
    assert_failure
    assert_output --partial "no lab '42'"
}

@test "grading.conf: every lab has points, drawn runs and a metric; kit-names cover its regions" {
    grade_lib
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    for lab in $LABS; do
        [ "$(conf_get "$lab" points)" -gt 0 ] || fail "$lab: no points"
        [[ "$(conf_get "$lab" random-args)" == *"{seed}"* ]] || fail "$lab: random-args draw no seed"
        [ -n "$(conf_get "$lab" metric)" ] || fail "$lab: no metric (none, or a timing key)"
        [ -n "$(conf_get "$lab" sanitize-args)" ] || fail "$lab: no sanitize-args"
        for name in $(kit_names "$KIT_ROOT/labs/$lab/${lab#*-}.cu" "$KIT_ROOT/solutions/$lab/${lab#*-}.cu"); do
            [[ " $(conf_get "$lab" kit-names) " == *" $name "* ]] ||
                fail "$lab: its regions use $name, which kit-names does not allow"
        done
    done
    awk -v f="$(conf_get all full-marks-within)" -v z="$(conf_get all no-marks-beyond)" \
        'BEGIN { exit !(f >= 1 && z > f) }' || fail "full-marks-within must be >= 1 and below no-marks-beyond"
}

@test "splice: a file's own regions give the file back; the student's lines keep their numbers" {
    grade_lib
    for lab in $LABS; do
        name=${lab#*-}
        ref="$KIT_ROOT/solutions/$lab/$name.cu" skel="$KIT_ROOT/labs/$lab/$name.cu"
        run diff <(splice "$ref" "$ref" "x.cu" | grep -v '^#line ') "$ref"
        assert_success
        run diff <(splice "$ref" "$skel" "x.cu" | grep -v '^#line ') "$skel"
        assert_success
    done
    # Line 1 of region TODO(1) of the student's file is announced as its own line.
    skel="$KIT_ROOT/labs/01-coalescing/coalescing.cu"
    first=$(grep -n 'KIT STUDENT REGION BEGIN: TODO(1)' "$skel" | cut -d: -f1)
    run splice "$KIT_ROOT/solutions/01-coalescing/coalescing.cu" "$skel" "labs/01-coalescing/coalescing.cu"
    assert_line "#line $((first + 1)) \"labs/01-coalescing/coalescing.cu\""
}

@test "region rules: the preprocessor, process control, C++ tricks and kit internals are refused" {
    grade_lib
    forbidden="exit abort fopen stdout std"
    check() { region_rule_violation "$(printf '%s\n' "$1" | code_only)" "kit_rng" "$forbidden"; }
    run check "#define kit_finish(x) 0"
    assert_output --partial "uses the preprocessor"
    run check "  #  include <stdlib.h>"
    assert_output --partial "uses the preprocessor"
    run check "%:define X 1"
    assert_output --partial "uses the preprocessor"
    run check "if (n == 0) exit(0);"
    assert_output "uses 'exit'"
    run check "std::printf(\"hello\");"
    assert_output "uses 'std'"
    run check "template <class T> int pass_anyway(T...) { return 1; }"
    assert_output "uses C++ 'template'"
    run check "static int kit_vecadd_all_correct(void) { return 1; }"
    assert_output "uses the kit's internal 'kit_vecadd_all_correct'"
    # What a region may do: allowed kit names, #pragma unroll, forbidden
    # words in comments and strings.
    run check $'#pragma unroll 4\nkit_rng s; /* exit() here? */ printf("exit %d\\n", 1); // abort'
    assert_output ""
}

@test "regions_sound: a missing, renamed or unclosed marker is found" {
    grade_lib
    good="$KIT_ROOT/labs/01-coalescing/coalescing.cu"
    run regions_sound "$good" 1 2
    assert_success
    bad="$BATS_TEST_TMPDIR/bad.cu"
    grep -v 'KIT STUDENT REGION END: TODO(2)' "$good" >"$bad"
    run regions_sound "$bad" 1 2
    assert_failure
    assert_output 2
    sed 's/BEGIN: TODO(1)/BEGIN: TODO(7)/' "$good" >"$bad"
    run regions_sound "$bad" 1 2
    assert_failure
    assert_output 1
}

@test "drawn arguments: the same seed draws the same; each stays in its range" {
    grade_lib
    template="--size {size:100000:8000000} --seed {seed} --stride {pow2:1:32} --streams {int:2:16}"
    rng_seed 42; expand_args "$template"; a=$drawn; expand_args "$template"; a2=$drawn
    rng_seed 42; expand_args "$template"; b=$drawn; expand_args "$template"; b2=$drawn
    rng_seed 43; expand_args "$template"; c=$drawn
    [ "$a $a2" = "$b $b2" ] || fail "seed 42 drew '$a', '$a2', then '$b', '$b2'"
    [ "$a" != "$a2" ] || fail "two runs of one grading drew the same: '$a'"
    [ "$a" != "$c" ] || fail "seeds 42 and 43 drew the same: '$a'"
    rng_seed 7
    for _ in $(seq 200); do
        expand_args "$template"
        read -r _ size _ seed _ stride _ streams <<<"$drawn"
        [ "$size" -ge 100000 ] && [ "$size" -le 8000001 ] && [ $((size % 2)) = 1 ] || fail "size $size"
        [ "$seed" -ge 1 ] || fail "seed $seed"
        case $stride in 1 | 2 | 4 | 8 | 16 | 32) ;; *) fail "stride $stride" ;; esac
        [ "$streams" -ge 2 ] && [ "$streams" -le 16 ] || fail "streams $streams"
    done
}

@test "points: full within the first factor, falling linearly, none beyond the second" {
    grade_lib
    [ "$(perf_points 0.9 20 1.25 2.0)" = 20 ]
    [ "$(perf_points 1.25 20 1.25 2.0)" = 20 ]
    [ "$(perf_points 1.625 20 1.25 2.0)" = 10 ]
    [ "$(perf_points 1.85 20 1.25 2.0)" = 4 ]
    [ "$(perf_points 2.0 20 1.25 2.0)" = 0 ]
    [ "$(perf_points 3.5 20 1.25 2.0)" = 0 ]
}

@test "judge_run: every way a run can end gets its verdict" {
    grade_lib
    out="$BATS_TEST_TMPDIR/out" err="$BATS_TEST_TMPDIR/err"
    judge() { # RC STDOUT STDERR [SEED]
        printf '%b' "$2" >"$out"
        printf '%b' "$3" >"$err"
        judge_run "$1" "$out" "$err" 64 30 01-coalescing "${4:-}"
        echo "$verdict|$what|$detail"
    }
    ok='lab: 01-coalescing\nseed: 5\nresult: PASS\n'
    run judge 0 "$ok" "" 5
    assert_output "PASS||"
    run judge 124 "" ""
    assert_output "FAIL|timed out after 30 s|"
    run judge 153 "" ""
    assert_output "FAIL|floods its output (more than 64 KiB)|"
    run judge 0 "$(head -c 70000 /dev/zero | tr '\0' x)" ""
    assert_output "FAIL|floods its output (more than 64 KiB)|"
    run judge 139 "" ""
    assert_output "FAIL|crashed (signal SIGSEGV)|"
    run judge 136 "" "coalescing: something\n"
    assert_output "FAIL|crashed (signal SIGFPE)|something"
    run judge 1 "" "coalescing: CUDA error cudaErrorIllegalAddress: an illegal memory access was encountered\n"
    assert_output --partial "FAIL|out-of-bounds memory access|CUDA error cudaErrorIllegalAddress"
    run judge 1 "" "coalescing: CUDA error cudaErrorLaunchFailure: unspecified launch failure\n"
    assert_output --partial "FAIL|crashed in a kernel|"
    run judge 1 "result: FAIL\n" "coalescing: note: not judged\ncoalescing: C[3] = 1 but 2\n"
    assert_output "FAIL|wrong result|C[3] = 1 but 2"
    run judge 2 "" "coalescing: cannot run here: no GPU\n"
    assert_output "SKIP|cannot run here: no GPU|"
    run judge 7 "" ""
    assert_output "FAIL|crashed (exit status 7)|"
    run judge 0 "lab: 01-coalescing\n" ""
    assert_output "FAIL|exited 0 without printing its result|"
    run judge 0 "result: PASS\n$ok" "" 5
    assert_output --partial "FAIL|printed 2 result lines|"
    run judge 0 "${ok}afterwards\n" "" 5
    assert_output --partial "FAIL|did not end with its result|"
    run judge 0 "lab: 03-divergence\nresult: PASS\n" ""
    assert_output "FAIL|its output does not name lab 01-coalescing|"
    run judge 0 "$ok" "" 6
    assert_output "FAIL|did not run with the seed it was given (6)|"
}

@test "run_capped: a flood is cut off and a hang is stopped" {
    grade_lib
    out="$BATS_TEST_TMPDIR/out" err="$BATS_TEST_TMPDIR/err"
    run_capped "$out" "$err" 30 64 yes flood
    [ "$run_rc" = 153 ] || fail "yes: exit status $run_rc, not 153 (SIGXFSZ)"
    [ "$(stat -c %s "$out")" -le 65536 ] || fail "the output grew past the cap"
    SECONDS=0
    run_capped "$out" "$err" 1 64 sleep 30
    [ "$run_rc" = 124 ] || fail "sleep: exit status $run_rc, not 124"
    [ "$SECONDS" -lt 10 ] || fail "the hang was stopped after $SECONDS s"
}

@test "make check: compile errors name the student's line; region rules and harness edits are reported" {
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" no-compile fake-pass harness-edit
    run make -s -C "$BATS_TEST_TMPDIR/kit" check REPORT="$BATS_TEST_TMPDIR/report" SEED=11
    assert_failure
    assert_line --regexp "^03-divergence +FAIL +0/20 +does not compile: labs/03-divergence/divergence.cu\(34\): error"
    assert_line --regexp "^05-streams +FAIL +0/20 +student region TODO\(3\) uses 'exit'"
    assert_line --regexp "^02-grouping +FAIL +0/20 +no labs/02-grouping/grouping.cu"
    assert_line --regexp "^  01-coalescing: code outside the student regions differs from the kit's \([0-9]+ lines\); it was not compiled"
    assert_output --partial "grading seed 11"
    assert_output --partial "make check SEED=11"
    # Lab 01's regions compile; without a GPU it is skipped, with one it fails.
    assert_line --regexp "^01-coalescing +(SKIP +-/20 +no usable GPU|FAIL +0/20 +wrong result at --size [0-9]+ --seed [0-9]+)"

    # The reports: a CSV row, a TAP test and a JUnit test case per lab.
    csv="$BATS_TEST_TMPDIR/report/grades.csv"
    run head -n 1 "$csv"
    assert_output '"student","lab","verdict","points","max_points","time_vs_reference","reason","notes","grading_seed","gpu"'
    [ "$(wc -l <"$csv")" = 6 ]
    [ "$(csv_field_of "$csv" 03-divergence 3)" = FAIL ]
    [[ "$(csv_field_of "$csv" 05-streams 7)" == "student region TODO(3) uses 'exit'"* ]]
    [ "$(csv_field_of "$csv" 04-occupancy 9)" = 11 ]
    run cat "$BATS_TEST_TMPDIR/report/grades.tap"
    assert_line "1..5"
    assert_line "not ok 3 03-divergence: FAIL 0/20 points"
    run cat "$BATS_TEST_TMPDIR/report/grades.xml"
    assert_output --partial '<testsuite name="grades.bats" tests="5"'
    assert_output --partial '<testcase classname="grades.bats" name="05-streams: FAIL 0/20 points"'
    assert_output --partial "<failure"
    run cat "$BATS_TEST_TMPDIR/report/report.txt"
    assert_output --partial "Runs"
    assert_output --partial "== 01-coalescing"
}

@test "make check LAB=03: one lab; damaged markers fail with the reason" {
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" skeleton
    sed -i '/KIT STUDENT REGION END: TODO(1)/d' "$BATS_TEST_TMPDIR/kit/labs/03-divergence/divergence.cu"
    run make -s -C "$BATS_TEST_TMPDIR/kit" check LAB=03
    assert_failure 2
    assert_line --regexp "^03-divergence +FAIL +0/20 +the markers of student region TODO\(1\) are missing or damaged"
    refute_line --regexp "^01-coalescing"
    assert_output --partial "LAB=03"
}

# bats test_tags=gpu
@test "make check on a GPU: the shipped skeletons FAIL, each with its first reason" {
    require_gpu
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" skeleton
    run make -s -C "$BATS_TEST_TMPDIR/kit" check
    assert_failure 2
    for lab in $LABS; do
        assert_line --regexp "^$lab +FAIL +0/20 +wrong result at --"
    done
    assert_output --partial "Total 0 of 100 points: 0 passed, 5 failed, 0 skipped"
    refute_output --partial "Notes"
}

# bats test_tags=gpu
@test "make check SANITIZE=1 on a GPU: compute-sanitizer catches a read one past the end" {
    require_gpu
    command -v compute-sanitizer >/dev/null || skip "compute-sanitizer not found (it comes with the CUDA toolkit)"
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" off-by-one
    run make -s -C "$BATS_TEST_TMPDIR/kit" check LAB=01 SANITIZE=1
    assert_failure 2
    assert_line --regexp "^01-coalescing +FAIL +0/20 +out-of-bounds memory access at --size [0-9]+ .*\(compute-sanitizer\): Invalid __global__ read"
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
