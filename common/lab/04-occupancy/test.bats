#!/usr/bin/env bats
# Lab 04: occupancy and SM efficiency.

load ../../../tests/test_helper

LAB=04-occupancy

setup() {
    REF=$(ref_program "$LAB")
    SKELETON=$(lab_program "$LAB")
    UNIT="$KIT_BUILD/tests/kit-unit"
}

# A quick GPU run: small scenarios, a small matrix, two timed runs each.
QUICK=(--max-elements 2048 --iterations 200 --rounds 8 --size 1M --reps 2)

# --- CPU: the source, the command line, the calculator without a GPU ---------

@test "04: the student's file holds only the student's code; the diff is the answers" {
    assert_student_file "$LAB" 15 40
}

@test "04: --help lists the options and exits 0" {
    for prog in "$REF" "$SKELETON"; do
        run "$prog" --help
        assert_success
        for opt in "--calculator-only" "--model M" "--launch-illegal" "--iterations I" "--max-elements N" \
            "--rounds R" "--size N" "--seed S" "--csv FILE" "exit status"; do
            assert_output --partial "$opt"
        done
    done
}

@test "04: bad command lines are rejected with the reason and exit 64" {
    assert_usage_errors "$REF" <<'CASES'
--max-elements 100|must be a power of two
--max-elements 16|from 32 to
--iterations 0|from 1 to 10000000
--rounds 0|from 1 to 100000
--calculator-only=yes|takes no value
--model|needs a value
--model magic|not a calculator the kit knows
--calculator-only --csv t.csv|measures nothing to write
--size 2^40|out of range
--occupancy|unknown option
CASES
}

@test "04: --calculator-only needs no GPU: the reference agrees with the rules on every GPU of the table" {
    CUDA_VISIBLE_DEVICES="" run "$REF" --calculator-only --seed 11
    assert_success
    assert_line "result: PASS"
    assert_line "calculator: yours"
    assert_line "calculator-cpu-mismatches: 0"
    assert_line "throttle-cpu-mismatches: 0"
    assert_at_least "$(kv calculator-cpu-configurations)" 350 "configurations checked"
    assert_at_least "$(kv calculator-cpu-exposing)" 50 "configurations that expose a known mistake"
    assert_at_least "$(kv throttle-cpu-checks)" 30 "throttles checked"
    for gpu in "Tesla K40" "Tesla V100" "Tesla T4" "A100" "A40, RTX 3090" "L4, RTX 4090" "H100"; do
        assert_output --partial "$gpu"
    done
}

@test "04: the calculator gives the course's K40 table: 25%, 50%, then 100%" {
    run "$REF" --calculator-only
    assert_success
    assert_line "k40-occupancy-32: 0.2500"
    assert_line "k40-occupancy-64: 0.5000"
    for t in 128 256 512 1024; do
        assert_line "k40-occupancy-$t: 1.0000"
    done
}

@test "04: the drawn configurations follow --seed: the same seed draws the same, another seed others" {
    run "$REF" --calculator-only --seed 1
    local first=$(kv calculator-first-drawn)
    run "$REF" --calculator-only --seed 1
    assert_equal "$(kv calculator-first-drawn)" "$first"
    run "$REF" --calculator-only --seed 2
    [ "$(kv calculator-first-drawn)" != "$first" ] || fail "seeds 1 and 2 drew the same configuration: $first"
}

@test "04: the skeleton's calculator fails on the CPU, pointing at TODO(1), (2), (3), (5) and (6)" {
    run "$SKELETON" --calculator-only --seed 3
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "does not give the course's K40 table"
    assert_output --partial "blocks_by_warps in"
    for k in 1 2 3 5 6; do
        assert_output --partial "(TODO($k))"
    done
}

@test "04: TODO(6), scenario 2's block size: the reference and an honest alternative are right on GPUs of every size; blocks not in warps, the course's 16 SMs, or scenario 1 again fail" {
    local f
    for seed in 1 2; do
        run "$REF" --calculator-only --seed "$seed"
        assert_success
        assert_line "scenario2-cpu-mismatches: 0"
        [ "$(kv scenario2-cpu-checks)" -ge 500 ] || fail "only $(kv scenario2-cpu-checks) launches checked"
    done
    run "$KIT_BUILD/tests/fixtures/lab04/scenario2-no-warps" --calculator-only --seed 1
    assert_failure 1
    assert_output --partial "not a whole number of warps"
    run "$KIT_BUILD/tests/fixtures/lab04/scenario2-course-16" --calculator-only --seed 1
    assert_failure 1
    assert_output --partial "more blocks than SMs"
    run "$KIT_BUILD/tests/fixtures/lab04/scenario2-as-scenario1" --calculator-only --seed 1
    assert_failure 1
    assert_output --partial "more threads per block than one block per SM needs"
    # An honest alternative: blocks of 256 where 1,024-thread blocks
    # already outnumber the SMs.
    run "$KIT_BUILD/tests/fixtures/lab04/scenario2-256-beyond" --calculator-only --seed 1
    assert_success
    assert_line "scenario2-cpu-mismatches: 0"
    for f in scenario2-no-warps scenario2-course-16 scenario2-as-scenario1; do
        run "$KIT_BUILD/tests/fixtures/lab04/$f" --calculator-only --seed 2
        assert_failure 1
        assert_output --partial "(TODO(6))"
        refute_output --partial "(TODO(5))"
        refute_output --partial "(TODO(1))"
    done
}

# The negative controls: the kit's own calculator with one mistake each must
# fail, whatever the seed; the right one must pass.
@test "04: a calculator that counts registers per thread, or per warp unrounded, or in one pool, fails" {
    local seed model
    for seed in 1 2 3 4 5; do
        for model in per-thread-registers unrounded-registers one-register-pool; do
            run "$REF" --calculator-only --seed "$seed" --model "$model"
            assert_failure 1
            assert_output --partial "blocks_by_registers in"
            assert_output --partial "(TODO(2))"
        done
    done
}

@test "04: a calculator without the reserved shared memory, or with blocks not in whole warps, fails" {
    local seed
    for seed in 1 2 3; do
        run "$REF" --calculator-only --seed "$seed" --model no-reserved-shared
        assert_failure 1
        assert_output --partial "blocks_by_shared_memory in"
        run "$REF" --calculator-only --seed "$seed" --model threads-not-warps
        assert_failure 1
        assert_output --partial "blocks_by_warps in"
    done
    run "$REF" --calculator-only --seed 1 --model kit
    assert_success
}

@test "04: the lab file cannot call the runtime's occupancy functions" {
    local src="$BATS_TEST_TMPDIR/occupancy.cu"
    sed 's|^    int warps = (threads + g->warp_size - 1) / g->warp_size;$|    int warps = 0; cudaOccupancyMaxActiveBlocksPerMultiprocessor(\&warps, (const void *)heavy, threads, 0);|' \
        "$KIT_ROOT/solutions/$LAB/occupancy.cu" >"$src"
    grep -q cudaOccupancyMaxActiveBlocksPerMultiprocessor "$src" || fail "the test's edit did not apply"
    run make -s -C "$KIT_ROOT" graded GRADED_LAB="$LAB" STUDENT_SRC="$src" GRADED_DIR="$BATS_TEST_TMPDIR/bin"
    assert_failure
    assert_output --partial "occupancy_api_not_allowed_in_the_lab_file"
}

@test "04: the trace's analysis: SM efficiency, achieved occupancy and peak warps of known records" {
    # SM 0: two warps over [0, 100), one over [50, 150); SM 1: one over [0, 50);
    # a warp that never accessed memory.
    run "$UNIT" trace 2 4 0:0:100 0:0:100 0:50:150 1:0:50 -:0:0
    assert_success
    assert_line "warps: 4"
    assert_line "sms-used: 2"
    assert_line "span-ns: 150"
    assert_line "sm-efficiency: 0.6667"      # (150 + 50) / (2 x 150)
    assert_line "achieved-occupancy: 0.4375" # 350 warp-ns / (200 busy x 4)
    assert_line "peak-warps-per-sm: 3"
    # A warp that ends in the tick the next starts is not active with it.
    run "$UNIT" trace 1 64 0:0:100 0:100:200 0:200:300
    assert_line "sm-efficiency: 1.0000"
    assert_line "peak-warps-per-sm: 1"
    # Many SMs, many waves (the analysis spreads the SMs over the host's cores).
    run "$UNIT" trace-waves 132 64 16 40
    assert_line "warps: 84480"
    assert_line "sms-used: 132"
    assert_line "sm-efficiency: 1.0000"
    assert_line "achieved-occupancy: 0.2500"
    assert_line "peak-warps-per-sm: 16"
}

# --- GPU: the reference at its defaults -----------------------------------------

# bats test_tags=gpu
@test "04: the reference passes: calculator = rules = runtime, every element of every run right" {
    require_gpu
    run_reference_once "$LAB"
    assert_success
    assert_line "result: PASS"
    assert_line "calculator-cpu-mismatches: 0"
    assert_line "calculator-gpu-mismatches: 0"
    assert_line "kit-model-gpu-mismatches: 0"
    assert_at_least "$(kv calculator-gpu-configurations)" 500 "configurations checked on the GPU"
    assert_at_least "$(kv calculator-gpu-exposing)" 10 "GPU configurations that expose a known mistake"
    local key
    for key in $(grep -oE '^wrong-elements-[a-z0-9x-]+' <<<"$output" | sed 's/^wrong-elements-//'); do
        assert_equal "$(kv "wrong-elements-$key")" 0
        assert_equal "$(kv "bad-timed-runs-$key")" 0
    done
    assert_at_least "$(grep -c '^wrong-elements-' <<<"$output")" 40 "rows measured"
}

# bats test_tags=gpu
@test "04: one block keeps one SM busy: SM efficiency 1/SMs" {
    require_gpu
    run_reference_once "$LAB"
    local sms=$(kv sms)
    assert_close "$(kv s1-32-sm-efficiency)" "$(awk -v s="$sms" 'BEGIN { print 1 / s }')" 0.01 \
        "SM efficiency of one block"
    assert_equal "$(kv s1-32-blocks)" 1
}

# bats test_tags=gpu
@test "04: one block of 1024 threads achieves at most its share of the SM's warps, and trails it" {
    require_gpu
    run_reference_once "$LAB"
    # Scenario 1 at 1,024 elements: one block of 32 warps on one SM. Its
    # warps are all the SM holds of it; those on the cheap paths finish early.
    local share=$(awk -v w="$(kv max-warps-per-sm)" 'BEGIN { printf "%.4f", 32 / w }')
    assert_at_least "$share" "$(kv s1-1024-achieved)" "achieved occupancy against 32 warps of $(kv max-warps-per-sm)"
    assert_at_least "$(kv s1-1024-achieved)" "$(awk -v s="$share" 'BEGIN { print 0.5 * s }')" \
        "achieved occupancy of one block of 1024"
    assert_equal "$(kv s1-1024-peak-warps-per-sm)" 32
}

# bats test_tags=gpu,perf
@test "04: scenario 2 beats scenario 1 at 1,024 and 2,048 elements, with lower occupancy" {
    require_gpu
    run_reference_once "$LAB"
    local n
    for n in 1024 2048; do
        local t1=$(kv "time-s1-$n-ms") t2=$(kv "time-s2-$n-ms")
        assert_at_least "$(awk -v a="$t1" -v b="$t2" 'BEGIN { print a / b }')" \
            "$KIT_MIN_SCENARIO2_SPEEDUP" "scenario 1 over scenario 2 at $n"
        assert_at_least "$(kv "s2-$n-sm-efficiency")" "$(kv "s1-$n-sm-efficiency")" \
            "scenario 2's SM efficiency at $n"
    done
    assert_at_least "$(kv s1-1024-theoretical)" "$(kv s2-1024-theoretical)" "scenario 1's occupancy"
}

# bats test_tags=gpu,perf
@test "04: TODO(6) measured: the reference's block size is as fast as the fastest at 1,024 elements; scenario 1's is not" {
    require_gpu_alone
    run_reference_once "$LAB"
    local ratio limit
    ratio=$(kv scenario2-choice-over-fastest) limit=$(kv scenario2-choice-limit)
    [ -n "$ratio" ] || fail "no scenario2-choice-over-fastest line"
    assert_line "scenario2-choice-compared: yes"
    assert_line "scenario2-choice-within-limit: yes"
    assert_at_least "$limit" "$ratio" "the limit over the reference's choice against the fastest block size"
    assert_equal "$(kv block-sizes-n)" 1024
    local t
    for t in 32 64 128 256 512 1024; do
        [ -n "$(kv "time-b1024-$t-ms")" ] || fail "blocks of $t not timed"
    done
    # The negative control: scenario 1's 1,024-thread block, timed.
    run "$KIT_BUILD/tests/fixtures/lab04/scenario2-as-scenario1" --max-elements 1024 --size 1M --rounds 8
    assert_failure 1
    assert_output --regexp "scenario 2 at n = 1024: your blocks of 1024 threads took [0-9.]+ ms, [0-9.]+x the fastest"
    assert_output --partial "(TODO(6))"
    assert_line "scenario2-choice-within-limit: no"
    # Under compute-sanitizer times mean nothing: not judged on them.
    KIT_UNDER_SANITIZER=memcheck run "$KIT_BUILD/tests/fixtures/lab04/scenario2-as-scenario1" --max-elements 1024 \
        --size 1M --rounds 8
    assert_line "scenario2-choice-compared: under compute-sanitizer, times mean nothing"
    refute_output --partial "your blocks of 1024 threads took"
}

# bats test_tags=gpu,perf
@test "04: a partial last wave: one block more takes at least ${KIT_MIN_PARTIAL_WAVE_SLOWDOWN}x longer" {
    require_gpu
    run_reference_once "$LAB"
    assert_at_least "$(kv wave-slowdown)" "$KIT_MIN_PARTIAL_WAVE_SLOWDOWN" "partial wave slowdown"
    assert_at_least "$(kv wave-full-sm-efficiency)" "$(kv wave-plus-one-sm-efficiency)" \
        "SM efficiency of the full wave against one block more"
}

# bats test_tags=gpu
@test "04: 2D shapes: the book's 15, a 16-wide block touches 2 segments per request, 4 sectors as 32-wide" {
    require_gpu
    run_reference_once "$LAB"
    local s
    for s in 32x32 32x16 16x32 16x16 64x2 64x4 64x8 128x1 128x2 128x4 128x8 256x1 256x2 256x4; do
        assert_line "shape-$s-valid: yes"
        # Traced on the counting copy: at most that copy's theoretical occupancy.
        assert_at_least "$(kv "shape-$s-counted-theoretical")" "$(kv "shape-$s-achieved")" "achieved occupancy of ($s)"
    done
    assert_equal "$(kv shape-32x32-segments-per-request)" 1.0000
    assert_equal "$(kv shape-128x1-segments-per-request)" 1.0000
    assert_equal "$(kv shape-16x16-segments-per-request)" 2.0000
    assert_equal "$(kv shape-32x32-sectors-per-request)" 4.0000
    assert_equal "$(kv shape-16x16-sectors-per-request)" 4.0000
    # (256, 8) is 2048 threads: not launched, and said why.
    assert_line "shape-256x8-valid: no"
    assert_output --partial "not launched: 2048 threads per block, at most 1024"
}

# bats test_tags=gpu
@test "04: heavy_bounded holds 32 warps per SM with the most registers that allows; the calculator predicted both" {
    require_gpu
    run_reference_once "$LAB"
    local target=$(kv heavy-target-blocks-per-sm)
    assert_equal "$target" 4
    assert_equal "$(kv heavy-bounded-blocks-per-sm)" "$target"
    [ "$(kv heavy-blocks-per-sm)" -lt "$target" ] || fail "heavy alone already reaches the target: nothing to do"
    assert_equal "$(kv heavy-predicted-blocks)" "$(kv heavy-blocks-per-sm)"
    assert_equal "$(kv heavy-bounded-predicted-blocks)" "$(kv heavy-bounded-blocks-per-sm)"
    assert_equal "$(kv heavy-bounded-registers)" 64
    assert_at_least "$(kv heavy-bounded-counted-theoretical)" "$(kv heavy-bounded-achieved)" \
        "heavy_bounded's achieved occupancy"
}

# bats test_tags=gpu,perf
@test "04: the throttle holds each target, the trace never sees more warps, and the fewest are slower" {
    require_gpu
    run_reference_once "$LAB"
    local full=$(kv throttle-unthrottled-blocks-per-sm) k
    for ((k = full; k >= 1; k /= 2)); do
        [ "$(kv "throttle-$k-blocks-per-sm")" -le "$k" ] || fail "throttle $k: $(kv "throttle-$k-blocks-per-sm") blocks per SM"
        [ "$(kv "throttle-$k-peak-warps-per-sm")" -le $((4 * k)) ] ||
            fail "throttle $k: the trace saw $(kv "throttle-$k-peak-warps-per-sm") warps at once on an SM"
        assert_equal "$(kv "throttle-$k-predicted-blocks")" "$(kv "throttle-$k-blocks-per-sm")"
    done
    assert_equal "$(kv throttle-1-blocks-per-sm)" 1
    assert_at_least "$(kv throttle-slowdown)" "$KIT_MIN_THROTTLE_SLOWDOWN" "one block per SM against all"
}

# bats test_tags=gpu
@test "04: default run takes seconds, not minutes" {
    require_gpu
    assert_default_run_quick "$LAB" 20
}

# --- GPU: the skeleton, the negative controls, other options ---------------------

# bats test_tags=gpu
@test "04: the skeleton as shipped fails on the GPU, pointing at its TODOs" {
    require_gpu
    run "$SKELETON" "${QUICK[@]}"
    assert_failure 1
    assert_line "result: FAIL"
    assert_output --partial "disagrees with cudaOccupancyMaxActiveBlocksPerMultiprocessor"
    assert_output --partial "heavy_bounded: "
    assert_output --partial "(TODO(4))"
    assert_output --partial "shared_memory_for_blocks("
    assert_output --partial "(TODO(5))"
}

# bats test_tags=gpu
@test "04: on the GPU, a calculator with one register pool disagrees with the runtime" {
    require_gpu
    run "$REF" "${QUICK[@]}" --model one-register-pool
    assert_failure 1
    assert_output --partial "disagrees with cudaOccupancyMaxActiveBlocksPerMultiprocessor"
    [ "$(kv calculator-gpu-mismatches)" -gt 0 ] || fail "no disagreement on the GPU"
    assert_line "kit-model-gpu-mismatches: 0"
}

# bats test_tags=gpu
@test "04: --launch-illegal launches (256,8) as the book does and reports the runtime's error" {
    require_gpu
    run "$REF" "${QUICK[@]}" --launch-illegal
    assert_success
    assert_output --regexp "cudaError[A-Za-z]+: 2048 threads per block, at most 1024"
    assert_line "result: PASS"
}

# bats test_tags=gpu
@test "04: odd matrix sides verify; --seed is used; --csv writes the table" {
    require_gpu
    local csv="$BATS_TEST_TMPDIR/t.csv"
    run "$REF" "${QUICK[@]}" --size 1000003 --seed 42 --csv "$csv"
    assert_success
    assert_line "seed: 42"
    assert_line "matrix-side: 1000"
    run head -n 1 "$csv"
    assert_output "gpu,size,seed,part,row,threads,blocks,blocks_per_sm,theoretical,achieved,sm_efficiency,time_ms,correct"
    run grep -c ',42,4,shape-' "$csv"
    assert_output 14
}
