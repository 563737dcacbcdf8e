#!/usr/bin/env bats
# Windows: the kit through WSL 2. How the kit tells WSL 2 from WSL 1 and
# from a Linux host (the kernel's release and the WSL driver's library,
# kit_platform.h), recorded from real machines (tests/fixtures/platform/)
# through KIT_TEST_ROOT; what that drives (headings, messages, skips, the
# grader's sandbox and report); and what native Windows shells are told.
# No Windows machine is needed: everything here runs on the CPU, but for
# the last tests, which need a GPU.

load test_helper
bats_require_minimum_version 1.5.0

QUERY="$KIT_BUILD/bin/kit-query"
UNIT="$KIT_BUILD/tests/kit-unit"
KERNELS="$KIT_ROOT/tests/fixtures/platform/kernels.txt"

# kernels KIND: the recorded kernels of KIND, "file|text|source" a line.
kernels() { grep -v '^[[:space:]]*\(#\|$\)' "$KERNELS" | awk -F'|' -v k="$1" '$1 == k { print $2 "|" $3 "|" $4 }'; }

# A WSL 2 machine with the Windows driver, as the tests' stand-in.
wsl2_root() {
    platform_root "$1" wsl-driver osrelease "5.15.133.1-microsoft-standard-WSL2"
}

# --- detection ------------------------------------------------------------------

@test "windows: every recorded WSL 2 kernel is WSL 2, every WSL 1 kernel WSL 1, every other Linux kernel Linux" {
    local kind file text source root release n=0
    for kind in wsl2 wsl1 linux; do
        while IFS='|' read -r file text source; do
            n=$((n + 1))
            root="$BATS_TEST_TMPDIR/k$n"
            # The kernel alone decides: no library of any driver beside it.
            platform_root "$root" none "$file" "$text"
            KIT_TEST_ROOT=$root run "$QUERY" --platform
            assert_success
            release=$([ "$file" = osrelease ] && echo "$text" || awk '{ print $3 }' <<<"$text")
            [ "$(kv platform)" = "$kind" ] || fail "$text ($source): '$(kv platform)', not $kind"
            assert_line "platform-kernel: $release"
            assert_line "platform-kernel-from: /proc$([ "$file" = osrelease ] && echo /sys/kernel/osrelease || echo /version)"
            assert_line "platform-test-root: $root"
        done < <(kernels "$kind")
    done
    # Every kind was recorded more than once.
    [ "$(kernels wsl2 | wc -l)" -ge 5 ] && [ "$(kernels wsl1 | wc -l)" -ge 3 ] && [ "$(kernels linux | wc -l)" -ge 3 ] ||
        fail "too few recorded kernels in $KERNELS"
}

@test "windows: the release file wins over /proc/version; with neither the kernel is unknown and the machine Linux" {
    local root="$BATS_TEST_TMPDIR/both"
    platform_root "$root" none version "Linux version 4.19.0-9-amd64 (debian-kernel@lists.debian.org) (gcc version 8.3.0 (Debian 8.3.0-6)) #1 SMP Debian 4.19.118-2+deb10u1 (2020-06-07)"
    printf '5.15.90.1-microsoft-standard-WSL2\n' >"$root/proc/sys/kernel/osrelease"
    KIT_TEST_ROOT=$root run "$QUERY" --platform
    assert_line "platform: wsl2"
    assert_line "platform-kernel: 5.15.90.1-microsoft-standard-WSL2"
    platform_root "$BATS_TEST_TMPDIR/empty" none
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/empty run "$QUERY" --platform
    assert_success
    assert_line "platform: linux"
    assert_line "platform-kernel: unknown"
    assert_line "platform-kernel-from: none"
}

@test "windows: WSL 2 with the Windows driver's libcuda reaches the GPU through it; without it, WSL 2 says what to install" {
    local layout root
    for layout in wsl-driver wsl-driver-linked wsl-linked-into-guest; do
        root="$BATS_TEST_TMPDIR/$layout"
        platform_root "$root" "$layout" osrelease "5.15.133.1-microsoft-standard-WSL2"
        KIT_TEST_ROOT=$root run "$QUERY" --platform
        assert_line "platform: wsl2"
        assert_line "platform-gpu-driver: windows"
        assert_line --regexp "^platform-wsl-libcuda: /usr/lib/wsl/lib/libcuda\.so"
        assert_line "platform-dxg: yes"
        assert_output --partial "the GPU through the Windows driver"
        refute_line --partial "platform-problem:"
    done
    root="$BATS_TEST_TMPDIR/no-nvidia"
    platform_root "$root" wsl-no-nvidia osrelease "5.15.133.1-microsoft-standard-WSL2"
    KIT_TEST_ROOT=$root run "$QUERY" --platform
    assert_line "platform: wsl2"
    assert_line "platform-gpu-driver: none"
    assert_line "platform-wsl-libcuda: none"
    assert_line --regexp "^platform-problem: WSL 2 without the WSL driver's libcuda in /usr/lib/wsl/lib: install or update the NVIDIA driver on Windows \(never in Linux\)"
}

@test "windows: a Linux driver installed inside WSL 2 is named, with NVIDIA's rule; a link to the WSL driver's libcuda is not one" {
    local root="$BATS_TEST_TMPDIR/guest"
    platform_root "$root" wsl-plus-linux-driver version "Linux version 5.4.91-microsoft-standard-WSL2 (oe-user@oe-host) (gcc version 9.3.0 (GCC)) #1 SMP Mon Jan 25 18:39:31 UTC 2021"
    KIT_TEST_ROOT=$root run "$QUERY" --platform
    assert_line "platform: wsl2"
    assert_line "platform-gpu-driver: windows"
    assert_line --partial "platform-problem: a Linux NVIDIA driver's /usr/lib/x86_64-linux-gnu/libcuda.so.1 is installed inside WSL 2"
    assert_output --partial "never cuda or cuda-drivers"
    # The negative control: the same folder holding a link into /usr/lib/wsl/lib.
    root="$BATS_TEST_TMPDIR/link"
    platform_root "$root" wsl-linked-into-guest version "Linux version 5.4.91-microsoft-standard-WSL2 (oe-user@oe-host) (gcc version 9.3.0 (GCC)) #1 SMP Mon Jan 25 18:39:31 UTC 2021"
    KIT_TEST_ROOT=$root run "$QUERY" --platform
    refute_line --partial "platform-problem:"
}

@test "windows: a Linux kernel beside the WSL driver's library is WSL 2 (a self-built kernel may drop the word); beside a Linux driver, Linux" {
    local text="Linux version 4.19.0-9-amd64 (debian-kernel@lists.debian.org) (gcc version 8.3.0 (Debian 8.3.0-6)) #1 SMP Debian 4.19.118-2+deb10u1 (2020-06-07)"
    platform_root "$BATS_TEST_TMPDIR/w" wsl-driver version "$text"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w run "$QUERY" --platform
    assert_line "platform: wsl2"
    assert_output --partial "its release does not say WSL, the WSL driver's library does"
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver version "$text"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/l run "$QUERY" --platform
    assert_line "platform: linux"
    assert_line "platform-gpu-driver: linux"
    assert_line "ipc: yes"
    refute_line --partial "platform-problem:"
}

@test "windows: WSL 1 has no CUDA, whatever libraries it holds, and is told how to move to WSL 2" {
    local file text source n=0
    while IFS='|' read -r file text source; do
        n=$((n + 1))
        platform_root "$BATS_TEST_TMPDIR/w1-$n" wsl-driver "$file" "$text"
        KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w1-$n run "$QUERY" --platform
        assert_line "platform: wsl1"
        assert_line "platform-gpu-driver: none"
        assert_line "ipc: no (WSL 1: no CUDA)"
        assert_line --partial "platform-problem: this distribution runs under WSL 1"
        assert_output --partial "wsl --set-version <name> 2"
    done < <(kernels wsl1)
}

@test "windows: this machine, without the stand-in, is described from its own kernel and names no test root" {
    run "$QUERY" --platform
    assert_success
    assert_line "platform-kernel: $(cat /proc/sys/kernel/osrelease)"
    assert_line --regexp "^platform: (linux|wsl2)$"
    refute_line --partial "platform-test-root"
    run "$QUERY" --platform --bogus
    assert_failure 64
}

@test "windows: GPU memory between processes: no on WSL 2, with NVIDIA's guide as the reason; yes on a Linux host" {
    wsl2_root "$BATS_TEST_TMPDIR/w"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w run "$QUERY" --platform
    assert_line --regexp "^ipc: no \(WSL 2: NVIDIA's CUDA on WSL User Guide lists the legacy CUDA IPC calls only, from driver R510, .*not measured\)$"
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver osrelease "6.8.0-50-generic"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/l run "$QUERY" --platform
    assert_line "ipc: yes"
}

# --- what it drives: headings, messages --------------------------------------------

@test "windows: a lab's heading says WSL 2 and what differs there; on a Linux host the heading is as before" {
    wsl2_root "$BATS_TEST_TMPDIR/w"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w run "$UNIT" banner "Lab 05: CUDA streams"
    assert_success
    assert_line --index 0 "Lab 05: CUDA streams"
    assert_line --index 2 --partial "Platform: WSL 2 (Linux 5.15.133.1-microsoft-standard-WSL2), the GPU through the Windows driver: pinned memory is limited and Windows schedules the GPU's work"
    assert_output --partial "README.md, \"Windows\""
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver osrelease "6.8.0-50-generic"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/l run "$UNIT" banner "Lab 05: CUDA streams"
    assert_line --index 2 --partial "Platform: Linux 6.8.0-50-generic"
    # Without a stand-in, a Linux host's heading has no platform line at all.
    if [ "$(kit_platform_kv platform)" = linux ]; then
        run "$UNIT" banner "Lab 05: CUDA streams"
        refute_output --partial "Platform"
        assert_equal "${#lines[@]}" 2
    fi
}

@test "windows: a WSL set-up without a usable GPU is told that the driver is Windows' (or to leave WSL 1); a Linux host is told as before" {
    wsl2_root "$BATS_TEST_TMPDIR/w"
    CUDA_VISIBLE_DEVICES="" KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w run "$QUERY"
    assert_failure 2
    assert_output --partial "cannot run here"
    assert_output --partial "on WSL 2 the GPU's driver is the Windows one: install or update the NVIDIA driver on Windows (never a Linux driver inside WSL)"
    platform_root "$BATS_TEST_TMPDIR/w1" none osrelease "4.4.0-19041-Microsoft"
    CUDA_VISIBLE_DEVICES="" KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w1 run "$QUERY"
    assert_failure 2
    assert_output --partial "this distribution runs under WSL 1"
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver osrelease "6.8.0-50-generic"
    CUDA_VISIBLE_DEVICES="" KIT_TEST_ROOT=$BATS_TEST_TMPDIR/l run "$QUERY"
    assert_failure 2
    assert_output --partial "cannot run here"
    refute_output --partial "WSL"
}

@test "windows: host memory WSL 2 will not pin stops a program with exit 2 and the reason; elsewhere, and device memory anywhere, stay CUDA errors" {
    wsl2_root "$BATS_TEST_TMPDIR/w"
    local call
    for call in "cudaMallocHost(&p, bytes)" "cudaHostAlloc(&p, bytes, 0)" "cudaHostRegister(p, bytes, 0)"; do
        KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w run "$UNIT" check-error memory-allocation "$call"
        assert_failure 2
        assert_output --partial "cannot run here: WSL 2 limits the host memory a program can pin"
        assert_output --partial "Known Limitations for Linux CUDA Applications"
        assert_output --partial "in $call"
    done
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w run "$UNIT" check-error memory-allocation "cudaMalloc(&p, bytes)"
    assert_failure 1
    assert_output --partial "CUDA error cudaErrorMemoryAllocation"
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver osrelease "6.8.0-50-generic"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/l run "$UNIT" check-error memory-allocation "cudaMallocHost(&p, bytes)"
    assert_failure 1
    assert_output --partial "CUDA error cudaErrorMemoryAllocation"
    refute_output --partial "WSL"
}

# --- what it drives: the tests' skips ------------------------------------------------

@test "windows: skip_on_wsl skips with its reason on WSL 2 and lets the test run on a Linux host" {
    local t="$BATS_TEST_TMPDIR/skip.bats"
    # (Its test line is printed apart: Bats would take it for one of this file's.)
    {
        printf 'setup() {\n    KIT_ROOT="%s" KIT_BUILD="%s"\n    source "%s/tests/platform.bash"\n}\n' \
            "$KIT_ROOT" "$KIT_BUILD" "$KIT_ROOT"
        printf '%s "one" {\n' '@test'
        printf '    skip_on_wsl "$KIT_WSL_PINNED_WHY"\n    echo ran >"%s/ran"\n}\n' "$BATS_TEST_TMPDIR"
    } >"$t"
    wsl2_root "$BATS_TEST_TMPDIR/w"
    # A Bats of its own: nothing of this one's environment, nor its report's fd 3.
    run env -i PATH="$PATH" HOME="$HOME" KIT_TEST_ROOT="$BATS_TEST_TMPDIR/w" "$BATS_ROOT/bin/bats" --tap "$t" 3>&-
    assert_success
    assert_line --partial "ok 1 one # skip WSL 2: pinned host memory is limited (NVIDIA, CUDA on WSL User Guide"
    assert [ ! -e "$BATS_TEST_TMPDIR/ran" ]
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver osrelease "6.8.0-50-generic"
    run env -i PATH="$PATH" HOME="$HOME" KIT_TEST_ROOT="$BATS_TEST_TMPDIR/l" "$BATS_ROOT/bin/bats" --tap "$t" 3>&-
    assert_success
    assert_line "ok 1 one"
    assert [ -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "windows: every reason a test skips for on WSL 2 names its source and says it was not measured" {
    local why
    for why in "$KIT_WSL_OVERLAP_WHY" "$KIT_WSL_PINNED_WHY" "$KIT_WSL_MULTI_GPU_WHY"; do
        [[ $why == *"(NVIDIA, "* || $why == *"Microsoft"* ]] || fail "no source: $why"
        [[ $why == *"not measured"* ]] || fail "not said to be unmeasured: $why"
    done
    # Each is used by a lab's tests.
    grep -q 'skip_on_wsl "$KIT_WSL_OVERLAP_WHY"' "$KIT_ROOT/common/lab/05-streams/test.bats" || fail "05: no overlap skip"
    grep -q 'skip_on_wsl "$KIT_WSL_PINNED_WHY"' "$KIT_ROOT/common/lab/05-streams/test.bats" || fail "05: no pinned skip"
    grep -q 'skip_on_wsl "$KIT_WSL_MULTI_GPU_WHY"' "$KIT_ROOT/common/lab/08-multi-gpu/test.bats" || fail "08: no multi-GPU skip"
}

# --- the grader --------------------------------------------------------------------

@test "windows: the grader's sandbox binds /dev/dxg on WSL 2, /dev/nvidia* on a Linux host, nothing without a GPU" {
    grade_lib
    platform_root "$BATS_TEST_TMPDIR/w" wsl-driver osrelease "5.15.133.1-microsoft-standard-WSL2"
    run gpu_device_nodes "$BATS_TEST_TMPDIR/w"
    assert_output "/dev/dxg"
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver osrelease "6.8.0-50-generic"
    run gpu_device_nodes "$BATS_TEST_TMPDIR/l"
    assert_line "/dev/nvidia0"
    assert_line "/dev/nvidiactl"
    assert_line "/dev/nvidia-uvm"
    refute_line "/dev/dxg"
    platform_root "$BATS_TEST_TMPDIR/n" none
    run gpu_device_nodes "$BATS_TEST_TMPDIR/n"
    assert_success
    assert_output ""
}

@test "windows: a judge's mode: degraded on WSL 2 with the reason, full on a Linux host, unknown when kit-query cannot say" {
    grade_lib
    wsl2_root "$BATS_TEST_TMPDIR/w"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w grade_platform "$QUERY"
    assert_equal "$platform" wsl2
    [[ $platform_judge_mode == "degraded (no GPU memory shared between processes: WSL 2: NVIDIA's CUDA on WSL User Guide"* ]] ||
        fail "judge mode: $platform_judge_mode"
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver osrelease "6.8.0-50-generic"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/l grade_platform "$QUERY"
    assert_equal "$platform" linux
    assert_equal "$platform_judge_mode" full
    run grade_platform /nonexistent/kit-query
    assert_failure
}

@test "windows: the grader's report names the platform: WSL 2 and what it does not share; a Linux host plainly" {
    kit_copy "$BATS_TEST_TMPDIR/kit"
    submission "$BATS_TEST_TMPDIR/kit" preprocessor
    wsl2_root "$BATS_TEST_TMPDIR/w"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" --no-sandbox 01
    assert_failure 1
    assert_line --regexp "^Platform: WSL 2 \(Linux 5\.15\.133\.1-microsoft-standard-WSL2\), the GPU through the Windows driver; GPU memory shared between processes: no \(WSL 2: "
    platform_root "$BATS_TEST_TMPDIR/l" linux-driver osrelease "6.8.0-50-generic"
    KIT_TEST_ROOT=$BATS_TEST_TMPDIR/l run bash "$BATS_TEST_TMPDIR/kit/common/grade/grade.sh" --no-sandbox 01
    assert_failure 1
    assert_line "Platform: Linux 6.8.0-50-generic"
    refute_output --partial "GPU memory shared"
}

# --- native Windows shells ---------------------------------------------------------

# fake_uname DIR TEXT: DIR/uname prints TEXT (or, with no TEXT, is not there:
# exits 127, as a missing command does).
fake_uname() {
    mkdir -p "$1"
    if [ -n "${2:-}" ]; then
        printf '#!/bin/sh\necho %s\n' "$2" >"$1/uname"
    else
        printf '#!/bin/sh\nexit 127\n' >"$1/uname"
    fi
    chmod +x "$1/uname"
}

@test "windows: make from Git Bash, MSYS2, MinGW or Cygwin stops before any command, saying how to use WSL 2" {
    local name n=0
    for name in MINGW64_NT-10.0-19045 MINGW32_NT-10.0-22631 MSYS_NT-10.0-26100 CYGWIN_NT-10.0-19045; do
        n=$((n + 1))
        fake_uname "$BATS_TEST_TMPDIR/u$n" "$name"
        PATH="$BATS_TEST_TMPDIR/u$n:$PATH" run --separate-stderr make -C "$KIT_ROOT" --no-print-directory -n all
        assert_failure 2
        assert_equal "$output" ""
        [[ $stderr == *"this kit runs in Linux, and on Windows in WSL 2; this make runs in a native Windows shell (uname: $name)"* ]] ||
            fail "$name: $stderr"
        [[ $stderr == *"wsl --install"* && $stderr == *"make demo"* && $stderr == *"make test"* ]] || fail "$name: $stderr"
        [[ $stderr == *'README.md, section "Windows"'* ]] || fail "$name: $stderr"
    done
}

@test "windows: make with OS=Windows_NT and no uname (cmd, PowerShell) stops the same way; inside WSL (uname Linux) OS=Windows_NT changes nothing" {
    fake_uname "$BATS_TEST_TMPDIR/none"
    OS=Windows_NT PATH="$BATS_TEST_TMPDIR/none:$PATH" run --separate-stderr make -C "$KIT_ROOT" --no-print-directory -n all
    assert_failure 2
    [[ $stderr == *"native Windows shell (OS=Windows_NT)"* && $stderr == *"wsl --install"* ]] || fail "$stderr"
    # The negative controls: WSLENV may pass OS into WSL, where uname says Linux;
    # and without OS, no uname is no Windows.
    fake_uname "$BATS_TEST_TMPDIR/linux" Linux
    OS=Windows_NT PATH="$BATS_TEST_TMPDIR/linux:$PATH" run make -s -C "$KIT_ROOT" --no-print-directory help
    assert_success
    assert_output --partial "make demo"
    PATH="$BATS_TEST_TMPDIR/none:$PATH" run make -s -C "$KIT_ROOT" --no-print-directory help
    assert_success
    run make -s -C "$KIT_ROOT" --no-print-directory help
    assert_success
    refute_output --partial "WSL 2"
}

@test "windows: make.cmd (make typed in cmd or PowerShell) says what the Makefile says, in CRLF lines, and exits 2" {
    local cmd="$KIT_ROOT/make.cmd" step
    # Not run here (there is no cmd.exe): its text is what is checked.
    [ "$(grep -c $'\r$' "$cmd")" = "$(wc -l <"$cmd")" ] || fail "make.cmd has lines without CRLF"
    run grep -c $'\r$' "$KIT_ROOT/Makefile"
    assert_output 0
    grep -q '^@echo off' "$cmd" || fail "make.cmd echoes its commands"
    tail -n 1 "$cmd" | grep -q '^exit /b 2' || fail "make.cmd does not end with exit /b 2"
    for step in "wsl --install" "make demo" "make test" "not under /mnt/c" 'README.md, section "Windows"' \
        "CUDA toolkit for WSL-Ubuntu"; do
        grep -qF "$step" "$cmd" || fail "make.cmd does not say: $step"
        grep -qF "$step" "$KIT_ROOT/Makefile" || fail "the Makefile does not say: $step"
    done
    # Only these kinds of line: every message to stderr, and no text that
    # cmd.exe would read as a command (& | < > ^ %) inside a message.
    run grep -cvE $'^(@echo off|rem .*|>&2 echo [^&|<>^%]*|where wsl\\.exe >nul 2>nul|if errorlevel 1 goto done|:done|exit /b 2)\r$' "$cmd"
    assert_output 0
    run grep -c '^>&2 echo ' "$cmd"
    [ "$output" -ge 8 ] || fail "make.cmd says too little: $output lines"
}

@test "windows: checkouts keep LF for the kit's files and CRLF for make.cmd, whatever Git for Windows would do" {
    local f
    git -C "$KIT_ROOT" rev-parse --git-dir >/dev/null 2>&1 || skip "the kit is not a git checkout here"
    for f in Makefile tests/run.sh common/grade/grade.sh common/lib/kit_platform.h common/lab/05-streams/test.bats; do
        run git -C "$KIT_ROOT" check-attr eol -- "$f"
        assert_output "$f: eol: lf"
    done
    run git -C "$KIT_ROOT" check-attr eol -- make.cmd
    assert_output "make.cmd: eol: crlf"
}

# --- on a GPU: a WSL 2 stand-in changes what it should and nothing else -------------

# run_until_kit_overlapped PROG ARGS...: runs Lab 05's PROG with the WSL 2
# stand-in's files (as `run`), up to three times, until the kit's own
# pipeline overlapped (under 0.9 of its parts in turn): the harness judges
# overlap only after such a run, and a busy host can slow one.
# Where none did, the harness must have said why it judged nothing, and
# the test skips with the share measured: the judged path was not shown.
run_until_kit_overlapped() {
    local try
    for try in 1 2 3; do
        KIT_TEST_ROOT=$BATS_TEST_TMPDIR/w run "$@"
        awk -v s="$(kv kit-pipeline-share-of-parts)" 'BEGIN { exit !(s ~ /^[0-9.]+$/ && s + 0 < 0.9) }' && return 0
    done
    assert_line "overlap-judged: no"
    assert_output --partial "the kit's own pipeline did not overlap here either"
    skip "the kit's own pipeline took $(kv kit-pipeline-share-of-parts) of its parts in turn in three runs (the host or the GPU busy): the not-judged path was checked, the judged one not shown"
}

# bats test_tags=gpu,perf
@test "windows: with a WSL 2 stand-in, Lab 05 names the platform and still judges the overlap where the kit's own pipeline overlapped" {
    require_gpu_alone
    skip_on_wsl "this test stands WSL 2 in for a Linux host's files; on WSL 2 itself the lab's own tests run"
    wsl2_root "$BATS_TEST_TMPDIR/w"
    # A Linux host's GPU overlaps: the kit's pipeline takes well under its
    # parts in turn. Each run measures the kit's own pipeline again, on the
    # host's clock; a busy host can slow that one (the harness then rightly
    # judges nothing; 1.001 once under MPS at 25% of an H100, 2026-11-27):
    # up to three runs for one whose own pipeline overlapped, here and in
    # the negative control below.
    run_until_kit_overlapped "$(ref_program 05-streams)" --size 16M --streams 4
    assert_success
    assert_line "platform: wsl2"
    assert_output --partial "Platform: WSL 2 (Linux 5.15.133.1-microsoft-standard-WSL2)"
    assert_at_least 0.9 "$(kv kit-pipeline-share-of-parts)" "the kit's pipeline against its parts"
    assert_line "overlap-judged: yes"
    # The negative control: kernels in the default stream still fail there.
    run_until_kit_overlapped "$KIT_BUILD/tests/fixtures/lab05/default-stream" --size 16M --streams 4
    assert_line "overlap-judged: yes"
    assert_failure 1
    assert_output --partial "copies ran beside kernels for only"
}

# bats test_tags=gpu
@test "windows: on a GPU, kit-query and a lab print platform:, the same as the platform query" {
    require_gpu
    local want lab
    want=$(kit_platform_kv platform)
    run "$QUERY"
    assert_success
    assert_line "platform: $want"
    assert_line --regexp "^ipc: (yes|no \(.*\))$"
    run "$(ref_program 01-coalescing)" --size 4M --reps 2
    assert_success
    assert_line "platform: $want"
}
