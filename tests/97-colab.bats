#!/usr/bin/env bats
# handouts/colab.ipynb, for students without a GPU of their own: its cells
# run here as Colab runs them (each %%bash cell in a bash of its own, from
# a clean environment, /content standing for a folder of the test's), so
# the notebook cannot rot. Without a GPU runtime every cell that needs one
# says so; on a GPU Lab 01's skeleton runs, is checked and is reported, as
# a student first meets it. The cell that installs gnuplot needs Colab's
# network and root, and the Python cells Colab's own modules: what they
# open must exist.

setup() {
    load test_helper
    NB="$KIT_ROOT/handouts/colab.ipynb"
    CELLS="$KIT_ROOT/tests/colab_cells.py"
}

# colab_kit: $content/kit as the Get-the-kit cell leaves it (the kit's
# files), with the suite's build, so that the Build cell builds only what
# is missing; the cells in $cells, their list in $list.
colab_kit() {
    content="$BATS_TEST_TMPDIR/content" cells="$BATS_TEST_TMPDIR/cells" list="$BATS_TEST_TMPDIR/cells.txt"
    mkdir -p "$content/kit/build"
    cp -Rp "$KIT_ROOT/Makefile" "$KIT_ROOT/README.md" "$KIT_ROOT/common" "$KIT_ROOT/labs" "$KIT_ROOT/solutions" \
        "$KIT_ROOT/handouts" "$KIT_ROOT/tests" "$content/kit/"
    for d in bin harness labs solutions; do
        [ ! -d "$KIT_BUILD/$d" ] || cp -Rp "$KIT_BUILD/$d" "$content/kit/build/"
    done
    mkdir -p "$content/kit/build/tests"
    for f in "$KIT_BUILD"/tests/kit-unit "$KIT_BUILD"/tests/kit-query-sm*; do
        [ ! -f "$f" ] || cp -p "$f" "$content/kit/build/tests/"
    done
    python3 "$CELLS" "$NB" "$cells" "$content" >"$list" || fail "$(cat "$list")"
}

# cell COMMAND-PATTERN: runs the %%bash cell whose first command matches,
# as Colab would (its own bash, in /content, a clean environment: no
# KIT_BUILD of the suite's; the GPU's lock folder, so the grader's runs
# take turns with the suite's), setting $status and $output.
cell() {
    local n
    n=$(awk -v p="$1" '$2 == "bash" { c = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", c); if (c ~ p) { print $1; exit } }' "$list")
    [ -n "$n" ] || fail "the notebook has no %%bash cell that runs '$1'"
    # What CUDA needs of the environment, as the judge passes it to its
    # worker (common/lib/kit_judge.h): the GPUs visible, and an MPS server's.
    local keep=() v
    for v in CUDA_VISIBLE_DEVICES CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; do
        [ -z "${!v+set}" ] || keep+=("$v=${!v}")
    done
    run env -i PATH="$PATH" HOME="$content" LANG=C.UTF-8 ${KIT_LOCK_DIR:+KIT_LOCK_DIR="$KIT_LOCK_DIR"} "${keep[@]}" \
        bash -c 'cd "$1" && bash "$2"' _ "$content" "$cells/$n.sh"
    echo "cell $n ($1): exit $status" >>"$BATS_TEST_TMPDIR/ran.txt"
}

# The files a Python cell opens or downloads (its quoted /content paths).
python_paths() {
    cat "$cells"/*.py | grep -o '"'"$content"'/[^"]*"' | tr -d '"'
}

@test "colab: the notebook is one Colab runs: nbformat 4, a GPU runtime, %%bash or Python cells, no outputs kept" {
    run python3 "$CELLS" "$NB" "$BATS_TEST_TMPDIR/cells" /content
    assert_success
    # The cells a student needs, in order: the GPU, the kit, build, run, check, report.
    commands=$(awk '{ $1 = $2 = $3 = ""; printf "%s;", $0 }' <<<"$output")
    [[ "$commands" =~ nvidia-smi.*KIT_URL.*make\ -j.*make\ run\ LAB=01.*make\ check\ LAB=01.*make\ report\ LAB=01 ]] ||
        fail "the cells, in order: $commands"
    # Negative controls: a notebook without a GPU runtime, with a ! line,
    # or with a run's outputs kept, is refused with the reason.
    python3 - "$NB" "$BATS_TEST_TMPDIR/bad.ipynb" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
del nb["metadata"]["accelerator"]
code = [c for c in nb["cells"] if c["cell_type"] == "code"]
code[0]["source"] = ["!nvidia-smi\n"]
code[1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["x\n"]}]
json.dump(nb, open(sys.argv[2], "w"))
PY
    run python3 "$CELLS" "$BATS_TEST_TMPDIR/bad.ipynb" "$BATS_TEST_TMPDIR/bad" /content
    assert_failure 1
    assert_output --partial "metadata.accelerator is not GPU"
    assert_output --partial "only %%bash cells and Python"
    assert_output --partial "keeps the outputs of a run"
    run python3 "$CELLS" "$NB"
    assert_failure 64
}

@test "colab: in a runtime without a GPU the notebook builds the kit, and each cell that needs a GPU says so" {
    colab_kit
    export CUDA_VISIBLE_DEVICES=
    cell nvidia-smi
    assert_success
    cell KIT_URL
    assert_success
    assert_output --partial "the kit is in $content/kit already"
    # A student who has not set KIT_URL nor uploaded a zip is told what to do.
    mv "$content/kit" "$content/kit.away"
    cell KIT_URL
    assert_failure 1
    assert_output --partial "put your course's repository in KIT_URL"
    mv "$content/kit.away" "$content/kit"
    cell 'make -j'
    echo "$output" >"$BATS_TEST_TMPDIR/build.txt"
    assert_success
    [ -x "$content/kit/build/labs/01-coalescing/coalescing" ] || fail "the Build cell built no Lab 01"
    cell 'make run LAB=01'
    assert_failure 2
    assert_output --partial "needs a GPU"
    cell 'make check LAB=01'
    assert_failure 2
    assert_output --partial "no usable GPU"
    cell 'make report LAB=01'
    assert_failure 2
    assert_output --partial "the kit cannot use one here"
    # The Python cells: the report's page is not there, the lab file is.
    [ -f "$content/kit/labs/01-coalescing/coalescing.cu" ]
    python_paths | grep -q 'labs/01-coalescing/coalescing.cu$'
}

# bats test_tags=gpu
@test "colab on a GPU: Lab 01's skeleton builds, runs and FAILs pointing at its TODOs, is checked and reported" {
    require_gpu_unlocked
    colab_kit
    cell nvidia-smi
    assert_success
    refute_output --partial "no GPU in this runtime"
    cell 'make -j'
    assert_success
    # Built: now the GPU, shared with the tests that check results.
    kit_gpu_lock -s
    # make gives 2 for any failure of its recipe: the program's FAIL too.
    cell 'make run LAB=01'
    assert_failure 2
    assert_output --partial "result: FAIL"
    assert_output --partial "TODO("
    # The grader takes the GPU's lock itself.
    kit_gpu_release
    cell 'make check LAB=01'
    assert_failure 2
    assert_output --regexp '01-coalescing +FAIL +0/20'
    kit_gpu_lock -s
    cell 'make report LAB=01'
    assert_success
    assert_output --partial "make report: 01-coalescing: your program FAIL; the reference PASS"
    # What the Python cells open is there.
    while read -r p; do
        [ -f "$p" ] || fail "a Python cell opens $p, which the cells above did not write"
    done < <(python_paths)
    run python3 "$KIT_ROOT/tests/page_check.py" "$content/kit/build/report/report.html"
    assert_success
}
