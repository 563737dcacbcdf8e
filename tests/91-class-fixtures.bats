#!/usr/bin/env bats
# make grade-class on the grading fixtures (tests/fixtures/grade): each
# gets the verdict its header names. Those decided before any run need no
# GPU; the others do. (91-class.bats has the rest of grade-class; the two
# files run side by side.)

setup() {
    load test_helper
    CLASS="$KIT_ROOT/common/grade/grade-class.sh"
}

has_gpu() { kit_query --check >/dev/null; }

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
        "${sandbox_opt[@]}" --labs 01,04,05 "$subs" "$out"
    echo "$output" >"$KIT_BUILD/grade-class-fixtures.txt"
    [ ${#sandbox_opt[@]} = 1 ] || assert_output --partial "isolation: bubblewrap"
    assert_fixture_verdicts "$out" "${all[@]}"
    # The other lab of each is missing, and says so.
    [ "$(csv_field_of "$out/class-labs.csv" '"no-compile","no-compile","","04-occupancy"' 9)" = \
        "no labs/04-occupancy/occupancy.cu" ]
}

# bats test_tags=gpu
@test "grade-class on a GPU: the fixtures decided by a run get their verdicts; honest students full marks; nothing left running" {
    require_gpu_unlocked
    kit_copy "$BATS_TEST_TMPDIR/kit"
    # The hang fixture waits this long, holding its share of the GPU (the
    # tests' timings wait for it); an honest Lab 01's run takes 1 to 3 s.
    printf '\n[01-coalescing]\ntime-limit = 8\n' >>"$BATS_TEST_TMPDIR/kit/common/grade/grading.conf"
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
    # Its own temporary folders (TMPDIR), so that what it leaves running
    # can be told from the work of tests running beside this one.
    mkdir -p "$BATS_TEST_TMPDIR/tmp"
    TMPDIR="$BATS_TEST_TMPDIR/tmp" run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade-class.sh" \
        --reference-build "$KIT_BUILD" --labs 01,04,05 "$subs" "$out"
    echo "$output" >"$KIT_BUILD/grade-class-gpu.txt"
    assert_success
    assert_fixture_verdicts "$out" "${gpu[@]}"
    [ "$(csv_field_of "$out/class-labs.csv" '"skip-copies","skip-copies","","05-streams"' 5)" = FAIL ]
    run cat "$out/class.csv"
    assert_line --regexp '^reference,,60,60,3,0,0,20,20,20,graded$'
    assert_line --regexp '^skeleton,,0,60,0,3,0,0,0,0,graded$'
    # Nothing a submission started outlives its grading.
    run pgrep -af "$BATS_TEST_TMPDIR"
    assert_failure
}
