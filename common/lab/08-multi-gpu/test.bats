#!/usr/bin/env bats
# Lab 08: several GPUs. The tests for one GPU run wherever there is one;
# those for two skip where the kit sees one (require_gpus 2), and fail
# instead under KIT_REQUIRE_GPU=2.

load ../../../tests/test_helper

LAB=08-multi-gpu

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
    FIXTURES="$KIT_BUILD/tests/fixtures/lab08"
}

# The kit's one-mistake files (tests/fixtures/lab08), each with the words of
# the reason it must fail with; "one GPU: pass" where the mistake cannot
# show on one GPU.
MISTAKES='all-on-gpu0|cudaMalloc allocates on the current GPU|one GPU: pass
peer-one-way|acts for the current GPU only, in one direction|one GPU: pass
default-stream-copies|in the default stream, which waits for the GPU'"'"'s other streams|
no-streams|is the default stream (was it created?)|
wait-each-chunk|so the chunks ran one after the other|'


# --- CPU: the source, the command line, the no-GPU path ---------------------

@test "08: the student's file holds only the student's code; the diff is the answers" {
    assert_student_file "$LAB" 15 40
}

@test "08: --help lists the options and exits 0" {
    for prog in "$REF" "$SKELETON"; do
        run "$prog" --help
        assert_success
        assert_output --partial "--size N"
        assert_output --partial "--gpus G"
        assert_output --partial "--streams S"
        assert_output --partial "--selftest"
        assert_output --partial "--timeline FILE"
    done
}

@test "08: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--size banana|is not a size
--size 0|out of range
--size 2^40|out of range
--size|needs a value
--gpus 0|from 1 to 16
--gpus 17|from 1 to 16
--gpus two|from 1 to 16
--streams 0|from 1 to 32
--streams 33|from 1 to 32
--selftest=1|takes no value
--device 1|unknown option '--device'
--timeline=|needs a non-empty value
--timeline -|name a file
--timeline /nonexistent/dir/t.csv|--timeline /nonexistent/dir/t.csv: cannot write in /nonexistent/dir
--timeline t.csv --selftest|--timeline: not with --selftest
CASES
    # A folder it may not write in (root may write anywhere).
    [ "$(id -u)" != 0 ] || return 0
    mkdir -p "$BATS_TEST_TMPDIR/ro" && chmod 555 "$BATS_TEST_TMPDIR/ro"
    run "$REF" --timeline "$BATS_TEST_TMPDIR/ro/t.csv"
    assert_failure 64
    assert_output --partial "cannot write in $BATS_TEST_TMPDIR/ro"
}

@test "08: the one-mistake files are built, each a small change of the reference" {
    local f
    while IFS='|' read -r f _; do
        assert [ -x "$FIXTURES/$f" ]
        run diff "$KIT_ROOT/solutions/$LAB/multi-gpu.cu" "$FIXTURES/$f.cu"
        assert_failure 1
        [ "$(grep -c '^[<>]' <<<"$output")" -le 6 ] || fail "fixture $f changes more than a few lines"
    done <<<"$MISTAKES"
}

# --- GPU, one GPU or more: the reference at its default size -----------------

# bats test_tags=gpu
@test "08: the reference passes at the default size; every run of every version checked" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    local key n=$(kv gpus) size=$(kv size)
    # 2^26 unless a GPU has too little memory for it.
    [ $((size & (size - 1))) -eq 0 ] && [ "$size" -le 67108864 ] || fail "default size $size"
    assert_line "streams: 4"
    for key in gpus-1-streams-1 gpus-1 $([ "$n" -gt 1 ] && echo "gpus-$n-streams-1 gpus-$n"); do
        assert_equal "$(kv "wrong-elements-$key")" 0
        assert_equal "$(kv "bad-timed-runs-$key")" 0
        assert_at_least "$(kv "reps-$key")" 2 "timed runs of $key"
    done
    assert [ -n "$(kv time-all-gpus-ms)" ]
}

# bats test_tags=gpu
@test "08: one GPU says the multi-GPU part needs two; more GPUs run it" {
    require_gpu
    run_reference_once "$LAB"
    if [ "$(kv gpus-visible)" = 1 ]; then
        assert_line "multi-gpu: skipped (1 GPU)"
        assert_output --partial "The multi-GPU part needs two GPUs"
        refute_line --regexp "^peer-access"
        assert_line "speedup-all-gpus: 1.00"
    else
        assert_line "multi-gpu: ran ($(kv gpus) GPUs)"
        assert_line --regexp "^peer-access: (supported|not supported)$"
    fi
}

# bats test_tags=gpu,perf
@test "08: on one GPU, ${KIT_MIN_STREAMS_SPEEDUP_MULTI_GPU}x faster with 4 streams than with one" {
    require_gpu
    skip_on_wsl "$KIT_WSL_OVERLAP_WHY"
    run_reference_once "$LAB"
    [ "$(kv copy-engines)" -ge 2 ] || skip "one copy engine: the copies out cannot run beside the copies in"
    assert_at_least "$(kv speedup-streams-1-gpu)" "$KIT_MIN_STREAMS_SPEEDUP_MULTI_GPU" "4 streams over 1"
}

# bats test_tags=gpu
@test "08: the checks catch the kit's own wrong versions; its right version passes" {
    require_gpu
    run_reference_once "$LAB" --selftest --seed 11
    assert_success
    assert_line "result: PASS"
    assert_line "selftest-right: passed"
    for key in wait-each-chunk default-stream sync-copy no-wait one-stream setup-no-streams; do
        assert_line "selftest-$key: caught"
    done
    # What a student reads for each.
    assert_output --partial "the chunks ran one after the other"
    assert_output --partial "in the default stream"
    assert_output --partial "calls cudaMemcpy, which returns only when its copy is done"
    assert_output --partial "returned while GPU"
    assert_output --partial "went to 1 of its 4 streams"
    if [ "$(gpus_visible)" -ge 2 ]; then
        assert_line "selftest-wait-each-gpu: caught"
        assert_line "selftest-setup-one-gpu: caught"
        assert_output --partial "the GPUs ran one after the other"
        assert_output --partial "cudaMalloc allocates on the current GPU"
    else
        assert_line "selftest-wait-each-gpu: skipped (needs two GPUs)"
    fi
}

# bats test_tags=gpu
@test "08: the skeleton as shipped fails, pointing at TODO(1)" {
    require_gpu
    run "$SKELETON" --size 1M --reps 2
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "gpus_setup's shares cover 0 of the 1048576 elements"
    assert_output --partial "(TODO(1))"
    assert_line "wrong-elements-gpus-1-streams-1: -1"
}

# bats test_tags=gpu
@test "08: sizes that are no multiple of the GPUs, streams or blocks verify" {
    require_gpu
    run "$REF" --size 1000003 --streams 7 --reps 2
    assert_success
    assert_line "size: 1000003"
    assert_line "result: PASS"
    run "$REF" --size 33 --streams 2 --reps 2 --gpus 1
    assert_success
    assert_line "multi-gpu: skipped ($([ "$(gpus_visible)" = 1 ] && echo "1 GPU" || echo "--gpus 1"))"
    assert_line "result: PASS"
}

# bats test_tags=gpu
@test "08: --seed is used and printed; --csv writes the tables" {
    require_gpu
    local csv="$BATS_TEST_TMPDIR/table.csv" versions
    run "$REF" --size 1M --reps 2 --seed 42 --streams 2 --csv "$csv"
    assert_success
    assert_line "seed: 42"
    assert_line "reps-gpus-1: 2"
    versions=$(grep -c '^wrong-elements-gpus-' <<<"$output")
    run head -n 1 "$csv"
    assert_output "gpu,size,seed,part,version,gpus,streams,time_ms,gbs,correct"
    run sed -n 2p "$csv"
    assert_output --regexp '^"[^"]+",1048576,42,1,"1 GPU, 1 stream",1,1,[0-9.]+,[0-9.]+,1$'
    run grep -c '^"[^"]*",1048576,42,1,' "$csv"
    assert_output "$versions"
}

# bats test_tags=gpu
@test "08: --timeline: every GPU's streams, each with its copies in, kernel and copy out, within the traced run (the kit's reader)" {
    require_gpu
    local tl="$BATS_TEST_TMPDIR/timeline.csv" n
    # 16M elements: each chunk's kernel lasts microseconds, well above the events' resolution.
    run "$REF" --size 16M --streams 2 --reps 2 --seed 7 --timeline "$tl"
    assert_success
    n=$(kv gpus)
    assert_equal "$(kv timeline-gpus)" "$n"
    assert_line "timeline-streams: 2"
    assert_line "timeline-copies-missed: 0"
    assert_line "wrong-elements-timeline: 0"
    assert_equal "$(kv timeline-kernels)" $((2 * n))
    if [ "$n" = 1 ]; then assert_line "timeline-version: 1 GPU, 2 streams"; else assert_line "timeline-version: $n GPUs, 2 streams each"; fi
    # The timed runs are not the traced one: as many as without --timeline.
    assert_line --regexp "^reps-gpus-$n: 2$"
    assert_output --partial "timeline of $(kv timeline-version), from your traced build"
    local u=() g
    for ((g = 0; g < n; g++)); do u+=("$(kv "timeline-uncertainty-ms-gpu-$g")"); done
    # (On WSL 2 Windows schedules the GPUs' work: whether they overlap is not asked there.)
    local together=1
    on_wsl2 && together=0
    run python3 - "$KIT_ROOT/common/report" "$tl" "$n" "$(kv timeline-ms)" "$(kv timeline-version)" "$together" \
        "${u[@]}" <<'PY'
import collections, sys
sys.path.insert(0, sys.argv[1])
from kitreport import tables
rows = tables.read_timeline(sys.argv[2], "08-multi-gpu")
n, run_ms, version, together = int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6] == "1"
u = [float(x) for x in sys.argv[7:]]
assert len(u) == n, u
bad = []
ops = collections.Counter((int(r["gpu"]), int(r["stream"]), r["operation"]) for r in rows)
if {int(r["gpu"]) for r in rows} != set(range(n)):
    bad.append("GPUs %s, not 0 to %d" % (sorted({int(r["gpu"]) for r in rows}), n - 1))
for g in range(n):
    for s in (0, 1):
        got = {op: ops[(g, s, op)] for op in ("h2d", "kernel", "d2h", "other")}
        if got != {"h2d": 2, "kernel": 1, "d2h": 1, "other": 0}:
            bad.append("GPU %d, stream %d: %s" % (g, s, got))
for r in rows:
    # Every span inside the call of gpus_add (0 to timeline-ms), within its GPU's clock's uncertainty.
    slack = u[int(r["gpu"])] + 0.05
    if r["start_ms"] < -slack or r["end_ms"] > run_ms + slack or r["end_ms"] <= r["start_ms"]:
        bad.append("line %d: %g to %g ms, outside 0 to %g ms" % (r["_line"], r["start_ms"], r["end_ms"], run_ms))
    if r["version"] != version:
        bad.append("line %d: version %r" % (r["_line"], r["version"]))
# Each stream: its copies in, then its kernel, then its copy out.
for g in range(n):
    for s in (0, 1):
        mine = {op: [r for r in rows if int(r["gpu"]) == g and int(r["stream"]) == s and r["operation"] == op]
                for op in ("h2d", "kernel", "d2h")}
        if not all(mine.values()):
            continue  # said above
        k, out = mine["kernel"][0], mine["d2h"][0]
        if max(r["end_ms"] for r in mine["h2d"]) > k["start_ms"] + 1e-6 or k["end_ms"] > out["start_ms"] + 1e-6:
            bad.append("GPU %d, stream %d: not in, kernel, out in order" % (g, s))
if n > 1 and together:
    # The GPUs worked at the same time: GPU 1 began before GPU 0 had finished
    # (its work is queued microseconds after GPU 0's, which takes milliseconds).
    first1 = min(r["start_ms"] for r in rows if int(r["gpu"]) == 1)
    last0 = max(r["end_ms"] for r in rows if int(r["gpu"]) == 0)
    if first1 >= last0:
        bad.append("GPU 1 began at %g ms, after GPU 0 had finished at %g ms" % (first1, last0))
print("\n".join(bad) or "ok: %d spans" % len(rows))
PY
    assert_success
    assert_output "ok: $((8 * n)) spans"
}

# bats test_tags=gpu
@test "08: --timeline of a file whose setup fails: no timeline written, and it says why" {
    require_gpu
    run "$SKELETON" --size 1M --reps 2 --timeline "$BATS_TEST_TMPDIR/tl.csv"
    assert_failure 1
    assert_output --partial "--timeline $BATS_TEST_TMPDIR/tl.csv: not written"
    refute_line --regexp "^timeline-"
    assert [ ! -e "$BATS_TEST_TMPDIR/tl.csv" ]
}

# bats test_tags=gpu
@test "08: default run takes seconds, not minutes" {
    require_gpu
    assert_default_run_quick "$LAB" 20
}

# bats test_tags=gpu
@test "08: each one-mistake file fails with its reason; on one GPU, those that need two pass" {
    require_gpu
    local f words one n peer=none
    n=$(gpus_visible)
    # Whether GPUs 0 and 1 can reach each other: the reference's word.
    if [ "${n:-0}" -gt 1 ]; then
        run_reference_once "$LAB"
        peer=$(kv peer-access)
    fi
    while IFS='|' read -r f words one; do
        run "$FIXTURES/$f" --size 1M --reps 2
        if [ -n "$one" ] && { [ "${n:-0}" = 1 ] || { [ "$f" = peer-one-way ] && [ "$peer" != supported ]; }; }; then
            [ "$status" = 0 ] || fail "$f on $n GPU(s), peer access $peer: exit $status, not a pass: $output"
            assert_line "result: PASS"
        else
            [ "$status" = 1 ] || fail "$f on $n GPU(s): exit $status, not 1 (FAIL): $output"
            assert_line "result: FAIL"
            assert_output --partial "$words"
        fi
    done <<<"$MISTAKES"
}

# --- GPU, two GPUs or more ----------------------------------------------------

# bats test_tags=gpu
@test "08: on every GPU: the split verified, peer access judged, every copy and kernel checked" {
    require_gpus 2
    run_reference_once "$LAB"
    assert_success
    local key
    assert_line "peer-access-checked: yes"
    assert_line --regexp "^peer-access-0-1: [01]$"
    [ -n "$(kv pci-bus-id-1)" ] || fail "no PCI bus id for GPU 1"
    [ -n "$(kv p2p-performance-rank-0-1)" ] || fail "no performance rank for GPUs 0 and 1"
    for key in local-add staged-copy host-staged-copy \
        $([ "$(kv peer-access)" = supported ] && echo peer-copy peer-copy-back peer-copy-both remote-add); do
        assert_equal "$(kv "wrong-elements-$key")" 0
        assert_equal "$(kv "bad-timed-runs-$key")" 0
        assert_at_least "$(kv "bandwidth-$key-gbs")" 0.1 "bandwidth of $key"
    done
    assert_at_least "$(kv h2d-gbs-all-gpus)" 0.1 "host links all at once"
}

# bats test_tags=gpu,perf
@test "08: N GPUs, one stream each, reach ${KIT_MIN_MULTI_GPU_FRACTION_OF_LINKS} of what the host links allow" {
    require_gpus 2
    skip_on_wsl "$KIT_WSL_MULTI_GPU_WHY"
    run_reference_once "$LAB"
    local n=$(kv gpus) links=$(kv host-link-scaling) allow
    allow=$(awk -v n="$n" -v l="$links" -v f="$KIT_MIN_MULTI_GPU_FRACTION_OF_LINKS" \
        'BEGIN { a = l < n ? l : n; printf "%.3f", a * f }')
    assert_at_least "$(kv speedup-all-gpus-streams-1)" "$allow" \
        "$n GPUs over one, one stream each (host links scale ${links}x)"
}

# bats test_tags=gpu,perf
@test "08: two GPUs, one stream each, at least ${KIT_MIN_MULTI_GPU_SPEEDUP}x one GPU where each has its own host link" {
    require_gpus 2
    skip_on_wsl "$KIT_WSL_MULTI_GPU_WHY"
    run_reference_once "$LAB"
    [ "$(kv gpus)" = 2 ] || skip "the kit sees $(kv gpus) GPUs; this test is for two (the one above holds for any number)"
    awk -v l="$(kv host-link-scaling)" -v m="$KIT_MIN_HOST_LINK_SCALING" 'BEGIN { exit !(l >= m) }' ||
        skip "the GPUs share host bandwidth: all at once $(kv h2d-gbs-all-gpus) GB/s, GPU 0 alone $(kv h2d-gbs-gpu-0) GB/s"
    assert_at_least "$(kv speedup-all-gpus-streams-1)" "$KIT_MIN_MULTI_GPU_SPEEDUP" "2 GPUs over one, one stream each"
}

# bats test_tags=gpu,perf
@test "08: a kernel reading another GPU's memory is ${KIT_MIN_REMOTE_OVER_LOCAL}x slower than on its own" {
    require_gpus 2
    run_reference_once "$LAB"
    [ "$(kv peer-access)" = supported ] || skip "GPUs 0 and 1 cannot reach each other's memory"
    assert_at_least "$(kv remote-add-over-local)" "$KIT_MIN_REMOTE_OVER_LOCAL" "remote over local time"
}

# bats test_tags=gpu,perf
@test "08: over a direct link, peer copies are ${KIT_MIN_PEER_OVER_STAGED_NVLINK}x the copies staged through the host" {
    require_gpus 2
    run_reference_once "$LAB"
    [ "$(kv peer-link)" = nvlink-class ] || skip "GPUs 0 and 1 have no link faster than PCIe (peer-link: $(kv peer-link))"
    assert_at_least "$(kv peer-over-staged)" "$KIT_MIN_PEER_OVER_STAGED_NVLINK" "peer over staged bandwidth"
}

# bats test_tags=gpu
@test "08: the skeleton's set_peer_access fails, pointing at TODO(3)" {
    require_gpus 2
    run "$SKELETON" --size 1M --reps 2
    assert_failure 1
    [ "$(kv peer-access)" = supported ] ||
        skip "GPUs 0 and 1 cannot reach each other: returning 0 is right there"
    assert_output --partial "set_peer_access(0, 1, 1) returned 0"
    assert_output --partial "(TODO(3))"
    assert_line "peer-access-checked: no"
}

# bats test_tags=gpu
@test "08: the checks catch wrong peer access; the kit's right one passes" {
    require_gpus 2
    run_reference_once "$LAB" --selftest --seed 11
    assert_success
    if [ "$(kv peer-access)" = supported ]; then
        assert_line "selftest-peer-right: passed"
        assert_line "selftest-peer-linger: caught"
        assert_line "selftest-peer-one-way: caught"
        assert_output --partial "left the error cudaErrorPeerAccessAlreadyEnabled behind"
        assert_output --partial "acts for the current GPU only, in one direction"
    else
        assert_line "selftest-peer-right: skipped (needs two GPUs with peer access)"
    fi
}

# bats test_tags=gpu
@test "08: make check on two GPUs: the reference full marks; each one-mistake file FAIL with its reason" {
    require_gpus 2
    sandbox_works || fail "the GPU tests of the grader need its sandbox: $no_sandbox_why"
    run_reference_once "$LAB"
    local peer subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out" f words
    peer=$(kv peer-access)
    # The grader takes the GPU's lock itself.
    kit_gpu_release
    submission "$subs/reference" reference=$LAB
    while IFS='|' read -r f _; do
        mkdir -p "$subs/$f/labs/$LAB"
        sed -f "$KIT_ROOT/tests/fixtures/lab08/$f.sed" "$KIT_ROOT/solutions/$LAB/multi-gpu.cu" \
            >"$subs/$f/labs/$LAB/multi-gpu.cu"
    done <<<"$MISTAKES"
    mkdir -p "$BATS_TEST_TMPDIR/tmp"
    TMPDIR="$BATS_TEST_TMPDIR/tmp" run bash "$KIT_ROOT/common/grade/grade-class.sh" \
        --reference-build "$KIT_BUILD" --labs 08 "$subs" "$out"
    echo "$output" >"$KIT_BUILD/grade-class-08.txt"
    assert_success
    [ "$(csv_field_of "$out/class-labs.csv" '"reference","reference","","08-multi-gpu"' 5)" = PASS ] ||
        fail "the reference: $(csv_field_of "$out/class-labs.csv" '"reference","reference","","08-multi-gpu"' 9)"
    run cat "$out/class.csv"
    assert_line --regexp '^reference,,20,20,1,0,0,20,graded$'
    while IFS='|' read -r f words _; do
        local v r
        v=$(csv_field_of "$out/class-labs.csv" "\"$f\",\"$f\",\"\",\"$LAB\"" 5)
        r=$(csv_field_of "$out/class-labs.csv" "\"$f\",\"$f\",\"\",\"$LAB\"" 9)
        if [ "$f" = peer-one-way ] && [ "$peer" != supported ]; then
            [ "$v" = PASS ] || fail "$f where GPUs 0 and 1 have no peer access: $v ($r), not PASS"
            continue
        fi
        [ "$v" = FAIL ] || fail "$f: $v ($r), not FAIL ($words)"
        [[ "$r" == *"$words"* ]] || fail "$f: the reason '$r' does not say '$words'"
    done <<<"$MISTAKES"
}
