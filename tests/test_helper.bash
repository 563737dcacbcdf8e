# Loaded by every test file (load test_helper). Finds the built programs,
# loads bats-support and bats-assert, holds the thresholds, and decides
# what a test does when there is no GPU.
#
# shellcheck disable=SC2034
# (SC2034: the thresholds, and the output, status and lines that
# run_reference_once sets as Bats' run does, are read by the .bats files.)

# This file lives in tests/; the test files in tests/ and in each lab's
# folder (common/lab/NN-name/test.bats).
KIT_TESTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KIT_ROOT="$(cd "$KIT_TESTS/.." && pwd)"
KIT_BUILD="${KIT_BUILD:-$KIT_ROOT/build}"

bats_load_library bats-support
bats_load_library bats-assert

# Where the tests run (a Linux host, WSL 2): skip_on_wsl and its reasons.
# shellcheck source=tests/platform.bash
source "$KIT_TESTS/platform.bash"

# ---------------------------------------------------------------------------
# Thresholds, all in one place. Each is a ratio measured within one run and
# must hold on every supported GPU (Turing to Blackwell), not only the one the
# kit was developed on; the handouts give the figures measured there.
# ---------------------------------------------------------------------------

# Lab 01: the random kernel's time over the coalesced kernel's, default size,
# is at least the sectors its loads fetch over the coalesced loads' (counted
# in the run: 32 against 4), none of them from the L2 (the arrays are
# several times its size); DRAM serves scattered sectors slower than a
# stream, so the measured factor is higher (25x on 12 SMs of an H100 under
# MPS, 47x on an H200, 56x on an H100).
# Lab 01: random access must touch nearly a segment per lane.
KIT_MIN_SEGMENTS_RANDOM=28
# Lab 01: a one-pass vector add against the kit's copy kernel of the same
# shape on the same SMs (cudaMemcpy may use the copy engines, which a share
# of the GPU under CUDA MPS leaves whole).
KIT_MIN_STREAM_FRACTION_OF_COPY=0.5
# Lab 01: row sums with coalesced reads against one thread per row.
KIT_MIN_SPEEDUP_ROW_SUMS=2
# Lab 03: four paths by thread against one path per warp. Four paths in
# turn cost up to 4x; loads and stores shared by the paths keep it lower.
KIT_MIN_SPEEDUP_DIVERGENCE=2
# Lab 03, part 2, work 64: process_by_class on data grouped by class
# against the same kernel on the classes mixed at random (4x at most)...
KIT_MIN_SPEEDUP_GROUPED=2
# ...and the whole reorganisation (count, partition, process, scatter back)
# against the mixed run: the grouping must pay for its own passes.
KIT_MIN_SPEEDUP_REORGANISED=1.2
# Lab 04: scenario 2 against scenario 1 where scenario 1 crowds 1 or 2 SMs.
KIT_MIN_SCENARIO2_SPEEDUP=1.1
# Lab 04: one block more than fills every block slot once, against a full
# wave: the extra block runs alone in a second wave.
KIT_MIN_PARTIAL_WAVE_SLOWDOWN=1.2
# Lab 05: pinned against pageable host-to-device bandwidth.
KIT_MIN_PINNED_OVER_PAGEABLE=1.5
# Lab 05: the best pipeline against pinned serial, with the plain kernel:
# with two copy engines it hides the copies out behind the copies in.
KIT_MIN_PIPELINE_SPEEDUP=1.15
# ...and with --kernel-work auto (kernel as long as the copies in, the
# default), on any GPU with a copy engine: the kernel hides behind the copies.
KIT_MIN_PIPELINE_SPEEDUP_BALANCED=1.3
# Lab 05: the best pipeline against the ideal computed from its parts.
KIT_MIN_PIPELINE_FRACTION_OF_IDEAL=0.75
# Lab 07: each level of the memory hierarchy takes at least this many times
# the clock cycles of the one above it (L1, L2, DRAM), in the pointer chase.
KIT_MIN_LATENCY_STEP=1.3
# Lab 07 on Hopper (compute capability 9.x): the chase's latencies, in SM
# clock cycles, within ranges that hold the figures published for Hopper's
# L2 hits and global loads (Luo et al., "Benchmarking and Dissecting the
# Nvidia Hopper GPU Architecture", IPDPS 2024, a fixed-stride chase on an
# H800; Chips and Cheese, "Nvidia's H100: Funny L2, and Tons of Bandwidth",
# 2023, H100 PCIe, near and far L2 partitions). Wide on purpose: the kit's
# chase is random over a set of 4 L2s, TLB misses included. Measured by the
# kit on an H100 (2026-11-22): L2 291 cycles, DRAM 683 to 698.
KIT_HOPPER_L2_CYCLES_MIN=150
KIT_HOPPER_L2_CYCLES_MAX=450
KIT_HOPPER_DRAM_CYCLES_MIN=400
KIT_HOPPER_DRAM_CYCLES_MAX=1000
# Lab 07: sum_tlp's bandwidth against warps per SM may fall below the best
# point before it by at most this share (noise), and where it first reaches
# 90% of its best lies within this factor of Little's law's warps per SM.
KIT_MAX_OCCUPANCY_DIP=0.10
KIT_MAX_KNEE_FACTOR=2
# Lab 07: sum_ilp at 8 warps per SM against sum_tlp at full occupancy.
KIT_MIN_ILP_FRACTION_OF_TLP=0.85
# ... where sum_tlp at full occupancy reaches this share of the streaming
# kernel's bandwidth (common/lab/07-latency/test.bats, skip_unless_tlp_nears_bandwidth).
KIT_MIN_TLP_SHARE_FOR_ILP=0.67
# Lab 07: float over double FMA throughput within this factor of the
# Programming Guide's ratio (2 on sm_70, 8.0 and 9.0; 32 on sm_75; 64 on 8.6
# and 8.9); __sinf against sinf at least this much faster.
KIT_MAX_FP64_RATIO_FACTOR=2
KIT_MIN_SINF_INTRINSIC_SPEEDUP=1.5
# Lab 05: in the timeline of the default run, copies beside kernels for at
# least this share of the time kernels run.
KIT_MIN_COPY_KERNEL_OVERLAP=0.5
# Lab 05: the course's scheduling examples count units of time; launches
# and copies' latency may add this much to the course's count.
KIT_UNITS_SLACK=0.35
# Lab 05: the host's work between the asynchronous calls (4-way) against
# the same work done before the pipeline, at most this share of the time.
KIT_MAX_FOUR_WAY_FRACTION=0.9

# Lab 06: the padded transpose against the kernel that copies the same
# matrix row for row (NVIDIA's transpose study reaches 80-95% of it).
KIT_MIN_PADDED_FRACTION_OF_COPY=0.8
# Lab 06: the padded transpose against the naive one, whose stores each
# touch 32 segments.
KIT_MIN_SPEEDUP_PADDED_OVER_NAIVE=1.3
# Lab 08: one GPU, 4 streams against 1 (needs two copy engines: the copies
# out then run beside the copies in).
KIT_MIN_STREAMS_SPEEDUP_MULTI_GPU=1.15
# Lab 08: N GPUs against one, one stream each, copies included, as a share
# of what the host links allow (their own scaling: each GPU's copies in
# alone, then all at once). Holds where the GPUs share a link, too. One
# stream each, because the links were measured one way at a time: with 4
# streams each the copies go both ways on every link at once, and the host
# side, not the links, sets the pace (two H200s: 1.70x against the links'
# 1.95x, the 1-stream version 1.94x).
KIT_MIN_MULTI_GPU_FRACTION_OF_LINKS=0.85
# Lab 08: two GPUs against one, one stream each, copies included, where
# each has its own host link (all at once the links move at least
# KIT_MIN_HOST_LINK_SCALING times one GPU's bytes): two H200s on their own
# PCIe links gave 1.75-1.96x over a day's runs (2026-11-27), once 1.77x
# against 1.8 needed, with the links at 1.87x: each GPU's copies and
# kernel still take their own fixed cost.
KIT_MIN_MULTI_GPU_SPEEDUP=1.6
KIT_MIN_HOST_LINK_SCALING=1.8
# Lab 08: a kernel reading the other GPU's memory against its own (HBM is
# faster than any link between GPUs).
KIT_MIN_REMOTE_OVER_LOCAL=2
# Lab 08: peer copies with peer access on against the driver's staging
# through the host, where the GPUs have a direct link (the program says
# peer-link: nvlink-class when a peer copy beats any PCIe x16 link).
KIT_MIN_PEER_OVER_STAGED_NVLINK=3

# ---------------------------------------------------------------------------

# The programs: student copy and reference of lab $1 (e.g. 01-coalescing).
lab_program() { echo "$KIT_BUILD/labs/$1/${1#*-}"; }
ref_program() { echo "$KIT_BUILD/solutions/$1/${1#*-}"; }

# require_gpu_unlocked: skips the test when no usable GPU is here, with the
# reason the kit gives; with KIT_REQUIRE_GPU=1 (or 2, ...) the same absence
# fails it, so that a run on a GPU machine cannot pass by skipping. For a
# test that runs the grader, which holds the GPU's lock alone while it
# runs programs; other tests hold it themselves (below).
require_gpu_unlocked() {
    local out
    out=$(kit_query --check) && return 0
    if [ "${KIT_REQUIRE_GPU:-0}" != 0 ]; then
        fail "KIT_REQUIRE_GPU=$KIT_REQUIRE_GPU, but the kit cannot use a GPU here: $out"
    fi
    out=${out#*cannot run here: }
    skip "no usable GPU: ${out%%. *}"
}

# kit_query [--check]: kit-query's answer (its output, 2>&1, and its exit
# status). Under tests/run.sh a good answer is asked once per run and GPU
# selection, then read from the build folder: every test asks, and each
# asking opens a CUDA context on the GPU, unlocked, beside whatever is
# being timed. A failure is asked again by the next test.
kit_query() {
    local cache="" out rc
    if [ -n "${KIT_LOCK_DIR:-}" ] && [ -n "${KIT_QUERY_CACHE:-}" ]; then
        cache="$KIT_QUERY_CACHE/$(printf '%s' "${1:-all} ${CUDA_VISIBLE_DEVICES-unset}" | cksum | cut -d' ' -f1)"
        if [ -f "$cache.rc" ]; then
            cat "$cache.out"
            return "$(cat "$cache.rc")"
        fi
    fi
    out=$("$KIT_BUILD/bin/kit-query" "$@" 2>&1)
    rc=$?
    if [ -n "$cache" ] && [ "$rc" = 0 ]; then
        printf '%s\n' "$out" >"$cache.out.$BASHPID" && mv "$cache.out.$BASHPID" "$cache.out" &&
            echo "$rc" >"$cache.rc.$BASHPID" && mv "$cache.rc.$BASHPID" "$cache.rc"
    fi
    printf '%s\n' "$out"
    return "$rc"
}

# The GPU's lock: the grader's own (common/grade/gpu-hold.sh, flocks in
# KIT_LOCK_DIR named for the GPU), which tests/run.sh points at a folder of
# the suite's. Tests whose figures are only results and counts hold it
# shared, side by side; a test whose figures are times holds it alone, as
# the grader does for its timed runs; so nothing else runs on the GPU while
# anything is timed. The lock goes with the test's process. Outside
# tests/run.sh (no KIT_LOCK_DIR) nothing runs beside a test: no lock.
# shellcheck source=common/grade/gpu-hold.sh
source "$KIT_ROOT/common/grade/gpu-hold.sh"
kit_gpu_lock() { # -s (shared), -x (alone) or -u (let go)
    local uuids
    [ -n "${KIT_LOCK_DIR:-}" ] || return 0
    if ! gpu_hold_opened; then
        # Every GPU the test sees: its programs may use any of them (Lab 08).
        uuids=$(kit_query | sed -n 's/^uuids: //p')
        # shellcheck disable=SC2086
        gpu_hold_open_gpus "$KIT_LOCK_DIR" ${uuids:-gpu0}
    fi
    [ "$1" = -u ] || [ -z "${KIT_LOCK_LOG:-}" ] ||
        echo "$(date +%s.%N) want$1 $BATS_TEST_NUMBER ${BATS_TEST_DESCRIPTION:-}" >>"$KIT_LOCK_LOG"
    gpu_hold "$1"
    [ "$1" = -u ] || [ -z "${KIT_LOCK_LOG:-}" ] ||
        echo "$(date +%s.%N) hold$1 $BATS_TEST_NUMBER ${BATS_TEST_DESCRIPTION:-}" >>"$KIT_LOCK_LOG"
}

# kit_gpu_release: at a test's end, lets the GPU go (in the hold log, so
# that it says how long each test held it): after the file's own teardown,
# which this wraps.
kit_gpu_release() {
    [ -n "$gpu_held" ] || return 0
    gpu_hold -u
    [ -z "${KIT_LOCK_LOG:-}" ] || echo "$(date +%s.%N) free $BATS_TEST_NUMBER ${BATS_TEST_DESCRIPTION:-}" >>"$KIT_LOCK_LOG"
}
if ! declare -f teardown | grep -q kit_gpu_release; then
    if declare -F teardown >/dev/null; then
        eval "kit_file_teardown() $(declare -f teardown | tail -n +2)"
    else
        kit_file_teardown() { :; }
    fi
    teardown() {
        kit_file_teardown
        kit_gpu_release
    }
fi

# kit_gpu_yield: a test that holds the GPU shared lets a timing that waits
# for the GPU go first, between two of its commands (Bats' run, below): a
# timing waits for one command of such a test, not for the whole test.
kit_gpu_yield() {
    [ "$gpu_held" = -s ] || return 0
    # A gate is closed (held alone) only by a holder waiting to be alone.
    gpu_hold_waited_for || return 0
    kit_gpu_release
    kit_gpu_lock -s
}
if ! declare -F kit_bats_run >/dev/null && declare -F run >/dev/null; then
    eval "kit_bats_run() $(declare -f run | tail -n +2)"
    run() {
        kit_gpu_yield
        kit_bats_run "$@"
    }
fi

# require_gpu: a usable GPU, held with the tests that only check results.
require_gpu() {
    require_gpu_unlocked
    kit_gpu_lock -s
}

# require_gpu_alone: a usable GPU, held alone: the test's figures are times.
require_gpu_alone() {
    require_gpu_unlocked
    kit_gpu_lock -x
}

# The number of GPUs the kit sees (needs one).
gpus_visible() { kit_query | sed -n 's/^gpus-visible: //p'; }

# require_gpus N: require_gpu, then skips the test unless the kit sees N
# GPUs, saying how many it sees. KIT_REQUIRE_GPU=N (or more) makes the
# same absence fail, for a machine that should have N GPUs; KIT_REQUIRE_GPU=1
# keeps its meaning: one GPU required, the tests for more skip.
require_gpus() { # N [alone]
    local want=$1 have
    if [ "${2:-}" = alone ]; then require_gpu_alone; else require_gpu; fi
    have=$(gpus_visible)
    [ "${have:-0}" -ge "$want" ] && return 0
    if [ "${KIT_REQUIRE_GPU:-0}" -ge "$want" ] 2>/dev/null; then
        fail "KIT_REQUIRE_GPU=$KIT_REQUIRE_GPU, but the kit sees ${have:-no} GPU(s) here"
    fi
    skip "needs $want GPUs; the kit sees ${have:-0}"
}

# Compute capability of GPU 0, e.g. 9.0 (needs a GPU).
gpu_cc() { kit_query | sed -n 's/^compute-capability: //p'; }

# assert_usage_errors PROG: PROG rejects each command line on standard
# input, written "ARGS|REASON", with exit 64 and a message holding REASON.
assert_usage_errors() {
    local prog=$1 args reason
    while IFS='|' read -r args reason; do
        # shellcheck disable=SC2086
        run "$prog" $args
        assert_failure 64
        assert_output --partial "$reason"
    done
}

# The value of `key: value` in $output (the last one, if repeated).
kv() {
    awk -v key="$1: " 'index($0, key) == 1 { value = substr($0, length(key) + 1) } END { printf "%s", value }' \
        <<<"$output"
}

# assert_at_least VALUE MIN WHAT: a numeric comparison that fails on
# empty or non-numeric input.
assert_at_least() {
    awk -v v="$1" -v m="$2" 'BEGIN { exit !(v ~ /^-?[0-9.]+$/ && v + 0 >= m + 0) }' ||
        fail "$3: '$1' is not at least $2"
}

# assert_timed_by_policy KEY [MAX_MS]: row KEY of $output was timed as the
# kit's policy says (common/lib/kit_timing.h): at least 3 runs, or 2 where
# those two already took the MAX_MS that ends timing (500 by default; a lab
# may set its own: Lab 05 150). With two runs the median is their mean.
assert_timed_by_policy() {
    local reps med max_ms=${2:-500}
    reps=$(kv "reps-$1") med=$(kv "time-$1-ms")
    awk -v r="$reps" -v m="$med" -v x="$max_ms" 'BEGIN { exit !(r ~ /^[0-9]+$/ && (r >= 3 || (r == 2 && 2 * m >= x))) }' ||
        fail "timed runs of $1: '$reps' (median $med ms): the policy asks for 3, or 2 that took $max_ms ms together"
}

# assert_close VALUE EXPECTED TOLERANCE WHAT
assert_close() {
    awk -v v="$1" -v e="$2" -v t="$3" \
        'BEGIN { d = v - e; if (d < 0) d = -d; exit !(v ~ /^-?[0-9.]+$/ && d <= t + 0) }' ||
        fail "$4: '$1' is not within $3 of $2"
}

# Runs the reference of lab $1 once per test file with arguments $2...,
# keeping its output for the file's tests; then sets $output and $status
# as `run` would, and $run_seconds to how long that one run took. Needs a GPU.
run_reference_once() {
    local lab=$1 cache start
    shift
    cache="$BATS_FILE_TMPDIR/ref-$(echo "$lab $*" | tr -c 'A-Za-z0-9' _)"
    if [ ! -f "$cache.status" ]; then
        # Its times are the file's figures: the GPU alone while it runs.
        local held=${gpu_held:--u}
        kit_gpu_lock -x
        start=$(date +%s%N)
        "$(ref_program "$lab")" "$@" >"$cache.out" 2>&1
        echo $? >"$cache.status"
        echo $((($(date +%s%N) - start) / 1000000)) | awk '{ printf "%.1f\n", $1 / 1000 }' >"$cache.seconds"
        kit_gpu_lock "$held"
        # The default run's report, the suite's evidence of this GPU.
        if [ $# = 0 ]; then
            mkdir -p "$KIT_BUILD/tests/evidence"
            { echo "# $lab, default run, $(cat "$cache.seconds") s, exit $(cat "$cache.status"), $(date -u +%FT%TZ)"
              cat "$cache.out"; } >"$KIT_BUILD/tests/evidence/default-$lab.txt"
        fi
    fi
    output=$(cat "$cache.out")
    status=$(cat "$cache.status")
    run_seconds=$(cat "$cache.seconds")
    mapfile -t lines <<<"$output"
}

# assert_default_run_quick LAB SECONDS: the reference's default run (the
# one the file's tests share) succeeded within SECONDS.
assert_default_run_quick() {
    run_reference_once "$1"
    assert_success
    awk -v t="$run_seconds" -v max="$2" 'BEGIN { exit !(t <= max) }' && return 0
    # A share of a GPU under CUDA MPS has a few of its SMs and all of its
    # L2 and memory: the default size, from the L2, is a whole GPU's
    # problem for a few SMs (a GPU that has so few SMs has a far smaller L2).
    if under_mps; then
        skip "the default run took $run_seconds s under CUDA MPS, on $(kv sms) SMs with the whole GPU's L2 ($(kv l2-bytes) bytes): its size follows the L2"
    fi
    fail "the default run took $run_seconds s (at most $2 s)"
}

# under_mps (common/grade/gpu-hold.sh): the GPU is shared through CUDA MPS.

# code_lines: the lines on stdin that hold code (not blank, not only a comment).
code_lines() {
    grep -vE '^[[:space:]]*$|^[[:space:]]*(/\*.*\*/|//.*)[[:space:]]*$' | grep -cvE '^[[:space:]]*[{}][[:space:]]*$'
}

# assert_student_file LAB MIN MAX: the skeleton (labs/) and the reference
# (solutions/) of LAB differ only by the answers: every skeleton line the
# reference replaces holds a TODO(k), the TODOs run from 1 up with none
# missing, and the answers are MIN to MAX lines of code.
assert_student_file() {
    local lab=$1 min=$2 max=$3 name=${1#*-}
    local skeleton="$KIT_ROOT/labs/$lab/$name.cu" reference="$KIT_ROOT/solutions/$lab/$name.cu"
    local removed answers k last
    run diff "$skeleton" "$reference"
    assert_failure 1
    removed=$(diff "$skeleton" "$reference" | grep '^<' | grep -v 'TODO([0-9]*)' || true)
    [ -z "$removed" ] || fail "$lab: the reference changes skeleton lines that hold no TODO: $removed"
    answers=$(diff "$skeleton" "$reference" | sed -n 's/^> //p' | code_lines)
    if [ "$answers" -lt "$min" ] || [ "$answers" -gt "$max" ]; then
        fail "$lab: the answers are $answers lines of code, not $min to $max"
    fi
    last=$(grep -o 'TODO([0-9]*)' "$skeleton" | tr -dc '0-9\n' | sort -n | tail -n 1)
    for ((k = 1; k <= last; k++)); do
        grep -q "TODO($k)" "$skeleton" || fail "$lab: the skeleton has no TODO($k)"
        grep -q "^ *\(/\*\|\*\|//\) *TODO($k)" "$skeleton" ||
            fail "$lab: TODO($k) is not explained in a comment"
    done
}

# ---------------------------------------------------------------------------
# Grading
# ---------------------------------------------------------------------------

# kit_copy DIR: a copy of the kit as an instructor has it (Makefile, common,
# solutions), with an empty labs/ for a submission.
kit_copy() {
    mkdir -p "$1/labs"
    cp -Rp "$KIT_ROOT/Makefile" "$KIT_ROOT/common" "$KIT_ROOT/solutions" "$1/"
}

# correctness_only DIR LAB...: the kit copy in DIR grades LAB... on their
# results alone (metric = none): for tests of the grader's front end, whose
# honest students need no speed runs. The speed runs' own positive control
# is tests/92, which grades every reference in full.
correctness_only() {
    local dir=$1 lab
    shift
    for lab in "$@"; do
        printf '\n[%s]\nmetric = none\n' "$lab" >>"$dir/common/grade/grading.conf"
    done
}

# submission DIR WHAT...: fills DIR/labs/ with WHAT: "skeleton" (the kit's
# labs), "reference" (the solutions; reference=LAB: one lab only) or the
# name of a grading fixture, tests/fixtures/grade/NAME.sed (its lab only).
submission() {
    local dir=$1 what lab base
    shift
    mkdir -p "$dir/labs"
    for what in "$@"; do
        case $what in
        skeleton) cp -R "$KIT_ROOT/labs/." "$dir/labs/" ;;
        reference) cp -R "$KIT_ROOT/solutions/." "$dir/labs/" ;;
        reference=*)
            mkdir -p "$dir/labs/${what#*=}"
            cp "$KIT_ROOT/solutions/${what#*=}/"*.cu "$dir/labs/${what#*=}/" ;;
        *)
            lab=$(fixture_field "$what" lab)
            base=$(fixture_field "$what" base)
            [ -n "$lab" ] || { echo "no fixture $what" >&2; return 1; }
            mkdir -p "$dir/labs/$lab"
            sed -f "$KIT_ROOT/tests/fixtures/grade/$what.sed" \
                "$KIT_ROOT/$([ "$base" = skeleton ] && echo labs || echo solutions)/$lab/${lab#*-}.cu" \
                >"$dir/labs/$lab/${lab#*-}.cu" ;;
        esac
    done
}

# fixture_field NAME KEY: a field of a grading fixture's header (lab,
# expect, decided, base).
fixture_field() {
    sed -n "s/^# $2: //p" "$KIT_ROOT/tests/fixtures/grade/$1.sed" 2>/dev/null | head -n 1
}

# fixtures [cpu|gpu]: the grading fixtures' names (those decided there).
fixtures() {
    local f
    for f in "$KIT_ROOT"/tests/fixtures/grade/*.sed; do
        f=$(basename "$f" .sed)
        [ -z "${1:-}" ] || [ "$(fixture_field "$f" decided)" = "$1" ] && echo "$f"
    done
}

# sandbox_works: bubblewrap is installed and can start here (user
# namespaces allowed); sets sandbox_opt to () or (--no-sandbox) for the
# class grader, and no_sandbox_why.
sandbox_works() {
    sandbox_opt=() no_sandbox_why=""
    if ! command -v bwrap >/dev/null 2>&1; then
        no_sandbox_why="bubblewrap is not installed (tests/setup-tools.sh installs it)"
    elif ! bwrap --unshare-all --unshare-user --die-with-parent --ro-bind / / --dev /dev --proc /proc true 2>/dev/null; then
        no_sandbox_why="bubblewrap cannot start here (user namespaces disabled?)"
    fi
    [ -z "$no_sandbox_why" ] && return 0
    sandbox_opt=(--no-sandbox)
    return 1
}

# unzip_to ZIP DIR: ZIP unpacked into DIR as Gradescope's unzip would (unzip
# where it is installed, else python3's zipfile), each file with the mode
# and the time the zip keeps (a source newer than its build would be built
# again: the fake autograder links the suite's own build).
unzip_to() {
    if command -v unzip >/dev/null 2>&1; then
        unzip -qq "$1" -d "$2"
        return
    fi
    python3 -c 'import os, sys, time, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        p = z.extract(i, sys.argv[2])
        if i.external_attr >> 16:
            os.chmod(p, (i.external_attr >> 16) & 0o7777)
        t = time.mktime(i.date_time + (0, 0, -1))
        os.utime(p, (t, t))' "$1" "$2"
}

# The grader's functions (common/grade/lib.sh), for unit tests.
grade_lib() {
    # shellcheck source=/dev/null
    source "$KIT_ROOT/common/grade/lib.sh"
}

# sandbox_or_skip: the grader's functions and its sandbox, set up as make
# check would (grading.conf loaded, a work folder), or the test skips.
sandbox_or_skip() {
    grade_lib
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    work="$BATS_TEST_TMPDIR/work"
    mkdir -p "$work" && chmod 711 "$work" "$BATS_TEST_TMPDIR"
    sandbox_probe_log="$work/.probe"
    # As root, the sandbox's user could not reach this test's folders.
    KIT_SANDBOX_USER=root
    sandbox_setup "$KIT_ROOT" "$KIT_BUILD" "$work" auto
    # shellcheck disable=SC2154 # sandbox and sandbox_why: set by sandbox_setup
    [ "$sandbox" = bwrap ] || skip "no sandbox here: $sandbox_why"
}

# worker_cmd FILE CMD...: the command a judge starts as its worker, as the
# grader writes it without a sandbox (NUL-separated), through the grader's
# last step (limits, every descriptor closed but the socket's); EXEC, where
# set, stands for that step's script.
worker_cmd() {
    local file=$1
    shift
    printf '%s\0' bash "${EXEC:-$KIT_ROOT/common/grade/sandbox-exec.sh}" 60 0 65536 0 3 -- "$@" >"$file"
}

# csv_column FILE ROW_MATCH COLUMN: a field of the first row of a CSV (all
# fields quoted, as the grader writes them) that contains ROW_MATCH.
csv_field_of() {
    grep -F -m1 "$2" "$1" | awk -v col="$3" '{
        n = 0; v = ""; q = 0
        for (i = 1; i <= length($0); i++) {
            c = substr($0, i, 1)
            if (q) { if (c == "\"" && substr($0, i + 1, 1) == "\"") { v = v c; i++ } else if (c == "\"") q = 0; else v = v c }
            else if (c == "\"") q = 1
            else if (c == ",") { if (++n == col) { print v; exit } v = "" }
            else v = v c
        }
        if (++n == col) print v
    }'
}

# The kit's labs, from the one list every script reads (kit_labs [KIT]).
# shellcheck source=common/lab/labs.sh
source "$KIT_ROOT/common/lab/labs.sh"
