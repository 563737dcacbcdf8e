#!/usr/bin/env bats
# Lab 07: latency hiding, Little's law on the student's own GPU.

load ../../../tests/test_helper

LAB=07-latency

# A small, quick run: the sizes and steps where correctness shows, not speed.
QUICK="--steps 1000 --iterations 64 --reps 2"

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
}

# awk on two numbers: succeeds when the expression holds.
holds() { awk -v a="$1" -v b="$2" "BEGIN { exit !($3) }"; }

# --- CPU: the source, the build, the command line, the no-GPU path -----------

@test "07: the student's file holds only the student's code; the diff is the answers" {
    assert_student_file "$LAB" 15 40
}

@test "07: the fast-math part of the harness is built with --use_fast_math, the rest without" {
    # The objects named as make names them (relative to the kit: its path may hold a space).
    local b=${KIT_BUILD#"$KIT_ROOT"/}
    run make -s -C "$KIT_ROOT" --no-print-directory KIT_BUILD="$KIT_BUILD" -n -B "$b/harness/$LAB/harness-fastmath.o"
    assert_success
    assert_output --partial -- "--use_fast_math"
    assert_output --partial "common/lab/$LAB/harness-fastmath.cu"
    run make -s -C "$KIT_ROOT" --no-print-directory KIT_BUILD="$KIT_BUILD" -n -B "$b/harness/$LAB/harness.o"
    assert_success
    refute_output --partial -- "--use_fast_math"
}

@test "07: --help lists the options and exits 0" {
    for prog in "$REF" "$SKELETON"; do
        run "$prog" --help
        assert_success
        assert_output --partial "--size N"
        assert_output --partial "--steps S"
        assert_output --partial "--loads K"
        assert_output --partial "--iterations I"
    done
}

@test "07: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--size banana|is not a size
--size 0|out of range
--size 16|it must be from 32 to
--size|needs a value
--steps 99|from 100 to 200000
--steps 300000|from 100 to 200000
--steps many|from 100 to 200000
--loads 0|from 1 to 16
--loads 17|from 1 to 16
--loads 2.5|from 1 to 16
--iterations 0|from 1 to 1048576
CASES
}

# --- GPU: the reference at its default size ---------------------------------

# bats test_tags=gpu
@test "07: the reference passes at the default size, every sum checked" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    assert_line "littles-law-check: ok"
    assert_line "fast-math-differs: 1"
    assert_at_least "$(kv working-set-over-l2)" 8 "streamed array over L2"
    local key
    for key in l1 l2 dram; do
        assert_equal "$(kv "wrong-chase-runs-$key")" 0
    done
    for key in $(grep -o '^wrong-elements-[a-z0-9-]*' <<<"$output" | sed 's/^wrong-elements-//'); do
        assert_equal "$(kv "wrong-elements-$key")" 0
        assert_equal "$(kv "bad-timed-runs-$key")" 0
    done
    for key in stream occ-1 "occ-$(kv max-warps-per-sm)" ilp-1 ilp-16 fma-f32 fma-f64 expf sinf-fast-math; do
        assert_timed_by_policy "$key"
    done
}

# bats test_tags=gpu
@test "07: latency rises from L1 to L2 to DRAM, and cycles and ns agree with the clock" {
    require_gpu
    run_reference_once "$LAB"
    local l1 l2 dram clock
    l1=$(kv latency-l1-cycles) l2=$(kv latency-l2-cycles) dram=$(kv latency-dram-cycles) clock=$(kv sm-clock-ghz)
    holds "$l2" "$l1" "a >= $KIT_MIN_LATENCY_STEP * b" || fail "L2 $l2 cycles is not ${KIT_MIN_LATENCY_STEP}x L1 $l1"
    holds "$dram" "$l2" "a >= $KIT_MIN_LATENCY_STEP * b" ||
        fail "DRAM $dram cycles is not ${KIT_MIN_LATENCY_STEP}x L2 $l2"
    holds "$clock" 0 "a > 0.3 && a < 4" || fail "SM clock $clock GHz"
    holds "$(kv latency-dram-ns)" "$(awk -v c="$dram" -v f="$clock" 'BEGIN { print c / f }')" \
        "a > 0.95 * b && a < 1.05 * b" || fail "DRAM latency in ns does not match cycles / clock"
}

# bats test_tags=gpu,perf
@test "07: on Hopper, L2 and DRAM latency lie in the published ranges" {
    require_gpu
    case "$(gpu_cc)" in 9.*) ;; *) skip "not a Hopper GPU (compute capability $(gpu_cc))" ;; esac
    run_reference_once "$LAB"
    local l2 dram
    l2=$(kv latency-l2-cycles) dram=$(kv latency-dram-cycles)
    holds "$l2" 0 "a >= $KIT_HOPPER_L2_CYCLES_MIN && a <= $KIT_HOPPER_L2_CYCLES_MAX" ||
        fail "L2 latency $l2 cycles, outside $KIT_HOPPER_L2_CYCLES_MIN to $KIT_HOPPER_L2_CYCLES_MAX"
    holds "$dram" 0 "a >= $KIT_HOPPER_DRAM_CYCLES_MIN && a <= $KIT_HOPPER_DRAM_CYCLES_MAX" ||
        fail "DRAM latency $dram cycles, outside $KIT_HOPPER_DRAM_CYCLES_MIN to $KIT_HOPPER_DRAM_CYCLES_MAX"
}

# bats test_tags=gpu
@test "07: Little's law: the reference's figures, and the notes' Kepler slip corrected" {
    require_gpu
    run_reference_once "$LAB"
    assert_equal "$(kv little-warps-per-sm)" "$(kv expected-little-warps-per-sm)"
    assert_equal "$(kv little-loads-per-thread)" "$(kv expected-little-loads-per-thread)"
    # Fermi: 800 x 144 / 1.566 bytes; 36 warps per SM of 16. Kepler: 250 / 1.6.
    assert_line "little-fermi-bytes-in-flight: 73563.2"
    assert_line "little-fermi-warps-per-sm: 35.9195"
    assert_line "little-kepler-bytes-per-cycle: 156.2500"
    assert_line "little-kepler-bytes-in-flight: 125000.0"
    # The law on this GPU: latency (ns) x bandwidth (GB/s) bytes.
    holds "$(kv little-bytes-in-flight)" "$(awk -v l="$(kv latency-dram-ns)" -v b="$(kv bandwidth-gbs)" \
        'BEGIN { print l * b }')" "a > 0.97 * b && a < 1.03 * b" || fail "bytes in flight is not latency x bandwidth"
}

# skip_unless_sms_can_fill_memory: after a run of the reference, skips
# the test where Little's law, on the latency and bandwidth this run
# measured, needs more than KIT_MAX_KNEE_FACTOR times the warps an SM
# holds: there the SMs cannot keep the memory busy (a share of a large GPU
# under CUDA MPS keeps the whole GPU's memory), so the knee cannot come
# within that factor of the law. (A whole H100 needs 61 of its 64.)
skip_unless_sms_can_fill_memory() {
    local need max
    need=$(kv expected-little-warps-per-sm) max=$(kv max-warps-per-sm)
    awk -v n="$need" -v m="$max" -v f="$KIT_MAX_KNEE_FACTOR" 'BEGIN { exit !(n > f * m) }' || return 0
    skip "Little's law needs $need warps per SM here (latency x bandwidth, as measured), over ${KIT_MAX_KNEE_FACTOR}x the $max an SM holds: these $(kv sms) SMs cannot keep this memory busy"
}

# skip_unless_tlp_nears_bandwidth: skips where sum_tlp at full occupancy
# reached less than KIT_MIN_TLP_SHARE_FOR_ILP of part 2's streaming
# bandwidth, as this run measured both. There the SMs' own limits on loads
# in flight bind sum_tlp and sum_ilp alike, not the latency Little's law
# models (by the law alone, 16 loads at 8 warps, twice full occupancy's
# loads in flight, would do better), and ILP against TLP measures those
# limits. (2026-11-27: an H100 76%, an H200 59%, shares of an H100 under
# MPS 32% and 21%.)
skip_unless_tlp_nears_bandwidth() {
    local tlp bw
    tlp=$(kv bandwidth-tlp-full-gbs) bw=$(kv bandwidth-gbs)
    awk -v t="$tlp" -v b="$bw" -v f="$KIT_MIN_TLP_SHARE_FOR_ILP" 'BEGIN { exit !(t < f * b) }' || return 0
    skip "sum_tlp at full occupancy reached $tlp GB/s of the streaming kernel's $bw GB/s here, under $KIT_MIN_TLP_SHARE_FOR_ILP of it: the SMs' limits on loads in flight bind both it and sum_ilp, not the memory's latency"
}

# bats test_tags=gpu,perf
@test "07: bandwidth rises with the warps per SM and flattens near Little's law" {
    require_gpu
    run_reference_once "$LAB"
    local curve best=0 point w gbs
    curve=$(kv occupancy-curve)
    [ -n "$curve" ] || fail "no occupancy curve"
    for point in $curve; do
        w=${point%%:*} gbs=${point#*:}
        holds "$gbs" "$best" "a >= (1 - $KIT_MAX_OCCUPANCY_DIP) * b" ||
            fail "at $w warps per SM $gbs GB/s, below the $best GB/s of fewer warps ($curve)"
        best=$(awk -v a="$gbs" -v b="$best" 'BEGIN { print (a > b ? a : b) }')
    done
    # One warp per SM is latency-bound: far below the best.
    holds "$(kv bandwidth-occ-1-gbs)" "$best" "a < 0.5 * b" || fail "1 warp per SM already streams near the best"
    skip_unless_sms_can_fill_memory
    holds "$(kv knee-over-prediction)" "$KIT_MAX_KNEE_FACTOR" "a >= 1 / b && a <= b" ||
        fail "knee at $(kv occupancy-knee-warps) warps per SM, Little's law $(kv expected-little-warps-per-sm)"
}

# bats test_tags=gpu,perf
@test "07: ILP: ${KIT_MIN_ILP_FRACTION_OF_TLP} of full-occupancy TLP with 8 warps per SM" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv ilp-16-over-1)" 2 "16 loads per thread over 1"
    # The loads stay coalesced: one segment per request, each element once.
    assert_equal "$(kv segments-per-request-ilp-16)" 1.0000
    assert_equal "$(kv lanes-per-request-ilp-16)" 32.0000
    skip_unless_tlp_nears_bandwidth
    assert_at_least "$(kv ilp-best-over-tlp-full)" "$KIT_MIN_ILP_FRACTION_OF_TLP" "sum_ilp at 8 warps over sum_tlp full"
}

# bats test_tags=gpu,perf
@test "07: float against double, and intrinsics, beside the documented throughputs" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv speedup-sinf-intrinsic)" "$KIT_MIN_SINF_INTRINSIC_SPEEDUP" "__sinf over sinf"
    local documented
    documented=$(kv documented-ratio-f32-over-f64)
    [ -n "$documented" ] || skip "the kit has no documented FP64 rate for compute capability $(gpu_cc)"
    holds "$(kv ratio-f32-over-f64)" "$documented" "a >= b / $KIT_MAX_FP64_RATIO_FACTOR && a <= b * $KIT_MAX_FP64_RATIO_FACTOR" ||
        fail "float over double $(kv ratio-f32-over-f64), documented $documented"
}

# bats test_tags=gpu
@test "07: accuracy: expf and sinf within 2 ulp, the intrinsics and fast math lose more" {
    require_gpu
    run_reference_once "$LAB"
    holds "$(kv max-ulp-expf)" 2 "a <= b" || fail "expf: $(kv max-ulp-expf) ulp"
    holds "$(kv max-ulp-sinf)" 2 "a <= b" || fail "sinf: $(kv max-ulp-sinf) ulp"
    holds "$(kv max-ulp-expf-intrinsic)" "$(kv max-ulp-expf)" "a > b" || fail "__expf no worse than expf"
    holds "$(kv max-ulp-expf-fast-math)" "$(kv max-ulp-expf)" "a > b" || fail "fast-math expf no worse than expf"
    holds "$(kv max-ulp-sinf-fast-math)" "$(kv max-ulp-sinf)" "a > b" || fail "fast-math sinf no worse than sinf"
    # __sinf: an absolute bound on [-pi, pi], 2^-21.41.
    holds "$(kv max-abs-error-sinf-intrinsic)" 0 "a <= 3.6e-7" || fail "__sinf: $(kv max-abs-error-sinf-intrinsic)"
}

# bats test_tags=gpu
@test "07: default run takes seconds, not minutes" {
    require_gpu
    assert_default_run_quick "$LAB" 20
}

# --- GPU: the skeleton fails, other sizes and options -----------------------

# bats test_tags=gpu
@test "07: the skeleton as shipped fails, pointing at its TODOs" {
    require_gpu
    # shellcheck disable=SC2086
    run "$SKELETON" --size 1M $QUICK
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --regexp "littles_law for this GPU: bytes_per_cycle = 0 is not what Little's law gives from these facts .*TODO\(1\)"
    # The message gives the facts, not the answer.
    refute_output --regexp "littles_law for .*, but Little's law gives [0-9]"
    assert_output --regexp "sum_ilp, 1 load/thread: [0-9]+ of [0-9]+ elements are wrong; see TODO\(2\)"
    assert_line "littles-law-check: wrong"
}

# bats test_tags=gpu
@test "07: sizes that are no multiple of the warp or of 4 verify" {
    require_gpu
    for size in 1000003 33; do
        # shellcheck disable=SC2086
        run "$REF" --size "$size" $QUICK
        assert_success
        assert_line "size: $size"
        assert_line "result: PASS"
    done
}

# bats test_tags=gpu
@test "07: --seed is used and printed; --loads runs one K; --csv writes the table" {
    require_gpu
    local csv="$BATS_TEST_TMPDIR/table.csv"
    # shellcheck disable=SC2086
    run "$REF" --size 1M --seed 42 --loads 4 $QUICK --csv "$csv"
    assert_success
    assert_line "seed: 42"
    assert_line "reps-ilp-4: 2"
    refute_line --regexp "^reps-ilp-1:"
    assert_line "steps: 1000"
    run head -n 1 "$csv"
    assert_output "gpu,size,seed,part,row,warps_per_sm,loads_per_thread,time_ms,value,unit,correct"
    run grep -c ',ilp,sum_ilp,8,4,' "$csv"
    assert_output 1
    run grep -c ',latency,' "$csv"
    assert_output 6
    run sed -n 2p "$csv"
    assert_output --regexp '^"[^"]+",1048576,42,latency,l1,'
}
