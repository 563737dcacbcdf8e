#!/usr/bin/env bats
# make check: one student's copy. The grader's parts (text rules, object
# checks, the sandbox, the result channel, drawn sizes, verdicts, points,
# reports) run without a GPU; the verdicts that need a program to run need
# one. The fixtures' verdicts are asserted in 91-class-fixtures.bats.

setup() {
    load test_helper
    GRADE="$KIT_ROOT/common/grade/grade.sh"
    LABS=$(kit_labs | tr '\n' ' ')
    NLABS=$(kit_labs | wc -l)
}

@test "grade.sh: --help, and bad command lines exit 64 with the reason" {
    run bash "$GRADE" --help
    assert_success
    assert_output --partial "usage: grade.sh"
    assert_output --partial "--no-sandbox"
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
--origin|--origin needs a text
EOF
    run make -s -C "$KIT_ROOT" check LAB=42
    assert_failure
    assert_output --partial "no lab '42'"
}

@test "grading settings: every lab's lab.conf has its section, points, drawn runs, a metric and sanitize-args" {
    grade_lib
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    for lab in $LABS; do
        grep -qx "\[$lab\]" "$KIT_ROOT/common/lab/$lab/lab.conf" || fail "$lab: no [$lab] section in its lab.conf"
        [ "$(conf_get "$lab" points)" -gt 0 ] || fail "$lab: no points"
        [[ "$(conf_get "$lab" random-args)" == *"{seed}"* ]] || fail "$lab: random-args draw no seed"
        [[ "$(conf_get "$lab" sanitize-args)" == *"{seed}"* ]] || fail "$lab: no sanitize-args with a seed"
        metric=$(conf_get "$lab" metric)
        [ -n "$metric" ] || fail "$lab: no metric (none, or a timing key)"
        if [ "$metric" != none ]; then
            [[ $metric =~ ^time-.+-ms$ ]] || fail "$lab: metric $metric is not a time-ROW-ms key"
            [[ "$(conf_get "$lab" perf-args)" == *"{seed}"* ]] || fail "$lab: perf-args draw no seed"
        fi
    done
    awk -v f="$(conf_get all full-marks-within)" -v z="$(conf_get all no-speed-marks-beyond)" \
        -v s="$(conf_get all too-slow-beyond)" 'BEGIN { exit !(f >= 1 && z > f && s >= z) }' ||
        fail "need 1 <= full-marks-within < no-speed-marks-beyond <= too-slow-beyond"
    # Lab 05's speed where its kernels matter, with an option its harness has.
    [[ "$(conf_get 05-streams perf-args)" == *"--kernel-work auto"* ]] || fail "05-streams: perf-args without --kernel-work auto"
    grep -q '"--kernel-work"' "$KIT_ROOT/common/lab/05-streams/harness.cu" || fail "05-streams: no --kernel-work option"
    # The harness reports each row's checked timed runs, which the grade needs.
    grep -q '"bad-timed-runs-%s"' "$KIT_ROOT/common/lib/kit_row.h" || fail "kit_row.h: no bad-timed-runs-ROW key"
    grep -q '"wrong-elements-%s"' "$KIT_ROOT/common/lib/kit_row.h" || fail "kit_row.h: no wrong-elements-ROW key"
}

@test "grading settings: grading.conf's [LAB] overrides the lab's lab.conf; list keys add up" {
    local kit="$BATS_TEST_TMPDIR/kit"
    mkdir -p "$kit/common"
    cp -R "$KIT_ROOT/common/grade" "$KIT_ROOT/common/lab" "$kit/common/"
    printf '\n[05-streams]\npoints = 30\nmetric = none\nallow-symbols = my_extra_call\n' >>"$kit/common/grade/grading.conf"
    # shellcheck source=common/grade/lib.sh
    source "$kit/common/grade/lib.sh"
    conf_load "$kit/common/grade/grading.conf"
    assert_equal "$(conf_get 05-streams points)" 30
    assert_equal "$(conf_get 05-streams metric)" none
    assert_equal "$(conf_get 01-coalescing points)" 20
    assert_equal "$(conf_get 01-coalescing metric)" time-row-sums-coalesced-ms
    [[ " $(conf_get 05-streams allow-symbols) " == *" cudaMallocHost "* ]] || fail "the lab's own list is lost"
    [[ " $(conf_get 05-streams allow-symbols) " == *" my_extra_call "* ]] || fail "grading.conf's line is not added"
    [[ " $(conf_get 05-streams allow-symbols) " == *" __cudaLaunchKernel "* ]] || fail "[all]'s list is lost"
    # The labs' settings are those of the kit the grading.conf belongs to,
    # whichever kit's grader reads it (grade-class reads its copy of the kit).
    sed -i 's/^metric = .*/metric = none/' "$kit/common/lab/01-coalescing/lab.conf"
    # shellcheck source=common/grade/lib.sh
    source "$KIT_ROOT/common/grade/lib.sh"
    conf=()
    conf_load "$kit/common/grade/grading.conf"
    assert_equal "$(conf_get 01-coalescing metric)" none
    # A lab.conf the grader cannot read stops it, naming the file; so does
    # one that sets another lab's keys (a folder copied for a new lab).
    printf 'this is no setting\n' >"$kit/common/lab/01-coalescing/lab.conf"
    run conf_load "$kit/common/grade/grading.conf"
    assert_failure
    assert_output --partial "01-coalescing/lab.conf: cannot read this line"
    printf '[06-shared-memory]\nmetric = none\n' >"$kit/common/lab/01-coalescing/lab.conf"
    run conf_load "$kit/common/grade/grading.conf"
    assert_failure
    assert_output --partial "01-coalescing/lab.conf: a section [06-shared-memory] in lab 01-coalescing's settings"
}

@test "grading.conf: the timed runs' --focus reaches every lab whose speed is graded (its --help lists it)" {
    grade_lib
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    grep -q -- '--focus \$metric_row' "$KIT_ROOT/common/grade/grade.sh" || fail "grade.sh: timed runs without --focus"
    for lab in $LABS; do
        [ "$(conf_get "$lab" metric)" != none ] || continue
        run "$(ref_program "$lab")" --help
        assert_success
        assert_output --partial "--focus KEY"
    done
}

@test "text rules: the references and skeletons keep them; each trick is refused with its reason" {
    grade_lib
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    for lab in $LABS; do
        for side in labs solutions; do
            source_check "$KIT_ROOT/$side/$lab/${lab#*-}.cu" "$lab"
            [ -z "$rule_reason" ] || fail "$side/$lab:$rule_line: $rule_reason"
        done
    done
    f="$BATS_TEST_TMPDIR/t.cu"
    check() { printf '%b' "$1" >"$f"; source_check "$f" 01-coalescing; echo "$rule_line|$rule_reason"; }
    while IFS='|' read -r text want; do
        run check "$text"
        assert_output --partial "$want"
    done <<'EOF'
#define X 1\n|1|a preprocessor line
  #  include <stdlib.h>\n|1|a preprocessor line
#pragma unroll 4\nint x;\n|
%:define X 1\n|1|a digraph (%:)
int a<:2:>;\n|1|a digraph (<:)
int f(void) <% return 0; %>\n|1|a digraph (<%)
int x = 1'000;\n|1|a digit separator
const char *s = R"(x)";\n|1|a raw string literal
int c = u8'a';\n|1|a ' right after 'u8'
// hidden \\\nexit(0);\n|1|a backslash at the end of a line
int x; /* a\n */ int y = system("x");\n|2|uses 'system'
int x;\r int y;\n|1|a bare carriage return
int x;\r\n|
int x;\r|1|a bare carriage return
int x = ??-0;\n|1|a trigraph
/* never closed\n|1|a comment that never ends
const char *s = "/* not a comment */ exit";\n|
void f(void) { exit(1); }\n|1|uses 'exit'
void f(void) { std::exit(1); }\n|1|uses 'std'
template <class T> int t(T);\n|1|uses C++ 'template'
int x = kit_finish(1);\n|1|uses the kit's internal 'kit_finish'
void f(void) { __builtin_trap(); }\n|1|uses the reserved name '__builtin_trap'
void f(void) { asm("trap;"); }\n|1|uses C++ 'asm'
__attribute__((constructor)) void f(void) {}\n|1|uses C++ '__attribute__'
extern "C" int g(void);\n|1|uses C++ 'extern'
int f(void) { return cudaOccupancyMaxActiveBlocksPerMultiprocessor(0, 0, 0, 0); }\n|1|uses 'cudaOccupancyMaxActiveBlocksPerMultiprocessor'
}\n|1|a '}' that closes more
void f(void) {\n|1|the braces do not balance
EOF
}

@test "object checks: every reference's timed and counted objects keep the rules, as the build made them (what the kit's headers put in them included)" {
    grade_lib
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    local lab b d
    for lab in $(kit_labs); do
        for b in timed counted; do
            d="$BATS_TEST_TMPDIR/keep-$lab-$b"
            mkdir -p "$d"
            cp "$KIT_BUILD/solutions/$lab/$b.ptx" "$d/"
            object_check "$KIT_BUILD/solutions/$lab/$b.o" "$b" "$lab" "$d" "solutions/$lab/${lab#*-}.cu"
            [ -z "$obj_reason" ] || fail "$lab, $b build: $obj_reason"
        done
    done
    # Negative control: Lab 05's traced build without what the kit's copy
    # trace adds to it (allow-symbols-counted) is refused.
    conf[05-streams.allow-symbols-counted]=""
    conf[all.allow-symbols-counted]=""
    d="$BATS_TEST_TMPDIR/keep-05-again"
    mkdir -p "$d"
    cp "$KIT_BUILD/solutions/05-streams/counted.ptx" "$d/"
    object_check "$KIT_BUILD/solutions/05-streams/counted.o" counted 05-streams "$d" solutions/05-streams/streams.cu
    [[ $obj_reason == *"calls 'cud"*"which lab 05-streams does not allow"* ]] || fail "not refused: '$obj_reason'"
}

@test "object checks: code before main, names outside the file and unlisted calls are refused" {
    grade_lib
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    d="$BATS_TEST_TMPDIR/obj"
    build() { # NAME [NVCCFLAGS]: compiles $d/NAME.cu as the grader does, into $d/NAME/
        mkdir -p "$d/$1"
        make -s --no-print-directory -C "$KIT_ROOT" GRADED_LAB=01-coalescing STUDENT_SRC="$d/${3:-$1}.cu" \
            GRADED_DIR="$d/$1" ${2:+NVCCFLAGS="$2"} graded-objects >"$d/$1.log" 2>&1 || { cat "$d/$1.log"; return 1; }
    }
    mkdir -p "$d"
    cp "$KIT_ROOT/solutions/01-coalescing/coalescing.cu" "$d/ref.cu"
    # What the text rules let through, the objects show.
    { echo 'static int e = printf("early\\n");'; cat "$d/ref.cu"; } >"$d/init.cu"
    { cat "$d/ref.cu"; echo 'void reset(void) { cudaDeviceReset(); }'; } >"$d/call.cu"
    # A compiler that fortifies (Ubuntu's gcc does by default) calls
    # glibc's checked twins (__fprintf_chk): the same functions.
    local pids=() p
    build ref & pids+=($!)
    build init & pids+=($!)
    build call & pids+=($!)
    build fort "-O3 -Xcompiler -D_FORTIFY_SOURCE=2" ref & pids+=($!)
    for p in "${pids[@]}"; do wait "$p" || fail "a build failed (above)"; done
    object_check "$d/ref/timed.o" timed 01-coalescing "$d/ref/keep-timed" "$d/ref.cu"
    [ -z "$obj_reason" ] || fail "the reference: $obj_reason"
    object_check "$d/ref/counted.o" counted 01-coalescing "$d/ref/keep-counted" "$d/ref.cu"
    [ -z "$obj_reason" ] || fail "the reference's counting build: $obj_reason"
    nm -u "$d/fort/counted.o" | grep -q '__[a-z]*printf_chk' || fail "no checked printf in a fortified build"
    object_check "$d/fort/counted.o" counted 01-coalescing "$d/fort/keep-counted" "$d/ref.cu"
    [ -z "$obj_reason" ] || fail "the reference, fortified: $obj_reason"
    object_check "$d/init/timed.o" timed 01-coalescing "$d/init/keep-timed" "$d/init.cu"
    [[ $obj_reason == "runs code before main"* ]] || fail "an initialiser by a call: '$obj_reason'"
    object_check "$d/call/timed.o" timed 01-coalescing "$d/call/keep-timed" "$d/call.cu"
    [[ $obj_reason == "calls 'cudaDeviceReset', which lab 01-coalescing does not allow"* ]] || fail "unlisted: '$obj_reason'"
    # Inline assembly in the PTX of the student's own lines (the text rules
    # refuse asm first; the PTX check stands behind them).
    ptx="$d/call/keep-timed/x.ptx"
    cp "$(ls "$d"/call/keep-timed/*.ptx | head -n 1)" "$ptx.orig"
    rm -f "$d"/call/keep-timed/*.ptx
    fileno=$(sed -n 's/^[[:space:]]*\.file[[:space:]]\+\([0-9]\+\) "\([^"]*\)".*/\1 \2/p' "$ptx.orig" |
        awk -v src="$d/call.cu" '$2 == src { print $1; exit }')
    [ -n "$fileno" ] || fail "the PTX names no line of the student's file"
    { cat "$ptx.orig"; printf '\t.loc\t%s 3 1\n\t// begin inline asm\n\ttrap;\n\t// end inline asm\n' "$fileno"; } >"$ptx"
    object_check "$d/ref/timed.o" timed 01-coalescing "$d/call/keep-timed" "$d/call.cu"
    [[ $obj_reason == "holds inline assembly"* ]] || fail "asm in the PTX: '$obj_reason'"
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

@test "graded builds name the GPU: -arch=native becomes this machine's gencodes (nvcc sees no GPU in the sandbox)" {
    grade_lib
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    printf '#!/bin/sh\nprintf "9.0\\n8.6\\n9.0\\n12.0\\n"\n' >"$BATS_TEST_TMPDIR/bin/nvidia-smi"
    chmod +x "$BATS_TEST_TMPDIR/bin/nvidia-smi"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" run concrete_arch -arch=native
    assert_output "-gencode arch=compute_120,code=sm_120 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_90,code=sm_90"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" run concrete_arch -arch=sm_80
    assert_output "-arch=sm_80"
    printf '#!/bin/sh\nexit 9\n' >"$BATS_TEST_TMPDIR/bin/nvidia-smi"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" run concrete_arch -arch=native
    assert_output "-arch=native"
}

@test "points: full within the first factor, the speed share falling with log(ratio), the rest kept" {
    grade_lib
    [ "$(speed_points 0.9 20 0.5 1.25 3.0)" = 20 ]
    [ "$(speed_points 1.25 20 0.5 1.25 3.0)" = 20 ]
    [ "$(speed_points 3.0 20 0.5 1.25 3.0)" = 10 ]
    [ "$(speed_points 9 20 0.5 1.25 3.0)" = 10 ]
    mid=$(speed_points 1.9365 20 0.5 1.25 3.0)
    [ "$mid" = 15 ] || fail "halfway in log(ratio): $mid, not 15"
}

@test "timed pairs: two more pairs only where the first two pairs' ratio could still change the points" {
    grade_lib
    # Clear of every boundary by 10%: two pairs are enough.
    for r in 0.5 1.0 1.13 3.4 5 9.0 11.1 40; do
        speed_clear "$r" 1.25 3.0 10 0.1 || fail "$r x should be clear after two pairs"
    done
    # Near a boundary, or where the points still move with the ratio.
    for r in 1.14 1.25 1.3 2.0 2.8 3.0 3.29 9.1 10 10.9; do
        ! speed_clear "$r" 1.25 3.0 10 0.1 || fail "$r x should time two more pairs"
    done
    # The ratio of the fastest runs, as the grader takes it after each
    # two pairs: one slow run (a busy moment) does not move it.
    refs=(2.2 2.0) mine=(2.4 3.1)
    speed_ratio 4
    [ "$t_ref $t_mine $ratio" = "2.0 2.4 1.2000" ] || fail "fastest and ratio: $t_ref $t_mine $ratio"
    refs=(2.05 2.3) mine=(2.6 2.41)
    speed_ratio 2
    [ "$ratio" = 1.18 ] || fail "to 2 decimals: $ratio"
    refs=() mine=(1)
    speed_ratio 2
    [ -z "$ratio" ] || fail "no reference time, yet a ratio: $ratio"
    # perf-clear 0 only stops where the points cannot move at all.
    ! speed_clear 2.0 1.25 3.0 10 0 || fail "2.0x moves the points"
    # Wherever it stops, 10% either way gives the same points and verdict.
    for i in $(seq 1 100); do
        r=$(awk -v i="$i" 'BEGIN { printf "%.4f", 0.4 * exp(i * 0.036) }')
        speed_clear "$r" 1.25 3.0 10 0.1 || continue
        for q in $(awk -v r="$r" 'BEGIN { printf "%.6f %.6f", r / 1.1, r * 1.1 }'); do
            [ "$(speed_points "$q" 20 0.5 1.25 3.0)" = "$(speed_points "$r" 20 0.5 1.25 3.0)" ] ||
                fail "stopped at $r x, but $q x gives other points"
            [ "$(awk -v a="$q" 'BEGIN { print (a > 10) }')" = "$(awk -v a="$r" 'BEGIN { print (a > 10) }')" ] ||
                fail "stopped at $r x, but $q x has another verdict"
        done
    done
}

@test "a run's timed figure: the row's fastest verified repeat where the harness reports it, else its median; none where a timed run was wrong" {
    run bash -c '
        KIT_GRADE_LIB=1 source "$1/common/grade/grade.sh"
        metric=time-x-ms metric_row=x
        chan=([time-x-ms]=1.50 [time-x-min-ms]=1.10 [bad-timed-runs-x]=0 [wrong-elements-x]=0)
        echo "min: $(metric_of)"
        unset "chan[time-x-min-ms]"
        echo "median: $(metric_of)"
        chan[time-x-min-ms]=1.10 chan[bad-timed-runs-x]=1
        echo "bad run: [$(metric_of)]"
        chan[bad-timed-runs-x]=0 metric=bandwidth-x-gbs chan[bandwidth-x-gbs]=900
        echo "not a time: $(metric_of)"' _ "$KIT_ROOT"
    assert_success
    assert_line "min: 1.10"
    # Negative controls: no fastest repeat reported, a wrong timed run, a
    # metric that is no row's time.
    assert_line "median: 1.50"
    assert_line "bad run: []"
    assert_line "not a time: 900"
}

@test "timed pairs in the grader: two (ABBA) where the ratio is clear, four where not, FAIL far beyond; which ran first cancels out (the runs stood in for)" {
    # grade.sh's grade_speed itself, its runs replaced: the reference times
    # 1.00 ms, the student MINE ms; whichever runs second in a pair gains
    # GAIN (an order effect); the runs' order is recorded.
    run bash -c '
        KIT_GRADE_LIB=1 source "$1/common/grade/grade.sh"
        conf_load "$1/common/grade/grading.conf"
        grading_seed=5 metric=time-x-ms metric_row=x
        lab_setup() { lab=$1 ref=R prog=P max=20; }
        log() { :; }
        run_one() { n=$((n + 1)); order+=$2; }
        judged() { verdict=PASS; }
        metric_of() {
            local t=1.00 second=$((n % 2 == 0))
            [ "$who" = reference ] || t=$MINE
            awk -v t="$t" -v s="$second" -v g="$GAIN" "BEGIN { printf \"%.4f\", s ? t * (1 - g) : t }"
        }
        GAIN=0
        for MINE in 1.02 1.3 20; do
            n=0 order=
            grade_speed 01-coalescing
            echo "$MINE: $n runs, $verdict $points, $order"
        done
        # Second in a pair runs 8% faster: a single pair would give the
        # student 0.92x; ABBA gives both the same mean, 1.00x.
        GAIN=0.08 MINE=1.00 n=0 order=
        grade_speed 01-coalescing
        echo "order effect: $n runs, ratio $ratio"' _ "$KIT_ROOT"
    assert_success
    assert_line "1.02: 4 runs, PASS 20, RPPR"
    assert_line "1.3: 8 runs, PASS 19.6, RPPRRPPR"
    assert_line "20: 4 runs, FAIL 0, RPPR"
    assert_line "order effect: 4 runs, ratio 1.00"
}

@test "GPU lock: under CUDA MPS each graded run holds the GPU alone (one client's fault ends every client's work)" {
    grade_lib
    local d="$BATS_TEST_TMPDIR/mps"
    mkdir -p "$d"
    unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
    CUDA_MPS_PIPE_DIRECTORY=$d
    ! under_mps || fail "no MPS control pipe, no share asked for: not under MPS"
    : >"$d/control"
    under_mps || fail "an MPS control pipe: under MPS"
    rm "$d/control"
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 under_mps || fail "a share asked for: under MPS"
    # The grader's runs: shared by default, alone once MPS is seen.
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    [ "$gpu_run_mode" = -s ]
    [ "$(gpu_mode_for 01-coalescing)" = -s ]
    grep -q 'gpu_hold_logged "$(gpu_mode_for "$lab")"' "$KIT_ROOT/common/grade/grade.sh"
    grep -A2 '^ *if under_mps; then' "$KIT_ROOT/common/grade/grade.sh" | grep -q 'gpu_run_mode=-x'
    gpu_run_mode=-x
    [ "$(gpu_mode_for 01-coalescing)" = -x ]
}

@test "GPU lock: Labs 05 and 08's runs hold the GPU alone, checked runs too (their verdicts rest on times); the other labs' checked runs share it" {
    grade_lib
    conf_load "$KIT_ROOT/common/grade/grading.conf"
    local lab
    for lab in $(kit_labs "$KIT_ROOT"); do
        case $lab in
        05-streams | 08-multi-gpu)
            [ "$(gpu_mode_for "$lab")" = -x ] || fail "$lab: $(gpu_mode_for "$lab")" ;;
        *)
            [ "$(gpu_mode_for "$lab")" = -s ] || fail "$lab: $(gpu_mode_for "$lab")" ;;
        esac
    done
    # Where the harness judges overlap or scaling by times in a checked
    # run, the lab says so.
    grep -q 'host links carry' "$KIT_ROOT/common/lab/08-multi-gpu/harness.cu"
    grep -q 'copies ran beside kernels for only' "$KIT_ROOT/common/lab/05-streams/harness.cu"
}

# holder ROLE MODE [WAIT]: in the background, holds the lock of folder $d
# as MODE (gpu-hold.sh), writes ROLE's "got" or "gave up" with the time
# into $d/log, and keeps it until $d/ROLE.go exists (20 s at most).
holder() {
    (
        source "$KIT_ROOT/common/grade/gpu-hold.sh"
        gpu_hold_open "$d/gpu.lock" "$d/gpu.gate"
        if gpu_hold "$2" "${3:-}"; then echo "$1 got $(date +%s%N)" >>"$d/log"; else echo "$1 gave-up" >>"$d/log"; exit 0; fi
        for ((i = 0; i < 1000; i++)); do [ -e "$d/$1.go" ] && break; sleep 0.02; done
        echo "$1 let-go $(date +%s%N)" >>"$d/log"
    ) 3>&- &
}
# goes_alone ME OTHER: in the background, holds the lock of folder $d
# shared; once OTHER holds it shared too, goes alone for 0.3 s, then back to
# shared; each step in $d/log with the time.
goes_alone() {
    (
        source "$KIT_ROOT/common/grade/gpu-hold.sh"
        gpu_hold_open "$d/gpu.lock" "$d/gpu.gate"
        gpu_hold -s && echo "$1 shared" >>"$d/log"
        for ((i = 0; i < 500; i++)); do grep -q "$2 shared" "$d/log" && break; sleep 0.02; done
        gpu_hold -x 10 && echo "$1 alone $(date +%s%N)" >>"$d/log" && sleep 0.3 && echo "$1 done $(date +%s%N)" >>"$d/log"
        gpu_hold -s 10 && echo "$1 back $(date +%s%N)" >>"$d/log"
    ) 3>&- &
}
# wait_for_line TEXT: until $d/log holds TEXT (10 s at most).
wait_for_line() {
    local i
    for ((i = 0; i < 500; i++)); do grep -q "$1" "$d/log" 2>/dev/null && return 0; sleep 0.02; done
    fail "no '$1' in: $(cat "$d/log" 2>/dev/null)"
}

@test "GPU lock: a timing waits for the checks already running, none that come after; two holders that both want the GPU alone take turns" {
    d="$BATS_TEST_TMPDIR/locks"
    mkdir -p "$d"
    # Positive control: shared holders come in beside each other.
    holder a -s
    wait_for_line "a got"
    holder r0 -s 2
    wait_for_line "r0 got"
    touch "$d/r0.go"
    # A timing waits for a; meanwhile a new shared holder is kept out.
    holder w -x
    for ((i = 0; i < 250; i++)); do flock -n -s "$d/gpu.gate" true || break; sleep 0.02; done
    ! flock -n -s "$d/gpu.gate" true || fail "the timing's wait did not close the gate"
    holder r1 -s 1
    wait_for_line "r1 gave-up"
    ! grep -q "w got" "$d/log" || fail "the timing ran beside a: $(cat "$d/log")"
    touch "$d/a.go"
    wait_for_line "w got"
    holder r2 -s
    sleep 0.3
    ! grep -q "r2 got" "$d/log" || fail "a shared holder ran beside the timing"
    touch "$d/w.go"
    wait_for_line "r2 got"
    touch "$d/r2.go"
    wait

    # Two shared holders that both go alone: each in turn, neither stuck.
    rm -f "$d/log" "$d"/*.go
    goes_alone b c
    goes_alone c b
    wait
    run cat "$d/log"
    assert_line --regexp '^b alone '
    assert_line --regexp '^c alone '
    assert_line --regexp '^b back '
    assert_line --regexp '^c back '
    # Alone means alone: one "alone ... done" span ends before the other starts.
    awk '$2 == "alone" { s[$1] = $3 } $2 == "done" { e[$1] = $3 }
         END { exit !(e["b"] <= s["c"] || e["c"] <= s["b"]) }' "$d/log" || fail "both alone at once: $output"
}

@test "GPU lock: a test that holds the GPU shared lets a waiting timing go first between two of its commands" {
    d="$BATS_TEST_TMPDIR/locks"
    mkdir -p "$d"
    unset KIT_QUERY_CACHE
    export KIT_LOCK_DIR="$d" KIT_LOCK_LOG="$d/holds.log"
    kit_gpu_lock -s
    [ "$gpu_held" = -s ]
    local uuid key
    uuid=$(kit_query 2>/dev/null | sed -n 's/^uuid: //p')
    key=$(gpu_hold_key "${uuid:-gpu0}")
    # A timing elsewhere: it waits for this test's hold, closing the gate.
    (
        gpu_hold_forget
        gpu_hold_open "$d/gpu-$key.lock" "$d/gpu-$key.gate"
        gpu_hold -x 20 && echo "timed $(date +%s%N)" >>"$d/log"
    ) 3>&- &
    for ((i = 0; i < 250; i++)); do flock -n -s "$d/gpu-$key.gate" true || break; sleep 0.02; done
    ! flock -n -s "$d/gpu-$key.gate" true || fail "the timing's wait did not close the gate"
    # Negative control: Bats' own run goes on holding; the timing waits.
    kit_bats_run true
    sleep 0.3
    [ ! -e "$d/log" ] || fail "the timing ran beside a shared hold: $(cat "$d/log")"
    # The kit's run lets it go first, then holds the GPU shared again.
    run echo next
    assert_output next
    grep -q '^timed ' "$d/log" || fail "run did not let the waiting timing in"
    [ "$gpu_held" = -s ] || fail "the test no longer holds the GPU"
    wait
    run grep -c ' free \| hold-s ' "$d/holds.log"
    assert_output 3
}

# holder_of ROLE MODE WAIT KEY...: in the background, holds the locks of
# GPUs KEY... of folder $d as MODE, as a process that sees those GPUs does;
# writes ROLE's "got" or "gave-up" into $d/log and keeps them until
# $d/ROLE.go exists (20 s at most).
holder_of() {
    local role=$1 mode=$2 wait=$3
    shift 3
    (
        source "$KIT_ROOT/common/grade/gpu-hold.sh"
        gpu_hold_open_gpus "$d" "$@"
        if gpu_hold "$mode" "$wait"; then echo "$role got" >>"$d/log"; else echo "$role gave-up" >>"$d/log"; exit 0; fi
        for ((i = 0; i < 1000; i++)); do [ -e "$d/$role.go" ] && break; sleep 0.02; done
        gpu_hold -u
        echo "$role let-go" >>"$d/log"
    ) 3>&- &
}

@test "GPU lock: a holder of several GPUs keeps a timing off each of them, not off the others; two such holders take turns" {
    d="$BATS_TEST_TMPDIR/locks"
    mkdir -p "$d"
    run gpu_hold_keys GPU-b "GPU-a x" GPU-b
    assert_output "$(printf '%s\n' GPU-a_x GPU-b)"
    # A program that sees GPUs a and b (Lab 08's) holds both shared.
    holder_of both -s "" a b
    wait_for_line "both got"
    # A timing on b waits for it (negative control: a timing on c does not).
    holder_of on-b -x 1 b
    holder_of on-c -x 1 c
    wait_for_line "on-b gave-up"
    wait_for_line "on-c got"
    touch "$d/on-c.go"
    # Alone on both: a shared holder of a alone is kept out too.
    touch "$d/both.go"
    wait_for_line "both let-go"
    holder_of pair -x "" b a
    wait_for_line "pair got"
    holder_of on-a -s 1 a
    wait_for_line "on-a gave-up"
    # Two holders of both GPUs, named in opposite orders, alone: each in
    # turn, neither stuck.
    holder_of ab -x 10 a b
    holder_of ba -x 10 b a
    sleep 0.3
    ! grep -qE "^(ab|ba) got" "$d/log" || fail "a holder ran beside the pair: $(cat "$d/log")"
    touch "$d/pair.go"
    wait_for_line "pair let-go"
    for ((i = 0; i < 500; i++)); do grep -qE "^(ab|ba) got" "$d/log" && break; sleep 0.02; done
    touch "$d/ab.go" "$d/ba.go"
    wait
    run cat "$d/log"
    assert_line "ab got"
    assert_line "ba got"
    ! grep -qE '^(ab|ba) gave-up' "$d/log" || fail "a holder of both gave up: $output"

    # The grader's gpu_lock: every GPU it is given, held shared, each file
    # once; a timing on either waits (negative control: a third GPU's not).
    (
        grade_lib
        gpu_hold_forget
        export KIT_LOCK_DIR="$d/grader" KIT_LOCK_LOG=""
        gpu_lock 5 GPU-b GPU-a GPU-b || exit 1
        [ "${#gpu_lock_fds[@]}" = 2 ] || exit 2
        for g in GPU-a GPU-b; do
            ! flock -n -x "$KIT_LOCK_DIR/gpu-$g.lock" true || exit 3
        done
        : >>"$KIT_LOCK_DIR/gpu-GPU-c.lock"
        flock -n -x "$KIT_LOCK_DIR/gpu-GPU-c.lock" true || exit 4
        # A lock file that is a symbolic link is refused, and said.
        gpu_unlock
        gpu_hold_forget
        ln -s /dev/null "$KIT_LOCK_DIR/gpu-GPU-d.gate"
        ! gpu_lock 5 GPU-a GPU-d || exit 5
        [[ $gpu_lock_note == *"gpu-GPU-d.lock or .gate is a symbolic link"* ]] || exit 6
    ) 3>&-
}

@test "judge: the verdict comes from the result channel, never from stdout" {
    grade_lib
    d="$BATS_TEST_TMPDIR/run"
    mkdir -p "$d"
    KIT_RESULT_TOKEN=abc123
    j() { # RC CHANNEL STDOUT STDERR [SEED]
        printf '%b' "$2" >"$d/result"
        printf '%b' "$3" >"$d/out"
        printf '%b' "$4" >"$d/err"
        judge "$1" "$d" 30 64 01-coalescing "${5:-}"
        echo "$verdict|$what|$detail"
    }
    ok='lab: 01-coalescing\nseed: 5\nresult: PASS\nresult-token: abc123\n'
    run j 0 "$ok" "" "" 5
    assert_output "PASS||"
    # The program's own stdout says PASS: no channel, no pass.
    run j 0 "" "lab: 01-coalescing\nresult: PASS\n" ""
    assert_output "FAIL|exited before the harness gave its verdict|"
    run j 0 'lab: 01-coalescing\nresult: PASS\nresult-token: guessed\n' "" ""
    assert_output "FAIL|the kit's result channel holds lines the harness did not write|"
    run j 0 'lab: 01-coalescing\nresult: FAIL\nresult: PASS\nresult-token: abc123\n' "" ""
    assert_output --partial "FAIL|the kit's result channel holds lines"
    run j 0 'lab: 01-coalescing\nseed: 5\n' "" ""
    assert_output "FAIL|exited before the harness gave its verdict|"
    run j 1 'lab: 01-coalescing\nresult: FAIL\nresult-token: abc123\n' "" "coalescing: note: not judged\ncoalescing: C[3] = 1 but 2\n"
    assert_output "FAIL|wrong result|C[3] = 1 but 2"
    run j 124 "" "" ""
    assert_output "FAIL|timed out after 30 s|"
    run j 153 "" "" ""
    assert_output "FAIL|floods its output (more than 64 KiB)|"
    run j 0 "$ok" "$(head -c 70000 /dev/zero | tr '\0' x)" "" 5
    assert_output "FAIL|floods its output (more than 64 KiB)|"
    run j 139 "" "" ""
    assert_output "FAIL|crashed (signal SIGSEGV)|"
    # A worker that kills its judge (it can, as the same user without the
    # sandbox) leaves no verdict in the channel: FAIL, never a pass.
    run_seconds=2.50
    run j 137 'lab: 01-coalescing\nseed: 5\n' "" ""
    assert_output "FAIL|was killed (signal SIGKILL) after 2.50 s, before its 30 s limit|"
    # Killed at its limit, it timed out.
    run_seconds=30.02
    run j 137 "" "" ""
    assert_output "FAIL|timed out after 30 s|"
    unset run_seconds
    run j 1 "" "" "coalescing: CUDA error cudaErrorIllegalAddress: an illegal memory access was encountered\n"
    assert_output --partial "FAIL|out-of-bounds memory access|CUDA error cudaErrorIllegalAddress"
    run j 1 "" "" "coalescing: CUDA error cudaErrorLaunchFailure: unspecified launch failure\n"
    assert_output --partial "FAIL|crashed in a kernel|"
    # A SKIP is the grader's alone: a program that says it cannot run FAILs.
    run j 2 "" "" "coalescing: cannot run here: no GPU\n"
    assert_output --partial "FAIL|stopped, saying it cannot run here"
    run j 64 "" "" ""
    assert_output --partial "FAIL|refused the grader's options"
    run j 0 'lab: 03-divergence\nresult: PASS\nresult-token: abc123\n' "" ""
    assert_output "FAIL|the harness reported lab '03-divergence', not 01-coalescing|"
    run j 0 "$ok" "" "" 6
    assert_output "FAIL|did not run with the seed it was given (6)|"
    run j 3 "$ok" "" "" 5
    assert_output "FAIL|exited with status 3 after the harness's PASS|"
}

@test "sandbox: no network, private /tmp, the kit read-only, references and tests hidden, nothing outlives a run" {
    sandbox_or_skip
    rw="$BATS_TEST_TMPDIR/rw"
    mkdir -p "$rw" && chmod 777 "$rw"
    echo secret >"$BATS_TEST_TMPDIR/outside"
    # shellcheck disable=SC2016
    script='
        ls "$1/solutions" | grep -q . && echo "sees the references"
        ls "$2/solutions" 2>/dev/null | grep -q . && echo "sees the built references"
        ls "$1/tests" 2>/dev/null | grep -q . && echo "sees the tests"
        grep -q . "$1/common/lab/01-coalescing/test.bats" 2>/dev/null && echo "sees a lab'"'"'s tests"
        grep -q . "$1/common/lab/01-coalescing/harness.cu" || echo "cannot read the harness"
        cat "$3" 2>/dev/null && echo "sees the grader'"'"'s /tmp"
        touch "$1/Makefile" 2>/dev/null && echo "writes the kit"
        : >"$4/mine" || echo "cannot write its own folder"
        ip=$(cat /proc/net/dev 2>/dev/null | grep -cv "lo:")
        [ "$ip" -le 2 ] || echo "has a network"
        echo $$ >"$4/pid"
        sleep 3017 & echo $! >"$4/child"
        echo done'
    sandboxed 60 60 0 1024 0 - "$rw" "$rw" -- /bin/sh -c "$script" sh "$KIT_ROOT" "$KIT_BUILD" \
        "$BATS_TEST_TMPDIR/outside" "$rw" >"$rw/out" 2>&1
    run cat "$rw/out"
    assert_output "done"
    [ -f "$rw/mine" ] || fail "no file in its own folder"
    sleep 1
    run pgrep -f "^sleep 3017$"
    assert_failure
    # A hang is stopped, and a flood cut off.
    SECONDS=0
    sandboxed 2 10 0 1024 0 - "$rw" "$rw" -- sleep 30 >/dev/null 2>&1
    [ "$run_rc" = 124 ] || fail "sleep 30 in 2 s: exit status $run_rc, not 124"
    [ "$SECONDS" -lt 15 ] || fail "the hang was stopped after $SECONDS s"
    sandboxed 30 30 0 64 0 - "$rw" "$rw" -- sh -c 'yes flood >"$1/flood"' sh "$rw" >/dev/null 2>&1
    [ "$run_rc" = 153 ] || fail "a flood: exit status $run_rc, not 153 (SIGXFSZ)"
    [ "$(stat -c %s "$rw/flood")" -le 65536 ] || fail "the file grew past the cap"
}

@test "sandbox: only the result channel's descriptor reaches the program" {
    sandbox_or_skip
    rw="$BATS_TEST_TMPDIR/rw"
    mkdir -p "$rw" && chmod 777 "$rw"
    : >"$rw/result"
    exec {rfd}>"$rw/result" {other}>"$rw/other"
    KIT_RESULT_TOKEN=t0k3n
    # shellcheck disable=SC2016
    sandboxed 30 30 0 1024 0 "$rfd" "$rw" "$rw" -- bash -c \
        'ls /proc/self/fd; echo "fd=$KIT_RESULT_FD token=$KIT_RESULT_TOKEN"; echo written >&"$KIT_RESULT_FD"' \
        >"$rw/out" 2>&1
    exec {rfd}>&- {other}>&-
    run cat "$rw/out"
    assert_line "fd=$rfd token=t0k3n"
    refute_line "$other"
    run cat "$rw/result"
    assert_output written
}

@test "no sandbox: make check says so in the report; --require-sandbox refuses" {
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" preprocessor
    KIT_BWRAP=/nonexistent/bwrap run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" 01
    assert_failure 1
    assert_output --partial "Isolation: none: bubblewrap (bwrap) is not installed"
    KIT_BWRAP=/nonexistent/bwrap run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" --require-sandbox 01
    assert_failure 3
    assert_output --partial "grading without isolation must be asked for: --no-sandbox"
    run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" --no-sandbox 01
    assert_failure 1
    assert_output --partial "Isolation: none: turned off (--no-sandbox)"
}

@test "make check: verdicts, reasons and every report format, one line per lab" {
    kit_copy "$BATS_TEST_TMPDIR/kit"
    correctness_only "$BATS_TEST_TMPDIR/kit" 03-divergence
    submission "$BATS_TEST_TMPDIR/kit" skeleton
    rm -r "$BATS_TEST_TMPDIR/kit/labs/02-grouping"
    submission "$BATS_TEST_TMPDIR/kit" no-compile reference=03-divergence
    rep="$BATS_TEST_TMPDIR/report"
    run make -s -C "$BATS_TEST_TMPDIR/kit" check REPORT="$rep" SEED=11
    assert_failure
    assert_line --regexp "^01-coalescing +FAIL +0/20 +does not compile: labs/01-coalescing/coalescing.cu:[0-9]+: error"
    assert_line --regexp "^02-grouping +FAIL +0/20 +no labs/02-grouping/grouping.cu"
    assert_output --partial "grading seed 11"
    assert_output --partial "make check SEED=11"
    assert_output --partial "Isolation: "
    if kit_query --check >/dev/null; then
        assert_line --regexp "^03-divergence +PASS +20/20 "
    else
        assert_line --regexp "^03-divergence +SKIP +-/20 +no usable GPU: "
    fi

    # Each format read back with a parser (python3's csv, json, xml; Perl's
    # TAP::Parser through prove): one record per lab, the mode named.
    csv="$rep/grades.csv"
    run head -n 1 "$csv"
    assert_output '"student","student_id","lab","verdict","points","max_points","time_vs_reference","reason","grading_seed","gpu","isolation","mode"'
    [ "$(wc -l <"$csv")" = $((NLABS + 1)) ]
    run python3 - "$rep" <<'PY'
import csv, json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/grades.csv", encoding="utf-8", newline="")))
print("csv", len(rows), rows[0]["lab"], rows[0]["verdict"], rows[0]["grading_seed"], rows[0]["mode"])
r = json.load(open(d + "/results.json", encoding="utf-8"))
print("json", r["score"], len(r["tests"]), r["tests"][0]["name"], r["tests"][0]["status"], r["extra_data"]["mode"])
s = ET.parse(d + "/grades.xml").getroot().find("testsuite")
props = {p.get("name"): p.get("value") for p in s.find("properties")}
print("xml", s.get("tests"), [c.get("name") for c in s.findall("testcase")][0], props["mode"])
PY
    assert_success
    # The mode the report's header gives, in every format.
    mode=$(sed -n 's/^Mode: //p' "$rep/report.txt")
    [ -n "$mode" ] || fail "report.txt names no mode"
    assert_line "csv $NLABS 01-coalescing FAIL 11 $mode"
    assert_line --regexp "^json (0|20)(\.0)? $NLABS 01-coalescing failed "
    assert_line --partial "01-coalescing failed $mode"
    assert_line "xml $NLABS 01-coalescing $mode"
    run cat "$rep/grades.tap"
    assert_line "1..$NLABS"
    assert_line "# Mode: $mode"
    assert_line --regexp "^not ok 1 - 01-coalescing 0/20: does not compile"
    # The compiler's message holds quotes: escaped once, never "quot;.
    run cat "$rep/grades.xml"
    refute_output --partial '"quot;'
    refute_output --partial "'apos;"
    if command -v prove >/dev/null 2>&1; then
        run prove -e cat "$rep/grades.tap"
        assert_failure
        assert_output --regexp 'Failed tests?: +1-2'
    fi
    run cat "$rep/report.txt"
    assert_output --partial "Mode: $mode"
    assert_output --partial "Runs"
    assert_output --partial "== 01-coalescing"
}
