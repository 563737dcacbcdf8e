#!/usr/bin/env bats
# What every lab's program does, the reference's and the skeleton's alike:
# the command line every lab shares (common/lib/kit_args.h) and the path
# without a GPU. A lab added under common/lab/ gets these tests with no
# line of its own; its own test.bats keeps what only it has (its options,
# its bad values, its student file's bounds).

load test_helper

# each_program: the reference and the skeleton of every lab, one per line
# (their paths may hold spaces: read them with mapfile).
each_program() {
    local lab
    for lab in $(kit_labs); do
        ref_program "$lab"
        lab_program "$lab"
    done
}

@test "every lab: --help lists the options every lab has and the exit statuses, and exits 0" {
    local prog n=0 progs
    mapfile -t progs < <(each_program)
    for prog in "${progs[@]}"; do
        run "$prog" --help
        assert_success
        assert_output --partial "--reps R"
        assert_output --partial "--seed S"
        assert_output --partial "--csv FILE"
        assert_output --partial "exit status: 0 all checks passed, 1 a check failed, 2 cannot run here"
        assert_output --partial "64 bad command line"
        n=$((n + 1))
    done
    [ "$(kit_labs | wc -l)" -ge 8 ] || fail "the kit lists $(kit_labs | wc -l) labs"
    [ "$n" = $((2 * $(kit_labs | wc -l))) ] || fail "$n programs for $(kit_labs | wc -l) labs"
}

@test "every lab: a bad command line is refused with the reason and exit 64, before any GPU is looked at" {
    local prog progs
    mapfile -t progs < <(each_program)
    for prog in "${progs[@]}"; do
        CUDA_VISIBLE_DEVICES="" assert_usage_errors "$prog" <<'CASES'
--bogus|unknown option '--bogus'
extra|unexpected argument 'extra'
--seed -3|not an unsigned integer
--seed|needs a value
--reps 0|from 1 to 1000
--reps many|from 1 to 1000
--csv=|needs a non-empty value
--csv /nonexistent/dir/t.csv|cannot write in /nonexistent/dir
--help=1|--help takes no value
CASES
    done
}

@test "every lab: with no GPU visible it exits 2, says why, gives no verdict and leaves no CSV (nor timeline) behind" {
    local prog progs timelines=0
    local -a tl
    mapfile -t progs < <(each_program)
    for prog in "${progs[@]}"; do
        tl=()
        if "$prog" --help 2>&1 | grep -q -- '--timeline'; then
            tl=(--timeline "$BATS_TEST_TMPDIR/tl.csv")
            timelines=$((timelines + 1))
        fi
        CUDA_VISIBLE_DEVICES="" run "$prog" --csv "$BATS_TEST_TMPDIR/t.csv" "${tl[@]}"
        assert_failure 2
        assert_output --partial "cannot run here"
        refute_output --partial "result: PASS"
        refute_output --partial "result: FAIL"
        assert [ ! -e "$BATS_TEST_TMPDIR/t.csv" ]
        assert [ ! -e "$BATS_TEST_TMPDIR/tl.csv" ]
    done
    # Labs 05 and 08 write timelines, as references and as skeletons.
    [ "$timelines" -ge 4 ] || fail "only $timelines programs list --timeline"
}
