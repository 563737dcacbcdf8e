#!/usr/bin/env bash
# make check: grades the labs in labs/ of this copy of the kit.
#
# The grade never rests on code the student could have edited:
#   - the program graded is the kit's own copy of the lab (its harness:
#     data, verification, timing, report) with the student's marked
#     regions spliced in; edits outside the regions are reported, not used;
#   - regions may not reach around the harness (preprocessor, process
#     control, I/O other than printf, the kit's internals): see forbidden
#     in common/grade/grading.conf;
#   - it runs at sizes and seeds drawn for this grading (printed, so that a
#     grade can be repeated with --seed) besides the defaults, under a time
#     limit and an output cap, and its exit status and last line must agree;
#   - its speed is compared with the kit's reference on the same GPU in the
#     same grading, median of runs taken in turn.
#
# Exit status: 0 every lab passed, 1 a lab failed, 2 nothing failed but a
# lab could not be graded here (no GPU), 64 bad command line.
#
# Tests source this file for its functions (KIT_GRADE_LIB=1).
set -uo pipefail

kit_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

usage() {
    cat <<'EOF'
usage: grade.sh [options] [lab ...]

Grades each lab of labs/ (all of them, or those named: 01-coalescing or 01)
and prints PASS, FAIL with the first reason, or SKIP with the reason, the
points of each lab and the total. `make check` runs it.

options:
  --seed S          grading seed: repeats an earlier grading's sizes and seeds
  --sanitize        also run each lab once under compute-sanitizer (memcheck)
  --report DIR      write report.txt, grades.csv, grades.tap and grades.xml there
  --student NAME    the name in the CSV rows (default: the user's name)
  --conf FILE       grading settings (default: common/grade/grading.conf)
  --reference-build DIR
                    where the references and tools are built (default: build)
  --help            print this help and exit

exit status: 0 all passed, 1 a lab failed, 2 a lab could not be graded here,
64 bad command line.
EOF
}

die_usage() {
    echo "grade.sh: $*" >&2
    echo "grade.sh: see grade.sh --help" >&2
    exit 64
}

# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------

declare -gA conf=()

# Reads a grading.conf into conf[section.key].
conf_load() {
    local file=$1 line section=all key value
    [ -r "$file" ] || { echo "grade.sh: cannot read $file" >&2; return 1; }
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%%#*}
        [[ $line =~ ^[[:space:]]*$ ]] && continue
        if [[ $line =~ ^[[:space:]]*\[([A-Za-z0-9_-]+)\][[:space:]]*$ ]]; then
            section=${BASH_REMATCH[1]}
        elif [[ $line =~ ^[[:space:]]*([a-z0-9-]+)[[:space:]]*=[[:space:]]*(.*)$ ]]; then
            key=${BASH_REMATCH[1]}
            value=${BASH_REMATCH[2]%"${BASH_REMATCH[2]##*[![:space:]]}"}
            # Lists grow with each line; any other key takes its last value.
            if [[ $key == forbidden || $key == kit-names ]] && [ -n "${conf[$section.$key]:-}" ]; then
                conf[$section.$key]+=" $value"
            else
                conf[$section.$key]=$value
            fi
        else
            echo "grade.sh: $file: cannot read this line: $line" >&2
            return 1
        fi
    done <"$file"
}

# conf_get LAB KEY: the lab's value, else the [all] value, else empty.
conf_get() {
    if [ -n "${conf[$1.$2]+set}" ]; then
        printf '%s' "${conf[$1.$2]}"
    else
        printf '%s' "${conf[all.$2]:-}"
    fi
}

# ---------------------------------------------------------------------------
# Drawing sizes and seeds: a 64-bit LCG, so that a grading seed repeats them
# ---------------------------------------------------------------------------

rng_state=1
rng_seed() { rng_state=$1; }
rng_next() { # REPLY: 31 random bits
    rng_state=$((rng_state * 6364136223846793005 + 1442695040888963407))
    REPLY=$(((rng_state >> 33) & 0x7fffffff))
}
rng_between() { # LO HI -> REPLY
    rng_next
    REPLY=$(($1 + REPLY % ($2 - $1 + 1)))
}

# expand_args TEMPLATE: sets drawn to the template with its placeholders
# drawn. (Not for $(...): the draws must advance this shell's stream.)
expand_args() {
    local word out=() lo hi k
    for word in $1; do
        if [[ $word =~ ^\{seed\}$ ]]; then
            rng_between 1 2147483647
            word=$REPLY
        elif [[ $word =~ ^\{(size|int|pow2):([0-9]+):([0-9]+)\}$ ]]; then
            lo=${BASH_REMATCH[2]} hi=${BASH_REMATCH[3]}
            case ${BASH_REMATCH[1]} in
            size) rng_between "$lo" "$hi"; word=$((REPLY | 1)) ;;
            int) rng_between "$lo" "$hi"; word=$REPLY ;;
            pow2)
                k=0
                while ((1 << (k + 1) <= hi)); do k=$((k + 1)); done
                lo=$(awk -v l="$lo" 'BEGIN { k = 0; while (2 ^ k < l) k++; print k }')
                rng_between "$lo" "$k"
                word=$((1 << REPLY)) ;;
            esac
        fi
        out+=("$word")
    done
    drawn="${out[*]}"
}

# ---------------------------------------------------------------------------
# Student regions
# ---------------------------------------------------------------------------

# region_numbers FILE: the k of each "BEGIN: TODO(k)" marker, in order.
region_numbers() {
    sed -n 's/.*KIT STUDENT REGION BEGIN: TODO(\([0-9]*\)).*/\1/p' "$1"
}

# regions_sound FILE K...: the markers of regions K... are there, in order,
# each BEGIN closed by its END before the next opens. Prints the first
# region that is not, and fails.
regions_sound() {
    local file=$1
    shift
    awk -v want="$*" '
        BEGIN { n = split(want, w, " "); i = 1 }
        /KIT STUDENT REGION BEGIN: TODO\(/ {
            k = $0; sub(/.*TODO\(/, "", k); sub(/\).*/, "", k)
            if (open != "" || i > n || k != w[i]) { bad = (i <= n ? w[i] : k); exit }
            open = k; next
        }
        /KIT STUDENT REGION END: TODO\(/ {
            k = $0; sub(/.*TODO\(/, "", k); sub(/\).*/, "", k)
            if (k != open) { bad = (open != "" ? open : k); exit }
            open = ""; i++
        }
        END {
            if (bad == "" && open != "") bad = open
            if (bad == "" && i <= n) bad = w[i]
            if (bad != "") { print bad; exit 1 }
        }' "$file"
}

# region_text FILE K: the lines inside region K.
region_text() {
    awk -v k="$2" '/KIT STUDENT REGION BEGIN: TODO\(/ { inside = index($0, "TODO(" k ")") > 0; next }
                   /KIT STUDENT REGION END: TODO\(/ { inside = 0 }
                   inside' "$1"
}

# outside_regions FILE: the file with each region's inside cut out.
outside_regions() {
    awk '/KIT STUDENT REGION BEGIN: TODO\(/ { print; inside = 1; next }
         /KIT STUDENT REGION END: TODO\(/ { inside = 0 }
         !inside' "$1"
}

# splice TEMPLATE STUDENT SHOWN_AS: the template with the inside of each of
# its regions taken from STUDENT. #line directives make the compiler name
# the student's file and lines for what is the student's.
splice() {
    awk -v student="$2" -v shown="$3" -v harness="$1" '
        BEGIN {
            while ((getline line < student) > 0) {
                ln++
                if (line ~ /KIT STUDENT REGION BEGIN: TODO\(/) {
                    k = line; sub(/.*TODO\(/, "", k); sub(/\).*/, "", k)
                    cur = k; start[k] = ln + 1; text[k] = ""; continue
                }
                if (line ~ /KIT STUDENT REGION END: TODO\(/) { cur = ""; continue }
                if (cur != "") text[cur] = text[cur] line "\n"
            }
        }
        /KIT STUDENT REGION BEGIN: TODO\(/ {
            print
            k = $0; sub(/.*TODO\(/, "", k); sub(/\).*/, "", k)
            printf "#line %d \"%s\"\n%s", start[k], shown, text[k]
            skipping = 1; next
        }
        /KIT STUDENT REGION END: TODO\(/ {
            printf "#line %d \"%s\"\n", FNR, harness
            skipping = 0
        }
        !skipping' "$1"
}

# code_only: C source on stdin with comments, string and character
# literals blanked (lines kept), for the region rules.
code_only() {
    awk '
        {
            out = ""; n = length($0); i = 1
            while (i <= n) {
                c = substr($0, i, 1); d = substr($0, i, 2)
                if (incomment) {
                    if (d == "*/") { incomment = 0; i += 2 } else i++
                    continue
                }
                if (d == "/*") { incomment = 1; out = out " "; i += 2; continue }
                if (d == "//") break
                if (c == "\"" || c == "\047") {
                    q = c; i++
                    while (i <= n && substr($0, i, 1) != q) i += (substr($0, i, 1) == "\\") ? 2 : 1
                    i++; out = out q q; continue
                }
                out = out c; i++
            }
            print out
        }'
}

# region_rule_violation TEXT ALLOWED_KIT_NAMES FORBIDDEN: the first rule
# the region text breaks, in words; nothing when it keeps them all.
region_rule_violation() {
    local code=$1 allowed=" $2 " forbidden=" $3 " line word
    while IFS= read -r line; do
        if [[ $line =~ ^[[:space:]]*# ]] || [[ $line =~ ^[[:space:]]*%: ]]; then
            [[ $line =~ ^[[:space:]]*#[[:space:]]*pragma[[:space:]]+unroll([[:space:]]+[0-9]+)?[[:space:]]*$ ]] ||
                { echo "uses the preprocessor (${line#"${line%%[![:space:]]*}"})"; return; }
        fi
    done <<<"$code"
    for word in $(grep -oE '[A-Za-z_][A-Za-z0-9_]*' <<<"$code" | sort -u); do
        case $word in
        template | operator | namespace | using | typeid | decltype | consteval)
            echo "uses C++ '$word'"
            return ;;
        esac
        if [[ $forbidden == *" $word "* ]]; then
            echo "uses '$word'"
            return
        fi
        if [[ $word =~ ^(kit_|KIT_) ]] && [[ $allowed != *" $word "* ]]; then
            echo "uses the kit's internal '$word'"
            return
        fi
    done
}

# kit_names FILE...: the kit_ and KIT_ names the regions of FILE... use.
kit_names() {
    local f k
    for f in "$@"; do
        for k in $(region_numbers "$f"); do
            region_text "$f" "$k" | code_only
        done
    done | grep -oE '\b(kit|KIT)_[A-Za-z0-9_]*' | sort -u | tr '\n' ' '
}

# ---------------------------------------------------------------------------
# Running a graded program
# ---------------------------------------------------------------------------

# run_capped OUT ERR LIMIT_S CAP_KIB CMD...: runs CMD with a time limit and
# a cap on each output file; sets run_rc (124 timed out).
run_capped() {
    local out=$1 err=$2 limit=$3 cap=$4
    shift 4
    run_rc=0
    (
        ulimit -c 0
        ulimit -f "$cap"
        exec timeout -k 10 "$limit" "$@"
    ) >"$out" 2>"$err" </dev/null || run_rc=$?
}

# judge_run RC OUT ERR CAP_KIB LIMIT_S LAB [SEED]: the verdict (PASS, FAIL,
# SKIP) of a finished run; for the others, what went wrong (what) and the
# program's own first words about it (detail).
judge_run() {
    local rc=$1 out=$2 err=$3 cap=$4 limit=$5 lab=$6 seed=${7:-} results last
    verdict=FAIL what=""
    detail=$(grep -v -m1 ': note: ' "$err" | sed -E 's/^[a-z0-9_-]+: //' | cut -c1-240)
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        what="timed out after ${limit} s" detail=""
    elif [ "$rc" = 153 ] || [ "$(stat -c %s "$out")" -ge $((cap * 1024)) ] ||
        [ "$(stat -c %s "$err")" -ge $((cap * 1024)) ]; then
        what="floods its output (more than $cap KiB)" detail=""
    elif [ "$rc" -gt 128 ]; then
        what="crashed (signal SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))))"
    elif grep -qE 'cudaError(IllegalAddress|InvalidAddressSpace)' "$err"; then
        what="out-of-bounds memory access"
    elif grep -qE 'cudaError(LaunchFailure|IllegalInstruction|Assert|MisalignedAddress|HardwareStackError|LaunchTimeout|InvalidPc)' "$err"; then
        what="crashed in a kernel"
    elif [ "$rc" = 2 ]; then
        verdict=SKIP what=${detail:-cannot run here} detail=""
    elif [ "$rc" = 1 ]; then
        what="wrong result"
        [ -n "$detail" ] || detail="the program's checks failed"
    elif [ "$rc" != 0 ]; then
        what="crashed (exit status $rc)"
    else
        detail=""
        results=$(grep -c '^result: ' "$out")
        last=$(tail -n 1 "$out")
        if [ "$results" = 0 ]; then
            what="exited 0 without printing its result"
        elif [ "$results" != 1 ]; then
            what="printed $results result lines" detail="the kit's harness prints one"
        elif [ "$last" != "result: PASS" ]; then
            what="did not end with its result" detail="its last line is '${last:0:80}'"
        elif ! grep -qx "lab: $lab" "$out"; then
            what="its output does not name lab $lab"
        elif [ -n "$seed" ] && ! grep -qx "seed: $seed" "$out"; then
            what="did not run with the seed it was given ($seed)"
        else
            verdict=PASS
        fi
    fi
}

# reason_at WHERE: the reason of the last judged run, saying where it was.
reason_at() {
    if [ "$verdict" = SKIP ]; then
        reason=$what
    else
        reason="$what${1:+ $1}${detail:+: $detail}"
    fi
}

# kv_value FILE KEY: the value of `KEY: value` in FILE.
kv_value() { sed -n "s/^$2: //p" "$1" | tail -n 1; }

# median: the median of the numbers on stdin.
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# perf_points RATIO POINTS FULL ZERO: the points for a time ratio.
perf_points() {
    awk -v r="$1" -v p="$2" -v f="$3" -v z="$4" 'BEGIN {
        if (r <= f) s = p; else if (r > z) s = 0; else s = p * (z - r) / (z - f)
        printf "%.1f", s }' | sed 's/\.0$//'
}

# csv_row FIELD...: one CSV line, every field quoted.
csv_row() {
    local f sep=""
    for f in "$@"; do
        printf '%s"%s"' "$sep" "${f//\"/\"\"}"
        sep=,
    done
    printf '\n'
}

log() { printf '%s\n' "$*" >>"$work/log"; }
log_run() {
    {
        echo "  exit status $run_rc"
        echo "  stderr (first lines):" && head -n 8 "$work/err" | cut -c1-200 | sed 's/^/    /'
        echo "  stdout (last lines):" && tail -n 3 "$work/out" | cut -c1-200 | sed 's/^/    /'
    } >>"$work/log"
}

# graded_run PROG ARGS: runs a program of the grading and judges it.
graded_run() {
    local prog=$1 args=$2 seed
    seed=$(sed -n 's/.*--seed \([0-9]*\).*/\1/p' <<<"$args")
    log "run: ${prog#"$work/"} $args"
    # shellcheck disable=SC2086
    run_capped "$work/out" "$work/err" "$limit" "$cap" "$prog" $args
    log_run
    judge_run "$run_rc" "$work/out" "$work/err" "$cap" "$limit" "$lab" "$seed"
}

# ---------------------------------------------------------------------------
# Grading one lab
# ---------------------------------------------------------------------------

# grade_lab LAB: sets verdict, reason, points, ratio, notes.
grade_lab() {
    local lab=$1 name=${1#*-}
    local student="$kit_top/labs/$1/${1#*-}.cu" template="$kit_top/solutions/$1/${1#*-}.cu"
    local regions k bad rule src prog args i runs
    local limit cap max
    verdict=FAIL reason="" points=0 ratio="" notes=""
    max=$(conf_get "$lab" points)
    limit=${KIT_GRADE_TIME_LIMIT:-$(conf_get "$lab" time-limit)}
    cap=$(conf_get "$lab" output-limit)
    runs=$(conf_get "$lab" random-runs)
    # Each lab draws from its own stream: LAB=02 SEED=s repeats lab 02 of a
    # grading of every lab with SEED=s.
    rng_seed $((grading_seed * 100 + 10#${lab%%-*}))
    log "== $lab"

    if [ ! -f "$student" ]; then
        reason="no labs/$lab/$name.cu"
        return
    fi
    prog="$work/bin/$lab/$name"
    if [ -f "$kit_top/common/harness/$lab.cu" ]; then
        # The whole file is the student's: the rules hold for all of it, and
        # it is compiled with the kit's own harness.
        rule=$(region_rule_violation "$(code_only <"$student")" "$(conf_get "$lab" kit-names)" \
            "$(conf_get "$lab" forbidden)")
        if [ -n "$rule" ]; then
            reason="labs/$lab/$name.cu $rule, which a lab file may not"
            return
        fi
        local make_args=(NVCC="$KIT_NVCC" NVCCFLAGS="$KIT_NVCC_FLAGS" KIT_BUILD="$ref_build")
        [ -z "$KIT_ARCH" ] || make_args+=(ARCH="$KIT_ARCH")
        if ! timeout 900 make -s --no-print-directory -C "$kit_top" "${make_args[@]}" graded \
            GRADED_LAB="$lab" STUDENT_SRC="$student" GRADED_DIR="$work/bin/$lab" >"$work/build-$lab.log" 2>&1; then
            log "$(cat "$work/build-$lab.log")"
            reason=$(grep -m1 -E '(error|Error)' "$work/build-$lab.log" | sed "s|$kit_top/||g" | cut -c1-200)
            reason="does not compile: ${reason:-$(head -n1 "$work/build-$lab.log" | cut -c1-200)}"
            return
        fi
        log "built from the kit's harness and the student's file"
    else
    regions=$(region_numbers "$template" | tr '\n' ' ')
    # shellcheck disable=SC2086
    if ! bad=$(regions_sound "$student" $regions); then
        reason="the markers of student region TODO($bad) are missing or damaged; restore them from the kit's skeleton"
        return
    fi
    if ! diff -q <(outside_regions "$student") <(outside_regions "$template") >/dev/null; then
        notes="code outside the student regions differs from the kit's ($(diff <(outside_regions "$student") <(outside_regions "$template") | grep -c '^[<>]') lines); it was not compiled"
    fi
    for k in $regions; do
        rule=$(region_rule_violation "$(region_text "$student" "$k" | code_only)" \
            "$(conf_get "$lab" kit-names)" "$(conf_get "$lab" forbidden)")
        if [ -n "$rule" ]; then
            reason="student region TODO($k) $rule, which a student region may not"
            return
        fi
    done

    # The program: the kit's harness with the student's regions.
    src="$work/src/$lab/$name.cu"
    mkdir -p "$(dirname "$src")" "$(dirname "$prog")"
    splice "$template" "$student" "labs/$lab/$name.cu" >"$src"
    # shellcheck disable=SC2086
    if ! (cd "$kit_top" && timeout 600 $KIT_NVCC ${KIT_ARCH:--arch=native} $KIT_NVCC_FLAGS -Xcompiler -Wall,-Wextra \
        -I"$kit_top/common/lib/legacy" -I"$kit_top/common/lib" \
        -o "$prog" "$src") >"$work/build-$lab.log" 2>&1; then
        log "$(cat "$work/build-$lab.log")"
        reason=$(grep -m1 -E '(error|Error)' "$work/build-$lab.log" | cut -c1-200)
        reason="does not compile: ${reason:-$(head -n1 "$work/build-$lab.log" | cut -c1-200)}"
        return
    fi
    log "built from the kit's harness and the student's regions"
    fi

    if [ -n "$gpu_reason" ]; then
        verdict=SKIP reason=$gpu_reason
        return
    fi

    # Out-of-bounds accesses, when asked for.
    if [ "$sanitize" = 1 ]; then
        expand_args "$(conf_get "$lab" sanitize-args)"
        args=$drawn
        log "run: compute-sanitizer --tool memcheck $name $args"
        # shellcheck disable=SC2086
        run_capped "$work/out" "$work/err" "$limit" "$cap" \
            compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 4 "$prog" $args
        log_run
        if [ "$run_rc" = 99 ] || grep -qE '^========= +Invalid' "$work/out" "$work/err"; then
            reason="out-of-bounds memory access at $args (compute-sanitizer): $(grep -h -m1 -E '^========= +Invalid' "$work/out" "$work/err" | sed -E 's/^=+ +//' | head -n1)"
            return
        fi
        judge_run "$run_rc" "$work/out" "$work/err" "$cap" "$limit" "$lab"
        if [ "$verdict" != PASS ]; then
            reason_at "at $args under compute-sanitizer"
            return
        fi
    fi

    # Correctness: sizes and seeds drawn for this grading, then the defaults.
    for ((i = 1; i <= runs + 1; i++)); do
        args=""
        if [ "$i" -le "$runs" ]; then
            expand_args "$(conf_get "$lab" random-args)"
            args=$drawn
        fi
        graded_run "$prog" "$args"
        if [ "$verdict" != PASS ]; then
            reason_at "at ${args:-the defaults}"
            return
        fi
    done

    # Speed: the student's program and the reference in turn, same options.
    local metric ref value refs=() mine=() t_ref t_mine full zero
    metric=$(conf_get "$lab" metric)
    if [ -z "$metric" ] || [ "$metric" = none ]; then
        points=$max verdict=PASS
        return
    fi
    ref="$ref_build/solutions/$lab/$name"
    args=$(conf_get "$lab" perf-args)
    for ((i = 1; i <= $(conf_get "$lab" perf-pairs); i++)); do
        graded_run "$ref" "$args"
        if [ "$verdict" != PASS ]; then
            reason_at "at ${args:-the defaults}"
            verdict=SKIP reason="the kit's reference failed here, so speed was not graded: $reason"
            return
        fi
        value=$(kv_value "$work/out" "$metric")
        if [ -z "$value" ]; then
            verdict=SKIP reason="grading.conf: the reference prints no $metric to compare"
            return
        fi
        refs+=("$value")
        graded_run "$prog" "$args"
        if [ "$verdict" != PASS ]; then
            reason_at "at ${args:-the defaults}, timed beside the reference"
            return
        fi
        mine+=("$(kv_value "$work/out" "$metric")")
    done
    t_ref=$(printf '%s\n' "${refs[@]}" | median)
    t_mine=$(printf '%s\n' "${mine[@]}" | median)
    ratio=$(awk -v a="$t_mine" -v b="$t_ref" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b }')
    log "$metric: student median $t_mine ms, reference median $t_ref ms: ${ratio:-?}x"
    full=$(conf_get "$lab" full-marks-within)
    zero=$(conf_get "$lab" no-marks-beyond)
    if [ -z "$ratio" ]; then
        verdict=FAIL reason="prints no $metric to compare with the reference"
    elif awk -v r="$ratio" -v z="$zero" 'BEGIN { exit !(r > z) }'; then
        verdict=FAIL points=0
        reason="too slow against the reference: ${ratio}x its $metric (no marks beyond ${zero}x)"
    else
        verdict=PASS points=$(perf_points "$ratio" "$max" "$full" "$zero")
    fi
}

# ---------------------------------------------------------------------------
# The whole grading
# ---------------------------------------------------------------------------

main() {
    local report="" student_name=${USER:-student} conf_file="$kit_top/common/grade/grading.conf"
    local labs=() all_labs lab l want named=()
    grading_seed="" sanitize=0 ref_build=${KIT_BUILD:-$kit_top/build}
    while [ $# -gt 0 ]; do
        case $1 in
        --help | -h) usage; exit 0 ;;
        --seed)
            [ $# -ge 2 ] || die_usage "--seed needs a value"
            [[ $2 =~ ^[0-9]{1,15}$ ]] || die_usage "--seed '$2': expected a whole number"
            grading_seed=$((10#$2)); shift 2 ;;
        --sanitize) sanitize=1; shift ;;
        --report)
            [ $# -ge 2 ] && [ -n "$2" ] || die_usage "--report needs a directory"
            report=$2; shift 2 ;;
        --student)
            [ $# -ge 2 ] && [ -n "$2" ] || die_usage "--student needs a name"
            student_name=$2; shift 2 ;;
        --conf)
            [ $# -ge 2 ] || die_usage "--conf needs a file"
            conf_file=$2; shift 2 ;;
        --reference-build)
            [ $# -ge 2 ] || die_usage "--reference-build needs a directory"
            ref_build=$2; shift 2 ;;
        -*) die_usage "unknown option '$1'" ;;
        *) labs+=("$1"); shift ;;
        esac
    done
    conf_load "$conf_file" || exit 64
    all_labs=$(grep -v '^[[:space:]]*\(#\|$\)' "$kit_top/common/labs.txt" | tr '\n' ' ')
    for want in "${labs[@]}"; do
        lab=""
        for l in $all_labs; do
            case $l in "$want" | "$want"-* | *-"$want") lab=$l ;; esac
        done
        [ -n "$lab" ] || die_usage "no lab '$want' (labs: $all_labs)"
        named+=("$lab")
    done
    if [ ${#named[@]} -gt 0 ]; then
        labs=("${named[@]}")
    else
        read -r -a labs <<<"$all_labs"
    fi
    [ -n "$grading_seed" ] || grading_seed=$(($(od -An -N4 -tu4 /dev/urandom) % 1000000000 + 1))

    : "${KIT_NVCC:=nvcc}"
    : "${KIT_ARCH:=}"
    : "${KIT_NVCC_FLAGS:=-O3 -lineinfo}"
    work=$(mktemp -d "${TMPDIR:-/tmp}/kit-grade.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    : >"$work/log"

    # The references and kit-query, built from this copy of the kit.
    if ! make -s --no-print-directory -C "$kit_top" KIT_BUILD="$ref_build" solutions "$ref_build/bin/kit-query" \
        >"$work/ref-build.log" 2>&1; then
        cat "$work/ref-build.log" >&2
        echo "grade.sh: the kit's own references do not build here; see above" >&2
        exit 1
    fi

    local gpu_out gpu_name="none usable"
    gpu_reason=""
    if gpu_out=$("$ref_build/bin/kit-query" --check 2>&1); then
        gpu_out=$("$ref_build/bin/kit-query")
        gpu_name="$(sed -n 's/^device: //p' <<<"$gpu_out") (compute capability $(sed -n 's/^compute-capability: //p' <<<"$gpu_out"))"
    else
        gpu_reason=${gpu_out#*cannot run here: }
        gpu_reason="no usable GPU: ${gpu_reason%%. *}"
    fi

    local screen="$work/screen" csv="$work/grades.csv" tests="$work/grades.bats"
    local passed=0 failed=0 skipped=0 total=0 total_max=0 max name notes_all=()
    {
        echo "Grading labs/ of $kit_top"
        echo "GPU $gpu_name; grading seed $grading_seed$([ "$sanitize" = 0 ] || echo ", with compute-sanitizer")"
        echo
        printf '%-16s %-7s %7s %9s  %s\n' lab verdict points time/ref reason
    } | tee "$screen"
    csv_row student lab verdict points max_points time_vs_reference reason notes grading_seed gpu >"$csv"
    : >"$tests"
    for lab in "${labs[@]}"; do
        grade_lab "$lab"
        max=$(conf_get "$lab" points)
        total_max=$((total_max + max))
        case $verdict in
        PASS) passed=$((passed + 1)) ;;
        FAIL) failed=$((failed + 1)) points=0 ;;
        *) skipped=$((skipped + 1)) points="" ;;
        esac
        [ -z "$points" ] || total=$(awk -v a="$total" -v b="$points" 'BEGIN { print a + b }')
        printf '%-16s %-7s %7s %9s  %s\n' "$lab" "$verdict" "${points:--}/$max" \
            "${ratio:+${ratio}x}" "$reason" | tee -a "$screen"
        [ -z "$notes" ] || notes_all+=("$lab: $notes")
        log "verdict: $verdict ${points:--}/$max${reason:+: $reason}"
        csv_row "$student_name" "$lab" "$verdict" "$points" "$max" "$ratio" "$reason" "$notes" \
            "$grading_seed" "$gpu_name" >>"$csv"
        # One Bats test per lab, for Bats' TAP and JUnit formatters.
        name="$lab: $verdict ${points:--}/$max points"
        {
            printf '@test "%s" {\n' "$name"
            case $verdict in
            PASS) echo "    :" ;;
            SKIP) printf '    skip %q\n' "$reason" ;;
            *) printf '    echo %q\n    return 1\n' "$reason" ;;
            esac
            echo "}"
        } >>"$tests"
    done
    {
        echo
        printf 'Total %s of %d points: %d passed, %d failed, %d skipped\n' "$total" "$total_max" \
            "$passed" "$failed" "$skipped"
        if [ ${#notes_all[@]} -gt 0 ]; then
            echo "Notes (they do not change the grade):"
            printf '  %s\n' "${notes_all[@]}"
        fi
        local again="make check SEED=$grading_seed" l
        if [ ${#named[@]} -gt 0 ]; then
            again+=" LAB="
            for l in "${named[@]}"; do again+="${l%%-*},"; done
            again=${again%,}
        fi
        [ "$sanitize" = 0 ] || again+=" SANITIZE=1"
        echo "The same sizes and seeds again: $again"
    } | tee -a "$screen"

    if [ -n "$report" ]; then
        mkdir -p "$report" || exit 1
        { cat "$screen"; echo; echo "Runs"; cat "$work/log"; } >"$report/report.txt"
        cp "$csv" "$report/grades.csv"
        if command -v bats >/dev/null 2>&1; then
            # A clean environment: a grading run from inside Bats (the kit's
            # tests) must not hand its variables, PATH entries or file
            # descriptor 3 to this one.
            local path
            path=$(tr ':' '\n' <<<"$PATH" | grep -v 'bats-core' | paste -sd:)
            env -i PATH="$path" HOME="${HOME:-/tmp}" \
                bats --formatter tap "$tests" >"$report/grades.tap" 2>/dev/null 3>&-
            env -i PATH="$path" HOME="${HOME:-/tmp}" \
                bats --formatter junit "$tests" >"$report/grades.xml" 2>/dev/null 3>&-
        else
            echo "grade.sh: bats is not installed: no grades.tap or grades.xml in $report" >&2
        fi
    fi
    [ "$failed" -eq 0 ] || exit 1
    [ "$skipped" -eq 0 ] || exit 2
    exit 0
}

if [ "${KIT_GRADE_LIB:-0}" != 1 ]; then
    main "$@"
fi
