# rules.awk - the rules a student's lab file must keep, read from its text.
#
# The file is compiled with the kit's harness, so it may hold only plain
# C-style code: no preprocessor line but `#pragma unroll [N]`, none of the
# names a grader forbids, and nothing that makes the text mean something
# other than what a simple reading of it shows. Anything such a reading
# cannot follow unambiguously is refused before the compiler sees it:
# backslash-newline splicing, trigraphs, digraphs, bare carriage returns,
# raw strings, digit separators and prefixed character literals,
# backslashes outside literals, unterminated comments and literals, and
# characters outside ASCII in code. Lines are what the compiler's phases
# 1-3 see, so comments, strings and code are told apart exactly.
#
# Run with LC_ALL=C (bytes, not characters):
#   awk -v forbidden="exit abort cudaOccupancy* ..." -v kit_names="kit_rng ..." \
#       -v max_line=4000 -f rules.awk FILE
# Prints the first rule broken as "LINE<TAB>what", exits 1; prints nothing
# and exits 0 when the file keeps them all. A name ending in * in
# forbidden forbids every name that starts with it.

BEGIN {
    n = split(forbidden, f, " ")
    for (i = 1; i <= n; i++) {
        if (f[i] ~ /\*$/)
            prefix[substr(f[i], 1, length(f[i]) - 1)] = 1
        else
            banned[f[i]] = 1
    }
    n = split(kit_names, f, " ")
    for (i = 1; i <= n; i++)
        kit_ok[f[i]] = 1
    # C++ that reaches around the harness, or that C-style code never needs.
    n = split("template operator namespace using typeid decltype consteval extern asm __asm __asm__ " \
              "__attribute__ __attribute __declspec _Pragma __pragma friend virtual export import " \
              "module co_await co_yield co_return requires concept thread_local __thread", f, " ")
    for (i = 1; i <= n; i++)
        cxx[f[i]] = 1
    # CUDA's qualifiers: the names with two leading underscores a file may
    # use besides the lowercase intrinsics (__syncthreads, __shfl_down_sync).
    n = split("__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ " \
              "__restrict __forceinline__ __noinline__ __launch_bounds__ __grid_constant__", f, " ")
    for (i = 1; i <= n; i++)
        qualifier[f[i]] = 1
    if (max_line == "")
        max_line = 4000
    cr = sprintf("%c", 13)
    for (i = 1; i < 128; i++) {
        ord[sprintf("%c", i)] = i
        if (i < 32 && i != 9 && i != 11 && i != 12 || i == 127)
            control = control sprintf("%c", i)
    }
    depth = 0
    incomment = 0
}

function refuse(what) {
    refuse_at(NR, what)
}

function refuse_at(where, what) {
    printf "%d\t%s\n", where, what
    refused = 1
    exit 1
}

function name_rule(id,    p) {
    if (id in cxx)
        refuse("uses C++ '" id "', which a lab file may not")
    if (id in banned)
        refuse("uses '" id "', which a lab file may not (grading.conf: forbidden)")
    for (p in prefix)
        if (substr(id, 1, length(p)) == p)
            refuse("uses '" id "', which a lab file may not (grading.conf: forbidden " p "*)")
    if ((substr(id, 1, 4) == "kit_" || substr(id, 1, 4) == "KIT_") && !(id in kit_ok))
        refuse("uses the kit's internal '" id "'")
    if (substr(id, 1, 2) == "__" && !(id in qualifier)) {
        if (id !~ /^__[a-z0-9]+(_[a-z0-9]+)*$/ ||
            id ~ /^__(builtin|cuda|cxa|gxx|sti|device_stub|fatbin|libc|glibc|asm|attribute|declspec|pragma|thread|extension)/)
            refuse("uses the reserved name '" id "'")
    }
    if (id ~ /^_[A-Z]/)
        refuse("uses the reserved name '" id "'")
}

{
    line = $0
    if (length(line) > max_line + 1)
        refuse("a line longer than " max_line " characters")
    # CRLF line ends are fine; any other carriage return is not.
    if (substr(line, length(line), 1) == cr)
        line = substr(line, 1, length(line) - 1)
    if (index(line, cr))
        refuse("a bare carriage return (CR without LF) inside a line: save the file with plain line ends")
    if (line ~ /\\[ \t\f\v]*$/)
        refuse("a backslash at the end of a line (it joins two lines): remove it")
    if (line ~ /\?\?[=\/'()!<>-]/)
        refuse("a trigraph (??" substr(line, match(line, /\?\?[=\/'()!<>-]/) + 2, 1) "): write the character itself")
    if (match(line, "[" control "]"))
        refuse(sprintf("a control character (code %d)", ord[substr(line, RSTART, 1)]))

    len = length(line)
    i = 1
    at_start = !incomment
    while (i <= len) {
        if (incomment) {
            j = index(substr(line, i), "*/")
            if (j == 0)
                next
            i += j + 1
            incomment = 0
            continue
        }
        c = substr(line, i, 1)
        d = substr(line, i, 2)
        if (c == " " || c == "\t" || c == "\f" || c == "\v") {
            i++
            continue
        }
        if (d == "/*") {
            incomment = 1
            comment_line = NR
            at_start = 0
            i += 2
            continue
        }
        if (d == "//")
            next
        if (c == "#") {
            if (at_start && line ~ /^[ \t]*#[ \t]*pragma[ \t]+unroll([ \t]+[0-9]+)?[ \t]*$/)
                next
            refuse("a preprocessor line or '#' (only '#pragma unroll' or '#pragma unroll N' on a line of its own is allowed)")
        }
        at_start = 0
        if (c == "\"" || c == "'") {
            j = i + 1
            while (1) {
                e = substr(line, j, 1)
                if (e == "")
                    refuse(c == "\"" ? "a string literal that does not end on its line" : "a character literal that does not end on its line")
                if (e == "\\") {
                    j += 2
                    continue
                }
                if (e == c)
                    break
                j++
            }
            i = j + 1
            continue
        }
        if (c ~ /[A-Za-z_]/) {
            j = i
            while (j <= len && substr(line, j, 1) ~ /[A-Za-z0-9_]/)
                j++
            id = substr(line, i, j - i)
            e = substr(line, j, 1)
            if (e == "\"" && id ~ /^(R|LR|uR|UR|u8R)$/)
                refuse("a raw string literal (" id "\"...\"): write an ordinary string")
            if (e == "'")
                refuse("a ' right after '" id "' (a prefixed character literal): write the literal without a prefix")
            name_rule(id)
            i = j
            continue
        }
        if (c ~ /[0-9]/ || (c == "." && substr(line, i + 1, 1) ~ /[0-9]/)) {
            # A preprocessing number: digits, letters, _, ., and e+ e- p+ p-.
            j = i + 1
            while (j <= len) {
                e = substr(line, j, 1)
                if (e ~ /[eEpP]/ && substr(line, j + 1, 1) ~ /[-+]/)
                    j += 2
                else if (e ~ /[A-Za-z0-9_.]/)
                    j++
                else
                    break
            }
            if (substr(line, j, 1) == "'")
                refuse("a digit separator (" substr(line, i, j - i + 1) "...): write the number without '")
            i = j
            continue
        }
        if (d == "<:" || d == ":>" || d == "<%" || d == "%>" || d == "%:")
            refuse("a digraph (" d "): write the character it stands for, or put a space between the two")
        if (c == "\\")
            refuse("a backslash outside a string or character literal")
        if (c == "$" || c == "@" || c == "`")
            refuse("the character '" c "' in code")
        if (c > "~")
            refuse("a character outside ASCII in code (names must be ASCII; comments and strings may hold any)")
        if (c == "{")
            depth++
        else if (c == "}" && --depth < 0)
            refuse("a '}' that closes more than the file opened: the file's code must stay inside its own braces")
        i++
    }
}

END {
    if (refused)
        exit 1
    if (incomment)
        refuse_at(comment_line, "a comment that never ends (/* without */)")
    if (depth != 0)
        refuse("the braces do not balance: " depth " '{' never closed")
}
