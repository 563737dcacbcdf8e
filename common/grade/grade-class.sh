#!/usr/bin/env bash
# make grade-class: grades a whole class with common/grade/grade.sh.
#
# Each submission (a folder, or an archive of the labs/ tree) is graded in
# its own temporary copy of this kit, taken when the grading starts: only
# the lab sources (labs/NN-name/name.cu) come from the submission, never
# its Makefile, tests or headers. Each GPU grades one submission at a time;
# a submission that breaks anything is graded FAIL on its own and the rest
# go on. Graded students are kept, so that a rerun resumes.
#
# OUT/class.csv        a row per student: total, points per lab
# OUT/class-labs.csv   a row per student and lab: verdict, points, reason
# OUT/students/NAME/   report.txt, grades.csv, grades.tap, grades.xml, grade.log
set -uo pipefail

kit_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

usage() {
    cat <<'EOF'
usage: grade-class.sh [options] SUBMISSIONS OUT

SUBMISSIONS is a folder with one entry per student, named after the student:
a folder (holding labs/, or the lab folders themselves) or an archive of one
(.tar, .tar.gz, .tgz, .tar.xz, .zip). OUT receives class.csv, class-labs.csv
and a report per student; run again to resume where a grading stopped.

options:
  --labs LIST          grade only these labs, e.g. 01,03 (default: all)
  --seed S             class grading seed (default: drawn, kept in OUT/grading-seed);
                       each student's sizes and seeds are drawn from it and their name
  --sanitize           also run each lab under compute-sanitizer
  --again              grade every student again, even those already graded
  --gpus LIST          GPUs to use, e.g. 0,1 (default: all; one submission per GPU at a time)
  --submission-limit S seconds one submission may take in all (default 7200)
  --slurm              grade as a Slurm job array: one task and one GPU per submission
  --slurm-gres G       the GPU request of each task (default gpu:1; none: no request)
  --slurm-option OPT   pass OPT to sbatch, e.g. --slurm-option=--partition=gpu (repeatable)
  --no-wait            with --slurm: submit and return; run again later to gather
  --help               print this help and exit

exit status: 0 the class was graded (whatever its grades), 1 the grading
itself could not be done, 64 bad command line.
EOF
}

die_usage() {
    echo "grade-class.sh: $*" >&2
    echo "grade-class.sh: see grade-class.sh --help" >&2
    exit 64
}

say() { echo "grade-class: $*"; }

# ---------------------------------------------------------------------------
# Submissions
# ---------------------------------------------------------------------------

# student_name ENTRY: the student's name from a submission's file name.
student_name() {
    local n
    n=$(basename "$1")
    n=${n%.tar.gz} n=${n%.tar.xz} n=${n%.tgz} n=${n%.tar} n=${n%.zip}
    printf '%s' "$n" | tr -c 'A-Za-z0-9._@+-' _
}

# list_submissions DIR: one line per entry, "NAME<TAB>PATH", sorted.
list_submissions() {
    local entry
    for entry in "$1"/*; do
        [ -e "$entry" ] || continue
        case $entry in
        *.tar | *.tar.gz | *.tgz | *.tar.xz | *.zip) ;;
        *) [ -d "$entry" ] || continue ;;
        esac
        printf '%s\t%s\n' "$(student_name "$entry")" "$(cd "$(dirname "$entry")" && pwd)/$(basename "$entry")"
    done | sort
}

# fingerprint PATH: changes when the submission does.
fingerprint() {
    if [ -d "$1" ]; then
        (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16
    else
        sha256sum <"$1" | cut -c1-16
    fi
}

# unpack PATH DEST: the submission's files in DEST; fails with a reason.
unpack() {
    local src=$1 dest=$2
    mkdir -p "$dest"
    case $src in
    *.zip)
        command -v unzip >/dev/null 2>&1 || { echo "cannot unpack a .zip: unzip is not installed"; return 1; }
        unzip -q -o "$src" -d "$dest" >/dev/null 2>&1 || { echo "a damaged .zip archive"; return 1; } ;;
    *.tar | *.tar.gz | *.tgz | *.tar.xz)
        # GNU tar drops leading / and refuses members that climb out with ..
        tar -xf "$src" -C "$dest" --no-same-owner --no-same-permissions 2>/dev/null ||
            { echo "a damaged archive"; return 1; } ;;
    *) cp -R "$src/." "$dest/" 2>/dev/null || { echo "cannot read the submission"; return 1; } ;;
    esac
}

# labs_root DIR: the folder that holds the lab folders (NN-name/).
labs_root() {
    local d=$1 sub
    for _ in 1 2 3; do
        [ -d "$d/labs" ] && { echo "$d/labs"; return 0; }
        compgen -G "$d/[0-9][0-9]-*/" >/dev/null && { echo "$d"; return 0; }
        # One folder around it (an archive of the kit, say): look inside.
        sub=("$d"/*/)
        [ ${#sub[@]} -eq 1 ] && [ -d "${sub[0]}" ] || return 1
        d=${sub[0]%/}
    done
    return 1
}

# ---------------------------------------------------------------------------
# Grading one submission
# ---------------------------------------------------------------------------

# grade_one NAME PATH REFERENCE_BUILD: grades one student into OUT/students/NAME.
grade_one() {
    local name=$1 src=$2 ref_build=$3 dir="$out/students/$1" tmp root lab file seed why="" rc
    local print
    print=$(fingerprint "$src")" labs=${labs_opt:-all} sanitize=$sanitize"
    if [ "$again" = 0 ] && [ -f "$dir/done" ] && [ "$(cat "$dir/done")" = "$print" ]; then
        say "$name: graded before, kept"
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/kit-class.XXXXXX")
    # The kit as it was when the grading started, without its labs.
    cp -Rp "$out/.kit" "$tmp/kit"
    rm -rf "$tmp/kit/labs" && mkdir -p "$tmp/kit/labs"
    if why=$(unpack "$src" "$tmp/submission"); then
        if root=$(labs_root "$tmp/submission"); then
            # Only the lab sources, and only regular files.
            for lab in $all_labs; do
                file="$root/$lab/${lab#*-}.cu"
                if [ -f "$file" ] && [ ! -L "$file" ]; then
                    mkdir -p "$tmp/kit/labs/$lab"
                    cp "$file" "$tmp/kit/labs/$lab/"
                fi
            done
        else
            why="no labs/ folder and no lab folders (01-coalescing/, ...) in the submission"
        fi
    fi
    seed=$(((class_seed + $(printf '%s' "$name" | cksum | cut -d' ' -f1)) % 1000000000 + 1))
    if [ -n "$why" ]; then
        # Nothing to grade: every lab fails for that reason.
        say "$name: $why"
        fail_all "$name" "$why" "$seed"
    else
        say "$name: grading$([ -z "${CUDA_VISIBLE_DEVICES:-}" ] || echo " on GPU $CUDA_VISIBLE_DEVICES"), seed $seed"
        # shellcheck disable=SC2086
        timeout -k 30 "$submission_limit" bash "$tmp/kit/common/grade/grade.sh" --student "$name" \
            --report "$dir" --reference-build "$ref_build" --seed "$seed" \
            $([ "$sanitize" = 0 ] || echo --sanitize) $labs_list >"$dir/screen.txt" 2>"$dir/grade.log"
        rc=$?
        if [ ! -s "$dir/grades.csv" ]; then
            rm -rf "$tmp"
            say "$name: the grader stopped (exit status $rc): see $dir/grade.log; a rerun tries again"
            fail_all "$name" "the grader stopped (exit status $rc); see grade.log" "$seed"
            return 0
        fi
    fi
    rm -rf "$tmp"
    echo "$print" >"$dir/done"
    say "$name: $(grep -h '^Total' "$dir/screen.txt" 2>/dev/null || echo "nothing graded")"
}

# fail_all NAME REASON SEED: a grades.csv that fails every lab for REASON.
fail_all() {
    local lab
    {
        echo '"student","lab","verdict","points","max_points","time_vs_reference","reason","notes","grading_seed","gpu"'
        for lab in ${labs_list:-$all_labs}; do
            printf '"%s","%s","FAIL","0","%s","","%s","","%s",""\n' "$1" "$lab" \
                "$(lab_points "$lab")" "${2//\"/\"\"}" "$3"
        done
    } >"$out/students/$1/grades.csv"
    printf 'Not graded: %s.\nEvery lab FAILs with that reason.\nTotal 0 points\n' "$2" |
        tee "$out/students/$1/screen.txt" >"$out/students/$1/report.txt"
}

# lab_points LAB: the lab's points from the kit's grading.conf.
lab_points() {
    awk -v lab="$1" '
        { sub(/#.*/, "") }
        /^\[/ { s = $0; gsub(/[][ \t]/, "", s); next }
        $1 == "points" && $2 == "=" { if (s == "all") all = $3; if (s == lab) own = $3 }
        END { print (own != "" ? own : all) }' "$out/.kit/common/grade/grading.conf"
}

# ---------------------------------------------------------------------------
# The class CSV
# ---------------------------------------------------------------------------

# gather: OUT/class.csv and OUT/class-labs.csv from the students' grades.
gather() {
    local f first=1 labs_seen
    : >"$out/class-labs.csv"
    for f in "$out"/students/*/grades.csv; do
        [ -f "$f" ] || continue
        if [ $first = 1 ]; then head -n 1 "$f" >"$out/class-labs.csv"; first=0; fi
        tail -n +2 "$f" >>"$out/class-labs.csv"
    done
    labs_seen=${labs_list:-$all_labs}
    awk -v labs="$labs_seen" '
        # A CSV line into f[1..n]; fields may be quoted, with "" for ".
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
        }
        BEGIN {
            nl = split(labs, L, " ")
            printf "student,points,max_points,passed,failed,skipped"
            for (i = 1; i <= nl; i++) printf ",%s", L[i]
            print ",status"
        }
        FNR == 1 { next }
        {
            split_csv($0, f)
            s = f[1]
            if (!(s in seen)) { seen[s] = 1; order[++ns] = s }
            pts[s, f[2]] = f[4]; verdict[s, f[2]] = f[3]
            max[s] += f[5]; total[s] += f[4]
            if (f[3] == "PASS") pass[s]++; else if (f[3] == "FAIL") fail[s]++; else skip[s]++
        }
        END {
            for (k = 1; k <= ns; k++) {
                s = order[k]
                printf "%s,%s,%s,%d,%d,%d", s, total[s], max[s], pass[s], fail[s], skip[s]
                for (i = 1; i <= nl; i++) printf ",%s", pts[s, L[i]]
                print "," (skip[s] ? "incomplete: a lab was skipped" : "graded")
            }
        }' "$out/class-labs.csv" >"$out/class.csv"
}

# ---------------------------------------------------------------------------

main() {
    local subs="" slurm=0 wait=1 gres="gpu:1" gpus="" task="" slurm_options=() list
    labs_opt="" labs_list="" sanitize=0 again=0 class_seed="" submission_limit=7200
    while [ $# -gt 0 ]; do
        case $1 in
        --help | -h) usage; exit 0 ;;
        --labs) [ $# -ge 2 ] || die_usage "--labs needs a list"; labs_opt=$2; shift 2 ;;
        --labs=*) labs_opt=${1#*=}; shift ;;
        --seed)
            [[ $# -ge 2 && $2 =~ ^[0-9]{1,15}$ ]] || die_usage "--seed needs a whole number"
            class_seed=$((10#$2)); shift 2 ;;
        --sanitize) sanitize=1; shift ;;
        --again) again=1; shift ;;
        --gpus) [ $# -ge 2 ] || die_usage "--gpus needs a list"; gpus=$2; shift 2 ;;
        --submission-limit)
            [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die_usage "--submission-limit needs seconds"
            submission_limit=$2; shift 2 ;;
        --slurm) slurm=1; shift ;;
        --slurm-gres) [ $# -ge 2 ] || die_usage "--slurm-gres needs a value"; gres=$2; shift 2 ;;
        --slurm-option=*) slurm_options+=("${1#*=}"); shift ;;
        --slurm-option) [ $# -ge 2 ] || die_usage "--slurm-option needs a value"; slurm_options+=("$2"); shift 2 ;;
        --no-wait) wait=0; shift ;;
        --task) [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || die_usage "--task needs a number"; task=$2; shift 2 ;;
        --) shift; break ;;
        -*) die_usage "unknown option '$1'" ;;
        *) break ;;
        esac
    done
    [ $# -eq 2 ] || die_usage "expected SUBMISSIONS and OUT (e.g. make grade-class SUBMISSIONS=hw1 OUT=grades-hw1)"
    [[ -n $1 && -d $1 ]] || die_usage "SUBMISSIONS '$1' is not a folder"
    [ -n "$2" ] || die_usage "OUT is empty: name a folder for the grades"
    all_labs=$(grep -v '^[[:space:]]*\(#\|$\)' "$kit_top/common/labs.txt" | tr '\n' ' ')
    if [ -n "$labs_opt" ]; then
        local want l found
        for want in ${labs_opt//,/ }; do
            found=""
            for l in $all_labs; do
                case $l in "$want" | "$want"-* | *-"$want") found=$l ;; esac
            done
            [ -n "$found" ] || die_usage "--labs: no lab '$want' (labs: $all_labs)"
            labs_list+="${labs_list:+ }$found"
        done
    fi

    subs=$(cd "$1" && pwd)
    mkdir -p "$2" || exit 1
    out=$(cd "$2" && pwd)
    case "$out/" in "$subs/"*) die_usage "OUT must not be inside SUBMISSIONS" ;; esac

    # A Slurm task: grade line $task of the queue, on the node's GPU.
    if [ -n "$task" ]; then
        class_seed=$(cat "$out/grading-seed")
        list=$(sed -n "$((task + 1))p" "$out/slurm/queue.txt")
        [ -n "$list" ] || { echo "grade-class.sh: no task $task in $out/slurm/queue.txt" >&2; exit 1; }
        local node_tmp
        node_tmp=$(mktemp -d "${TMPDIR:-/tmp}/kit-task.XXXXXX")
        # The references are built on the node, for its GPU.
        grade_one "${list%%$'\t'*}" "${list#*$'\t'}" "$node_tmp/build"
        rm -rf "$node_tmp"
        exit 0
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

    # The kit as it is now, for every submission; timestamps kept so that
    # the references are not rebuilt on a rerun.
    rm -rf "$out/.kit"
    mkdir -p "$out/.kit" "$out/students"
    cp -Rp "$kit_top/Makefile" "$kit_top/common" "$kit_top/solutions" "$kit_top/labs" "$out/.kit/"

    list=$(list_submissions "$subs")
    [ -n "$list" ] || { say "no submissions in $subs"; gather; exit 0; }
    say "$(wc -l <<<"$list") submissions in $subs; class seed $class_seed"

    if [ "$slurm" = 1 ]; then
        run_slurm "$list"
        exit $?
    fi

    # The references, built once for this machine's GPU.
    say "building the kit's references"
    if ! KIT_BUILD="$out/.kit-build" make -s --no-print-directory -C "$out/.kit" solutions "$out/.kit-build/bin/kit-query" \
        >"$out/reference-build.log" 2>&1; then
        cat "$out/reference-build.log" >&2
        echo "grade-class.sh: the kit's references do not build; see $out/reference-build.log" >&2
        exit 1
    fi

    # One worker per GPU, each grading its share in turn.
    if [ -z "$gpus" ]; then
        if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
            gpus=$CUDA_VISIBLE_DEVICES
        elif command -v nvidia-smi >/dev/null 2>&1 && n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU'); [ "${n:-0}" -gt 0 ]; then
            gpus=$(seq -s, 0 $((n - 1)))
        fi
    fi
    local workers=() w=0 i name path g
    IFS=, read -r -a workers <<<"${gpus:-none}"
    for g in "${workers[@]}"; do
        (
            [ "$g" = none ] || export CUDA_VISIBLE_DEVICES=$g
            i=0
            while IFS=$'\t' read -r name path; do
                if [ $((i % ${#workers[@]})) = "$w" ]; then
                    if command -v flock >/dev/null 2>&1 && [ "$g" != none ]; then
                        # One grading per GPU, even across gradings started at once.
                        (flock 9 && grade_one "$name" "$path" "$out/.kit-build") 9>"${TMPDIR:-/tmp}/kit-gpu-$g.lock"
                    else
                        grade_one "$name" "$path" "$out/.kit-build"
                    fi
                fi
                i=$((i + 1))
            done <<<"$list"
        ) &
        w=$((w + 1))
    done
    wait
    gather
    say "class.csv: $(($(wc -l <"$out/class.csv") - 1)) students; per lab: class-labs.csv; reports: students/"
}

# run_slurm LIST: the ungraded submissions as a job array, then gather.
run_slurm() {
    local list=$1 name path queue="$out/slurm/queue.txt" n gres_opt=() job
    command -v sbatch >/dev/null 2>&1 || { echo "grade-class.sh: --slurm: sbatch not found" >&2; return 1; }
    mkdir -p "$out/slurm"
    : >"$queue"
    while IFS=$'\t' read -r name path; do
        if [ "$again" = 0 ] && [ -f "$out/students/$name/done" ] &&
            [ "$(cat "$out/students/$name/done")" = "$(fingerprint "$path") labs=${labs_opt:-all} sanitize=$sanitize" ]; then
            continue
        fi
        printf '%s\t%s\n' "$name" "$path" >>"$queue"
    done <<<"$list"
    n=$(wc -l <"$queue")
    if [ "$n" = 0 ]; then
        say "every submission is graded already"
        gather
        return 0
    fi
    cat >"$out/slurm/task.sh" <<EOF
#!/usr/bin/env bash
# One task of the grading job array: grades submission \$SLURM_ARRAY_TASK_ID.
exec bash "$out/.kit/common/grade/grade-class.sh" --task "\$SLURM_ARRAY_TASK_ID" \\
    ${labs_opt:+--labs "$labs_opt"} $([ "$sanitize" = 0 ] || echo --sanitize) \\
    --submission-limit "$submission_limit" -- "$subs" "$out"
EOF
    [ "$gres" = none ] || gres_opt=(--gres="$gres")
    say "submitting $n tasks to Slurm$([ "$wait" = 1 ] && echo ", and waiting for them")"
    job=$(sbatch --parsable --array=0-$((n - 1)) --job-name=kit-grade \
        --output="$out/slurm/task-%a.log" --time=$(((submission_limit + 59) / 60 + 5)) \
        "${gres_opt[@]}" "${slurm_options[@]}" $([ "$wait" = 1 ] && echo --wait) \
        "$out/slurm/task.sh") || { echo "grade-class.sh: sbatch failed" >&2; return 1; }
    if [ "$wait" = 0 ]; then
        say "job ${job%%;*} submitted; when it ends, run the same command again to gather class.csv"
        return 0
    fi
    gather
    say "class.csv: $(($(wc -l <"$out/class.csv") - 1)) students (Slurm job ${job%%;*}); reports: students/"
}

main "$@"
