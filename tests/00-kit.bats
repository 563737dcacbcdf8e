#!/usr/bin/env bats
# The kit's shared parts: the build, the host-side functions of common/
# (through build/tests/kit-unit), the device query, and the no-GPU path.

load test_helper

UNIT="$KIT_BUILD/tests/kit-unit"
QUERY="$KIT_BUILD/bin/kit-query"

@test "kit: make built every lab, every reference and the tools" {
    local dir lab
    for dir in "$KIT_ROOT"/labs/*/; do
        lab=$(basename "$dir")
        assert [ -f "$KIT_ROOT/solutions/$lab/${lab#*-}.cu" ]
        assert [ -x "$(lab_program "$lab")" ]
        assert [ -x "$(ref_program "$lab")" ]
    done
    assert [ -x "$QUERY" ]
    assert [ -x "$UNIT" ]
    assert [ -x "$KIT_BUILD/tests/kit-query-sm75" ]
}

@test "kit: the labs are listed in one place, common/lab/labs.sh, which every script reads" {
    # No script of the kit finds the labs by a glob of its own (the
    # Makefile's LABS aside, make's own list; tests/run.sh lists test files).
    run grep -rlE 'common/lab/\[0-9\]\[0-9\]-\*' "$KIT_ROOT/common" "$KIT_ROOT/tests" "$KIT_ROOT/.ci"
    assert_success
    assert_line "$KIT_ROOT/common/lab/labs.sh"
    refute_line --regexp '^.*/common/(report|tools|grade)/|/test_helper\.bash$'
    [ "${#lines[@]}" -le 2 ] || fail "the labs are found by a glob in: $output"
    # The list: every folder with a harness, in order; a folder without one
    # is not a lab (negative control).
    mkdir -p "$BATS_TEST_TMPDIR/k/common/lab/01-a" "$BATS_TEST_TMPDIR/k/common/lab/02-b" "$BATS_TEST_TMPDIR/k/common/lab/10-c"
    touch "$BATS_TEST_TMPDIR/k/common/lab/01-a/harness.cu" "$BATS_TEST_TMPDIR/k/common/lab/10-c/harness.cu"
    run kit_labs "$BATS_TEST_TMPDIR/k"
    assert_output "$(printf '01-a\n10-c')"
    run kit_labs
    assert_line 01-coalescing
    assert_line 08-multi-gpu
}

@test "kit: a new lab is four folders or files (labs/, solutions/, its handout, common/lab/) and no list edited: make, the grader and make report take it" {
    local k="$BATS_TEST_TMPDIR/kit" lab=09-transpose
    kit_copy "$k"
    mkdir -p "$k/handouts"
    # Lab 06 again under another name: its student file, its reference,
    # its handout and its kit side, nothing else touched.
    cp -R "$KIT_ROOT/labs/06-shared-memory" "$k/labs/$lab"
    mv "$k/labs/$lab/shared-memory.cu" "$k/labs/$lab/transpose.cu"
    cp -R "$KIT_ROOT/solutions/06-shared-memory" "$k/solutions/$lab"
    mv "$k/solutions/$lab/shared-memory.cu" "$k/solutions/$lab/transpose.cu"
    cp "$KIT_ROOT/handouts/06-shared-memory.md" "$k/handouts/$lab.md"
    cp -R "$KIT_ROOT/common/lab/06-shared-memory" "$k/common/lab/$lab"
    sed -i "s/^\[06-shared-memory\]/[$lab]/" "$k/common/lab/$lab/lab.conf"
    run kit_labs "$k"
    assert_line "$lab"
    run make -s -C "$k" --no-print-directory help
    assert_output --partial "$lab"
    run make -s -C "$k" --no-print-directory KIT_BUILD="$k/build" lab LAB=09
    assert_success
    assert [ -x "$k/build/labs/$lab/transpose" ]
    assert [ -x "$k/build/solutions/$lab/transpose" ]
    # The grader's settings for it: its own lab.conf's.
    run bash -c 'KIT_GRADE_LIB=1 source "$1/common/grade/grade.sh"; conf_load "$1/common/grade/grading.conf"; conf_get "$2" metric' _ "$k" "$lab"
    assert_output time-padded-ms
    # make report's table columns and figures: its own report.py's.
    run python3 -c 'import sys; sys.path.insert(0, sys.argv[1] + "/common/report")
from kitreport import labs
print(" ".join(labs.lab_names())); print(labs.lab_module(sys.argv[2]).SCHEMA[3][0])' "$k" "$lab"
    assert_line --regexp " $lab\$"
    assert_line kernel
    # Negative control: without its report.py the pages do not take it,
    # and without its harness the kit's list does not either.
    rm "$k/common/lab/$lab/report.py"
    run python3 -c 'import sys; sys.path.insert(0, sys.argv[1] + "/common/report")
from kitreport import labs
print(" ".join(labs.lab_names())); print(labs.lab_module(sys.argv[2]))' "$k" "$lab"
    refute_line --regexp " $lab\$"
    assert_line None
    rm "$k/common/lab/$lab/harness.cu"
    run kit_labs "$k"
    refute_line "$lab"
}

@test "kit: make help lists the targets on one screen" {
    run make -s -C "$KIT_ROOT" --no-print-directory help
    assert_success
    for target in demo test run check clean query; do
        assert_output --partial "make $target"
    done
    [ "${#lines[@]}" -le 24 ]
}

@test "kit: make run without a lab says how to name one" {
    run make -s -C "$KIT_ROOT" --no-print-directory run
    assert_failure
    assert_output --partial "make run LAB=01"
}

# The kit's sources as a fresh clone holds them, in DIR.
kit_sources() {
    mkdir -p "$1"
    (cd "$KIT_ROOT" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -xf - -C "$1"
}

@test "kit: in a folder whose path has a space, a lab builds and make check grades it" {
    local top="$BATS_TEST_TMPDIR/a kit folder/kit"
    kit_sources "$top"
    # (KIT_BUILD unset: the copy's own build/ folder, inside the spaced path.)
    run env -u KIT_BUILD make -s -C "$top" --no-print-directory lab LAB=02
    assert_success
    assert_output --partial "built 02-grouping"
    [ -x "$top/build/labs/02-grouping/grouping" ] || fail "no program"
    run env -u KIT_BUILD make -s -C "$top" --no-print-directory check LAB=02
    refute_output --partial "multiple target patterns"
    refute_output --partial "do not build here"
    # The skeleton: FAIL on a GPU, SKIP without one; graded either way.
    assert_output --regexp "02-grouping +(FAIL|SKIP) "
    # And grading from outside, a build folder whose path has a space too.
    mkdir -p "$BATS_TEST_TMPDIR/copy"
    kit_copy "$BATS_TEST_TMPDIR/copy"
    mkdir -p "$BATS_TEST_TMPDIR/copy/labs/02-grouping"
    cp "$top/labs/02-grouping/grouping.cu" "$BATS_TEST_TMPDIR/copy/labs/02-grouping/"
    KIT_BUILD="$top/build" run bash "$BATS_TEST_TMPDIR/copy/common/grade/grade.sh" 02
    assert_output --regexp "02-grouping +(FAIL|SKIP) "
}

@test "kit: make demo and make run ask for the GPU first, before building anything big" {
    local b="$BATS_TEST_TMPDIR/build"
    mkdir -p "$b/bin" && cp "$QUERY" "$b/bin/"
    for goal in demo "run LAB=01"; do
        # shellcheck disable=SC2086
        CUDA_VISIBLE_DEVICES="" run make -s -C "$KIT_ROOT" --no-print-directory KIT_BUILD="$b" $goal
        assert_failure 2
        assert_output --partial "needs a GPU"
        assert_output --partial "cannot run here"
    done
    run ls "$b"
    assert_output "bin"
    # Printing a lab's options needs no GPU.
    CUDA_VISIBLE_DEVICES="" run make -s -C "$KIT_ROOT" --no-print-directory run LAB=01 ARGS=--help
    assert_success
    assert_output --partial "usage: coalescing"
    # Nor does Lab 04's calculator alone, as its handout says.
    CUDA_VISIBLE_DEVICES="" run make -s -C "$KIT_ROOT" --no-print-directory run LAB=04 REF=1 ARGS=--calculator-only
    assert_success
    assert_line "result: PASS"
    refute_output --partial "needs a GPU"
}

@test "kit: make check LAB=01 builds Lab 01's reference and kit-query, nothing else, and says so" {
    local b="$BATS_TEST_TMPDIR/build" copy="$BATS_TEST_TMPDIR/kit"
    kit_copy "$copy"
    submission "$copy" skeleton
    run make -s -C "$copy" --no-print-directory KIT_BUILD="$b" check LAB=01
    assert_output --partial "grade: building the kit's references of 01-coalescing"
    assert_output --partial "grade: compiling 1 lab file"
    assert_output --regexp "01-coalescing +(FAIL|SKIP) "
    # The programs built: kit-query, the reference, and (Lab 01 is judged)
    # its judge and the reference's worker.
    run bash -c 'find "$1" -type f -perm -u+x | sed "s|^$1/||" | sort' _ "$b"
    assert_output "$(printf '%s\n' bin/kit-query judge/01-coalescing/judge solutions/01-coalescing/coalescing \
        solutions/01-coalescing/worker)"
    [ ! -e "$b/tests" ] || fail "built the tests' tools"
    [ ! -e "$b/labs" ] || fail "built the labs' programs"
}

@test "kit: make -jN is honoured, without make's 'forced in submake' warning" {
    # -n: the build the suite shares is not touched (other files run beside).
    run make -C "$KIT_ROOT" --no-print-directory -n -j3 all
    assert_success
    assert_output --partial "build"
    refute_output --partial "forced in submake"
    refute_output --partial "resetting jobserver"
}

@test "kit: make in a lab's folder means that lab; an unknown target points at make help" {
    run make -s -C "$KIT_ROOT/labs/01-coalescing" --no-print-directory
    assert_success
    assert_output --partial "built 01-coalescing"
    run make -s -C "$KIT_ROOT/labs/01-coalescing" --no-print-directory -n run ARGS=--help
    assert_success
    assert_line --regexp "^(\./)?build/labs/01-coalescing/coalescing --help$"
    run make -s -C "$KIT_ROOT/solutions/01-coalescing" --no-print-directory -n run ARGS=--help
    assert_success
    assert_line --regexp "^(\./)?build/solutions/01-coalescing/coalescing --help$"
    run make -s -C "$KIT_ROOT/labs/03-divergence" --no-print-directory -n check
    assert_output --regexp "grade.sh .*03-divergence"
    for dir in "$KIT_ROOT" "$KIT_ROOT/labs/01-coalescing"; do
        run make -s -C "$dir" --no-print-directory rnu
        assert_failure 2
        assert_output --partial "the kit has no target 'rnu'; make help lists what you can do"
    done
}

@test "kit: compiler errors name the student's file as the student opens it, and nothing of the kit's" {
    local copy="$BATS_TEST_TMPDIR/kit" f
    kit_copy "$copy"
    submission "$copy" skeleton
    f="$copy/labs/01-coalescing/coalescing.cu"
    # A typo in a body, and a launch function whose parameters changed.
    sed -i '0,/^    \/\* TODO(1) \*\/$/s//    int y = undefined_name;/' "$f"
    sed -i 's/^void launch_row_sums(const float \*M, float \*sums, unsigned int n)$/void launch_row_sums(const float *M, float *sums, int n)/' "$f"
    run make -s -C "$copy" --no-print-directory KIT_BUILD="$BATS_TEST_TMPDIR/b" "$BATS_TEST_TMPDIR/b/labs/01-coalescing/timed.o"
    assert_failure
    assert_line --regexp "^labs/01-coalescing/coalescing.cu:[0-9]+: error: identifier \"undefined_name\" is undefined"
    assert_output --partial "labs/01-coalescing/coalescing.cu: error: static assertion failed with \"the lab file's launch_row_sums must keep the kit's parameters"
    assert_output --partial "in the compilation of \"labs/01-coalescing/coalescing.cu\""
    refute_output --partial "common/"
    refute_output --partial "student.cu"
    refute_output --partial "./labs"
    # Messages that point into a lab's contract (common/lab/NN-name/), as
    # a compiler may word them: the student's file, and the kit, by name.
    run bash "$KIT_ROOT/common/tools/student-cc.sh" labs/02-grouping/grouping.cu ./labs/02-grouping/grouping.cu -- \
        sh -c 'printf "%s\n" "common/lab/02-grouping/contract.h(30): error: a struct of the lab" \
            "labs/02-grouping/grouping.cu(12): error: see the declaration in common/lab/02-grouping/contract.h" \
            "In file included from common/lab/02-grouping/contract.h:3:" >&2; exit 1'
    assert_failure 1
    assert_line "labs/02-grouping/grouping.cu: error: a struct of the lab"
    assert_line "labs/02-grouping/grouping.cu:12: error: see the declaration in the kit"
    refute_output --partial "common/"
}

@test "kit: make sanitize finds compute-sanitizer apart from nvcc, or says where it looked" {
    local bin="$BATS_TEST_TMPDIR/bin"
    mkdir -p "$bin"
    printf '#!/bin/sh\necho "fake compute-sanitizer: $*"\n' >"$bin/compute-sanitizer"
    chmod +x "$bin/compute-sanitizer"
    PATH="$bin:$PATH" run make -s -C "$KIT_ROOT" --no-print-directory sanitize LAB=01 REF=1
    assert_success
    assert_output --regexp "fake compute-sanitizer: --tool memcheck --error-exitcode 99 .*solutions/01-coalescing/coalescing --size"
    run make -s -C "$KIT_ROOT" --no-print-directory sanitize LAB=01 REF=1 SANITIZER=/nonexistent/compute-sanitizer
    assert_failure 2
    assert_output --partial "SANITIZER=/nonexistent/compute-sanitizer: no such program"
    # Where there is none at all (this machine's toolkit may have one).
    local nvcc_dir
    nvcc_dir=$(dirname "$(command -v nvcc)")
    if ! command -v compute-sanitizer >/dev/null 2>&1 && [ ! -e "$nvcc_dir/compute-sanitizer" ] &&
        [ ! -e /usr/local/cuda/bin/compute-sanitizer ] && [ ! -e /usr/local/cuda/compute-sanitizer/compute-sanitizer ]; then
        run make -s -C "$KIT_ROOT" --no-print-directory sanitize LAB=01 REF=1
        assert_failure 2
        assert_output --partial "compute-sanitizer not found: not on PATH, nor beside nvcc ($nvcc_dir/)"
        assert_output --partial "SANITIZER=/path/to/compute-sanitizer"
    fi
}

@test "kit: the README and scripts name files that exist, and one range of GPU generations" {
    local ref missing=()
    for ref in $(grep -ohE '(tests/[0-9]{2}-[a-z0-9-]+\.bats|common/lab/[0-9]{2}-[a-z0-9-]+/[a-z-]+\.(cu|h|conf|bats))' \
        "$KIT_ROOT/README.md" "$KIT_ROOT"/handouts/*.md "$KIT_ROOT"/tests/*.sh \
        "$KIT_ROOT"/common/*/*.sh "$KIT_ROOT/.ci/run" | sort -u); do
        [ -f "$KIT_ROOT/$ref" ] || missing+=("$ref")
    done
    [ ${#missing[@]} = 0 ] || fail "named but missing: ${missing[*]}"
    run grep -n "Turing to Hopper" "$KIT_ROOT/README.md" "$KIT_ROOT"/handouts/*.md "$KIT_ROOT/tests/test_helper.bash"
    assert_failure
    # The counts of a machine without a GPU are in the README.
    tr '\n' ' ' <"$KIT_ROOT/README.md" | grep -qE "without a GPU.{0,200}[0-9]+ passed, 0 failed, [0-9]+ skipped" ||
        fail "the README gives no counts of the suite on a machine without a GPU"
}

@test "kit: a table declared once gives the table, the CSV and the key: value lines alike" {
    run "$UNIT" table
    assert_success
    # For people: "-" where a row has no figure, or none worth showing.
    assert_line --regexp '^kernel +time \(ms\) +vs first +sh wf  check$'
    assert_line --regexp '^first kernel +2\.000 +1\.0x +32\.0  ok$'
    assert_line --regexp '^second kernel +- +- +-  WRONG$'
    assert_line --regexp '^third kernel +5\.000 +2\.5x +-  ok$'
    assert_line --regexp '^fourth kernel +- +- +-  not run$'
    # The CSV, read by a CSV parser: the columns the declaration names, in
    # its order, 0 where a row has no figure, correct last.
    grep -E '^(gpu|"Some GPU")' <<<"$output" | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
assert list(rows[0].keys()) == ["gpu", "size", "seed", "kernel", "time_ms", "time_vs_first", "hidden", "correct"], rows[0].keys()
assert [r["kernel"] for r in rows] == ["first kernel", "second kernel", "third kernel", "fourth kernel"]
assert [r["time_vs_first"] for r in rows] == ["1.0000", "0.0000", "2.5000", "0.0000"]
assert [r["correct"] for r in rows] == ["1", "0", "1", "0"]
assert rows[2]["gpu"] == "Some GPU" and rows[2]["size"] == "1000" and rows[2]["seed"] == "7"
' || fail "the CSV is not the declaration's"
    # key: value: each row's own lines, and a column's only where it has a
    # figure (the wrong row has no time, so no ratio).
    assert_line "ratio-first: 1.00"
    assert_line "ratio-third: 2.50"
    refute_line --partial "ratio-second"
    assert_line "wrong-elements-second: 5"
    assert_line "wavefronts-first: 32.0000"
    assert_line "wavefronts-third: 0.0000"
}

@test "kit: a table's own label, check word, correct, CSV rows, blank cells and part replace the kit's" {
    run "$UNIT" table own
    assert_success
    assert_line --regexp '^row +time \(ms\) +vs first +sh wf  check$'
    assert_line --regexp '^row 1, first +2\.000 +1\.0x +32\.0  ok$'
    # Not shown: blank (the table's hidden text), not "-".
    assert_line --regexp '^row 2, second +- +- +WRONG$'
    assert_line --regexp '^row 3, third +5\.000 +2\.5x +FLAWED$'
    assert_line --regexp '^row 4, fourth +- +- +not run$'
    # The CSV: part first, the first column under its CSV name, the label
    # quoted (it holds a comma), no line for the row the CSV leaves out.
    grep -E '^(gpu|"Some GPU")' <<<"$output" | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
assert list(rows[0].keys()) == ["gpu", "size", "seed", "part", "which", "time_ms", "time_vs_first", "hidden", "correct"], rows[0].keys()
assert [r["which"] for r in rows] == ["row 1, first", "row 2, second", "row 3, third"], rows
assert [r["part"] for r in rows] == ["2", "2", "2"]
assert [r["correct"] for r in rows] == ["1", "0", "0"]
' || fail "the CSV is not the declaration's"
    # Negative control: the kit's own table has none of it.
    run "$UNIT" table
    refute_output --partial "FLAWED"
    refute_output --partial "row 1, first"
    refute_line --regexp '^gpu,size,seed,part,'
}

@test "kit: sizes are read as digits, K/M/G and 2^E" {
    local text want
    while read -r text want; do
        run "$UNIT" parse-size "$text"
        assert_success
        assert_output "$want"
    done <<'CASES'
4194304 4194304
32768 32768
4M 4194304
4m 4194304
4Mi 4194304
64K 65536
1G 1073741824
2^22 4194304
2^0 1
CASES
}

@test "kit: nonsense sizes are rejected with the reason and exit 64" {
    local text
    for text in "" banana -5 4.5M 0x10 4MB 12abc "2^" "2^x" "2^63" "99999999999999999999" "1 M"; do
        run "$UNIT" parse-size "$text"
        assert_failure 64
        assert_output --regexp "is (empty|not a size|too large)|needs an exponent"
    done
}

@test "kit: --focus times its row until steady and the others once, and a row the lab names beside it in full too" {
    # Lab 05's timed runs in grading: --focus depth-first-8 must time the
    # serial from pinned memory in full as well, or its verdict on overlap
    # by the clock has one run of it and judges no one.
    run "$UNIT" focus depth-first-8 serial-pinned depth-first-8 serial-pinned serial-pageable breadth-first-8
    assert_success
    assert_line "depth-first-8: 0"
    assert_line "serial-pinned: 0"
    assert_line "serial-pageable: 1"
    assert_line "breadth-first-8: 1"
    assert_line "focus-seen: yes"
    # Without the row beside it, the serial gets one run; a focus that names
    # no row is seen by none.
    run "$UNIT" focus depth-first-8 - serial-pinned
    assert_line "serial-pinned: 1"
    assert_line "focus-seen: no"
}

@test "kit: the judge's host memory reaches its worker whole, and the worker can neither shrink nor grow it; a descriptor nobody asked for is closed" {
    # Labs 05 and 08: the host arrays are the judge's (a sealed memfd)
    # and the worker maps them (kit_judge.h, kit_proto.h). Without the
    # seals the child resizes the memory under the judge (and its write is
    # lost); without the close a stray descriptor stays in the worker.
    run "$UNIT" host-share
    assert_success
    assert_line "size: 1048588"
    assert_line "child-sees-pattern: yes"
    assert_line "parent-sees-child-write: yes"
    assert_line "child-shrink: refused"
    assert_line "child-grow: refused"
    assert_line "stray-descriptor: closed"
}

@test "kit: what copies could cover of a pipeline's kernels: neighbours' copies, narrowed kernels, 1 where nothing can show" {
    # CHUNKS IN KERNEL OUT MARGIN (ms). Kernels no longer than the copies
    # can be covered whole.
    run "$UNIT" overlap-possible 4 1 1 1 0
    assert_output 1.0000
    # Kernels 4x the copies: the first and last beside one copy (1 of 4),
    # the middle two beside two (2 of 4): 6 of 16.
    run "$UNIT" overlap-possible 4 1 4 1 0
    assert_output 0.3750
    # Three chunks: 1 + 1 + 2 of 12. The reference graded at 3 chunks of a
    # long kernel covered 24% on an H100, under a fixed 25% but over half this.
    run "$UNIT" overlap-possible 3 1 4 1 0
    assert_output 0.3333
    # Kernels narrowed by the clocks' margin at each end: 2 ms by 0.5 is 1.
    run "$UNIT" overlap-possible 4 1 2 1 0.5
    assert_output 1.0000
    # 6 ms narrowed to 5: 1 + 1 + 2 + 2 of 20.
    run "$UNIT" overlap-possible 4 1 6 1 0.5
    assert_output 0.3000
    # Nothing to judge against: one chunk, no copy in, no copy out, a kernel
    # inside its margins.
    for a in "1 1 4 1 0" "4 0 4 1 0" "4 1 4 0 0" "4 1 0.5 1 0.5"; do
        # shellcheck disable=SC2086
        run "$UNIT" overlap-possible $a
        assert_output 1.0000
    done
    run "$UNIT" overlap-possible 0 1 1 1 0
    assert_failure 64
}

@test "kit: the division trick maps [0, 2^32) into [0, n) for every n" {
    local n
    # Powers of two give exactly the course's NP = 2^32 / n.
    run "$UNIT" np 4194304
    assert_line "np: 1024"
    assert_line "max-index: 4194303"
    run "$UNIT" np 32768
    assert_line "np: 131072"
    # Elsewhere NP is rounded up, so no number maps past n - 1; the price is
    # that the top n^2 / 2^32 indices or so are never drawn.
    for n in 3 1000 1000003 67108863 2147483647 4294967295; do
        run "$UNIT" np "$n"
        assert_success
        assert_line "min-index: 0"
        local max
        max=$(sed -n 's/^max-index: //p' <<<"$output")
        [ "$max" -lt "$n" ] || fail "n=$n: the largest index is $max"
        awk -v m="$max" -v n="$n" 'BEGIN { exit !(m + 1 >= n - n * n / 4294967296 - 1) }' ||
            fail "n=$n: the largest index $max leaves out more of the top than it must"
    done
    run "$UNIT" np 1
    assert_failure 64
}

@test "kit: default sizes grow with the L2 and stop at half the free memory" {
    # H200 and H100 (60 and 50 MiB of L2): 2^26 floats, the course's 52x size.
    run "$UNIT" default-size 62914560 150000000000 12 16
    assert_output 67108864
    run "$UNIT" default-size 52428800 80000000000 12 16
    assert_output 67108864
    # A100 (40 MiB): 2^25; a K40 or small laptop GPU: never below the course's 2^22.
    run "$UNIT" default-size 41943040 40000000000 12 16
    assert_output 33554432
    run "$UNIT" default-size 1572864 12000000000 12 16
    assert_output 4194304
    # 1 GB free: 16 bytes an element may take 500 MB at most, so 2^24.
    run "$UNIT" default-size 62914560 1000000000 12 16
    assert_output 16777216
}

@test "kit: expected segments for random lanes in a group" {
    # 16 * (1 - (15/16)^32): the H200 measured 13.97 for the course's grouping.
    run "$UNIT" expected-distinct 16
    assert_output 13.9714
    run "$UNIT" expected-distinct 1
    assert_output 1.0000
    run "$UNIT" expected-distinct 2097152
    assert_output --regexp "^31\.99"
}

@test "kit: medians and thousands separators" {
    run "$UNIT" median 3 1 2
    assert_output 2
    run "$UNIT" median 4 1 3 2
    assert_output 2.5
    run "$UNIT" grouped 67108864
    assert_output 67,108,864
    run "$UNIT" grouped 999
    assert_output 999
}

@test "kit: kit-query rejects unknown options with exit 64" {
    run "$QUERY" --bogus
    assert_failure 64
    assert_output --partial "unknown option '--bogus'"
    run "$QUERY" --device banana
    assert_failure 64
}

@test "kit: with no GPU visible, programs exit 2 and say what to do" {
    CUDA_VISIBLE_DEVICES="" run "$QUERY"
    assert_failure 2
    assert_output --partial "cannot run here"
    assert_output --regexp "nvidia-smi|driver"
}

# bats test_tags=gpu
@test "kit: kit-query describes the GPU" {
    require_gpu
    run "$QUERY"
    assert_success
    assert_output --regexp "compute-capability: [0-9]+\.[0-9]+"
    [ "$(kv sms)" -gt 0 ]
    [ "$(kv l2-bytes)" -gt 0 ]
    [ "$(kv max-warps-per-sm)" -gt 0 ]
}

# bats test_tags=gpu
@test "kit: --device beyond the GPUs present is a usage error" {
    require_gpu
    run "$QUERY" --device 63
    assert_failure 64
    assert_output --partial "this machine has"
}

# bats test_tags=gpu
@test "kit: a binary without code for this GPU exits 2 and says to rebuild" {
    require_gpu
    [ "$(gpu_cc)" != 7.5 ] || skip "this GPU is sm_75, the one architecture the test binary has"
    run "$KIT_BUILD/tests/kit-query-sm75"
    assert_failure 2
    assert_output --partial "no code for this GPU's architecture"
    assert_output --partial "make clean all"
}

@test "kit: make run names the labs when LAB is not one; LAB=1 and LAB=coalescing are Lab 01" {
    run make -s -C "$KIT_ROOT" --no-print-directory run LAB=99
    assert_failure
    assert_output --partial "there is no lab '99'; the labs are 01-coalescing"
    for lab in 1 01 coalescing 01-coalescing; do
        run make -s -C "$KIT_ROOT" --no-print-directory -n run LAB=$lab ARGS=--help
        assert_success
        assert_output --partial "labs/01-coalescing/coalescing --help"
    done
}

@test "kit: make's switches: =1 turns one on, =0 or none leaves it off" {
    run make -s -C "$KIT_ROOT" --no-print-directory -n run LAB=01 REF=1 ARGS=--help
    assert_output --partial "solutions/01-coalescing/coalescing --help"
    for off in REF=0 REF= REF=no; do
        run make -s -C "$KIT_ROOT" --no-print-directory -n run LAB=01 "$off" ARGS=--help
        assert_output --partial "labs/01-coalescing/coalescing --help"
    done
    run make -s -C "$KIT_ROOT" --no-print-directory -n check SANITIZE=1 NO_SANDBOX=1
    assert_output --regexp "grade.sh .*--sanitize .*--no-sandbox"
    run make -s -C "$KIT_ROOT" --no-print-directory -n check SANITIZE=0 NO_SANDBOX=0
    assert_output --partial "grade.sh"
    refute_output --partial "--sanitize"
    refute_output --partial "--no-sandbox"
    run make -s -C "$KIT_ROOT" --no-print-directory -n grade-class SLURM=0 SANITIZE=0 SUBMISSIONS=s OUT=o
    assert_output --partial "grade-class.sh"
    refute_output --partial "--slurm"
    refute_output --partial "--sanitize"
}

# The sanitizers on every reference, through the command a student types
# (make sanitize: the lab's quick case): memcheck and initcheck everywhere,
# racecheck and synccheck where blocks share memory. The labs run side by
# side (nothing here is timed); each tool's output is kept in the build.
# bats test_tags=gpu
@test "kit: make sanitize finds nothing in the references: memcheck and initcheck everywhere, racecheck and synccheck where blocks share memory" {
    require_gpu_unlocked
    command -v compute-sanitizer >/dev/null 2>&1 || skip "compute-sanitizer is not installed (it comes with the CUDA toolkit)"
    local lab tool tools=() dir="$KIT_BUILD/sanitize-references" pids=() labs=() runs=0
    rm -rf "$dir" && mkdir -p "$dir"
    for lab in $(kit_labs); do
        tools=(memcheck initcheck)
        cat "$KIT_ROOT/solutions/$lab/"*.cu "$KIT_ROOT/common/lab/$lab/"*.cu | grep -qE '__shared__|__syncthreads' &&
            tools+=(racecheck synccheck)
        runs=$((runs + ${#tools[@]}))
        (
            # Each run holds the GPU shared for itself (a lock of its own):
            # a timing elsewhere waits for one run, not for all of them.
            gpu_hold_forget
            BATS_TEST_DESCRIPTION="$BATS_TEST_DESCRIPTION ($lab)"
            for tool in "${tools[@]}"; do
                kit_gpu_lock -s
                timeout 150 make -s -C "$KIT_ROOT" --no-print-directory KIT_BUILD="$KIT_BUILD" sanitize \
                    LAB="$lab" REF=1 TOOL="$tool" >"$dir/$lab-$tool.txt" 2>&1 || exit 1
                kit_gpu_release
            done
        ) &
        pids+=($!) labs+=("$lab")
    done
    local i failed=()
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || failed+=("${labs[$i]}")
    done
    for lab in "${failed[@]}"; do
        for f in "$dir/$lab"-*.txt; do
            echo "== $f"
            grep -m 8 -E '^========= [^ ]|^result:' "$f"
        done
    done
    [ ${#failed[@]} = 0 ] || fail "make sanitize failed for ${failed[*]}: compute-sanitizer found errors (above), or ran past 150 s"
    for f in "$dir"/*.txt; do
        run grep -cE '^========= (ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)' "$f"
        assert_output 1
        run grep -c '^result: PASS$' "$f"
        assert_output 1
    done
    run ls "$dir"
    assert_equal "${#lines[@]}" "$runs"
    # Lab 05 knows it ran under the tool: its overlap is not judged there.
    grep -q "overlap is not judged: under compute-sanitizer" "$dir/05-streams-memcheck.txt" ||
        fail "Lab 05 judged its overlap under compute-sanitizer"
}

@test "kit: every figure a handout shows is committed, every committed figure is shown, and each caption names its GPU, date and command" {
    run python3 "$KIT_ROOT/tests/handout_figures.py" "$KIT_ROOT/handouts"
    assert_success
    assert_output ""
    # The negative control: a copy with a figure missing, one shown by
    # nothing, and a caption without its date.
    local h=$BATS_TEST_TMPDIR/handouts
    cp -R "$KIT_ROOT/handouts" "$h"
    rm "$h/figures/08-multi-gpu-peer.svg"
    cp "$h/figures/01-coalescing-time.svg" "$h/figures/99-unshown.svg"
    sed -i -E 's/20[0-9]{2}-[01][0-9]-[0-3][0-9]/(a day)/g' "$h/figures/05-streams-pipeline.svg"
    run python3 "$KIT_ROOT/tests/handout_figures.py" "$h"
    assert_failure 1
    assert_line "08-multi-gpu.md:$(grep -n 'figures/08-multi-gpu-peer.svg' "$h/08-multi-gpu.md" | cut -d: -f1): shows figures/08-multi-gpu-peer.svg, which is not there"
    assert_line "figures/99-unshown.svg: shown by no handout"
    assert_line "figures/05-streams-pipeline.svg: its caption names no date"
    assert_equal "${#lines[@]}" 3
}

@test "kit: a lab is four places: its files, its handout, its reference, its kit folder" {
    local lab name n=0 f
    for lab in $(kit_labs); do
        n=$((n + 1))
        name=${lab#*-}
        assert [ -f "$KIT_ROOT/labs/$lab/$name.cu" ]
        assert [ -f "$KIT_ROOT/solutions/$lab/$name.cu" ]
        assert [ -f "$KIT_ROOT/handouts/$lab.md" ]
        for f in harness.cu contract.h lab.conf test.bats; do
            assert [ -f "$KIT_ROOT/common/lab/$lab/$f" ]
        done
        grep -qx "\[$lab\]" "$KIT_ROOT/common/lab/$lab/lab.conf" || fail "$lab: its lab.conf has no [$lab] section"
    done
    assert_equal "$n" 8
    # Nothing of one lab anywhere else: no harness or contract in
    # common/harness, no lab's tests in tests/, no lab's section in the
    # instructor's grading.conf.
    run ls "$KIT_ROOT/common/harness"
    assert_output "$(printf 'judge.cu\nstudent.cu\nworker.cu')"
    for lab in $(kit_labs); do
        assert [ ! -e "$KIT_ROOT/tests/$lab.bats" ]
    done
    run grep -n '^\[[0-9]' "$KIT_ROOT/common/grade/grading.conf"
    assert_failure
}

@test "kit: the kit's shell scripts pass shellcheck" {
    command -v shellcheck >/dev/null 2>&1 || skip "shellcheck is not installed (apt-get install shellcheck)"
    run shellcheck -x "$KIT_ROOT"/common/*/*.sh "$KIT_ROOT"/tests/*.sh "$KIT_ROOT"/tests/*.bash "$KIT_ROOT/.ci/run"
    assert_success
}

@test "kit: lab-args gives a lab's quick case with its draws fixed" {
    run bash "$KIT_ROOT/common/tools/lab-args.sh" 01-coalescing sanitize-args
    assert_success
    refute_output --partial "{"
    assert_output --partial "--seed 1"
    run bash "$KIT_ROOT/common/tools/lab-args.sh" 01-coalescing
    assert_failure 64
}

@test "kit: plot.sh draws a lab's table and refuses what is not one" {
    local csv="$BATS_TEST_TMPDIR/t.csv"
    run bash "$KIT_ROOT/common/tools/plot.sh"
    assert_failure 64
    printf 'a,b\n1,2\n' >"$csv"
    run bash "$KIT_ROOT/common/tools/plot.sh" "$csv"
    assert_failure
    command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed (apt-get install gnuplot-nox)"
    assert_output --partial "is not a table of the kit"
    cat >"$csv" <<'CSV'
gpu,size,seed,segments_per_group,time_ms,semi_vs_coalesced
"Some GPU",1048576,7,1,0.5,1.0
"Some GPU",1048576,7,2,0.6,1.2
CSV
    run bash "$KIT_ROOT/common/tools/plot.sh" "$csv" "$BATS_TEST_TMPDIR/t.png"
    assert_success
    [ -s "$BATS_TEST_TMPDIR/t.png" ] || fail "no picture"
}

@test "kit: toolkit-matrix.sh: --help, bad options exit 64, the first error names what make was building" {
    local tm="$KIT_ROOT/common/tools/toolkit-matrix.sh" log="$BATS_TEST_TMPDIR/build.log"
    run bash "$tm" --help
    assert_success
    assert_output --partial "CUDA 11.8"
    run bash "$tm" --archs
    assert_failure 64
    assert_output --partial "--archs needs a value"
    run bash "$tm" --bogus
    assert_failure 64
    run bash "$tm" --first-error "$BATS_TEST_TMPDIR/none.log"
    assert_failure 64
    # A parallel build: the compiler crashed on the harness while the last
    # NVCC line printed was another file's. Make's own line names it.
    cat >"$log" <<'LOG'
  NVCC  /tmp/x/build-sm90/harness/04-occupancy/harness.o
  NVCC  /tmp/x/build-sm90/labs/04-occupancy/timed.o
Segmentation fault
make: *** [Makefile:104: /tmp/x/build-sm90/harness/04-occupancy/harness.o] Error 139
make: *** Waiting for unfinished jobs....
LOG
    run bash "$tm" --first-error "$log"
    assert_success
    assert_output "Segmentation fault (harness/04-occupancy/harness.o)"
    # Without make's line, the file being built; without an error, nothing.
    sed -i '/^make/d' "$log"
    run bash "$tm" --first-error "$log"
    assert_output "Segmentation fault (labs/04-occupancy/timed.o)"
    printf '  NVCC  /tmp/x/build-sm75/harness/01-coalescing/harness.o\n' >"$log"
    run bash "$tm" --first-error "$log"
    assert_success
    assert_output ""
}
