#!/usr/bin/env bats
# Counts from the same compilation as the timed kernels: the PTX
# instrumenter (common/tools/ptx-count.py), its counting runtime
# (common/lib/kit_count_runtime.cu) and the counted object made from the
# timed one (common/tools/count-object.sh), which the labs count with. On
# the CPU: every lab's timed PTX, the references' and the skeletons',
# instrumented; the result assembled by ptxas and linked with the runtime by
# nvlink; nothing of the compiler's own output changed but the counting
# calls; the counted object the timed object with only its device code (and
# the names it registers it by) replaced; what cannot be counted refused,
# in a lab's build too. On the GPU (the labs' own tests), the counts.

setup() {
    load test_helper
    TOOL="$KIT_ROOT/common/tools/ptx-count.py"
    command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
}

# student_accesses PTX: the global and shared loads, stores and atomics of
# the student's functions (namespace kit_timed), counted apart from the tool.
# A load or store with no state space is a generic one, counted too.
student_accesses() {
    awk '/^(\.visible |\.weak )*\.(entry|func)/ { s = ($0 ~ /_ZN9kit_timed/) }
        !s { next }
        /^[ \t]*(@!?%[a-z0-9]+[ \t]+)?(ld|st|atom|red)\.([.A-Za-z0-9_]*\.)?(global|shared)[.A-Za-z0-9:_]*[ \t]/ { n++; next }
        /^[ \t]*(@!?%[a-z0-9]+[ \t]+)?(ld|st)(\.[A-Za-z0-9_:]+)*[ \t]/ && !/^[ \t]*(@!?%[a-z0-9]+[ \t]+)?(ld|st)\.([.A-Za-z0-9_]*\.)?(local|param|const)[.A-Za-z0-9:_]*[ \t]/ { n++ }
        END { print n + 0 }' "$1"
}

# uninstrumented PTX: the instrumented PTX with the counting calls and their
# declaration taken out again.
uninstrumented() {
    awk '/\{ \/\/ kit_count_access$/ { skip = 1 } !skip { print } /\} \/\/ kit_count_access$/ { skip = 0 }' "$1" |
        awk '/^\.extern \.func kit_count_access$/ { x = 1 } x && /^\);$/ { x = 0; getline; next } !x'
}

# ptx_target PTX: its .target (sm_75, sm_90, ...).
ptx_target() { sed -n 's/^\.target[ \t]*\(sm_[0-9a-z]*\).*/\1/p' "$1" | head -n 1; }

# runtime ARCH [ptx]: the counting runtime built for ARCH, as relocatable
# device code or, with ptx, as PTX (once per test).
runtime() {
    local kind=${2:-o} flag=-c o
    if [ "$kind" = ptx ]; then flag=-ptx; fi
    o="$BATS_TEST_TMPDIR/runtime-$1.$kind"
    [ -f "$o" ] || nvcc -arch="$1" -rdc=true -maxrregcount=32 -I"$KIT_ROOT/common/lib" "$flag" \
        "$KIT_ROOT/common/lib/kit_count_runtime.cu" -o "$o" >&2 || return 1
    echo "$o"
}

@test "counts: every lab's timed PTX instrumented, assembled and linked with the runtime; only the calls added" {
    command -v ptxas >/dev/null 2>&1 || skip "ptxas is not on PATH (it comes with nvcc)"
    command -v nvlink >/dev/null 2>&1 || skip "nvlink is not on PATH (it comes with nvcc)"
    command -v readelf >/dev/null 2>&1 || skip "readelf is not installed (binutils)"
    local side lab ptx out want arch rt n=0
    for side in solutions labs; do
        for lab in $(kit_labs); do
            ptx="$KIT_BUILD/$side/$lab/timed.ptx"
            out="$BATS_TEST_TMPDIR/$side-$lab.ptx"
            assert [ -f "$ptx" ]
            run python3 "$TOOL" "$ptx" "$out"
            assert_success
            # One call per access of the student's functions, none elsewhere.
            want=$(student_accesses "$ptx")
            [ "$(grep -c '^[[:space:]]*\(@!\?%[a-z0-9]*[[:space:]]*\)\?call[[:space:]]*kit_count_access,' "$out")" = "$want" ] ||
                fail "$side/$lab: not one counting call per access ($want accesses)"
            [ "$side" = labs ] || [ "$want" -gt 0 ] || fail "$lab: its reference has no access to count"
            # The compiler's output, line for line, once the calls are taken out.
            uninstrumented "$out" | cmp -s - "$ptx" ||
                fail "$side/$lab: the instrumented PTX changes more than the counting calls"
            if [ "$n" = 0 ] && [ "$want" -gt 0 ]; then
                # The check's negative control: one of the compiler's lines changed.
                sed '0,/^\tret;$/s//\tret; \/\/ changed/' "$out" | uninstrumented /dev/stdin | cmp -s - "$ptx" &&
                    fail "the comparison does not see a changed line"
            fi
            [ "$want" = 0 ] && continue
            # ptxas takes it; nvlink resolves the calls with the runtime.
            arch=$(ptx_target "$out")
            run ptxas -arch="$arch" -c "$out" -o "$out.cubin"
            assert_success
            rt=$(runtime "$arch") || fail "the counting runtime does not build for $arch"
            run nvlink -arch="$arch" "$out.cubin" "$rt" -o "$out.linked"
            assert_success
            readelf -sW "$out.cubin" | grep -q ' UND kit_count_access$' || fail "$side/$lab: no call to link"
            readelf -sW "$out.linked" | grep -qE 'FUNC +GLOBAL +DEFAULT +[0-9]+ kit_count_access$' ||
                fail "$side/$lab: the runtime's kit_count_access is not in the linked code"
            n=$((n + 1))
        done
    done
    [ "$n" -ge 8 ] || fail "only $n PTX files had accesses to count"
    # The same for sm_90 whatever the build's architecture: Lab 04's
    # heavy_bounded (bound to 64 registers) calls a runtime that needs 78
    # there unless it is built with -maxrregcount=32, and nvlink refuses it.
    out="$BATS_TEST_TMPDIR/solutions-04-occupancy.ptx"
    run ptxas -arch=sm_90 -c "$out" -o "$out.sm_90.cubin"
    assert_success
    rt=$(runtime sm_90) || fail "the counting runtime does not build for sm_90"
    run nvlink -arch=sm_90 "$out.sm_90.cubin" "$rt" -o "$out.sm_90.linked"
    assert_success
}

# section OBJ NAME: a file holding the bytes of one section of an object
# (its name on stdout).
section() {
    local f
    f=$(mktemp "$BATS_TEST_TMPDIR/section.XXXXXX")
    objcopy -O binary --only-section="$2" "$1" "$f" && echo "$f"
}

@test "counts: every lab's counted object from its one compilation: the timed object, its device code instrumented, its host code the same bytes; it links beside the timed object" {
    for tool in ptxas fatbinary objcopy readelf nm gcc; do
        command -v "$tool" >/dev/null 2>&1 || skip "$tool is not on PATH"
    done
    local side lab dir out arch rt n=0
    printf '%s\n' 'extern const char kit_student_timed[], kit_student_counted[];' \
        'int main(void) { return kit_student_timed == kit_student_counted; }' >"$BATS_TEST_TMPDIR/main.c"
    gcc -c "$BATS_TEST_TMPDIR/main.c" -o "$BATS_TEST_TMPDIR/main.o"
    for side in solutions labs; do
        for lab in $(kit_labs); do
            dir="$KIT_BUILD/$side/$lab" out="$BATS_TEST_TMPDIR/$side-$lab.o"
            [ "$(python3 "$TOOL" --list "$dir/timed.ptx" | tail -n 1)" != "accesses: 0" ] || continue
            arch=$(ptx_target "$dir/timed.ptx")
            rt=$(runtime "$arch" ptx) || fail "the counting runtime does not build as PTX for $arch"
            run bash "$KIT_ROOT/common/tools/count-object.sh" "$dir/timed.o" "$dir/timed.ptx" "$rt" "$out"
            assert_success
            # The host code and its data: the timed object's, byte for byte,
            # but for the names it registers the kernels by (kit_count::).
            for s in .text .data; do
                cmp -s "$(section "$dir/timed.o" "$s")" "$(section "$out" "$s")" ||
                    fail "$side/$lab: the counted object's $s is not the timed object's"
            done
            local registered=0
            for s in $(readelf -SW "$dir/timed.o" | grep -oE ' \.rodata[^ ]*' | sort -u); do
                sed 's/_ZN9kit_count/_ZN9kit_timed/g' "$(section "$out" "$s")" | cmp -s - "$(section "$dir/timed.o" "$s")" ||
                    fail "$side/$lab: the counted object's $s differs from the timed one's by more than the names"
                ! grep -aq '_ZN9kit_timed' "$(section "$out" "$s")" || fail "$side/$lab: $s still registers a kit_timed:: name"
                ! grep -aq '_ZN9kit_count' "$(section "$out" "$s")" || registered=1
            done
            [ "$registered" = 1 ] || fail "$side/$lab: the counted object registers no kit_count:: name"
            # The device code: the counting function in it, not in the timed one's.
            grep -aq 'kit_count_access' "$(section "$out" .nv_fatbin)" ||
                fail "$side/$lab: the counted object's device code has no counting function"
            ! grep -aq 'kit_count_access' "$(section "$dir/timed.o" .nv_fatbin)" ||
                fail "$side/$lab: the timed object's device code counts"
            # Its kernels are kit_count::..., in its PTX and where it registers them.
            grep -q '^\.visible \.entry _ZN9kit_count' "${out%.o}.ptx" || fail "$side/$lab: no kit_count:: kernel"
            ! grep -q '_ZN9kit_timed' "${out%.o}.ptx" || fail "$side/$lab: a kit_timed:: name in the counted PTX"
            [ -s "${out%.o}.fatbin" ] || fail "$side/$lab: no module beside the counted object"
            # One table each, under its own name; both objects in one program.
            nm --defined-only "$out" | grep -qE ' D kit_student_counted$' || fail "$side/$lab: no renamed table"
            ! nm --defined-only "$out" | grep -qE ' [TDBR] _ZN9kit_timed' ||
                fail "$side/$lab: the student's functions are still global in the counted object"
            run nvcc -o "$BATS_TEST_TMPDIR/both" "$BATS_TEST_TMPDIR/main.o" "$dir/timed.o" "$out"
            assert_success
            n=$((n + 1))
        done
    done
    [ "$n" -ge 8 ] || fail "only $n counted objects"
    # Its negative control: an object that is no student build is refused
    # with the reason. PTX with nothing of the student's to count (a
    # skeleton's) gives its module as it is.
    run bash "$KIT_ROOT/common/tools/count-object.sh" "$KIT_BUILD/harness/06-shared-memory/harness.o" \
        "$KIT_BUILD/solutions/06-shared-memory/timed.ptx" "$rt" "$BATS_TEST_TMPDIR/x.o"
    assert_failure 1
    assert_output --partial "defines no kit_student_timed"
    printf '.version 8.0\n.target %s\n.address_size 64\n.const .align 8 .b8 kit_count_cfg[56];\n' "$arch" \
        >"$BATS_TEST_TMPDIR/none.ptx"
    run bash "$KIT_ROOT/common/tools/count-object.sh" "$KIT_BUILD/solutions/06-shared-memory/timed.o" \
        "$BATS_TEST_TMPDIR/none.ptx" "$rt" "$BATS_TEST_TMPDIR/x.o"
    assert_success
    ! grep -aq 'kit_count_access' "$(section "$BATS_TEST_TMPDIR/x.o" .nv_fatbin)" ||
        fail "a module with nothing to count got a counting function"
    run bash "$KIT_ROOT/common/tools/count-object.sh" a b
    assert_failure 64
}

@test "counts: each access's kind and bytes, generic ones too, its predicate kept, shared addresses made generic" {
    local p="$BATS_TEST_TMPDIR/t.ptx"
    cat >"$p" <<'PTX'
.version 8.0
.target sm_75
.address_size 64

.visible .entry _Z9kit_ownerPf(
	.param .u64 _Z9kit_ownerPf_param_0
)
{
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [_Z9kit_ownerPf_param_0];
	st.global.u64 	[%rd1], %rd1;
	ret;
}

.visible .entry _ZN9kit_timed6kernelEPfS0_(
	.param .u64 _ZN9kit_timed6kernelEPfS0__param_0
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<4>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [_ZN9kit_timed6kernelEPfS0__param_0];
	@%p1 ld.global.f32 	%f1, [%rd1+8];
	@!%p2 st.shared.f32 	[%r1+-4], %f1;
	ld.global.nc.v4.f32 	{%f1, %f2, %f3, %f1}, [%rd1];
	atom.global.add.u32 	%r2, [%rd1], 1;
	st.global.v2.u32 	[%rd1+16], {%r1, %r1};
	st.shared::cta.u32 	[%r1], %r2;
	red.global.add.noftz.f16x2 	[%rd1], %r2;
	ld.global.nc.L1::no_allocate.v4.f32 	{%f1, %f2, %f3, %f1}, [%rd1+-8]; // a { in a comment
	ld.f32 	%f1, [%rd1];
	st.volatile.u32 	[%rd1+4], %r1;
	atom.add.u32 	%r1, [%rd1], 1;
	ld.local.u32 	%r1, [%rd1];
	ret;
}
PTX
    run python3 "$TOOL" --list "$p"
    assert_success
    assert_output "$(printf '%s\n' \
        "_ZN9kit_timed6kernelEPfS0_	24	global load	4" \
        "_ZN9kit_timed6kernelEPfS0_	25	shared store	4" \
        "_ZN9kit_timed6kernelEPfS0_	26	global load	16" \
        "_ZN9kit_timed6kernelEPfS0_	27	global atomic	4" \
        "_ZN9kit_timed6kernelEPfS0_	28	global store	8" \
        "_ZN9kit_timed6kernelEPfS0_	29	shared store	4" \
        "_ZN9kit_timed6kernelEPfS0_	30	global atomic	4" \
        "_ZN9kit_timed6kernelEPfS0_	31	global load	16" \
        "_ZN9kit_timed6kernelEPfS0_	32	generic load	4" \
        "_ZN9kit_timed6kernelEPfS0_	33	generic store	4" \
        "accesses: 10")"
    run python3 "$TOOL" "$p"
    assert_success
    assert_line --regexp '^	@%p1 call 	kit_count_access, \(kit_p0, kit_p1, kit_p2, kit_p3\);$'
    assert_line --regexp '^	@!%p2 call 	kit_count_access, \(kit_p0, kit_p1, kit_p2, kit_p3\);$'
    # The lanes, taken where the access is: those of a predicated access,
    # the ballot of its predicate.
    assert_line --regexp '^	activemask\.b32 	%kit_m;$'
    assert_line --regexp '^	vote\.sync\.ballot\.b32 	%kit_m, %p1, %kit_m;$'
    assert_line --regexp '^	vote\.sync\.ballot\.b32 	%kit_m, !%p2, %kit_m;$'
    assert_line --regexp '^	add\.s64 	%kit_a, %kit_a, -4;$'
    assert_line --regexp '^	cvta\.shared\.u64 	%kit_a, %kit_a;$'
    refute_line --partial "call.uni"
    # The kit's own kernel is left as it is; a generic atomic and a local
    # load are not counted.
    [ "$(grep -c 'call 	kit_count_access' <<<"$output")" = 10 ] || fail "not ten calls"
    assert_line --regexp '^	add\.s64 	%kit_a, %kit_a, -8;$'

    command -v ptxas >/dev/null 2>&1 || skip "ptxas is not on PATH (it comes with nvcc)"
    python3 "$TOOL" "$p" "$p.out"
    run ptxas -arch=sm_75 -c "$p.out" -o "$p.cubin"
    assert_success
}

@test "counts: a student kernel that reads the clock or the SM's id, reaches memory in ways not counted, or asks for fewer registers than counting needs, is refused, by its name" {
    local p="$BATS_TEST_TMPDIR/t.ptx" what
    for what in 'mov.u64 	%rd2, %clock64;' 'mov.u32 	%r1, %smid;' 'mov.u64 	%rd2, %globaltimer;' \
        'mov.u32 	%r1, %clock_hi;' 'mov.u32 	%r1, %pm0;' \
        'ldu.global.f32 	%f1, [%rd1];' 'cp.async.ca.shared.global 	[%r1], [%rd1], 16;' \
        'st.shared::cluster.u32 	[%r1], %r2;'; do
        printf '.version 8.0\n.target sm_75\n.address_size 64\n\n.visible .entry _ZN9kit_timed1kEv()\n{\n\t%s\n\tret;\n}\n' \
            "$what" >"$p"
        run python3 "$TOOL" "$p"
        assert_failure 1
        # The kernel as its author wrote it (c++filt is in binutils, beside objcopy).
        if command -v c++filt >/dev/null 2>&1; then
            assert_output --partial "refused: k()"
        else
            assert_output --partial "refused: _ZN9kit_timed1kEv"
        fi
        case $what in
        ldu.* | cp.*) assert_output --partial "reaches memory in a way the kit does not count" ;;
        st.shared::cluster*) assert_output --partial "a cluster" ;;
        *) assert_output --partial "may not read the clock, the SM's id" ;;
        esac
        # The kit's own code may (its trace reads the SM's id and the timer).
        sed -i 's/_ZN9kit_timed1kEv/_Z9kit_ownerv/' "$p"
        run python3 "$TOOL" "$p"
        assert_success
    done
    # A .maxnreg under the runtime's 32 registers: refused; 32 is not, and
    # the kit's own code is not the tool's to judge.
    for what in 24 32; do
        printf '.version 8.0\n.target sm_75\n.address_size 64\n\n.visible .entry _ZN9kit_timed1kEPf(\n\t.param .u64 p\n)\n.maxnreg %s\n{\n\t.reg .b64 \t%%rd<2>;\n\tld.param.u64 \t%%rd1, [p];\n\tst.global.u64 \t[%%rd1], %%rd1;\n\tret;\n}\n' \
            "$what" >"$p"
        run python3 "$TOOL" "$p"
        if [ "$what" = 24 ]; then
            assert_failure 1
            assert_output --regexp "refused: (k\\(float\\*\\)|_ZN9kit_timed1kEPf): .maxnreg 24"
        else
            assert_success
        fi
        sed -i 's/_ZN9kit_timed1kEPf/_Z9kit_ownerPf/' "$p"
        run python3 "$TOOL" "$p"
        assert_success
    done
    run python3 "$TOOL"
    assert_failure 64
    run python3 "$TOOL" "$BATS_TEST_TMPDIR/none.ptx"
    assert_failure 64
}

@test "counts: a lab file whose kernel reads the clock builds no counted object: the build stops naming its kernel; the reference builds" {
    for tool in ptxas fatbinary objcopy readelf nm; do
        command -v "$tool" >/dev/null 2>&1 || skip "$tool is not on PATH"
    done
    local lab=06-shared-memory d="$BATS_TEST_TMPDIR/clock"
    mkdir -p "$d"
    sed '/^__global__ void transpose_naive(/,/^}$/s/^{$/{\n    if (clock64() == 1)\n        out[0] = 0;/' \
        "$KIT_ROOT/solutions/$lab/shared-memory.cu" >"$d/shared-memory.cu"
    grep -q 'clock64' "$d/shared-memory.cu" || fail "the clock read is not in the copy"
    run make -s --no-print-directory -C "$KIT_ROOT" graded-objects GRADED_LAB=$lab \
        STUDENT_SRC="$d/shared-memory.cu" GRADED_DIR="$d/build" KIT_BUILD="$KIT_BUILD"
    assert_failure
    assert_output --partial "transpose_naive"
    assert_output --partial "may not read the clock"
    [ ! -e "$d/build/counted.o" ] || fail "a counted object was made"
    # Its positive control: the reference, the same way.
    cp "$KIT_ROOT/solutions/$lab/shared-memory.cu" "$d/shared-memory.cu"
    run make -s --no-print-directory -C "$KIT_ROOT" graded-objects GRADED_LAB=$lab \
        STUDENT_SRC="$d/shared-memory.cu" GRADED_DIR="$d/build2" KIT_BUILD="$KIT_BUILD"
    assert_success
    [ -s "$d/build2/counted.o" ] && [ -s "$d/build2/counted.fatbin" ] || fail "no counted object from the reference"
}
