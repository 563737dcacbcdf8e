#!/usr/bin/env python3
"""ptx-count.py - counts from the same compilation as the timed kernels.

The kit times a student's kernels from one compilation of the student's
file (common/harness/student.cu puts it in the namespace kit_timed), and
counts their memory requests from the same compilation: this tool takes
its PTX (nvcc --keep: build/.../timed.ptx) and writes the same PTX with a
counting call before every global and shared load and store, and every
atomic, of the student's functions. Assembled as it is, the PTX gives the
timed kernels; after this tool, the counted ones: one front end's output,
so nothing written in C++ (sizeof, an overload, a type) can tell the two
apart (common/tools/count-object.sh makes the counted object from it).

Each memory instruction gets, just before it and under the same predicate,
a call

    kit_count_access(address, bytes per lane, kind, lanes)

(kind: 0 global load, 1 global store, 2 shared load, 3 shared store, 4
global atomic, 5 shared atomic, 6 generic load, 7 generic store: the
runtime sorts a generic address into global or shared memory as it runs),
with the address as a generic one (cvta for shared memory), and the lanes
that make the access as a mask taken where the access is (activemask, and
the ballot of its predicate): a call made alike in several branches could
be merged by ptxas into one before them, where the callee's own
__activemask() would see the whole warp. The call is a plain `call`, never
`call.uni`, under the access's predicate. The function is external: the counting runtime (common/lib/kit_count_runtime.cu)
defines it, with kit_counted.h's warp-level counting.

It refuses, with the reason, what it cannot count: an asynchronous copy,
texture and surface accesses and the like in a student function; a read
of the clock, the SM's id or the like there (a kernel must not be able to
time its own instrumentation: no lab needs them); and a .maxnreg under 32
(the registers the counting runtime is built for).

With --runtime RT.ptx (the runtime compiled to PTX for the same target:
nvcc -rdc=true -ptx), the definition of kit_count_access is taken from it
and put into the module itself, reading the module's own kit_count_cfg
(the constant every student build holds and registers: the timed build's
host code configures it), so that the module is whole: ptxas assembles it
without relocatable device code, and its fatbinary can take the place of
the timed one in the timed object.

usage: ptx-count.py [--namespace NS] [--list] [--runtime RT.ptx] IN.ptx [OUT.ptx]
  OUT.ptx: the instrumented PTX (default: stdout).
  --list:  no PTX: one line per instrumented access (function, line, kind,
           bytes) and a last line `accesses: N`.
Exit status: 0 done, 1 refused (the reason on stderr), 64 bad usage.
"""

import argparse
import re
import shutil
import subprocess
import sys

# A function's head: `.visible .entry name(` or `.func (...) name(`.
FUNC_HEAD = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)")

# A memory instruction: optional predicate, the opcode with its state space
# and qualifiers, the operands.
MEM = re.compile(
    r"^(?P<indent>\s*)(?P<pred>@!?%[\w]+\s+)?"
    r"(?P<op>(?:ld|st|atom|red)(?P<quals>(?:\.[\w:]+)+))\s+(?P<args>[^;]*);(?P<tail>.*)$"
)
# The first word of an instruction (after a predicate).
OPCODE = re.compile(r"^\s*(?:@!?%[\w]+\s+)?([a-z][\w]*)((?:\.[\w:]+)*)")
# Instructions that reach memory in ways the tool does not count: refused.
UNCOUNTED = {"ldu", "cp", "ldmatrix", "stmatrix", "tex", "tld4", "txq", "suld", "sust", "sured", "suq",
             "prefetch", "prefetchu", "multimem", "discard", "applypriority"}
# A source line: .loc FILE LINE COLUMN (nvcc -lineinfo).
LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)")
SPECIAL = re.compile(r"%(clock64|clock_hi|clock|globaltimer_lo|globaltimer_hi|globaltimer|smid|nsmid|warpid|"
                     r"nwarpid|gridid|pm[0-7](?:_64)?)\b")

SIZES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
KINDS = {("ld", "global"): 0, ("st", "global"): 1, ("ld", "shared"): 2, ("st", "shared"): 3,
         ("atom", "global"): 4, ("red", "global"): 4, ("atom", "shared"): 5, ("red", "shared"): 5,
         ("ld", "generic"): 6, ("st", "generic"): 7}
KIND_NAMES = ["global load", "global store", "shared load", "shared store", "global atomic",
              "shared atomic", "generic load", "generic store"]

EXTERN = (".extern .func kit_count_access\n(\n\t.param .b64 kit_count_access_param_0,\n"
          "\t.param .b32 kit_count_access_param_1,\n\t.param .b32 kit_count_access_param_2,\n"
          "\t.param .b32 kit_count_access_param_3\n);\n")


# The fewest registers a thread may be left with (a __launch_bounds__ leaves
# no fewer): the counting calls need them.
MIN_REGISTERS = 32


class Refused(Exception):
    pass


def shown(name, namespace="kit_timed"):
    """A function's name as its author wrote it: demangled where c++filt is
    there, without the kit's namespace."""
    if shutil.which("c++filt"):
        try:
            name = subprocess.run(["c++filt", "--", name], capture_output=True, text=True,
                                  check=True).stdout.strip() or name
        except (OSError, subprocess.CalledProcessError):
            pass
    return name.replace(namespace + "::", "")


def access_of(m):
    """(kind, bytes per lane, address expression) of a memory instruction,
    or None where it is none that is counted (.param, .local, .const)."""
    op = m.group("op")
    quals = [q for q in m.group("quals").split(".") if q]
    base = op.split(".")[0]
    spaces = [q for q in quals if q.split("::")[0] in ("global", "shared", "local", "param", "const")]
    if "async" in quals:
        raise Refused("%s: an asynchronous access, which the kit does not count" % op)
    if spaces and spaces[0] == "shared::cluster":
        raise Refused("%s: another block's shared memory (a cluster), which the kit does not count" % op)
    # No state space: a generic address, which the runtime sorts into global
    # and shared memory as it runs (atomics, which are not counted, aside).
    space = spaces[0].split("::")[0] if spaces else "generic"
    if (base, space) not in KINDS:
        return None
    kind = KINDS[(base, space)]
    vec = 1
    size = None
    for q in quals:
        if q in ("v2", "v4", "v8"):
            vec = int(q[1:])
        t = re.fullmatch(r"(?:b|u|s|f|bf)(8|16|32|64|128)(x2)?", q)
        if t:
            size = SIZES[t.group(1)] * (2 if t.group(2) else 1)
    if size is None:
        raise Refused("%s: cannot tell how many bytes it moves" % op)
    addr = re.search(r"\[([^\]]+)\]", m.group("args"))
    if not addr:
        raise Refused("%s: no address operand" % op)
    return kind, size * vec, addr.group(1).strip(), space


def address_code(expr, space, indent):
    """PTX that puts the generic address of [expr] into %kit_a."""
    parts = [p.strip() for p in expr.split("+") if p.strip()]
    base, offset = parts[0], 0
    for p in parts[1:]:
        try:
            offset += int(p, 0)
        except ValueError:
            raise Refused("address [%s]: an offset that is not a number" % expr)
    if base.lstrip("-").isdigit():
        raise Refused("address [%s]: a constant address" % expr)
    lines = []
    if re.fullmatch(r"%rd\d+", base):
        lines.append("mov.b64 \t%%kit_a, %s;" % base)
    elif re.fullmatch(r"%r\d+", base):
        lines.append("cvt.u64.u32 \t%%kit_a, %s;" % base)
    elif base.startswith("%"):
        raise Refused("address [%s]: a register of no width the tool knows" % expr)
    else:
        lines.append("mov.u64 \t%%kit_a, %s;" % base)
    if offset:
        lines.append("add.s64 \t%%kit_a, %%kit_a, %d;" % offset)
    if space == "shared":
        lines.append("cvta.shared.u64 \t%kit_a, %kit_a;")
    return [indent + l for l in lines]


def instrument(text, namespace="kit_timed", listing=None):
    """The instrumented PTX of text; each access appended to listing if given."""
    prefix = "_ZN%d%s" % (len(namespace), namespace)
    out = []
    func, student, depth, count, inside = None, False, 0, 0, False
    src_line = None
    for number, line in enumerate(text.split("\n"), 1):
        loc = LOC.match(line)
        if loc:
            src_line = int(loc.group(1))
        where = "line %d of the source" % src_line if src_line else "PTX line %d" % number
        head = FUNC_HEAD.match(line)
        if head and depth == 0:
            func, src_line = head.group(2), None
            student = func.startswith(prefix)
        code = re.sub(r'"[^"]*"', '""', line.split("//")[0])
        maxnreg = re.match(r"^\s*\.maxnreg\s+(\d+)", code)
        if student and maxnreg and int(maxnreg.group(1)) < MIN_REGISTERS:
            raise Refused("%s: .maxnreg %s (%s): the counting calls need %d registers a thread; "
                          "a kernel of yours may not ask for fewer"
                          % (shown(func, namespace), maxnreg.group(1), where, MIN_REGISTERS))
        depth += code.count("{") - code.count("}")
        inside = inside or depth > 0
        if student and depth > 0:
            if SPECIAL.search(line):
                raise Refused("%s: reads %s (%s): a kernel of yours may not read the clock, the SM's "
                              "id or the like" % (shown(func, namespace), SPECIAL.search(line).group(0), where))
            word = OPCODE.match(code)
            if word and word.group(1) in UNCOUNTED:
                raise Refused("%s: %s (%s) reaches memory in a way the kit does not count"
                              % (shown(func, namespace), word.group(1) + word.group(2), where))
            m = MEM.match(line)
            try:
                a = access_of(m) if m else None
            except Refused as e:
                raise Refused("%s (%s): %s" % (shown(func, namespace), where, e))
            if a:
                kind, size, expr, space = a
                ind = m.group("indent")
                pred = (m.group("pred") or "").strip()
                out.append(ind + "{ // kit_count_access")
                out.append(ind + ".reg .b64 \t%kit_a;")
                out.append(ind + ".reg .b32 \t%kit_m;")
                out.append(ind + ".param .b64 \tkit_p0;")
                out.append(ind + ".param .b32 \tkit_p1;")
                out.append(ind + ".param .b32 \tkit_p2;")
                out.append(ind + ".param .b32 \tkit_p3;")
                # The lanes that make the access, taken where it is: the
                # lanes active here, and of those the ones its predicate lets.
                out.append(ind + "activemask.b32 \t%kit_m;")
                if pred:
                    out.append(ind + "vote.sync.ballot.b32 \t%%kit_m, %s, %%kit_m;" % pred[1:])
                out.extend(address_code(expr, space, ind))
                out.append(ind + "st.param.b64 \t[kit_p0], %kit_a;")
                out.append(ind + "st.param.b32 \t[kit_p1], %d;" % size)
                out.append(ind + "st.param.b32 \t[kit_p2], %d;" % kind)
                out.append(ind + "st.param.b32 \t[kit_p3], %kit_m;")
                out.append(ind + (pred + " " if pred else "") +
                           "call \tkit_count_access, (kit_p0, kit_p1, kit_p2, kit_p3);")
                out.append(ind + "} // kit_count_access")
                count += 1
                if listing is not None:
                    listing.append("%s\t%d\t%s\t%d" % (func, number, KIND_NAMES[kind], size))
        out.append(line)
        if depth == 0 and inside:
            func, student, inside = None, False, False
    result = "\n".join(out)
    if count:
        # The declaration after the module's header (.version, .target, .address_size).
        head = result.find(".address_size")
        if head < 0:
            raise Refused("no .address_size line: is it PTX?")
        at = result.find("\n", head)
        if at < 0:
            raise Refused("nothing after .address_size: is it PTX?")
        result = result[:at + 1] + "\n" + EXTERN + result[at + 1:]
    return result, count


CFG = re.compile(r"^\.const \.align 8 \.b8 ([\w$]*kit_count_cfg)\[(\d+)\];$", re.M)
TARGET = re.compile(r"^\.target\s+(\S+)", re.M)


def with_runtime(result, runtime):
    """result (instrumented, with the external declaration) made whole with
    runtime's definition of kit_count_access, reading the module's own
    kit_count_cfg."""
    mine, theirs = CFG.search(result), CFG.search(runtime)
    if not theirs:
        raise Refused("the runtime's PTX declares no kit_count_cfg")
    if not mine:
        raise Refused("the module declares no kit_count_cfg for the runtime to read")
    if mine.group(2) != theirs.group(2):
        raise Refused("kit_count_cfg is %s bytes in the module, %s in the runtime"
                      % (mine.group(2), theirs.group(2)))
    t_mine, t_theirs = TARGET.search(result), TARGET.search(runtime)
    if not t_mine or not t_theirs or t_mine.group(1) != t_theirs.group(1):
        raise Refused("the runtime's .target (%s) is not the module's (%s)"
                      % (t_theirs and t_theirs.group(1), t_mine and t_mine.group(1)))
    lines = runtime.split("\n")
    start = next((i for i, l in enumerate(lines) if re.match(r"^\.visible \.func kit_count_access\(", l)), None)
    if start is None:
        raise Refused("the runtime's PTX does not define kit_count_access")
    depth, opened, end = 0, False, None
    for i in range(start, len(lines)):
        code = lines[i].split("//")[0]
        depth += code.count("{") - code.count("}")
        opened = opened or "{" in code
        if opened and depth == 0:
            end = i
            break
    if end is None:
        raise Refused("the runtime's kit_count_access has no end")
    body = "\n".join(lines[start:end + 1])
    if re.search(r"^\s*(?:@!?%\w+\s+)?call", body, re.M):
        raise Refused("the runtime's kit_count_access calls another function")
    body = body.replace(theirs.group(1), mine.group(1)).replace(".visible .func", ".func", 1)
    if EXTERN not in result:
        raise Refused("no declaration of kit_count_access to replace")
    return result.replace(EXTERN, EXTERN.replace(".extern .func", ".func", 1)) + "\n" + body + "\n"


def main(argv):
    p = argparse.ArgumentParser(description="Instruments a student's PTX with the kit's counting calls.")
    p.add_argument("--namespace", default="kit_timed")
    p.add_argument("--list", action="store_true")
    p.add_argument("--runtime")
    p.add_argument("input")
    p.add_argument("output", nargs="?")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 64
    try:
        with open(a.input, encoding="utf-8") as f:
            text = f.read()
        runtime = None
        if a.runtime:
            with open(a.runtime, encoding="utf-8") as f:
                runtime = f.read()
    except OSError as e:
        print("ptx-count.py: %s" % e, file=sys.stderr)
        return 64
    listing = [] if a.list else None
    try:
        result, count = instrument(text, a.namespace, listing)
        if runtime is not None and count:
            result = with_runtime(result, runtime)
    except Refused as e:
        print("ptx-count.py: %s: refused: %s" % (a.input, e), file=sys.stderr)
        return 1
    if a.list:
        print("\n".join(listing + ["accesses: %d" % count]))
        return 0
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(result)
    else:
        sys.stdout.write(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
