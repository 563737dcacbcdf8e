#!/usr/bin/env bash
# make grade-class: grades a whole class with common/grade/grade.sh.
#
# Each entry of SUBMISSIONS (a folder, or an archive of one) is one
# student's. Its name is made safe (letters, digits and . _ - @ + only) and
# unique: two entries whose names collapse to one are both graded, under
# different names, and the collision is reported. Its lab files alone are
# taken (common/grade/unpack.py, in the sandbox: regular files only, never
# a link, a device or a path outside it, a cap on bytes), then graded by
# grade.sh with the kit as it was when the class grading started
# (OUT/.kit), all of it (unpacking, builds, runs) under one time limit.
# Reports are written by the grader, outside the sandbox, where no student
# code can see them. A rerun keeps the students graded in full and grades
# again those not graded, or graded with a lab skipped (no GPU).
#
# OUT/class.csv        a row per student: total, points per lab, status
# OUT/class-labs.csv   a row per student and lab: verdict, points, reason
# OUT/roster.csv       submission name, student ID, name, points, status
# OUT/canvas.csv       Canvas's gradebook import: one column for the assignment
# OUT/moodle.csv       Moodle's CSV grade import: one column for the assignment
# OUT/students/NAME/   report.txt, grades.csv, .tap, .xml, results.json, grade.log
#
# Every CSV, JSON and XML file is written by kitreport.py (python3).
#
# Exit status: 0 every student graded, 1 a student was not graded (the
# grading stopped or ran out of time, a Slurm task left no result: run
# again to retry), 2 every student graded but a lab was skipped (no GPU),
# 3 the grading could not start (no sandbox, the references do not build),
# 64 bad command line.
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
roster.csv, canvas.csv, moodle.csv and a report per student; run again to
resume (students graded in full are kept; those not graded, or graded with a
lab skipped, are graded again).

options:
  --labs LIST          grade only these labs, e.g. 01,03 (default: all)
  --seed S             class grading seed (default: drawn, kept in OUT/grading-seed);
                       each student's sizes and seeds are drawn from it and their name
  --sanitize           also run each lab under compute-sanitizer
  --again              grade every student again, even those already graded
  --roster FILE        a CSV of the class: with a header row naming a `submission` column
                       (the entry's name in SUBMISSIONS) and any of student_id (or ID),
                       name (or Student), SIS User ID, SIS Login ID, Section, Email address,
                       Username, ID number; or, without a header, lines
                       "submission,student_id,name"
  --assignment NAME    the column of canvas.csv and moodle.csv (default: SUBMISSIONS' name);
                       "Title (123)" names an existing Canvas assignment by its ID
  --reference-build DIR
                       where the kit's references are built (default: OUT/.kit-build)
  --arch ARCH          the GPU architecture of the references and of every student's build
                       (default: this machine's, as make chooses; with --slurm -arch=all-major)
  --gpus LIST          GPUs to use, e.g. 0,1 (default: all)
  --per-gpu N          submissions graded at a time on each GPU (default: a quarter of the
                       CPU cores, 2 to 4): while some build, others run theirs on the GPU;
                       where a lab uses every GPU (its lab.conf: gpus = all), N at a time
                       with all the GPUs
  --submission-limit S seconds one submission may take in all, waiting for
                       its GPU included (default 3600)
  --no-sandbox         grade without isolation (refused otherwise where there is none)
  --slurm              grade as a Slurm job array: one task per submission, with --slurm-gres's GPUs
  --slurm-gres G       the GPU request of each task (default gpu:1; none: no request;
                       Lab 08's multi-GPU part needs two: gpu:2)
  --slurm-cpus N       CPUs of each task (sbatch --cpus-per-task; default 4)
  --slurm-mem M        memory of each task (sbatch --mem, e.g. 16G; default 16G)
  --slurm-throttle N   at most N tasks at once (sbatch --array=...%N)
  --slurm-partition P  the partition (sbatch --partition)
  --slurm-account A    the account (sbatch --account)
  --slurm-option OPT   pass OPT to sbatch, e.g. --slurm-option=--qos=short (repeatable)
  --no-wait            with --slurm: submit and return; run the same command again, when the
                       job has ended, to gather class.csv
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

report_py() { python3 "$grade_dir/kitreport.py" "$@"; }

# ---------------------------------------------------------------------------
# Submissions
# ---------------------------------------------------------------------------

# entry_bare ENTRY: a submission's file name without its folder and its
# archive suffix.
entry_bare() {
    local n=${1##*/}
    n=${n%.tar.gz} n=${n%.tar.xz} n=${n%.tgz} n=${n%.tar} n=${n%.zip}
    printf '%s' "$n"
}

# safe_name ENTRY: the student's name from a submission's file name: its
# archive suffix dropped, every other character than letters, digits and
# . _ - @ + made _, no leading dot or dash, at most 64 characters.
safe_name() {
    local n
    n=$(entry_bare "$1" | LC_ALL=C tr -c 'A-Za-z0-9._@+-' _ | head -c 64)
    while [[ $n == [.-]* ]]; do n=_${n:1}; done
    printf '%s' "${n:-unnamed}"
}

# shown_name NAME ENTRY: the student's name as the reports show it where no
# roster names them: the submission's own name (ENTRY, its archive suffix
# dropped) through one_line (any script kept where the host has a UTF-8
# locale, control characters made spaces); NAME, the folder
# the grader uses, where ENTRY is empty (a name changed for a collision).
shown_name() {
    local n
    n=$(one_line "$(entry_bare "$2")")
    printf '%s' "${n:-$1}"
}

# labs_on_every_gpu: the labs to grade that grading.conf grades on every
# GPU (gpus = all), comma-separated.
labs_on_every_gpu() {
    local lab every=""
    for lab in "${labs_list[@]}"; do
        [ "$(conf_get "$lab" gpus)" != all ] || every+="${every:+, }$lab"
    done
    printf '%s' "$every"
}

# list_submissions DIR: sets sub_names[], sub_paths[] and sub_entries[]
# (sorted by entry, names unique; an entry's name, or empty where the name
# was changed for a collision) and reports entries that cannot be graded or
# collide. The folder is read with NUL-separated names.
list_submissions() {
    local entry name n k
    local -A taken=() first=()
    sub_names=() sub_paths=() sub_entries=() sub_skipped=()
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
            sub_entries+=("")
        else
            sub_entries+=("${entry##*/}")
        fi
        taken[$n]=1
        first[$name]=${first[$name]:-${entry##*/}}
        sub_names+=("$n")
        sub_paths+=("$entry")
    done < <(find "$1" -mindepth 1 -maxdepth 1 ! -name '.*' -print0 | sort -z)
}

# write_submissions: OUT/submissions.list, the submissions of this grading
# (NUL-separated: name, entry), against which the results are checked.
write_submissions() {
    local i
    for i in "${!sub_names[@]}"; do
        printf '%s\0%s\0' "${sub_names[$i]}" "${sub_entries[$i]}"
    done >"$out/submissions.list"
}

# fingerprint PATH: changes when the submission does.
fingerprint() {
    if [ -d "$1" ]; then
        (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16
    else
        sha256sum <"$1" | cut -c1-16
    fi
}

# graded_before NAME PATH: 0 when OUT holds a grading of this submission,
# as it is now, with these options, where every lab was graded. A grading
# that skipped a lab (no usable GPU, the GPU stayed busy) is done again.
graded_before() {
    local dir="$out/students/$1"
    [ "$again" = 0 ] && [ -f "$dir/done" ] && [ -f "$dir/record.json" ] &&
        [ "$(cat "$dir/done")" = "$(fingerprint "$2") labs=${labs_opt:-all} sanitize=$sanitize" ]
}

# roster_of NAME ENTRY: sets r_id and r_name from the roster (empty if
# none): the row whose submission is NAME (the name it is graded as), then
# ENTRY as it is in SUBMISSIONS, then ENTRY without an archive's extension
# (ENTRY is empty for a submission renamed for a collision: the row for
# its entry's name may be the other one's).
roster_of() {
    r_id="" r_name=""
    [ -n "$roster" ] || return 0
    { IFS= read -r -d '' r_id && IFS= read -r -d '' r_name; } < <(report_py roster "$roster" "$1" "${2:-}")
    return 0
}

# ---------------------------------------------------------------------------
# Grading one submission: under its own time limit (see main: --one)
# ---------------------------------------------------------------------------

# grade_one NAME PATH ENTRY: grades one student into OUT/students/NAME;
# returns 1 if the student could not be graded.
grade_one() {
    local name=$1 src=$2 entry=$3 dir="$out/students/$1" print rc skipped
    print="$(fingerprint "$src") labs=${labs_opt:-all} sanitize=$sanitize"
    if graded_before "$name" "$src"; then
        say "$name: graded before, kept"
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    say "$name: grading$([ -z "${CUDA_VISIBLE_DEVICES:-}" ] || echo " on GPU$([[ $CUDA_VISIBLE_DEVICES == *,* ]] && echo s) $CUDA_VISIBLE_DEVICES")"
    timeout -k 30 "$submission_limit" bash "$grade_dir/grade-class.sh" --one "$name" "$src" "$entry" \
        "${pass_on[@]}" -- "$subs" "$out" >"$dir/screen.txt" 2>"$dir/grade.log"
    rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        say "$name: NOT GRADED: the grading took more than $submission_limit s (--submission-limit); a rerun tries again"
        echo "not graded: more than $submission_limit s" >"$dir/not-graded"
        return 1
    fi
    if ! skipped=$(report_py skipped "$dir/record.json" 2>/dev/null); then
        say "$name: NOT GRADED: the grader stopped (exit status $rc), see $dir/grade.log; a rerun tries again"
        echo "not graded: the grader stopped (exit status $rc)" >"$dir/not-graded"
        return 1
    fi
    # Kept by a rerun only when every lab was graded.
    [ "$skipped" != 0 ] || echo "$print" >"$dir/done"
    say "$name: $(grep -h '^Total' "$dir/screen.txt" 2>/dev/null || echo "nothing graded")"
}

# one NAME PATH ENTRY: the work of grade_one, in its own process.
one() {
    local name=$1 src=$2 entry=$3 dir="$out/students/$1" why seed mode limit
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/kit-class.XXXXXX") || exit 3
    chmod 711 "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/labs" && chmod 777 "$tmp/labs"
    seed=$(((class_seed + $(printf '%s' "$name" | cksum | cut -d' ' -f1)) % 1000000000 + 1))
    roster_of "$name" "$entry"

    # The lab files, taken in the sandbox (as root: without capabilities,
    # so that it can read what the instructor can).
    sandbox_probe_log="$tmp/.probe"
    sandbox_setup "$out/.kit" "$ref_build" "$tmp" "$sandbox_mode" "$subs" "$out/students" || exit 3
    sandbox_prefix=() sandbox_user=""
    sb_extra=(--ro-bind "$src" "$src")
    limit=$(conf_get all source-limit)
    sandboxed 300 300 2048 262144 0 - "$tmp/labs" "$tmp/labs" -- \
        python3 "$out/.kit/common/grade/unpack.py" --file-limit "${limit:-262144}" \
        --digest "$tmp/labs/.lab-files.sha256" "$src" "$tmp/labs" "${labs_list[@]}" >"$tmp/why" 2>/dev/null
    why=$(head -c 300 "$tmp/why")
    [ "$run_rc" = 0 ] || why=${why:-"could not be unpacked (status $run_rc)"}
    sb_extra=()
    if [ "$run_rc" != 0 ]; then
        say "$name: $why"
        fail_all "$name" "$(one_line "$why")" "$seed" "$entry"
        return 0
    fi
    # What was graded, by content (Gradescope's import of these grades).
    mv -f "$tmp/labs/.lab-files.sha256" "$dir/lab-files.sha256" 2>/dev/null
    mode=--require-sandbox
    [ "$sandbox_mode" != none ] || mode=--no-sandbox
    bash "$out/.kit/common/grade/grade.sh" --student "${r_name:-$(shown_name "$name" "$entry")}" ${r_id:+--student-id "$r_id"} \
        --report "$dir" --reference-build "$ref_build" --seed "$seed" --labs-dir "$tmp/labs" \
        --origin "submission $name" "$mode" \
        --hide "$subs" --hide "$out/students" ${sanitize_opt:+"$sanitize_opt"} "${labs_list[@]}"
    return 0
}

# fail_all NAME REASON SEED [ENTRY]: the reports of a submission none of
# whose labs could be taken: every lab FAILs for REASON.
fail_all() {
    local lab
    declare -gA lab_v=() lab_p=() lab_r=() lab_x=()
    for lab in "${labs_list[@]}"; do
        lab_v[$lab]=FAIL lab_p[$lab]=0 lab_r[$lab]=$2 lab_x[$lab]=""
    done
    student_name=$(one_line "${r_name:-$(shown_name "$1" "${4:-}")}") student_id=$(one_line "${r_id:-}") grading_seed=$3
    report_mode="none: no lab was built or run (the submission's lab files could not be taken)"
    report_header=("Student: $student_name${student_id:+ (ID $student_id)}" "Not graded further: $2" "Mode: $report_mode")
    report_again="" report_gpu="" report_isolation=$sandbox origin="submission $1"
    work=$(mktemp -d "${TMPDIR:-/tmp}/kit-class.XXXXXX")
    echo "The submission's lab files could not be taken: $2" >"$work/log"
    reports_screen "${labs_list[@]}"
    reports_write "$out/students/$1" "${labs_list[@]}"
    rm -rf "$work"
}

# ---------------------------------------------------------------------------
# The class CSVs
# ---------------------------------------------------------------------------

# gather: OUT/class.csv, class-labs.csv, roster.csv, canvas.csv and
# moodle.csv, one row for each submission of this grading (a submission
# with no result is NOT GRADED, and named); sets not_graded and skipped.
gather() {
    local line counts
    not_graded=0 skipped=0
    while IFS= read -r line; do
        case $line in
        "NOT GRADED: "*) say "$line" ;;
        *) counts=$line ;;
        esac
    done < <(report_py gather "$out" "$(IFS=,; echo "${labs_list[*]}")" ${roster:+--roster "$roster"} \
        --assignment "$assignment")
    read -r not_graded skipped <<<"${counts:-x x}"
    [[ $not_graded =~ ^[0-9]+$ && $skipped =~ ^[0-9]+$ ]] || {
        echo "grade-class.sh: the class CSVs could not be written (kitreport.py gather)" >&2
        exit 3
    }
}

# ---------------------------------------------------------------------------

main() {
    local slurm=0 wait=1 gres="gpu:1" gpus="" task="" slurm_options=() one_args=() i arch=""
    local cpus=4 mem=16G throttle="" partition="" account="" per_gpu=""
    labs_opt="" sanitize=0 sanitize_opt="" again=0 class_seed="" submission_limit=3600 roster=""
    sandbox_mode=require pass_on=() ref_opt="" assignment=""
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
        --assignment)
            [[ $# -ge 2 && -n $2 ]] || die_usage "--assignment needs a name"
            assignment=$2; shift 2 ;;
        --gpus) [ $# -ge 2 ] || die_usage "--gpus needs a list"; gpus=$2; shift 2 ;;
        --per-gpu)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]?$ ]] || die_usage "--per-gpu needs a count from 1 to 99, e.g. --per-gpu 2"
            per_gpu=$2; shift 2 ;;
        --reference-build) [ $# -ge 2 ] || die_usage "--reference-build needs a folder"; ref_opt=$2; shift 2 ;;
        --arch) [[ $# -ge 2 && -n $2 ]] || die_usage "--arch needs a value, e.g. -arch=sm_90"; arch=$2; shift 2 ;;
        --submission-limit)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die_usage "--submission-limit needs seconds"
            submission_limit=$2; shift 2 ;;
        --no-sandbox) sandbox_mode=none; shift ;;
        --slurm) slurm=1; shift ;;
        --slurm-gres) [[ $# -ge 2 && -n $2 ]] || die_usage "--slurm-gres needs a value"; gres=$2; shift 2 ;;
        --slurm-cpus)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die_usage "--slurm-cpus needs a number"
            cpus=$2; shift 2 ;;
        --slurm-mem)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*[KMGT]?$ ]] || die_usage "--slurm-mem needs an amount, e.g. 16G"
            mem=$2; shift 2 ;;
        --slurm-throttle)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die_usage "--slurm-throttle needs a number"
            throttle=$2; shift 2 ;;
        --slurm-partition) [[ $# -ge 2 && -n $2 ]] || die_usage "--slurm-partition needs a name"; partition=$2; shift 2 ;;
        --slurm-account) [[ $# -ge 2 && -n $2 ]] || die_usage "--slurm-account needs a name"; account=$2; shift 2 ;;
        --slurm-option=*) slurm_options+=("${1#*=}"); shift ;;
        --slurm-option) [ $# -ge 2 ] || die_usage "--slurm-option needs a value"; slurm_options+=("$2"); shift 2 ;;
        --no-wait) wait=0; shift ;;
        --task) [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || die_usage "--task needs a number"; task=$2; shift 2 ;;
        --one) [ $# -ge 4 ] || die_usage "--one needs NAME PATH ENTRY"; one_args=("$2" "$3" "$4"); shift 4 ;;
        --) shift; break ;;
        -*) die_usage "unknown option '$1'" ;;
        *) break ;;
        esac
    done
    [ $# -eq 2 ] || die_usage "expected SUBMISSIONS and OUT (e.g. make grade-class SUBMISSIONS=hw1 OUT=grades-hw1)"
    [[ -n $1 && -d $1 ]] || die_usage "SUBMISSIONS '$1' is not a folder"
    [ -n "$2" ] || die_usage "OUT is empty: name a folder for the grades"
    command -v python3 >/dev/null 2>&1 ||
        { echo "grade-class.sh: python3 is needed (it writes and reads the CSV and JSON files)" >&2; exit 3; }
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
    assignment=${assignment:-$(basename "$subs")}
    # Refused before anything is written.
    out=$(realpath -m -- "$2") || die_usage "OUT '$2': not a path"
    case "$out/" in "$subs/"*) die_usage "OUT must not be inside SUBMISSIONS" ;; esac
    case "$subs/" in "$out/"*) die_usage "SUBMISSIONS must not be inside OUT" ;; esac
    mkdir -p "$out" || exit 3
    out=$(cd "$out" && pwd -P)
    # The GPU architecture of the references and of every student's build:
    # one for both, so that times compare. A Slurm array's nodes may hold
    # other GPUs than this machine: every major architecture, unless named.
    if [ -n "$arch" ]; then
        export KIT_ARCH=$arch
    elif [ "$slurm" = 1 ]; then
        export KIT_ARCH=-arch=all-major
    fi
    if [ -n "$ref_opt" ]; then
        mkdir -p "$ref_opt" && ref_build=$(cd "$ref_opt" && pwd -P)
    else
        ref_build=$out/.kit-build
    fi
    pass_on=(--seed "$(cat "$out/grading-seed" 2>/dev/null || echo 0)" ${labs_opt:+--labs "$labs_opt"}
        ${sanitize_opt:+"$sanitize_opt"} ${roster:+--roster "$roster"} --reference-build "$ref_build")
    [ "$sandbox_mode" != none ] || pass_on+=(--no-sandbox)

    if [ ${#one_args[@]} -gt 0 ]; then
        class_seed=$(cat "$out/grading-seed")
        conf_load "$out/.kit/common/grade/grading.conf" || exit 3
        one "${one_args[@]}"
        exit $?
    fi
    conf_load "$kit_top/common/grade/grading.conf" || exit 64

    # A Slurm task: grade task $task of the array, on the node's GPU, with
    # the references built once, before the array, in the shared OUT.
    if [ -n "$task" ]; then
        local name path entry
        { IFS= read -r -d '' name && IFS= read -r -d '' path && IFS= read -r -d '' entry; } <"$out/slurm/tasks/$task" ||
            { echo "grade-class.sh: no task $task in $out/slurm/tasks" >&2; exit 3; }
        grade_one "$name" "$path" "$entry"
        exit $?
    fi

    # One class grading of OUT at a time, whoever runs it.
    exec {out_lock}>>"$out/.lock"
    flock -n "$out_lock" || { echo "grade-class.sh: another grading is writing $out" >&2; exit 3; }

    # A Slurm job of an earlier run that has not ended: nothing is graded
    # twice at once.
    if [ -s "$out/slurm/job" ] && command -v squeue >/dev/null 2>&1; then
        slurm_job_state "$(cat "$out/slurm/job")"
        case $slurm_state in
        running)
            say "Slurm job $(cat "$out/slurm/job") of an earlier run has not ended; run the same command again when it has"
            exit 1 ;;
        unknown)
            say "squeue cannot say whether Slurm job $(cat "$out/slurm/job") of an earlier run has ended ($slurm_why); run the same command again later"
            exit 1 ;;
        esac
    fi

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
    write_submissions
    for i in "${sub_skipped[@]}"; do say "NOT GRADED: $i"; done
    roster_check
    if [ ${#sub_names[@]} = 0 ]; then
        say "no submissions in $subs"
        gather
        exit $((${#sub_skipped[@]} > 0 ? 1 : 0))
    fi
    say "${#sub_names[@]} submissions in $subs; class seed $class_seed"

    say "building the kit's references${KIT_ARCH:+ ($KIT_ARCH)}"
    build_references "$ref_build" || exit 3

    if [ "$slurm" = 1 ]; then
        run_slurm
        exit $?
    fi

    # Workers per GPU, each grading its share in turn: while some build
    # (niced), others run on the GPU. grade.sh's lock lets checked runs
    # share the GPU and gives each timed run the GPU alone, so more workers
    # change no time that is graded; by default a quarter of the cores (a
    # build takes about one, a run's checks a few), 2 to 4.
    if [ -z "$gpus" ]; then
        if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
            gpus=$CUDA_VISIBLE_DEVICES
        elif command -v nvidia-smi >/dev/null 2>&1 && n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') && [ "${n:-0}" -gt 0 ]; then
            gpus=$(seq -s, 0 $((n - 1)))
        fi
    fi
    local workers=() w=0 g every
    # A lab graded on every GPU (grading.conf: gpus = all) gets them all:
    # then no worker is kept to one GPU, and the other labs run on the first.
    every=$(labs_on_every_gpu)
    if [ -n "$every" ] && [[ $gpus == *,* ]]; then
        say "$every uses every GPU: each submission is graded with all of them ($gpus), the other labs on the first"
        gpus=${gpus//,/+}
    fi
    IFS=, read -r -a workers <<<"${gpus:-none}"
    if [ -z "$per_gpu" ]; then
        per_gpu=$(($(nproc 2>/dev/null || echo 4) / 4))
        [ "$per_gpu" -ge 2 ] || per_gpu=2
        [ "$per_gpu" -le 4 ] || per_gpu=4
    fi
    local one=("${workers[@]}")
    workers=()
    for ((i = 0; i < per_gpu; i++)); do workers+=("${one[@]}"); done
    if [[ $gpus == *+* ]]; then
        say "grading $per_gpu submissions at a time (--per-gpu changes it)"
    elif [ -n "$gpus" ]; then
        say "grading $per_gpu submissions at a time on each GPU ($gpus; --per-gpu changes it)"
    else
        say "grading $per_gpu submissions at a time (no GPU found; --per-gpu changes it)"
    fi
    for g in "${workers[@]}"; do
        (
            [ "$g" = none ] || export CUDA_VISIBLE_DEVICES=${g//+/,}
            for ((i = w; i < ${#sub_names[@]}; i += ${#workers[@]})); do
                grade_one "${sub_names[$i]}" "${sub_paths[$i]}" "${sub_entries[$i]}"
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
    local i line
    while IFS= read -r line; do
        say "$line in $subs"
    done < <(
        for i in "${!sub_names[@]}"; do
            printf '%s\0' "${sub_names[$i]}"
            [ -z "${sub_entries[$i]}" ] || printf '%s\0' "${sub_entries[$i]}" "$(safe_name "${sub_entries[$i]}")" \
                "$(sed -E 's/\.(tar\.gz|tar\.xz|tgz|tar|zip)$//' <<<"${sub_entries[$i]}")"
        done | report_py roster-unmatched "$roster"
    )
}

# build_references DIR: the references and kit-query, built from OUT/.kit
# with the compiler and architecture every student's build gets.
build_references() {
    # Where the judge grades, its programs too (make judges); a folder with
    # a space in its path, linked from one without (make cannot name it).
    local build=$1
    if [[ $build == *" "* ]]; then
        build=$(mktemp -d /tmp/kit-class-build.XXXXXX)/build
        ln -s "$1" "$build"
    fi
    if ! KIT_BUILD="$build" make -s --no-print-directory -C "$out/.kit" -j"$(nproc 2>/dev/null || echo 2)" \
        ${KIT_NVCC:+NVCC="$KIT_NVCC"} ${KIT_NVCC_FLAGS:+NVCCFLAGS="$KIT_NVCC_FLAGS"} ${KIT_ARCH:+ARCH="$KIT_ARCH"} \
        solutions judges "$build/bin/kit-query" >"$out/reference-build.log" 2>&1; then
        cat "$out/reference-build.log" >&2
        echo "grade-class.sh: the kit's references do not build; see $out/reference-build.log" >&2
        return 1
    fi
}

# finish: the class CSVs, a summary, and the exit status.
finish() {
    gather
    say "class.csv: $(($(wc -l <"$out/class.csv") - 1)) students; per lab: class-labs.csv; IDs: roster.csv;" \
        "LMS imports: canvas.csv, moodle.csv; reports: students/"
    python3 "$kit_top/common/report/class_page.py" "$out" --submissions "$subs" --kit "$kit_top" 2>&1 | sed 's/^/grade-class: /'
    if [ "$not_graded" -gt 0 ] || [ ${#sub_skipped[@]} -gt 0 ]; then
        say "$((not_graded + ${#sub_skipped[@]})) submissions NOT GRADED (see above); run again to retry"
        exit 1
    fi
    if [ "$skipped" != 0 ]; then
        say "$skipped students with a lab skipped (see class.csv): run again where a GPU is free to grade them"
        exit 2
    fi
    exit 0
}

# run_slurm: the submissions not graded in full as a job array on the
# references built above, then, unless --no-wait, gather: a submission
# whose task left no result is NOT GRADED, naming its task.
run_slurm() {
    local n=0 i job array poll=${KIT_SLURM_POLL:-20} sb=() name path entry
    command -v sbatch >/dev/null 2>&1 || { echo "grade-class.sh: --slurm: sbatch not found" >&2; return 3; }
    # An earlier run's job (--no-wait) has ended: what it left is gathered,
    # and a submission it left without a result is named before it is
    # submitted again.
    if [ -s "$out/slurm/job" ]; then
        slurm_results
        for ((i = 0; i < ${#sub_names[@]}; i++)); do
            [ ! -f "$out/students/${sub_names[$i]}/not-graded" ] ||
                say "${sub_names[$i]}: $(cat "$out/students/${sub_names[$i]}/not-graded"); submitted again"
        done
    fi
    rm -rf "$out/slurm/tasks"
    mkdir -p "$out/slurm/tasks"
    for ((i = 0; i < ${#sub_names[@]}; i++)); do
        if graded_before "${sub_names[$i]}" "${sub_paths[$i]}"; then
            continue
        fi
        # Its earlier results go: what this array leaves is all there is.
        rm -rf "${out:?}/students/${sub_names[$i]}"
        printf '%s\0%s\0%s\0' "${sub_names[$i]}" "${sub_paths[$i]}" "${sub_entries[$i]}" >"$out/slurm/tasks/$n"
        n=$((n + 1))
    done
    if [ "$n" = 0 ]; then
        say "every submission is graded already"
        finish
    fi
    {
        echo '#!/usr/bin/env bash'
        echo '# One task of the grading job array: grades submission SLURM_ARRAY_TASK_ID'
        echo '# with the references built once, before the array.'
        printf 'export KIT_ARCH=%q KIT_NVCC=%q KIT_NVCC_FLAGS=%q\n' "${KIT_ARCH:-}" "${KIT_NVCC:-nvcc}" "${KIT_NVCC_FLAGS:--O3 -lineinfo}"
        # shellcheck disable=SC2016 # expanded when the task runs
        printf 'exec bash %q --task "$SLURM_ARRAY_TASK_ID"' "$out/.kit/common/grade/grade-class.sh"
        printf ' %q' "${pass_on[@]}" --submission-limit "$submission_limit" -- "$subs" "$out"
        echo
    } >"$out/slurm/task.sh"
    array="0-$((n - 1))${throttle:+%$throttle}"
    sb=(--parsable --array="$array" --job-name=kit-grade --output="$out/slurm/task-%a.log"
        --time=$(((submission_limit + 59) / 60 + 10)) --cpus-per-task="$cpus" --mem="$mem")
    [ "$gres" = none ] || sb+=(--gres="$gres")
    [ -z "$partition" ] || sb+=(--partition="$partition")
    [ -z "$account" ] || sb+=(--account="$account")
    local every
    every=$(labs_on_every_gpu)
    if [ -n "$every" ] && [[ $gres == gpu:1 || $gres == gpu:*:1 ]]; then
        say "$every uses every GPU its task has: with gpu:1 its multi-GPU part is not graded (--slurm-gres gpu:2 asks for two)"
    fi
    say "submitting $n tasks to Slurm (array $array; each task: $cpus CPUs, $mem$([ "$gres" = none ] || echo ", $gres"))$([ "$wait" = 1 ] && echo ", and waiting for them")"
    job=$(sbatch "${sb[@]}" "${slurm_options[@]}" "$out/slurm/task.sh") || { echo "grade-class.sh: sbatch failed" >&2; return 3; }
    job=${job%%;*}
    [[ $job =~ ^[0-9]+$ ]] || { echo "grade-class.sh: sbatch gave no job ID ($(one_line "$job"))" >&2; return 3; }
    echo "$job" >"$out/slurm/job"
    if [ "$wait" = 0 ]; then
        say "job $job submitted; when it has ended, run the same command again to gather class.csv"
        return 1
    fi
    while slurm_job_state "$job" && [ "$slurm_state" = running ]; do
        sleep "$poll"
    done
    if [ "$slurm_state" = unknown ]; then
        # Nothing is marked NOT GRADED: the tasks may still be running.
        say "squeue cannot say whether job $job has ended ($slurm_why); run the same command again to gather class.csv"
        return 1
    fi
    slurm_results
    finish
}

# slurm_job_state JOB: sets slurm_state to running while the job has tasks
# in Slurm's queue, ended once it has none (or Slurm no longer knows it),
# and unknown where squeue kept failing otherwise (the controller out of
# reach; its last error in slurm_why). A failing squeue is never taken for
# an ended job.
slurm_job_state() {
    local got err tries=0
    slurm_why=""
    err=$(mktemp "${TMPDIR:-/tmp}/kit-squeue.XXXXXX") || { slurm_state=unknown slurm_why="no temporary file"; return 0; }
    while ! got=$(squeue -h -j "$1" -o %i 2>"$err"); do
        if grep -q "Invalid job id" "$err"; then
            rm -f "$err"
            slurm_state=ended
            return 0
        fi
        slurm_why=$(one_line "$(head -c 300 "$err")")
        slurm_why=${slurm_why:-squeue exited with an error}
        tries=$((tries + 1))
        if [ "$tries" -ge "${KIT_SLURM_TRIES:-5}" ]; then
            rm -f "$err"
            slurm_state=unknown
            return 0
        fi
        sleep "${KIT_SLURM_POLL:-20}"
    done
    rm -f "$err"
    # Its job IDs on standard output; a warning on standard error is not one.
    if [ -n "$got" ]; then slurm_state=running; else slurm_state=ended; fi
}

# slurm_results: after the job array of OUT/slurm/job has ended, every
# task's submission must have a result; one that has none (its task failed,
# was cancelled, or was lost with its node) is marked NOT GRADED, naming
# the task, so that the class CSVs and the exit status say so.
slurm_results() {
    local job t i name path entry
    [ -s "$out/slurm/job" ] || return 0
    job=$(cat "$out/slurm/job")
    for t in "$out"/slurm/tasks/*; do
        [ -f "$t" ] || continue
        i=${t##*/}
        { IFS= read -r -d '' name && IFS= read -r -d '' path && IFS= read -r -d '' entry; } <"$t" || continue
        if [ ! -f "$out/students/$name/record.json" ] && [ ! -f "$out/students/$name/not-graded" ]; then
            mkdir -p "$out/students/$name"
            echo "not graded: Slurm task $i of job $job left no result (see $out/slurm/task-$i.log)" \
                >"$out/students/$name/not-graded"
        fi
    done
    rm -f "$out/slurm/job"
}

main "$@"
