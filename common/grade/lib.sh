# lib.sh - the grader's parts, sourced by grade.sh, grade-class.sh and the
# kit's tests. Nothing here runs on its own.
#
#   settings        grading.conf, the lab list, drawn options
#   rules           what the student's text may hold (rules.awk)
#   objects         what the compiler made of it (symbols, initialisers, PTX)
#   sandbox         bubblewrap around every build and run of student code
#   runs            a program's verdict from the harness's result channel
#   locks           one grading per GPU, across users
#   reports         text for people; CSV, TAP, JUnit and JSON by kitreport.py
#
# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # a library: it sets and reads its callers' globals

kit_grade_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# Where the grader runs: the GPU's device nodes, the reports' platform line.
# shellcheck source=common/grade/platform.sh
source "$kit_grade_dir/platform.sh"

# ===========================================================================
# Settings
# ===========================================================================

declare -gA conf=()

# Keys whose lines add up (in a section, and a lab's to [all]'s).
conf_list_keys=" forbidden kit-names allow-symbols allow-symbols-counted allow-device-symbols hide "

# conf_load FILE: reads every lab's settings (common/lab/NN-name/lab.conf
# of the kit FILE belongs to, where FILE is that kit's grading.conf; else
# of this kit), then FILE (grading.conf), into conf[section.key]; FILE's
# keys override the labs' own (a list key's lines add up).
conf_load() {
    local lab_conf labs=$kit_grade_dir/../lab
    [ ! -d "$(dirname "$1")/../lab" ] || labs=$(dirname "$1")/../lab
    for lab_conf in "$labs"/[0-9][0-9]-*/lab.conf; do
        [ -e "$lab_conf" ] || continue
        conf_read "$lab_conf" "$(basename "$(dirname "$lab_conf")")" || return 1
    done
    conf_read "$1" all
}

# conf_read FILE SECTION: reads FILE's lines into conf[section.key],
# starting in SECTION; a lab's lab.conf (SECTION its lab) may hold no
# other section.
conf_read() {
    local file=$1 line section=$2 key value own=$2
    [ -r "$file" ] || { echo "cannot read $file" >&2; return 1; }
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%%#*}
        [[ $line =~ ^[[:space:]]*$ ]] && continue
        if [[ $line =~ ^[[:space:]]*\[([A-Za-z0-9_-]+)\][[:space:]]*$ ]]; then
            section=${BASH_REMATCH[1]}
            if [ "$own" != all ] && [ "$section" != "$own" ]; then
                echo "$file: a section [$section] in lab $own's settings (a copied folder?): only [$own] belongs here" >&2
                return 1
            fi
        elif [[ $line =~ ^[[:space:]]*([a-z0-9-]+)[[:space:]]*=[[:space:]]*(.*)$ ]]; then
            key=${BASH_REMATCH[1]}
            value=${BASH_REMATCH[2]%"${BASH_REMATCH[2]##*[![:space:]]}"}
            if [[ $conf_list_keys == *" $key "* ]] && [ -n "${conf[$section.$key]:-}" ]; then
                conf[$section.$key]+=" $value"
            else
                conf[$section.$key]=$value
            fi
        else
            echo "$file: cannot read this line: $line" >&2
            return 1
        fi
    done <"$file"
}

# conf_get LAB KEY: the lab's value, else [all]'s, else empty. For a list
# key, [all]'s and the lab's together.
conf_get() {
    if [[ $conf_list_keys == *" $2 "* ]]; then
        printf '%s' "${conf[all.$2]:-}${conf[$1.$2]:+ ${conf[$1.$2]}}"
    elif [ -n "${conf[$1.$2]+set}" ]; then
        printf '%s' "${conf[$1.$2]}"
    else
        printf '%s' "${conf[all.$2]:-}"
    fi
}

# kit_labs KIT: the kit's labs (its folders common/lab/NN-name), one per
# line, in the order of their numbers.
# shellcheck source=common/lab/labs.sh
source "$kit_grade_dir/../lab/labs.sh"

# lab_resolve WANT LAB...: the lab WANT names (01, 01-coalescing, coalescing).
lab_resolve() {
    local want=$1 l found=""
    shift
    [[ $want =~ ^[A-Za-z0-9-]+$ ]] || return 1
    for l in "$@"; do
        case $l in "$want" | "$want"-* | 0"$want"-* | *-"$want") found=$l ;; esac
    done
    [ -n "$found" ] && printf '%s' "$found"
}

# ===========================================================================
# Drawing sizes and seeds: a 64-bit LCG, so that a grading seed repeats them
# ===========================================================================

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

# expand_args TEMPLATE: sets drawn to TEMPLATE with its placeholders drawn:
# {seed}, {size:LO:HI} (odd), {int:LO:HI}, {pow2:LO:HI}. Not for $(...):
# the draws must advance this shell's stream.
expand_args() {
    local word words=() lo hi k
    for word in $1; do
        if [ "$word" = "{seed}" ]; then
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
        words+=("$word")
    done
    # shellcheck disable=SC2034 # read by the callers
    drawn="${words[*]}"
}

# ===========================================================================
# Text for reports
# ===========================================================================

# A UTF-8 locale for the text functions below (C.UTF-8 is built into glibc
# 2.35 and later, and Debian and Ubuntu have long shipped it); none: bytes,
# and text outside ASCII becomes '?'.
kit_utf8_locale=$(locale -a 2>/dev/null | grep -m1 -ixE 'c\.utf-?8|en_us\.utf-?8' || true)

# one_line TEXT: TEXT as one line of printable text, at most 400
# characters, for a report: invalid UTF-8 dropped, control characters
# made spaces, the characters that reorder or hide text (bidirectional
# overrides and isolates, zero-width marks, a BOM) removed. Any script is
# kept ("Carol Ö" stays so).
one_line() {
    local s
    if [ -z "$kit_utf8_locale" ]; then
        s=${1//[$'\t\n\r']/ }
        s=$(LC_ALL=C tr -c '[:print:]' '?' <<<"$s" | head -c 400)
        printf '%s' "${s%\?}"
        return
    fi
    local LC_ALL=$kit_utf8_locale
    s=$(printf '%s' "$1" | iconv -f UTF-8 -t UTF-8 -c 2>/dev/null) || s=${s:-}
    s=${s//[[:cntrl:]]/ }
    s=${s//[$'\xe2\x80\x8b'-$'\xe2\x80\x8f'$'\xe2\x80\xaa'-$'\xe2\x80\xae'$'\xe2\x81\xa6'-$'\xe2\x81\xa9'$'\xef\xbb\xbf']/}
    s=${s#"${s%%[![:space:]]*}"}
    s=${s%"${s##*[![:space:]]}"}
    printf '%s' "${s:0:400}"
}

# ===========================================================================
# Rules on the text
# ===========================================================================

# source_check FILE LAB: sets rule_line and rule_reason to the first rule
# the file breaks (rule_reason empty when it keeps them all). Bounded: a
# file larger than source-limit bytes is refused unread.
source_check() {
    local file=$1 lab=$2 size limit out rc
    rule_line="" rule_reason=""
    limit=$(conf_get "$lab" source-limit)
    size=$(stat -c %s -- "$file")
    if [ "$size" -gt "${limit:-262144}" ]; then
        rule_reason="is $size bytes; a lab file may be at most ${limit:-262144}"
        return
    fi
    if [ "$(LC_ALL=C tr -d '\000' <"$file" | wc -c)" != "$size" ]; then
        rule_reason="holds NUL bytes: it is not a text file"
        return
    fi
    if [ "$size" -gt 0 ] && [ "$(tail -c 1 -- "$file" | od -An -tx1 | tr -d ' ')" = 0d ]; then
        rule_line=$(($(wc -l <"$file") + 1))
        rule_reason="a bare carriage return (CR without LF) inside a line: save the file with plain line ends"
        return
    fi
    out=$(LC_ALL=C timeout 60 awk -v forbidden="$(conf_get "$lab" forbidden)" \
        -v kit_names="$(conf_get "$lab" kit-names)" -f "$kit_grade_dir/rules.awk" "$file") && rc=0 || rc=$?
    if [ "$rc" = 1 ] && [[ $out == *$'\t'* ]]; then
        rule_line=${out%%$'\t'*} rule_reason=${out#*$'\t'}
    elif [ "$rc" != 0 ]; then
        rule_reason="could not be read by the rule check (status $rc)"
    fi
}

# ===========================================================================
# What the compiler made of it
# ===========================================================================

# demangle NAME: NAME as people read it.
demangle() {
    local d
    d=$(c++filt -- "$1" 2>/dev/null) || d=$1
    printf '%s' "$(one_line "${d:-$1}")"
}

# object_check OBJ BUILD LAB KEEPDIR SRC: sets obj_reason to what the object
# OBJ of the student's file SRC (BUILD: timed or counted; KEEPDIR: nvcc's
# intermediate files, keep-timed's for a counted object made from the timed
# one) holds that a lab file may not; empty when nothing.
#   - code that runs before main: initialisers other than the CUDA
#     runtime's own registration (__sti____cudaRegisterAll);
#   - names defined outside the file's own namespace (kit_timed or
#     kit_count): an interposed function of the runtime or the C library;
#   - host functions it calls that the lab does not allow (allow-symbols);
#   - inline assembly in the student's code, and device functions it calls
#     that the lab does not allow (the PTX: allow-device-symbols).
obj_reason=""
object_check() {
    local obj=$1 build=$2 lab=$3 keep=$4 src=$5
    local sections symbols relocs bad allow ptx name plain
    obj_reason=""
    # A counted object made from the timed one (no second compilation, so no
    # PTX of its own): its device code is the timed PTX, and the kit's
    # counting calls (common/tools/count-object.sh).
    [ -d "$keep" ] || [ "$build" != counted ] || keep=$(dirname -- "$keep")/keep-timed
    sections=$(readelf -SW -- "$obj" 2>/dev/null) || { obj_reason="the compiler's object cannot be read"; return; }
    symbols=$(readelf -sW -- "$obj" 2>/dev/null)
    relocs=$(readelf -rW -- "$obj" 2>/dev/null)

    # Initialisers: sections that run code at start or exit, and each entry
    # of .init_array resolved to its function.
    sections=$(sed -n 's/^ *\[ *\([0-9][0-9]*\)\] \([^ ]*\).*/\1 \2/p' <<<"$sections")
    bad=$(awk '{ print $2 }' <<<"$sections" | grep -m1 -xE '\.(ctors|dtors|preinit_array|fini_array|init|fini)(\..*)?' || true)
    if [ -n "$bad" ]; then
        obj_reason="runs code before or after main (its object has a $bad section): a lab file may not"
        return
    fi
    bad=$(awk -v secs="$sections" -v syms="$symbols" '
        function hex(h,    v, i) {
            v = 0; h = tolower(h)
            for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
            return v
        }
        BEGIN {
            n = split(secs, L, "\n")
            for (i = 1; i <= n; i++) { split(L[i], f, " "); secidx[f[2]] = f[1] }
            n = split(syms, L, "\n")
            for (i = 1; i <= n; i++) {
                split(L[i], f, " ")
                if (f[4] == "FUNC") func_at[f[7], hex(f[2])] = f[8]
            }
        }
        /^Relocation section/ { inside = ($3 ~ /init_array/); next }
        inside && $1 ~ /^[0-9a-f]+$/ && NF >= 5 {
            sym = $5; add = ($(NF - 1) == "+" ? $NF : 0)
            name = sym ~ /^\./ ? func_at[secidx[sym], hex(add)] : sym
            if (name !~ /__sti____cudaRegisterAll/) { print (name == "" ? sym "+" add : name); exit }
        }' <<<"$relocs")
    if [ -n "$bad" ]; then
        case $bad in
        _GLOBAL__sub_I*) bad="a global or static object initialised by code: a constructor, a lambda or a call" ;;
        *) bad=$(demangle "$bad") ;;
        esac
        obj_reason="runs code before main ($bad), which a lab file may not; set things up in the functions the harness calls"
        return
    fi

    # Names it defines: only its own, in its namespace, and what the kit's
    # wrapper (student.cu) and the compiler add.
    bad=$(nm -P -- "$obj" 2>/dev/null | awk '
        $2 ~ /^[A-Z]$/ && $2 != "U" || $2 ~ /^[uvwi]$/ && $2 != "w" && $2 != "v" {
            n = $1
            if (n ~ /^_Z[A-Z]*N[K]?(9kit_timed|9kit_count)/) next
            if (n ~ /^_Z[A-Z]*N[K]?[0-9]+kit_/ || n ~ /^_Z[0-9]+kit_/ || n ~ /^kit_/) next
            if (n ~ /^_Z[0-9]+__device_stub__Z[A-Z]*N(9kit_timed|9kit_count)/) next
            if (n ~ /^kit_(student|kernels)_(timed|counted)$/ || n == "kit_program" || n == "DW.ref.__gxx_personality_v0") next
            print n; exit
        }')
    if [ -n "$bad" ]; then
        obj_reason="defines '$(demangle "$bad")' outside its own code: a lab file may define only its own functions and data"
        return
    fi

    # Host functions it calls.
    allow=" $(conf_get "$lab" allow-symbols) "
    [ "$build" != counted ] || allow+="$(conf_get "$lab" allow-symbols-counted) "
    while read -r name; do
        # The kit's own functions (a lab's contract), which text rules keep
        # the file from naming unless kit-names lists them.
        [[ $name =~ ^(_Z[0-9]+)?kit_ ]] && continue
        # glibc's checked twin of a function (__fprintf_chk for fprintf),
        # which compilers that fortify by default (Ubuntu's gcc) call.
        plain=$name
        [[ $name =~ ^__([a-z0-9_]+)_chk$ && $name != __stack_chk_fail ]] && plain=${BASH_REMATCH[1]}
        if [[ $allow != *" $plain "* ]]; then
            obj_reason="calls '$(demangle "$name")', which lab $lab does not allow (its lab.conf or grading.conf: allow-symbols)"
            return
        fi
    done < <(nm -P -u -- "$obj" 2>/dev/null | awk '{ print $1 }')

    # Device code: inline assembly where the student's file is the source
    # line, and the device functions it calls.
    allow=" $(conf_get "$lab" allow-device-symbols) "
    for ptx in "$keep"/*.ptx; do
        [ -f "$ptx" ] || { obj_reason="the compiler left no PTX to check (nvcc --keep)"; return; }
        bad=$(awk -v src="$src" '
            function norm(p) { while (sub(/\/\.\//, "/", p)) ; while (sub(/\/\/+/, "/", p)) ; return p }
            /^[ \t]*\.file[ \t]/ {
                f = $0; sub(/^[^"]*"/, "", f); sub(/".*/, "", f)
                if (norm(f) == norm(src)) mine[$2] = 1
                next
            }
            /^[ \t]*\.loc[ \t]/ { file = $2; line = $3; sub(/,$/, "", line); next }
            /\/\/ begin inline asm/ { if (file in mine) { print "asm\t" line; exit } next }
            /^[ \t]*\.extern[ \t]+\.func/ {
                s = $0; sub(/^[ \t]*\.extern[ \t]+\.func[ \t]*/, "", s)
                if (s ~ /^\(/) sub(/^\([^)]*\)[ \t]*/, "", s)
                match(s, /^[A-Za-z_$][A-Za-z0-9_$]*/)
                print "extern\t" substr(s, RSTART, RLENGTH)
            }' "$ptx" | while IFS=$'\t' read -r kind what; do
                if [ "$kind" = asm ]; then
                    echo "holds inline assembly (asm in the PTX of its line $what): a lab file may not"
                    break
                elif [[ $allow != *" $what "* ]]; then
                    echo "calls the device function '$what', which lab $lab does not allow (its lab.conf or grading.conf: allow-device-symbols)"
                    break
                fi
            done)
        if [ -n "$bad" ]; then
            obj_reason=$bad
            return
        fi
    done
}

# ===========================================================================
# The sandbox
# ===========================================================================

# sandbox_setup KIT REF_BUILD WORK_ROOT MODE HIDE...: decides how student
# code is isolated; MODE is auto (bubblewrap where it works, else none),
# require (bubblewrap or fail) or none. Sets sandbox (bwrap or none),
# sandbox_note (one line for the reports), sandbox_why (why none), and the
# mounts every sandbox shares. Returns 1 when MODE is require and there is
# no sandbox. HIDE: more paths no student code may see (reports, other
# submissions).
sb_extra=()
# KIT_BWRAP: another bubblewrap (the tests name a missing one).
kit_bwrap=${KIT_BWRAP:-bwrap}
sandbox_setup() {
    local kit=$1 ref=$2 work=$3 mode=$4 p
    shift 4
    sandbox=none sandbox_why="" sandbox_prefix=() sandbox_user="" sb_base=()
    sandbox_kit=$kit sandbox_ref=$ref
    local hides=(/tmp "$work" "$@") ancestors=() others=()
    [ -z "${HOME:-}" ] || [ "$HOME" = / ] || hides+=("$HOME")
    local extra
    local env_hide=${KIT_SANDBOX_HIDE:-}
    for extra in $(conf_get all hide) ${env_hide//:/ }; do hides+=("$extra"); done
    for p in "${hides[@]}"; do
        [ -e "$p" ] || continue
        p=$(cd "$p" 2>/dev/null && pwd -P) || continue
        case "$kit/" in "$p"/*) ancestors+=("$p") ;; *) others+=("$p") ;; esac
    done
    # The kit's own secrets: the references and their programs, the tests
    # (tests/ here; each lab's test.bats below).
    for p in "$kit/solutions" "$kit/tests" "$ref"; do
        [ -e "$p" ] && others+=("$p")
    done
    sb_base=(--unshare-all --unshare-user --die-with-parent --new-session --cap-drop ALL)
    # (Its help is read whole before it is searched: grep -q stopping early
    # would break bubblewrap's pipe and, with pipefail, the test.)
    local bwrap_help
    bwrap_help=$("$kit_bwrap" --help 2>&1 || true)
    # No user namespaces inside (bubblewrap 0.8 and later).
    if grep -q -- --disable-userns <<<"$bwrap_help"; then sb_base+=(--disable-userns); fi
    # Every tmpfs sized (bubblewrap 0.7 and later, not setuid): /tmp, where
    # student code may write, and /dev/shm; the folders that hide what it
    # must not see, next to nothing. Without --size a tmpfs may take half
    # of the memory.
    local tmp_size=() shm_size=() hide_size=()
    if grep -q -- '--size' <<<"$bwrap_help"; then
        tmp_size=(--size $((${KIT_SANDBOX_TMP_MIB:-256} << 20))) shm_size=(--size $((64 << 20)))
        hide_size=(--size $((1 << 20)))
    fi
    sb_base+=(--ro-bind / / --dev /dev --proc /proc "${shm_size[@]}" --tmpfs /dev/shm)
    for p in "${ancestors[@]}"; do
        if [ "$p" = /tmp ]; then sb_base+=("${tmp_size[@]}" --tmpfs "$p"); else sb_base+=("${hide_size[@]}" --tmpfs "$p"); fi
    done
    sb_base+=(--ro-bind "$kit" "$kit")
    for p in "${others[@]}"; do
        if [ "$p" = /tmp ]; then sb_base+=("${tmp_size[@]}" --tmpfs "$p"); else sb_base+=("${hide_size[@]}" --tmpfs "$p"); fi
    done
    # Each lab's tests, in its folder beside its harness: read as empty.
    for p in "$kit"/common/lab/*/test.bats; do
        [ -f "$p" ] && sb_base+=(--ro-bind /dev/null "$p")
    done
    for p in "$ref/harness" "$ref/bin" "$ref/judge"; do
        [ -d "$p" ] && sb_base+=(--ro-bind "$p" "$p")
    done
    sb_base+=(--clearenv --setenv PATH "$PATH" --setenv HOME /tmp --setenv TMPDIR /tmp --setenv LC_ALL C)
    [ -z "${CUDA_VISIBLE_DEVICES+set}" ] || sb_base+=(--setenv CUDA_VISIBLE_DEVICES "$CUDA_VISIBLE_DEVICES")

    if [ "$mode" = none ]; then
        sandbox_why="turned off (--no-sandbox)"
    elif ! command -v "$kit_bwrap" >/dev/null 2>&1; then
        sandbox_why="bubblewrap (bwrap) is not installed"
    else
        # As root, student code runs as an unprivileged user, so that the
        # process limit holds; where that user cannot read the kit, as root
        # without capabilities.
        if [ "$(id -u)" = 0 ] && [ "${KIT_SANDBOX_USER:-65534}" != root ]; then
            if command -v setpriv >/dev/null 2>&1; then
                sandbox_prefix=(setpriv --reuid="${KIT_SANDBOX_USER:-65534}" --regid="${KIT_SANDBOX_USER:-65534}" --clear-groups)
                sandbox_user=${KIT_SANDBOX_USER:-65534}
                if ! sandbox_probe "$kit"; then
                    sandbox_prefix=() sandbox_user=""
                fi
            fi
        fi
        if sandbox_probe "$kit"; then
            sandbox=bwrap
        else
            sandbox_why="bubblewrap cannot start here: $(one_line "$(head -n 1 "$work/.probe" 2>/dev/null)") (are user namespaces disabled?)"
        fi
    fi
    if [ "$sandbox" = bwrap ]; then
        sandbox_note="bubblewrap $("$kit_bwrap" --version 2>/dev/null | awk '{ print $NF }'): no network, private /tmp, the kit read-only, references, reports and other submissions hidden, PID namespace (nothing outlives a run), as $(if [ -n "$sandbox_user" ]; then echo "uid $sandbox_user"; elif [ "$(id -u)" = 0 ]; then echo "root without capabilities (uid 65534 cannot read the kit: no process limit)"; else id -un; fi)"
    else
        sandbox_note="none: $sandbox_why; student code ran with the grader's own permissions"
        # As root those include reaching the judge itself (tests/96-judge-hostile.bats).
        [ "$(id -u)" != 0 ] || sandbox_note+=", root's: it could reach the judge's memory and descriptors"
    fi
    [ "$mode" != require ] || [ "$sandbox" = bwrap ]
}

# sandbox_probe KIT: 0 when a sandbox starts, sees the kit and the compiler.
sandbox_probe() {
    local nvcc
    nvcc=$(command -v "${KIT_NVCC:-nvcc}" 2>/dev/null || echo /bin/true)
    # shellcheck disable=SC2016 # expanded by the sandbox's shell
    "${sandbox_prefix[@]}" timeout 60 "$kit_bwrap" "${sb_base[@]}" --chdir / -- /bin/sh -c \
        'test -r "$1/Makefile" && test -r "$1/common/grade/sandbox-exec.sh" && test -x "$2"' sh "$1" "$nvcc" \
        >"$sandbox_probe_log" 2>&1
}
sandbox_probe_log=/dev/null

# sandbox_cmd CPU_S MEM_MIB FILE_KIB GPU KEEP_FD RW_DIR CHDIR -- CMD...:
# sets sb_cmd to the command that runs CMD in the sandbox (or, without one,
# on its own), with RW_DIR the only place it may write besides its private,
# sized /tmp ('-': none), sb_extra more bwrap mounts (read-only binds of what
# it needs), GPU (0 or 1) the GPU's device nodes, KEEP_FD ('-' for none)
# the one descriptor it keeps, and the limits. The caller runs it, with a
# time limit, its stdin /dev/null.
sandbox_cmd() {
    local cpu=$1 mem=$2 fsize=$3 gpu=$4 keep=$5 rw=$6 dir=$7 procs sb dev
    shift 8
    procs=$(conf_get all process-limit)
    procs=${procs:-256}
    if [ "$procs" != 0 ] && [ "$(id -u)" != 0 ]; then
        # RLIMIT_NPROC counts the user's processes (per user namespace on
        # newer kernels, system-wide on older ones): allow this many more.
        procs=$(($(ps -L -U "$(id -u)" --no-headers 2>/dev/null | wc -l) + procs))
    fi
    if [ "$sandbox" = bwrap ]; then
        sb=("${sb_base[@]}")
        if [ "$gpu" = 1 ]; then
            # /dev/nvidia* on a Linux host, /dev/dxg on WSL 2 (platform.sh).
            while IFS= read -r dev; do
                sb+=(--dev-bind "$dev" "$dev")
            done < <(gpu_device_nodes /)
            # CUDA's MPS, where it runs: its pipes, and the share of the GPU.
            if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && [ -d "$CUDA_MPS_PIPE_DIRECTORY" ]; then
                sb+=(--bind "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_PIPE_DIRECTORY"
                    --setenv CUDA_MPS_PIPE_DIRECTORY "$CUDA_MPS_PIPE_DIRECTORY")
            elif [ -d /tmp/nvidia-mps ]; then
                sb+=(--bind /tmp/nvidia-mps /tmp/nvidia-mps)
            fi
            [ -z "${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-}" ] ||
                sb+=(--setenv CUDA_MPS_ACTIVE_THREAD_PERCENTAGE "$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
        fi
        sb+=("${sb_extra[@]}")
        [ "$rw" = - ] || sb+=(--bind "$rw" "$rw")
        sb+=(--chdir "$dir")
        [ -z "${KIT_RESULT_TOKEN:-}" ] || [ "$keep" = - ] ||
            sb+=(--setenv KIT_RESULT_FD "$keep" --setenv KIT_RESULT_TOKEN "$KIT_RESULT_TOKEN")
        sb_cmd=("${sandbox_prefix[@]}" "$kit_bwrap" "${sb[@]}" --
            bash "$sandbox_kit/common/grade/sandbox-exec.sh" "$cpu" "$mem" "$fsize" "$procs" "$keep" -- "$@")
    else
        sb_cmd=(bash "$kit_grade_dir/sandbox-exec.sh" "$cpu" "$mem" "$fsize" 0 "$keep" -- "$@")
    fi
}

# worker_sandbox_cmd CPU_S MEM_MIB FILE_KIB -- CMD...: the judge's worker
# command (sb_cmd): in the sandbox with the GPU, no folder it may write,
# its socket (descriptor 3: common/lib/kit_proto.h) kept, and neither the result channel nor the
# channel's token: those stay with the judge.
worker_sandbox_cmd() {
    local cpu=$1 mem=$2 cap=$3
    shift 4
    KIT_RESULT_TOKEN="" sandbox_cmd "$cpu" "$mem" "$cap" 1 3 - /tmp -- "$@"
}

# sandboxed WALL_S CPU_S MEM_MIB FILE_KIB GPU KEEP_FD RW_DIR CHDIR -- CMD...:
# runs CMD in the sandbox (sandbox_cmd), stopped after WALL_S seconds; its
# stdin is /dev/null, stdout and stderr are the caller's. Sets run_rc: 124
# when it ran out of time.
sandboxed() {
    local wall=$1 keep=$6 dir=$8
    shift
    sandbox_cmd "$@"
    run_rc=0
    if [ "$sandbox" = bwrap ]; then
        timeout -k 5 "$wall" "${sb_cmd[@]}" </dev/null || run_rc=$?
    else
        (
            cd "$dir" || exit 125
            if [ -n "${KIT_RESULT_TOKEN:-}" ] && [ "$keep" != - ]; then
                export KIT_RESULT_FD=$keep KIT_RESULT_TOKEN
            fi
            exec timeout -k 5 "$wall" "${sb_cmd[@]}"
        ) </dev/null || run_rc=$?
    fi
}

# sandbox_own DIR...: lets the sandbox's user write in DIR (as root).
sandbox_own() {
    [ -z "$sandbox_user" ] || chown -R "$sandbox_user:$sandbox_user" "$@"
}

# ===========================================================================
# Runs and their verdict
# ===========================================================================

# The harness's result channel (common/lib/kit_report.h): the program's
# key: value lines, then result: PASS|FAIL and result-token: TOKEN, written
# to a descriptor the grader opened before the program started. Student code
# cannot write it (no write, fprintf or dup in a lab file), and the grader
# never reads the program's stdout for the grade.
declare -gA chan=()

# read_channel FILE: loads chan[] from a result file; sets chan_state to
# complete (the harness finished, with the token), partial or empty, or
# forged (a key twice, a token that is not this run's).
read_channel() {
    local file=$1 line key value n=0
    chan=() chan_state=empty
    [ -s "$file" ] || return 0
    chan_state=partial
    while IFS= read -r line; do
        n=$((n + 1))
        [ "$n" -le 20000 ] || break
        [[ $line =~ ^([a-z0-9-]+):\ (.*)$ ]] || { chan_state=forged; return 0; }
        key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
        if [ "$key" = result-token ]; then
            if [ "$value" = "$KIT_RESULT_TOKEN" ] && [ -n "${chan[result]:-}" ]; then
                chan_state=complete
            else
                chan_state=forged
            fi
            return 0
        fi
        if [ -n "${chan[$key]+set}" ]; then
            chan_state=forged
            return 0
        fi
        chan[$key]=$value
    done < <(head -c 1048576 "$file")
}

# judge RC RUNDIR LIMIT_S CAP_KIB LAB SEED: the verdict of a finished run,
# from its exit status and the harness's channel; what went wrong (what)
# and the kit's own first words about it (detail). stdout is never read.
# run_seconds, where set, is how long the run took: a SIGKILL well before
# the limit was no timeout (a worker that killed its judge, say).
judge() {
    local rc=$1 dir=$2 limit=$3 cap=$4 lab=$5 seed=$6
    verdict=FAIL what="" detail=""
    detail=$(grep -v -m1 ': note: ' "$dir/err" 2>/dev/null | sed -E 's/^[a-z0-9_-]+: //')
    detail=$(one_line "${detail:0:300}")
    read_channel "$dir/result"
    if [ "$rc" = 137 ] && [ -n "${run_seconds:-}" ] &&
        awk -v t="$run_seconds" -v l="$limit" 'BEGIN { exit !(t < l - 1) }'; then
        what="was killed (signal SIGKILL) after $run_seconds s, before its $limit s limit" detail=""
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        what="timed out after ${limit} s" detail=""
    elif [ "$rc" = 153 ] || [ "$(stat -c %s "$dir/out")" -ge $((cap * 1024)) ] ||
        [ "$(stat -c %s "$dir/err")" -ge $((cap * 1024)) ] ||
        [ "$(stat -c %s "$dir/worker.log" 2>/dev/null || echo 0)" -ge $((cap * 1024)) ] ||
        grep -q "the student's code stopped (signal SIGXFSZ)" "$dir/err"; then
        what="floods its output (more than $cap KiB)" detail=""
    elif [ "$rc" -gt 128 ]; then
        what="crashed (signal SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))))"
    elif grep -qE "the student's code stopped \(signal SIG[A-Z]+\)" "$dir/err"; then
        # The judge's words for its worker (common/lib/kit_judge.h).
        what="crashed ($(grep -m1 -oE 'signal SIG[A-Z]+' "$dir/err"))"
    elif grep -q "broke the kit's protocol" "$dir/err"; then
        what="broke the kit's protocol (its process wrote to the judge's socket, or stopped answering it)"
    elif [ "$chan_state" = forged ]; then
        what="the kit's result channel holds lines the harness did not write"
    elif grep -qE 'cudaError(IllegalAddress|InvalidAddressSpace)' "$dir/err"; then
        what="out-of-bounds memory access"
    elif grep -qE 'cudaError(LaunchFailure|IllegalInstruction|Assert|MisalignedAddress|HardwareStackError|LaunchTimeout|InvalidPc)' "$dir/err"; then
        what="crashed in a kernel"
    elif [ "$chan_state" = complete ]; then
        if [ "${chan[result]}" = PASS ] && [ "$rc" = 0 ]; then
            if [ "${chan[lab]:-}" != "$lab" ]; then
                what="the harness reported lab '$(one_line "${chan[lab]:-}")', not $lab"
            elif [ -n "$seed" ] && [ "${chan[seed]:-}" != "$seed" ]; then
                what="did not run with the seed it was given ($seed)"
            else
                verdict=PASS detail=""
            fi
        elif [ "${chan[result]}" = PASS ]; then
            what="exited with status $rc after the harness's PASS"
        else
            what="wrong result"
            [ -n "$detail" ] || detail="the harness's checks failed"
        fi
    elif [ "$rc" = 2 ]; then
        what="stopped, saying it cannot run here, on a GPU where the kit's own programs run"
    elif [ "$rc" = 64 ]; then
        what="refused the grader's options (exit status 64)"
    elif [ "$rc" = 0 ]; then
        what="exited before the harness gave its verdict"
    else
        what="stopped with exit status $rc before the harness gave its verdict"
    fi
}

# reason_at WHERE: the reason of the last judged run, saying where.
reason_at() {
    if [ "$verdict" = PASS ]; then
        reason=""
    else
        reason="$what${1:+ $1}${detail:+: $detail}"
    fi
}

# concrete_arch ARCH: ARCH, with -arch=native made this machine's GPUs'
# gencodes. A graded build runs in the sandbox, where nvcc sees no GPU and
# builds -arch=native for its default architecture: code the driver would
# compile again at every run (slower, and writing its cache).
concrete_arch() {
    local cc out=""
    if [ "$1" = -arch=native ]; then
        for cc in $(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | sort -u); do
            [[ $cc =~ ^[0-9]+$ ]] && out+="-gencode arch=compute_$cc,code=sm_$cc "
        done
    fi
    printf '%s\n' "${out:-$1 }" | sed 's/ $//'
}

# median: the median of the numbers on stdin.
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# speed_points RATIO POINTS SHARE FULL ZERO: the points of a correct lab
# whose time is RATIO times the reference's. Within FULL: all; then the
# speed SHARE of the points falls with log(ratio) to nothing at ZERO; the
# rest stays. Rounded to tenths.
speed_points() {
    awk -v r="$1" -v p="$2" -v s="$3" -v f="$4" -v z="$5" 'BEGIN {
        if (r <= f) x = 1; else if (r >= z) x = 0; else x = 1 - log(r / f) / log(z / f)
        printf "%.1f", p * (1 - s) + p * s * x }' | sed 's/\.0$//'
}

# speed_ratio DIGITS (grade_speed's): t_ref and t_mine, the least of the
# arrays refs and mine (the reference's times and the student's: each one
# run's fastest timed repeat, metric_of), and ratio, t_mine / t_ref to DIGITS
# decimals (empty where either is missing). The least: what disturbs a
# run (another process, a clock not yet up) only ever slows it, and one
# such run of four moved the ratio of two medians by 9%.
speed_ratio() {
    t_ref=$(printf '%s\n' "${refs[@]}" | sort -g | head -n 1)
    t_mine=$(printf '%s\n' "${mine[@]}" | sort -g | head -n 1)
    ratio=$(awk -v a="$t_mine" -v b="$t_ref" -v d="$1" 'BEGIN { if (a > 0 && b > 0) printf "%." d "f", a / b }')
}

# speed_clear RATIO FULL ZERO SLOW CLEAR: true where the points of RATIO
# (speed_points; beyond SLOW: FAIL) cannot change while the ratio moves by
# a share CLEAR of itself either way: at most FULL / (1 + CLEAR), between
# ZERO * (1 + CLEAR) and SLOW / (1 + CLEAR), or SLOW * (1 + CLEAR) and
# beyond. Where it is, the grader times no further pair.
speed_clear() {
    awk -v r="$1" -v f="$2" -v z="$3" -v s="$4" -v c="$5" 'BEGIN {
        k = 1 + c
        exit !(r > 0 && (r * k <= f || (r >= z * k && r * k <= s) || r >= s * k)) }'
}

# ===========================================================================
# GPU locks: one grading per GPU on this machine, whoever runs it
# ===========================================================================

# gpu_lock WAIT_S UUID...: waits for the locks of the GPUs the grading
# sees (every one: its programs may use any) and holds them shared
# (gpu-hold.sh): beside other holders whose runs time nothing (a grading's
# checked runs; the tests' checks of results). gpu_alone holds it alone for
# the timed runs. The locks live in a shared, sticky
# folder (KIT_LOCK_DIR, default /tmp/kit-gpu-locks) where every user may
# create one; a lock is a flock on a file, so it goes with its holder,
# whatever way the holder ends.
# Sets gpu_lock_note; returns 1 if the wait ran out.
# shellcheck source=common/grade/gpu-hold.sh
source "$kit_grade_dir/gpu-hold.sh"
gpu_lock_wait=""
gpu_lock() {
    local dir
    dir=${KIT_LOCK_DIR:-/tmp/kit-gpu-locks}
    gpu_lock_note="" gpu_lock_wait=$1
    shift
    if [ ! -d "$dir" ] && ! mkdir -m 1777 "$dir" 2>/dev/null && [ ! -d "$dir" ]; then
        dir=""
    fi
    if [ -n "$dir" ] && { [ -L "$dir" ] || ! [ -k "$dir" ] || ! [ -w "$dir" ]; }; then
        [ ! -O "$dir" ] || chmod 1777 "$dir" 2>/dev/null
        if [ -L "$dir" ] || ! [ -k "$dir" ] || ! [ -w "$dir" ]; then
            gpu_lock_note="$dir is not a shared sticky folder: GPU locks held for this user only"
            dir=""
        fi
    fi
    if [ -z "$dir" ]; then
        dir="${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/kit-gpu-locks-$(id -u)"
        { mkdir -p "$dir" && chmod 700 "$dir"; } || return 1
    fi
    if ! gpu_hold_open_gpus "$dir" "$@"; then
        gpu_lock_note=$gpu_hold_why
        return 1
    fi
    gpu_hold_logged -s
}

# gpu_hold_logged -s|-x: gpu_hold, waiting as gpu_lock was told; in
# KIT_LOCK_LOG (the test suite's) when the GPU was held, how, and by whom.
gpu_hold_logged() {
    [ "$1" != "$gpu_held" ] || return 0
    [ -z "${KIT_LOCK_LOG:-}" ] || echo "$(date +%s.%N) want grade.sh $$ $1 ${BATS_TEST_NAME:-}" >>"$KIT_LOCK_LOG"
    gpu_hold "$1" "$gpu_lock_wait" || return 1
    [ -z "${KIT_LOCK_LOG:-}" ] || echo "$(date +%s.%N) hold grade.sh $$ $1 ${BATS_TEST_NAME:-}" >>"$KIT_LOCK_LOG"
}

# gpu_alone: the GPU alone, for the timed runs.
gpu_alone() { gpu_hold_logged -x; }

# How run_one holds the GPU for a run that times nothing: shared (-s), or
# alone (-x) under CUDA MPS.
gpu_run_mode=-s

# gpu_mode_for LAB: how a run of LAB that times nothing holds the GPU:
# alone (-x) under CUDA MPS, or where the lab's verdict rests on times even
# in its checked runs (runs-alone = yes: Lab 05 judges its streams'
# overlap, which another program's kernels beside it would break, and Lab
# 08 its scaling over the GPUs by the clock); else shared (-s).
gpu_mode_for() {
    if [ "$gpu_run_mode" = -x ] || [ "$(conf_get "$1" runs-alone)" = yes ]; then
        printf '%s' -x
    else
        printf '%s' -s
    fi
}

gpu_unlock() {
    [ -n "$gpu_held" ] || return 0
    [ -z "${KIT_LOCK_LOG:-}" ] || echo "$(date +%s.%N) free grade.sh $$" >>"$KIT_LOCK_LOG"
    gpu_hold -u
}

# ===========================================================================
# Reports, written by the grader (never inside a sandbox)
# ===========================================================================
# The caller sets lab_v[LAB] (PASS, FAIL, SKIP), lab_p (points, empty for a
# SKIP), lab_r (the reason), lab_x (time against the reference), and
# student_name, student_id, grading_seed, report_header (lines),
# report_again, report_gpu, report_isolation (bwrap or none), report_mode
# (how the labs were built and run: every report names it) and, from
# sandbox_setup, sandbox_note.

# report_totals LAB...: sets total, total_max, n_pass, n_fail, n_skip.
report_totals() {
    local lab
    total=0 total_max=0 n_pass=0 n_fail=0 n_skip=0
    for lab in "$@"; do
        total_max=$((total_max + $(conf_get "$lab" points)))
        total=$(awk -v a="$total" -v b="${lab_p[$lab]:-0}" 'BEGIN { printf "%g", a + b }')
        case ${lab_v[$lab]} in PASS) n_pass=$((n_pass + 1)) ;; FAIL) n_fail=$((n_fail + 1)) ;; *) n_skip=$((n_skip + 1)) ;; esac
    done
}

# reports_screen LAB...: the table for people, on stdout.
reports_screen() {
    local lab line
    report_totals "$@"
    for line in "${report_header[@]}"; do printf '%s\n' "$line"; done
    echo
    printf '%-18s %-7s %7s %9s  %s\n' lab verdict points time/ref reason
    for lab in "$@"; do
        printf '%-18s %-7s %7s %9s  %s\n' "$lab" "${lab_v[$lab]}" "${lab_p[$lab]:--}/$(conf_get "$lab" points)" \
            "${lab_x[$lab]:+${lab_x[$lab]}x}" "${lab_r[$lab]}"
    done
    echo
    printf 'Total %s of %d points: %d passed, %d failed, %d skipped\n' "$total" "$total_max" "$n_pass" "$n_fail" "$n_skip"
    [ -z "$report_again" ] || printf '%s\n' "$report_again"
}

# report_record LAB...: the grading as kitreport.py reads it: KEY VALUE
# pairs, each ended by a NUL (a byte no bash string holds), so that no text
# of a student's can end a field.
report_record() {
    local lab line
    printf '%s\0' student "$student_name" student_id "${student_id:-}" origin "${origin:-${labs_dir:-}}" \
        seed "${grading_seed:-}" gpu "${report_gpu:-}" isolation "${report_isolation:-}" \
        isolation_note "${sandbox_note:-}" mode "${report_mode:-}" again "${report_again:-}" \
        execution_time "$SECONDS"
    for line in "${report_header[@]}"; do printf '%s\0' header "$line"; done
    for lab in "$@"; do
        printf '%s\0' lab "$lab" verdict "${lab_v[$lab]}" points "${lab_p[$lab]:-}" \
            max_points "$(conf_get "$lab" points)" ratio "${lab_x[$lab]:-}" reason "${lab_r[$lab]:-}"
    done
}

# reports_write DIR LAB...: report.txt (for people: the table and every
# run), and from kitreport.py grades.csv, grades.tap (TAP), grades.xml
# (JUnit), results.json (Gradescope) and record.json (the kit's own, which
# grade-class gathers) in DIR. Returns 1, saying why, where it cannot.
reports_write() {
    local dir=$1
    shift
    report_totals "$@"
    { reports_screen "$@"; echo; echo "Runs"; cat "$work/log"; } >"$dir/report.txt"
    if ! command -v python3 >/dev/null 2>&1; then
        echo "grade.sh: the reports (CSV, TAP, JUnit, JSON) are written with python3, which is not installed" >&2
        return 1
    fi
    report_record "$@" | python3 "$kit_grade_dir/kitreport.py" write "$dir"
}
