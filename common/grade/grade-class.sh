#!/usr/bin/env bash
# make grade-class: grades a whole class with common/grade/grade.sh.
#
# Each entry of SUBMISSIONS (a folder, or an archive of one) is one
# student's. Its name is made safe (letters, digits and . _ - @ + only) and
# unique: two entries whose names collapse to one are both graded, under
# different names, and the collision is reported. Its lab files alone are
# taken (common/grade/unpack.sh, in the sandbox: regular files only, never
# a symbolic link, a device or a path outside it), then graded by grade.sh
# with the kit as it was when the class grading started (OUT/.kit), all of
# it (unpacking, builds, runs) under one time limit. Reports are written by
# the grader, outside the sandbox, where no student code can see them.
# Graded students are kept, so that a rerun resumes.
#
# OUT/class.csv        a row per student: total, points per lab, status
# OUT/class-labs.csv   a row per student and lab: verdict, points, reason
# OUT/roster.csv       submission name, student ID, name, points (an LMS import)
# OUT/students/NAME/   report.txt, grades.csv, .tap, .xml, results.json, grade.log
#
# Exit status: 0 every student graded, 1 a student was not graded (the
# grading stopped or ran out of time: run again to retry), 2 every student
# graded but a lab was skipped (no GPU), 3 the grading could not start (no
# sandbox, the references do not build), 64 bad command line.
set -uo pipefail

grade_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
kit_top=$(cd "$grade_dir/../.." && pwd -P)
# shellcheck source=common/grade/lib.sh
source "$grade_dir/lib.sh"

usage() {
    cat <<'EOF'
usage: grade-class.sh [options] SUBMISSIONS OUT

SUBMISSIONS is a folder with one entry per student, named after the student:
a folder (holding labs/, or the lab folders themselves) or an archive of one
(.tar, .tar.gz, .tgz, .tar.xz, .zip). OUT receives class.csv, class-labs.csv,
roster.csv and a report per student; run again to resume.

options:
  --labs LIST          grade only these labs, e.g. 01,03 (default: all)
  --seed S             class grading seed (default: drawn, kept in OUT/grading-seed);
                       each student's sizes and seeds are drawn from it and their name
  --sanitize           also run each lab under compute-sanitizer
  --again              grade every student again, even those already graded
  --roster FILE        CSV lines "submission,student_id[,name]": IDs and names for the reports
  --reference-build DIR
                       where the kit's references are built (default: OUT/.kit-build)
  --gpus LIST          GPUs to use, e.g. 0,1 (default: all; two submissions per GPU at a time:
                       one builds while the other holds the GPU for its runs)
  --submission-limit S seconds one submission may take in all, waiting for
                       its GPU included (default 3600)
  --no-sandbox         grade without isolation (refused otherwise where there is none)
  --slurm              grade as a Slurm job array: one task and one GPU per submission
  --slurm-gres G       the GPU request of each task (default gpu:1; none: no request)
  --slurm-option OPT   pass OPT to sbatch, e.g. --slurm-option=--partition=gpu (repeatable)
  --no-wait            with --slurm: submit and return; run again later to gather
  --help               print this help and exit

exit status: 0 every student graded, 1 a student was not graded (run again),
2 a lab was skipped (no GPU), 3 the grading could not start, 64 bad command line.
EOF
}

die_usage() {
    echo "grade-class.sh: $*" >&2
    echo "grade-class.sh: see grade-class.sh --help" >&2
    exit 64
}

say() { printf 'grade-class: %s\n' "$(one_line "$*")"; }

# ---------------------------------------------------------------------------
# Submissions
# ---------------------------------------------------------------------------

# safe_name ENTRY: the student's name from a submission's file name: its
# archive suffix dropped, every other character than letters, digits and
# . _ - @ + made _, no leading dot or dash, at most 64 characters.
safe_name() {
    local n=${1##*/}
    n=${n%.tar.gz} n=${n%.tar.xz} n=${n%.tgz} n=${n%.tar} n=${n%.zip}
    n=$(printf '%s' "$n" | LC_ALL=C tr -c 'A-Za-z0-9._@+-' _ | head -c 64)
    while [[ $n == [.-]* ]]; do n=_${n:1}; done
    printf '%s' "${n:-unnamed}"
}

# list_submissions DIR: sets sub_names[] and sub_paths[] (sorted by entry,
# names unique) and reports entries that cannot be graded or collide.
list_submissions() {
    local entry name n k
    local -A taken=() first=()
    sub_names=() sub_paths=() sub_skipped=()
    while IFS= read -r -d '' entry; do
        if [ -L "$entry" ]; then
            sub_skipped+=("$(one_line "${entry##*/}"): a symbolic link, not a submission")
            continue
        fi
        case $entry in
        *.tar | *.tar.gz | *.tgz | *.tar.xz | *.zip) [ -f "$entry" ] || { sub_skipped+=("$(one_line "${entry##*/}"): not a regular file"); continue; } ;;
        *) [ -d "$entry" ] || { sub_skipped+=("$(one_line "${entry##*/}"): neither a folder nor an archive"); continue; } ;;
        esac
        name=$(safe_name "$entry")
        n=$name k=2
        while [ -n "${taken[$n]:-}" ]; do
            n="$name-$k" k=$((k + 1))
        done
        if [ "$n" != "$name" ]; then
            say "name collision: $(printf '%q' "${first[$name]}") and $(printf '%q' "${entry##*/}") both make '$name'; the second is graded as '$n'"
        fi
        taken[$n]=1
        first[$name]=${first[$name]:-${entry##*/}}
        sub_names+=("$n")
        sub_paths+=("$entry")
    done < <(find "$1" -mindepth 1 -maxdepth 1 ! -name '.*' -print0 | sort -z)
}

# fingerprint PATH: changes when the submission does.
fingerprint() {
    if [ -d "$1" ]; then
        (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16
    else
        sha256sum <"$1" | cut -c1-16
    fi
}

# split_csv_awk: an awk function, split_csv(LINE, F): LINE's fields into
# F[1..n] as a spreadsheet writes them (quoted fields, "" inside them);
# returns n. For the awk programs below.
split_csv_awk='
    function split_csv(line, f,    n, i, c, q, v) {
        n = 1; v = ""; q = 0
        for (i = 1; i <= length(line); i++) {
            c = substr(line, i, 1)
            if (q) {
                if (c == "\"" && substr(line, i + 1, 1) == "\"") { v = v c; i++ }
                else if (c == "\"") q = 0
                else v = v c
            } else if (c == "\"") q = 1
            else if (c == ",") { f[n++] = v; v = "" }
            else v = v c
        }
        f[n] = v
        return n
    }'

# roster_rows: the roster as "submission<TAB>student_id<TAB>name" lines (a
# CRLF roster too).
roster_rows() {
    awk "$split_csv_awk"'
        { sub(/\r$/, ""); n = split_csv($0, f)
          name = f[3]; for (i = 4; i <= n; i++) name = name "," f[i]
          gsub(/\t/, " ", name)
          if (n >= 2 && f[1] != "") printf "%s\t%s\t%s\n", f[1], f[2], (n >= 3 ? name : "") }' "$roster"
}

# roster_keys ENTRY: the names a roster row may give a submission: the entry
# as it is in SUBMISSIONS, without an archive's extension, and made safe.
roster_keys() {
    local base=${1##*/} bare
    bare=$base
    case $base in
    *.tar.gz | *.tar.xz) bare=${base%.tar.*} ;;
    *.tar | *.tgz | *.zip) bare=${base%.*} ;;
    esac
    printf '%s\n' "$base" "$bare" "$(safe_name "$1")"
}

# roster_of NAME ENTRY: sets r_id and r_name from the roster (empty if none).
# The row whose submission is NAME (the name it is graded as) comes first,
# then ENTRY's own name in SUBMISSIONS, then that name without an archive's
# extension (a submission renamed for a collision, NAME-2, only by NAME-2:
# the row for its entry's name may be the other one's).
roster_of() {
    r_id="" r_name=""
    [ -n "$roster" ] || return 0
    local sub id nm keys=("$1") pass
    if [ -n "${2:-}" ]; then
        mapfile -t -O 1 keys < <(roster_keys "$2")
        [ "$(safe_name "$2")" = "$1" ] || keys=("$1")
    fi
    for pass in "${keys[@]}"; do
        while IFS=$'\t' read -r sub id nm; do
            if [ "$sub" = "$pass" ]; then
                r_id=$id r_name=$nm
                return 0
            fi
        done < <(roster_rows)
    done
}

# ---------------------------------------------------------------------------
# Grading one submission: under its own time limit (see main: --one)
# ---------------------------------------------------------------------------

# grade_one NAME PATH REFERENCE_BUILD: grades one student into
# OUT/students/NAME; returns 1 if the student could not be graded.
grade_one() {
    local name=$1 src=$2 ref_build=$3 dir="$out/students/$1" print rc
    print="$(fingerprint "$src") labs=${labs_opt:-all} sanitize=$sanitize"
    if [ "$again" = 0 ] && [ -f "$dir/done" ] && [ "$(cat "$dir/done")" = "$print" ]; then
        say "$name: graded before, kept"
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    say "$name: grading$([ -z "${CUDA_VISIBLE_DEVICES:-}" ] || echo " on GPU $CUDA_VISIBLE_DEVICES")"
    timeout -k 30 "$submission_limit" bash "$grade_dir/grade-class.sh" --one "$name" "$src" "$ref_build" \
        "${pass_on[@]}" -- "$subs" "$out" >"$dir/screen.txt" 2>"$dir/grade.log"
    rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        say "$name: NOT GRADED: the grading took more than $submission_limit s (--submission-limit); a rerun tries again"
        echo "not graded: more than $submission_limit s" >"$dir/not-graded"
        return 1
    fi
    if [ ! -s "$dir/grades.csv" ]; then
        say "$name: NOT GRADED: the grader stopped (exit status $rc), see $dir/grade.log; a rerun tries again"
        echo "not graded: the grader stopped (exit status $rc)" >"$dir/not-graded"
        return 1
    fi
    echo "$print" >"$dir/done"
    say "$name: $(grep -h '^Total' "$dir/screen.txt" 2>/dev/null || echo "nothing graded")"
}

# one NAME PATH REFERENCE_BUILD: the work of grade_one, in its own process.
one() {
    local name=$1 src=$2 ref_build=$3 dir="$out/students/$1" why seed mode
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/kit-class.XXXXXX") || exit 3
    chmod 711 "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/labs" && chmod 777 "$tmp/labs"
    seed=$(((class_seed + $(printf '%s' "$name" | cksum | cut -d' ' -f1)) % 1000000000 + 1))
    roster_of "$name" "$src"

    # The lab files, taken in the sandbox (as root: without capabilities,
    # so that it can read what the instructor can).
    sandbox_probe_log="$tmp/.probe"
    sandbox_setup "$out/.kit" "$ref_build" "$tmp" "$sandbox_mode" "$subs" "$out/students" || exit 3
    sandbox_prefix=() sandbox_user=""
    sb_extra=(--ro-bind "$src" "$src")
    sandboxed 300 300 2048 262144 0 - "$tmp/labs" "$tmp/labs" -- \
        bash "$out/.kit/common/grade/unpack.sh" "$src" "$tmp/labs" "${labs_list[@]}" >"$tmp/why" 2>/dev/null
    why=$(head -c 300 "$tmp/why")
    [ "$run_rc" = 0 ] || why=${why:-"could not be unpacked (status $run_rc)"}
    sb_extra=()
    if [ "$run_rc" != 0 ]; then
        say "$name: $why"
        fail_all "$name" "$(one_line "$why")" "$seed"
        return 0
    fi
    mode=--require-sandbox
    [ "$sandbox_mode" != none ] || mode=--no-sandbox
    bash "$out/.kit/common/grade/grade.sh" --student "${r_name:-$name}" ${r_id:+--student-id "$r_id"} \
        --report "$dir" --reference-build "$ref_build" --seed "$seed" --labs-dir "$tmp/labs" \
        --origin "submission $name" "$mode" \
        --hide "$subs" --hide "$out/students" ${sanitize_opt:+"$sanitize_opt"} "${labs_list[@]}"
    return 0
}

# fail_all NAME REASON SEED: the reports of a submission none of whose labs
# could be taken: every lab FAILs for REASON.
fail_all() {
    local lab
    declare -gA lab_v=() lab_p=() lab_r=() lab_x=()
    for lab in "${labs_list[@]}"; do
        lab_v[$lab]=FAIL lab_p[$lab]=0 lab_r[$lab]=$2 lab_x[$lab]=""
    done
    student_name=${r_name:-$1} student_id=${r_id:-} grading_seed=$3
    report_header=("Student: $student_name${student_id:+ (ID $student_id)}" "Not graded further: $2")
    report_again="" report_gpu="" report_isolation=$sandbox
    work=$(mktemp -d "${TMPDIR:-/tmp}/kit-class.XXXXXX")
    echo "The submission's lab files could not be taken: $2" >"$work/log"
    reports_screen "${labs_list[@]}"
    reports_write "$out/students/$1" "${labs_list[@]}"
    rm -rf "$work"
}

# ---------------------------------------------------------------------------
# The class CSV
# ---------------------------------------------------------------------------

# gather: OUT/class.csv, OUT/class-labs.csv and OUT/roster.csv from the
# students' grades.csv; sets not_graded and skipped.
gather() {
    local d name header=1
    not_graded=0 skipped=0
    : >"$out/class-labs.csv"
    {
        printf 'student,student_id,points,max_points,passed,failed,skipped'
        printf ',%s' "${labs_list[@]}"
        printf ',status\n'
    } >"$out/class.csv"
    csv_row submission student_id name points max_points status >"$out/roster.csv"
    for d in "$out"/students/*/; do
        [ -d "$d" ] || continue
        d=${d%/} name=${d##*/}
        if [ ! -s "$d/grades.csv" ] || [ -f "$d/not-graded" ]; then
            not_graded=$((not_graded + 1))
            printf '%s,,,,,,%s,%s\n' "$name" "$(printf ',%.0s' "${labs_list[@]}")" \
                "$(cat "$d/not-graded" 2>/dev/null || echo "not graded")" >>"$out/class.csv"
            continue
        fi
        if [ $header = 1 ]; then
            { printf '"submission",'; head -n 1 "$d/grades.csv"; } >"$out/class-labs.csv"
            header=0
        fi
        tail -n +2 "$d/grades.csv" | sed "s/^/\"$name\",/" >>"$out/class-labs.csv"
        awk -v name="$name" -v labs="${labs_list[*]}" -v rost="$out/roster.csv" "$split_csv_awk"'
            FNR == 1 { next }
            {
                split_csv($0, f)
                sname = f[1]; id = f[2]
                pts[f[3]] = f[5]; max += f[6]; total += f[5]
                if (f[4] == "PASS") pass++; else if (f[4] == "FAIL") fail++; else skip++
            }
            END {
                nl = split(labs, L, " ")
                status = skip ? "incomplete: a lab was skipped" : "graded"
                printf "%s,%s,%g,%d,%d,%d,%d", name, id, total, max, pass, fail, skip
                for (i = 1; i <= nl; i++) printf ",%s", pts[L[i]]
                print "," status
                gsub(/"/, "\"\"", sname)
                printf "\"%s\",\"%s\",\"%s\",\"%g\",\"%d\",\"%s\"\n", name, id, sname, total, max, status >>rost
            }' "$d/grades.csv" >>"$out/class.csv"
        grep -q ',"SKIP",' "$d/grades.csv" && skipped=$((skipped + 1))
    done
}

# ---------------------------------------------------------------------------

main() {
    local slurm=0 wait=1 gres="gpu:1" gpus="" task="" slurm_options=() one_args=() i
    labs_opt="" sanitize=0 sanitize_opt="" again=0 class_seed="" submission_limit=3600 roster=""
    sandbox_mode=require pass_on=() ref_opt=""
    while [ $# -gt 0 ]; do
        case $1 in
        --help | -h) usage; exit 0 ;;
        --labs) [ $# -ge 2 ] || die_usage "--labs needs a list"; labs_opt=$2; shift 2 ;;
        --labs=*) labs_opt=${1#*=}; shift ;;
        --seed)
            [[ $# -ge 2 && $2 =~ ^[0-9]{1,15}$ ]] || die_usage "--seed needs a whole number"
            class_seed=$((10#$2)); shift 2 ;;
        --sanitize) sanitize=1 sanitize_opt=--sanitize; shift ;;
        --again) again=1; shift ;;
        --roster)
            [[ $# -ge 2 && -f $2 && -r $2 ]] || die_usage "--roster needs a readable file"
            roster=$(cd "$(dirname "$2")" && pwd -P)/$(basename "$2"); shift 2 ;;
        --gpus) [ $# -ge 2 ] || die_usage "--gpus needs a list"; gpus=$2; shift 2 ;;
        --reference-build) [ $# -ge 2 ] || die_usage "--reference-build needs a folder"; ref_opt=$2; shift 2 ;;
        --submission-limit)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die_usage "--submission-limit needs seconds"
            submission_limit=$2; shift 2 ;;
        --no-sandbox) sandbox_mode=none; shift ;;
        --slurm) slurm=1; shift ;;
        --slurm-gres) [ $# -ge 2 ] || die_usage "--slurm-gres needs a value"; gres=$2; shift 2 ;;
        --slurm-option=*) slurm_options+=("${1#*=}"); shift ;;
        --slurm-option) [ $# -ge 2 ] || die_usage "--slurm-option needs a value"; slurm_options+=("$2"); shift 2 ;;
        --no-wait) wait=0; shift ;;
        --task) [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || die_usage "--task needs a number"; task=$2; shift 2 ;;
        --one) [ $# -ge 4 ] || die_usage "--one needs NAME PATH BUILD"; one_args=("$2" "$3" "$4"); shift 4 ;;
        --) shift; break ;;
        -*) die_usage "unknown option '$1'" ;;
        *) break ;;
        esac
    done
    [ $# -eq 2 ] || die_usage "expected SUBMISSIONS and OUT (e.g. make grade-class SUBMISSIONS=hw1 OUT=grades-hw1)"
    [[ -n $1 && -d $1 ]] || die_usage "SUBMISSIONS '$1' is not a folder"
    [ -n "$2" ] || die_usage "OUT is empty: name a folder for the grades"
    local all_labs=() want lab
    mapfile -t all_labs < <(kit_labs "$kit_top")
    labs_list=()
    if [ -n "$labs_opt" ]; then
        for want in ${labs_opt//,/ }; do
            lab=$(lab_resolve "$want" "${all_labs[@]}") || die_usage "--labs: no lab '$want' (labs: ${all_labs[*]})"
            labs_list+=("$lab")
        done
    else
        labs_list=("${all_labs[@]}")
    fi
    subs=$(cd "$1" && pwd -P)
    # Refused before anything is written.
    out=$(realpath -m -- "$2") || die_usage "OUT '$2': not a path"
    case "$out/" in "$subs/"*) die_usage "OUT must not be inside SUBMISSIONS" ;; esac
    case "$subs/" in "$out/"*) die_usage "SUBMISSIONS must not be inside OUT" ;; esac
    mkdir -p "$out" || exit 3
    out=$(cd "$out" && pwd -P)
    pass_on=(--seed "$(cat "$out/grading-seed" 2>/dev/null || echo 0)" ${labs_opt:+--labs "$labs_opt"}
        ${sanitize_opt:+"$sanitize_opt"} ${roster:+--roster "$roster"})
    [ "$sandbox_mode" != none ] || pass_on+=(--no-sandbox)

    if [ ${#one_args[@]} -gt 0 ]; then
        class_seed=$(cat "$out/grading-seed")
        conf_load "$out/.kit/common/grade/grading.conf" || exit 3
        one "${one_args[@]}"
        exit $?
    fi
    conf_load "$kit_top/common/grade/grading.conf" || exit 64

    # A Slurm task: grade task $task of the queue, on the node's GPU.
    if [ -n "$task" ]; then
        local name path node_tmp
        { IFS= read -r -d '' name && IFS= read -r -d '' path; } <"$out/slurm/tasks/$task" ||
            { echo "grade-class.sh: no task $task in $out/slurm/tasks" >&2; exit 3; }
        node_tmp=$(mktemp -d "${TMPDIR:-/tmp}/kit-task.XXXXXX")
        # The references are built on the node, for its GPU.
        build_references "$node_tmp/build" || exit 3
        grade_one "$name" "$path" "$node_tmp/build"
        rc=$?
        rm -rf "$node_tmp"
        exit $rc
    fi

    # One class grading of OUT at a time, whoever runs it.
    exec {out_lock}>>"$out/.lock"
    flock -n "$out_lock" || { echo "grade-class.sh: another grading is writing $out" >&2; exit 3; }

    # The class seed, kept so that a resumed grading draws the same.
    if [ -z "$class_seed" ]; then
        if [ -f "$out/grading-seed" ] && [ "$again" = 0 ]; then
            class_seed=$(cat "$out/grading-seed")
        else
            class_seed=$(($(od -An -N4 -tu4 /dev/urandom) % 1000000000 + 1))
        fi
    fi
    echo "$class_seed" >"$out/grading-seed"
    pass_on[1]=$class_seed

    # The kit as it is now, for every submission: its labs/ left out.
    rm -rf "$out/.kit"
    mkdir -p "$out/.kit/labs" "$out/students"
    if [ -n "$ref_opt" ]; then
        mkdir -p "$ref_opt" && ref_build=$(cd "$ref_opt" && pwd -P)
    else
        ref_build=$out/.kit-build
    fi
    cp -Rp "$kit_top/Makefile" "$kit_top/common" "$kit_top/solutions" "$out/.kit/"

    # No class grading without isolation, unless asked for.
    sandbox_probe_log="$out/.probe"
    if ! sandbox_setup "$out/.kit" "$ref_build" "$out" "$sandbox_mode" "$subs"; then
        echo "grade-class.sh: no sandbox: $sandbox_why." >&2
        echo "grade-class.sh: class grading needs one (bubblewrap, with user namespaces); without isolation, a" >&2
        echo "grade-class.sh: submission can read the references and others' work: ask for it with --no-sandbox" >&2
        echo "grade-class.sh: (make grade-class NO_SANDBOX=1)" >&2
        exit 3
    fi
    say "isolation: $sandbox_note"

    list_submissions "$subs"
    for i in "${sub_skipped[@]}"; do say "NOT GRADED: $i"; done
    roster_check
    if [ ${#sub_names[@]} = 0 ]; then
        say "no submissions in $subs"
        gather
        exit $(( ${#sub_skipped[@]} > 0 ? 1 : 0 ))
    fi
    say "${#sub_names[@]} submissions in $subs; class seed $class_seed"

    if [ "$slurm" = 1 ]; then
        run_slurm
        exit $?
    fi

    say "building the kit's references"
    build_references "$ref_build" || exit 3

    # Two workers per GPU, each grading its share in turn: while one holds
    # the GPU for its runs (grade.sh locks it), the other builds (niced).
    if [ -z "$gpus" ]; then
        if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
            gpus=$CUDA_VISIBLE_DEVICES
        elif command -v nvidia-smi >/dev/null 2>&1 && n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') && [ "${n:-0}" -gt 0 ]; then
            gpus=$(seq -s, 0 $((n - 1)))
        fi
    fi
    local workers=() w=0 g
    IFS=, read -r -a workers <<<"${gpus:-none}"
    workers=("${workers[@]}" "${workers[@]}")
    for g in "${workers[@]}"; do
        (
            [ "$g" = none ] || export CUDA_VISIBLE_DEVICES=$g
            for ((i = w; i < ${#sub_names[@]}; i += ${#workers[@]})); do
                grade_one "${sub_names[$i]}" "${sub_paths[$i]}" "$ref_build"
            done
        ) &
        w=$((w + 1))
    done
    wait
    finish
}

# roster_check: says which roster rows name no submission (a typo, or a
# name the grader made safe: the reports give the name it graded).
roster_check() {
    [ -n "$roster" ] || return 0
    local sub id nm i key found
    declare -A known=()
    for i in "${!sub_names[@]}"; do
        known[${sub_names[$i]}]=1
        while IFS= read -r key; do known[$key]=1; done < <(roster_keys "${sub_paths[$i]}")
    done
    while IFS=$'\t' read -r sub id nm; do
        [ "$sub" != submission ] || continue
        found=${known[$sub]:-}
        [ -n "$found" ] || say "roster: no submission '$(one_line "$sub")' (ID $(one_line "$id")) in $subs"
    done < <(roster_rows)
}

# build_references DIR: the references and kit-query, built from OUT/.kit.
build_references() {
    if ! KIT_BUILD="$1" make -s --no-print-directory -C "$out/.kit" -j"$(nproc 2>/dev/null || echo 2)" \
        solutions "$1/bin/kit-query" >"$out/reference-build.log" 2>&1; then
        cat "$out/reference-build.log" >&2
        echo "grade-class.sh: the kit's references do not build; see $out/reference-build.log" >&2
        return 1
    fi
}

# finish: the class CSVs, a summary, and the exit status.
finish() {
    gather
    say "class.csv: $(($(wc -l <"$out/class.csv") - 1)) students; per lab: class-labs.csv; IDs: roster.csv; reports: students/"
    python3 "$kit_top/common/report/class_page.py" "$out" --submissions "$subs" --kit "$kit_top" 2>&1 | sed 's/^/grade-class: /'
    if [ "$not_graded" -gt 0 ] || [ ${#sub_skipped[@]} -gt 0 ]; then
        say "$((not_graded + ${#sub_skipped[@]})) submissions NOT GRADED (see above); run again to retry"
        exit 1
    fi
    [ "$skipped" = 0 ] || exit 2
    exit 0
}

# run_slurm: the ungraded submissions as a job array, then gather.
run_slurm() {
    local n=0 i gres_opt=() job wait_opt=()
    command -v sbatch >/dev/null 2>&1 || { echo "grade-class.sh: --slurm: sbatch not found" >&2; return 3; }
    rm -rf "$out/slurm/tasks"
    mkdir -p "$out/slurm/tasks"
    for ((i = 0; i < ${#sub_names[@]}; i++)); do
        if [ "$again" = 0 ] && [ -f "$out/students/${sub_names[$i]}/done" ] &&
            [ "$(cat "$out/students/${sub_names[$i]}/done")" = "$(fingerprint "${sub_paths[$i]}") labs=${labs_opt:-all} sanitize=$sanitize" ]; then
            continue
        fi
        printf '%s\0%s\0' "${sub_names[$i]}" "${sub_paths[$i]}" >"$out/slurm/tasks/$n"
        n=$((n + 1))
    done
    if [ "$n" = 0 ]; then
        say "every submission is graded already"
        finish
    fi
    {
        echo '#!/usr/bin/env bash'
        echo '# One task of the grading job array: grades submission SLURM_ARRAY_TASK_ID.'
        # shellcheck disable=SC2016 # expanded when the task runs
        printf 'exec bash %q --task "$SLURM_ARRAY_TASK_ID"' "$out/.kit/common/grade/grade-class.sh"
        printf ' %q' "${pass_on[@]}" --submission-limit "$submission_limit" -- "$subs" "$out"
        echo
    } >"$out/slurm/task.sh"
    [ "$gres" = none ] || gres_opt=(--gres="$gres")
    [ "$wait" = 0 ] || wait_opt=(--wait)
    say "submitting $n tasks to Slurm$([ "$wait" = 1 ] && echo ", and waiting for them")"
    job=$(sbatch --parsable --array=0-$((n - 1)) --job-name=kit-grade \
        --output="$out/slurm/task-%a.log" --time=$(((submission_limit + 59) / 60 + 10)) \
        "${gres_opt[@]}" "${slurm_options[@]}" "${wait_opt[@]}" \
        "$out/slurm/task.sh") || { echo "grade-class.sh: sbatch failed" >&2; return 3; }
    if [ "$wait" = 0 ]; then
        say "job ${job%%;*} submitted; when it ends, run the same command again to gather class.csv"
        return 0
    fi
    finish
}

main "$@"
