#!/usr/bin/env bash
# student-cc.sh SHOWN INCLUDED -- COMMAND...: runs COMMAND (nvcc compiling
# common/harness/student.cu, which includes the student's file INCLUDED)
# and rewrites what the compiler says so that it names the student's file
# as the student opens it, SHOWN:LINE (labs/01-coalescing/coalescing.cu:34),
# and none of the kit's own files. The exit status is COMMAND's.
set -u
if [ $# -lt 4 ] || [ "$3" != -- ]; then
    echo "usage: student-cc.sh SHOWN INCLUDED -- COMMAND..." >&2
    exit 64
fi
shown=$1 included=${2#./}
shift 3

out=$("$@" 2>&1)
rc=$?
[ -n "$out" ] || exit "$rc"

# The included path as the compiler spells it: any run of "./" before it.
# awk's index() matches text, not a pattern, so any character in the path
# is safe.
printf '%s\n' "$out" | awk -v inc="$included" -v shown="$shown" '
    # Removes leading "./" runs before inc in s; returns s with inc -> shown.
    function name_it(s,    i, pre, j) {
        while ((i = index(s, inc)) > 0) {
            pre = substr(s, 1, i - 1)
            j = length(pre)
            while (j >= 2 && substr(pre, j - 1, 2) == "./") j -= 2
            # a folder of the grader before the file (an absolute path): gone too
            if (j > 0 && substr(pre, j, 1) == "/") {
                while (j > 0 && substr(pre, j, 1) !~ /[ "(]/) j--
            }
            s = substr(pre, 1, j) "\001" substr(s, i + length(inc))
        }
        gsub(/\001/, shown, s)
        return s
    }
    # The source lines and caret the compiler echoes under a message at a
    # line of kit code: kit code, dropped.
    skip && /^[ \t]/ { next }
    { skip = 0 }
    {
        line = name_it($0)
        # nvcc (EDG) names a line as FILE(34): the form editors open is FILE:34.
        if (index(line, shown "(") == 1 && match(substr(line, length(shown) + 1), /^\([0-9]+\)/)) {
            n = substr(line, length(shown) + 2, RLENGTH - 2)
            line = shown ":" n substr(line, length(shown) + RLENGTH + 1)
        }
        # "... in the compilation of "common/harness/student.cu"": the file of the student.
        gsub(/"[^"]*common\/harness\/student\.cu"/, "\"" shown "\"", line)
        # gcc: "In file included from common/harness/student.cu:91:" and its
        # continuation lines name only the kit: dropped.
        if (line ~ /^(In file included from|                 from) [^ ]*common\/(harness|lib|lab)\//) next
        # A message at a line of kit code (a static_assert of the lab contract,
        # an operator of a counting array): the file of the student, no line.
        if (match(line, /^[^ ]*common\/(harness|lib|lab)\/[^ :(]+(\([0-9]+\)|:[0-9]+(:[0-9]+)?):/)) {
            line = shown ":" substr(line, RLENGTH + 1)
            skip = 1
        }
        gsub(/[^ "]*common\/(harness|lib|lab)\/[^ :("]+/, "the kit", line)
        print line
    }' >&2
exit "$rc"
