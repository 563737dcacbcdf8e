#!/usr/bin/env bats
# Pictures: make report's page (the student's curves beside the
# reference's), class.html (a class at a glance, similar submissions) and
# the handouts' figures. On the CPU the pages are built from the tables in
# tests/fixtures/report/ (the programs' --csv format, numbers written for
# the tests) and from a graded class's files in the grader's format; on a
# GPU, make report runs a skeleton and the references, and a small class
# goes through make grade-class.

setup() {
    load test_helper
    FIX="$KIT_ROOT/tests/fixtures/report"
    REPORT="$KIT_ROOT/common/report"
    CHECK="$KIT_ROOT/tests/page_check.py"
    command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (the pages are written with it)"
}

need_gnuplot() { command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed (apt-get install gnuplot-nox)"; }
need_sim() { command -v sim_c >/dev/null 2>&1 || skip "similarity-tester is not installed (apt-get install similarity-tester)"; }
need_chromium() {
    CHROMIUM=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
    [ -n "$CHROMIUM" ] || skip "no headless Chromium to render the pages (apt-get install chromium)"
}

# bare_path DIR: a PATH holding python3 and the basic tools but neither
# gnuplot nor sim_c (what a host without them has).
bare_path() {
    mkdir -p "$1"
    ln -sf "$(python3 -c 'import sys; print(sys.executable)')" "$1/python3"
    local t
    for t in bash sh sed grep cat mkdir rm; do ln -sf "$(command -v $t)" "$1/$t"; done
}

# fixture_run DIR [LAB=STATE...]: the folder make report fills, from the
# recorded tables: every lab's reference and student passed, except where
# LAB=nobuild (the student's file does not compile) or LAB=fail (the
# student's program FAILed).
fixture_run() {
    local dir=$1 lab side state
    shift
    mkdir -p "$dir"
    printf 'date: 2026-11-25 10:00 UTC\nseed: 5\nargs: \nlabs: all\n' >"$dir/run.txt"
    printf 'device: NVIDIA H100 80GB HBM3\ncompute-capability: 9.0\nsms: 132\n' >"$dir/gpu.txt"
    for lab in $(kit_labs); do
        state=pass
        for s in "$@"; do [ "${s%%=*}" = "$lab" ] && state=${s#*=}; done
        for side in reference student; do
            local d="$dir/$lab/$side"
            mkdir -p "$d"
            echo 0 >"$d/build.status"
            echo "build/$([ $side = reference ] && echo solutions || echo labs)/$lab/${lab#*-} --seed 5 --csv table.csv" >"$d/command"
            if [ "$side" = student ] && [ "$state" = nobuild ]; then
                echo 2 >"$d/build.status"
                printf '  NVCC  build/labs/%s/timed.o\n./labs/%s/%s.cu(34): error: expected a ";"\n' "$lab" "$lab" "${lab#*-}" >"$d/build.log"
                continue
            fi
            cp "$FIX/$lab.$side.csv" "$d/table.csv"
            [ ! -f "$FIX/$lab.$side.timeline.csv" ] || cp "$FIX/$lab.$side.timeline.csv" "$d/timeline.csv"
            if [ "$side" = student ] && [ "$state" = fail ]; then
                echo 1 >"$d/status"
                printf 'full_coalesced_access  WRONG: TODO(1) wrote nothing\nseed: 5\nresult: FAIL\n' >"$d/output.txt"
            else
                echo 0 >"$d/status"
                printf 'seed: 5\ntimeline-chunks: %s\nresult: PASS\n' "$([ $side = reference ] && echo 32 || echo 16)" >"$d/output.txt"
            fi
        done
    done
}

# figure_series NAME: the series of figure NAME in $output (page_check.py's lines).
figure_series() { sed -n "s/^figure $1: //p" <<<"$output"; }

# section LAB PAGE: the text of lab LAB's section of a page.
section() { python3 -c 'import re,sys; t=open(sys.argv[2]).read(); m=re.search(r"<section id=\"lab-%s\">(.*?)</section>" % re.escape(sys.argv[1]), t, re.S); print(m.group(1) if m else "")' "$1" "$2"; }

# --------------------------------------------------------------------------
# make report's page, from recorded tables
# --------------------------------------------------------------------------

@test "report: the page from recorded tables is valid, self-contained HTML with every lab's figures" {
    need_gnuplot
    fixture_run "$BATS_TEST_TMPDIR/run"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_success
    assert_output "report: $BATS_TEST_TMPDIR/run/report.html"
    run python3 "$CHECK" "$BATS_TEST_TMPDIR/run/report.html"
    assert_success
    # The handouts' figures, the student's curve beside the reference's,
    # the course's Tesla K40 where the course has one.
    local fig
    for fig in 01-coalescing-time 01-coalescing-segments 02-grouping-time 03-divergence-part1 04-occupancy-scenarios; do
        [[ "$(figure_series $fig)" == *"your program"*"reference"*"Tesla K40 (the course)"* ]] ||
            [[ "$(figure_series $fig)" == *"reference"*"your program"*"Tesla K40 (the course)"* ]] ||
            fail "$fig: $(figure_series $fig)"
    done
    for fig in 01-coalescing-sums 04-occupancy-shapes 04-occupancy-throttle 06-shared-memory-bandwidth \
        06-shared-memory-banks 07-latency-ilp 07-latency-latency 08-multi-gpu-versions 08-multi-gpu-peer; do
        [[ "$(figure_series $fig)" == *"your program"* && "$(figure_series $fig)" == *"reference"* ]] ||
            fail "$fig: $(figure_series $fig)"
        [[ "$(figure_series $fig)" != *"K40"* ]] || fail "$fig: the course has no K40 figure here"
    done
    assert_line "figure 03-divergence-work: mixed, reference | grouped, reference | reorganised, reference | mixed, your program | grouped, your program | reorganised, your program"
    [[ "$(figure_series 05-streams-pipeline)" == *"depth-first, your program | breadth-first, your program"*"ideal of N chunks"* ]] ||
        fail "05-streams-pipeline: $(figure_series 05-streams-pipeline)"
    [[ "$(figure_series 07-latency-occupancy)" == *"Little's law, reference"*"Little's law, your program"* ]] ||
        fail "07-latency-occupancy: $(figure_series 07-latency-occupancy)"
    [[ "$(figure_series 08-multi-gpu-scaling)" == *"1 stream each, your program"*"twice the GPUs, twice the speed"* ]] ||
        fail "08-multi-gpu-scaling: $(figure_series 08-multi-gpu-scaling)"
    # Lab 05's timeline as a picture, the reference's and the student's:
    # copies and kernels on a row per stream.
    assert_line "figure 05-streams-timeline-reference-depth-first: copy in (host to device) | kernel | copy out (device to host)"
    assert_line "figure 05-streams-timeline-student-depth-first: copy in (host to device) | kernel | copy out (device to host)"
    grep -q '>stream 31<' "$BATS_TEST_TMPDIR/run/report.html" || fail "no row for the reference's stream 31"
    # Captions: GPU, size, seed, date, verdicts; axis labels with units.
    local page="$BATS_TEST_TMPDIR/run/report.html"
    grep -q 'GPU: NVIDIA H100 80GB HBM3; size 67,108,864; seed 5; 2026-11-25 10:00 UTC. Your program: PASS; reference: PASS.' "$page" ||
        fail "no caption with the GPU, size, seed, date and verdicts"
    for label in "time (ms)" "bandwidth (GB/s)" "warps per SM" "G (segments per group, log scale)" "time / coalesced time (x, log scale)"; do
        grep -qF ">$label<" "$page" || fail "no axis labelled '$label'"
    done
    [ "$(grep -c '<section id="lab-' "$page")" = 8 ]
}

@test "report: a student file that does not build, or FAILs, is said in its section; the reference is drawn alone" {
    need_gnuplot
    fixture_run "$BATS_TEST_TMPDIR/run" 01-coalescing=nobuild 05-streams=fail
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_success
    local page="$BATS_TEST_TMPDIR/run/report.html"
    run section 01-coalescing "$page"
    assert_output --partial "Your file does not build: the figures show the reference alone."
    assert_output --partial 'coalescing.cu(34): error: expected a &quot;;&quot;'
    run section 05-streams "$page"
    assert_output --partial "Your program FAILs its checks: the figures show the reference alone."
    assert_output --partial "WRONG: TODO(1) wrote nothing"
    run python3 "$CHECK" "$page"
    assert_success
    local fig
    for fig in 01-coalescing-time 01-coalescing-sums 05-streams-pipeline; do
        [[ "$(figure_series $fig)" == *"reference"* ]] || fail "$fig has no reference: $(figure_series $fig)"
        [[ "$(figure_series $fig)" != *"your program"* ]] || fail "$fig draws the student: $(figure_series $fig)"
    done
    assert_line --partial "figure 05-streams-timeline-reference-depth-first:"
    refute_line --partial "figure 05-streams-timeline-student"
    # The other labs still draw the student.
    [[ "$(figure_series 02-grouping-time)" == *"your program"* ]] || fail "02: $(figure_series 02-grouping-time)"
}

@test "report: a malformed table is refused with a message that says where" {
    fixture_run "$BATS_TEST_TMPDIR/run"
    local t="$BATS_TEST_TMPDIR/run/02-grouping/reference/table.csv"
    # A column the figures need, gone.
    sed -i '1s/,time_ms,/,time,/' "$t"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_failure 65
    assert_output --partial "02-grouping/reference/table.csv: not a table of lab 02-grouping: no column 'time_ms'"
    run section 02-grouping "$BATS_TEST_TMPDIR/run/report.html"
    assert_output --partial "The reference's table could not be read"
    # A field that is not a number, named with its line.
    cp "$FIX/02-grouping.reference.csv" "$t"
    sed -i '6s/,14\.153000,/,fast,/' "$t"
    grep -q ',fast,' "$t" || fail "the fixture changed: no time 14.153 on line 6"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_failure 65
    assert_output --partial "table.csv, line 6: column 'time_ms' holds 'fast', not a number"
    # A row cut short, and a timeline that ends before it starts.
    cp "$FIX/02-grouping.reference.csv" "$t"
    sed -i '3s/,[^,]*$//' "$t"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_failure 65
    assert_output --partial "line 3: 11 fields, the header has 12"
    cp "$FIX/02-grouping.reference.csv" "$t"
    printf '0,kernel,0,5.0,4.0\n' >>"$BATS_TEST_TMPDIR/run/05-streams/reference/timeline.csv"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_failure 65
    assert_output --partial "an operation that ends (4 ms) before it starts (5 ms)"
    # A student's malformed table: said in its section, the page still made.
    cp "$FIX/05-streams.reference.timeline.csv" "$BATS_TEST_TMPDIR/run/05-streams/reference/timeline.csv"
    echo "gpu,size" >"$BATS_TEST_TMPDIR/run/06-shared-memory/student/table.csv"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_success
    run section 06-shared-memory "$BATS_TEST_TMPDIR/run/report.html"
    assert_output --partial "its table could not be read, so the figures show the reference alone"
    # The positive control: the fixtures as they are.
    fixture_run "$BATS_TEST_TMPDIR/run2"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run2"
    assert_success
}

@test "report: without gnuplot the page says what to install and still holds every table" {
    fixture_run "$BATS_TEST_TMPDIR/run"
    bare_path "$BATS_TEST_TMPDIR/bin"
    PATH="$BATS_TEST_TMPDIR/bin" run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_success
    assert_output --partial "gnuplot is not installed"
    assert_output --partial "sudo apt-get install gnuplot-nox"
    local page="$BATS_TEST_TMPDIR/run/report.html"
    grep -q 'Gnuplot is not installed: the figures need it (Debian, Ubuntu: sudo apt-get install gnuplot-nox' "$page" ||
        fail "the page does not say what to install"
    ! grep -q '<svg' "$page" || fail "a figure without gnuplot?"
    run python3 "$CHECK" "$page"
    assert_success
    assert_line "figure 02-grouping-time: (a table, no picture)"
    # The numbers are there: the reference's time at G = 32 over coalesced.
    grep -q '<td class="num">10.38</td>' "$page" || fail "no table with the reference's 10.38x at G = 32"
}

@test "report: the timeline draws each run of a timeline with a version column, a row per GPU and stream with a gpu column" {
    need_gnuplot
    fixture_run "$BATS_TEST_TMPDIR/run"
    cp "$FIX/05-streams.orders.timeline.csv" "$BATS_TEST_TMPDIR/run/05-streams/reference/timeline.csv"
    awk -F, 'BEGIN { OFS = "," } NR == 1 { print "gpu," $0; next } { print (NR % 2) "," $0 }' \
        "$FIX/05-streams.student.timeline.csv" >"$BATS_TEST_TMPDIR/run/05-streams/student/timeline.csv"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_success
    run python3 "$CHECK" "$BATS_TEST_TMPDIR/run/report.html"
    assert_success
    assert_line --partial "figure 05-streams-timeline-reference-depth-first:"
    assert_line --partial "figure 05-streams-timeline-reference-breadth-first:"
    grep -q '>GPU 1, stream 15<' "$BATS_TEST_TMPDIR/run/report.html" || fail "no row for GPU 1's stream 15"
}

@test "report: Lab 08's timeline: a row per GPU and stream, the student's beside the reference's; one without its gpu column is refused" {
    need_gnuplot
    fixture_run "$BATS_TEST_TMPDIR/run"
    local page="$BATS_TEST_TMPDIR/run/report.html" row fig
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_success
    run python3 "$CHECK" "$page"
    assert_success
    # The fixtures: two GPUs, two streams each, as Lab 08's --timeline writes them.
    for fig in 08-multi-gpu-timeline-reference-2-gpus 08-multi-gpu-timeline-student-2-gpus; do
        assert_line "figure $fig: copy in (host to device) | kernel | copy out (device to host)"
    done
    run section 08-multi-gpu "$page"
    assert_output --partial "Timeline of 2 GPUs, 2 streams each: reference"
    assert_output --partial "Timeline of 2 GPUs, 2 streams each: your program"
    assert_output --partial "(a row per GPU and stream)"
    assert_output --partial "a kernel&#x27;s bar is its stream&#x27;s time between a chunk&#x27;s copies in and its copy out"
    for row in "GPU 0, stream 0" "GPU 0, stream 1" "GPU 1, stream 0" "GPU 1, stream 1"; do
        grep -qF ">$row<" <<<"$output" || fail "no row '$row' in Lab 08's timelines"
    done
    # Each figure's numbers hold every span of its file, each on its GPU's
    # and stream's row: 4 chunks, each two copies in, a kernel, a copy out.
    run python3 - "$page" <<'PY'
import collections, html, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
for role in ("reference", "student"):
    m = re.search(r'<figure id="08-multi-gpu-timeline-%s-2-gpus">(.*?)</figure>' % role, text, re.S)
    cells = re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S)
    count = collections.Counter()
    for c in cells:
        td = [html.unescape(re.sub(r"<[^>]+>", "", x)) for x in re.findall(r"<td[^>]*>(.*?)</td>", c, re.S)]
        if len(td) == 5:
            count[td[1]] += 1
            count[td[0]] += 1
    print(role, " ".join("%s=%d" % kv for kv in sorted(count.items())))
PY
    assert_success
    for role in reference student; do
        assert_line "$role GPU 0, stream 0=4 GPU 0, stream 1=4 GPU 1, stream 0=4 GPU 1, stream 1=4 copy in (host to device)=8 copy out (device to host)=4 kernel=4"
    done
    # A Lab 05 timeline has no GPU: its rows stay streams.
    ! grep -q '>GPU 0, stream 31<' "$page" || fail "Lab 05's rows named a GPU"
    # The negative control: without its gpu column, a Lab 08 timeline
    # would put every GPU's stream 0 on one row: refused, saying why.
    cut -d, -f2- "$FIX/08-multi-gpu.reference.timeline.csv" >"$BATS_TEST_TMPDIR/run/08-multi-gpu/reference/timeline.csv"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_failure 65
    assert_output --partial "08-multi-gpu/reference/timeline.csv: not a timeline of lab 08-multi-gpu: no column 'gpu'"
    run section 08-multi-gpu "$page"
    assert_output --partial "The reference's table could not be read"
    refute_output --partial "Timeline of 2 GPUs"
    # The student's, the same: said in its section, the reference drawn alone.
    cp "$FIX/08-multi-gpu.reference.timeline.csv" "$BATS_TEST_TMPDIR/run/08-multi-gpu/reference/timeline.csv"
    cut -d, -f2- "$FIX/08-multi-gpu.student.timeline.csv" >"$BATS_TEST_TMPDIR/run/08-multi-gpu/student/timeline.csv"
    run python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run"
    assert_success
    run section 08-multi-gpu "$page"
    assert_output --partial "its table could not be read, so the figures show the reference alone: "
    assert_output --partial "no column &#x27;gpu&#x27;"
    assert_output --partial "Timeline of 2 GPUs, 2 streams each: reference"
    refute_output --partial "Timeline of 2 GPUs, 2 streams each: your program"
    # Lab 05's reader keeps the gpu column optional.
    run python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from kitreport import tables; print(len(tables.read_timeline(sys.argv[2], "05-streams")))' \
        "$REPORT" "$FIX/05-streams.reference.timeline.csv"
    assert_success
    assert_output 128
}

@test "report: page_check.py refuses what is not a self-contained page (its negative control)" {
    local p="$BATS_TEST_TMPDIR/bad.html"
    printf '<!DOCTYPE html><html><head><meta charset="utf-8"><script src="https://example.org/x.js"></script></head><body><p>x</body></html>\n' >"$p"
    run python3 "$CHECK" "$p"
    assert_failure
    assert_output --partial "<script>"
    assert_output --partial "leaves the page"
    assert_output --partial "</body> closes <p>"
    printf '<!DOCTYPE html><html><head><meta charset="utf-8"><style>@font-face { src: url(https://f.example/f.woff) }</style></head><body><figure id="a"><svg xmlns="http://www.w3.org/2000/svg"><g></svg></figure></body></html>\n' >"$p"
    run python3 "$CHECK" "$p"
    assert_failure
    assert_output --partial "a style that loads from elsewhere"
    assert_output --partial "an SVG that is not XML"
}

@test "report: headless Chromium renders the lab page and class.html" {
    need_gnuplot
    need_chromium
    fixture_run "$BATS_TEST_TMPDIR/run" 01-coalescing=nobuild
    python3 "$REPORT/report_page.py" "$BATS_TEST_TMPDIR/run" >/dev/null
    local out="$BATS_TEST_TMPDIR/class"
    cp -R "$FIX/class" "$out"
    python3 "$REPORT/class_page.py" "$out" >/dev/null
    local page png
    for page in "$BATS_TEST_TMPDIR/run/report.html" "$out/class.html"; do
        png="$page.png"
        run timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
            --disable-component-update --disable-sync --no-first-run --user-data-dir="$BATS_TEST_TMPDIR/chromium" \
            --window-size=1000,3000 --screenshot="$png" "file://$page"
        [ -s "$png" ] || fail "Chromium drew nothing for $page: $output"
        [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
        [ "$(stat -c %s "$png")" -gt 50000 ] || fail "$png: $(stat -c %s "$png") bytes: an empty page?"
    done
}

# --------------------------------------------------------------------------
# The handouts' figures
# --------------------------------------------------------------------------

@test "report: handout-figures.sh draws the reference's figures with GPU, date and command, and refuses what it cannot vouch for" {
    need_gnuplot
    local in="$BATS_TEST_TMPDIR/in" out="$BATS_TEST_TMPDIR/figures" lab
    mkdir -p "$in"
    for lab in 01-coalescing 05-streams; do
        cp "$FIX/$lab.reference.csv" "$in/$lab.csv"
        printf 'command: make run LAB=%s REF=1 ARGS="--seed 1 --csv %s.csv"\ndate: 2026-11-25\n' "${lab%%-*}" "$lab" >"$in/$lab.txt"
    done
    cp "$FIX/05-streams.reference.timeline.csv" "$in/05-streams.timeline.csv"
    run bash "$REPORT/handout-figures.sh" "$in" "$out"
    assert_success
    assert_line --partial "![Part 1: each kernel's time against the coalesced kernel's: NVIDIA H100 80GB HBM3, 2026-11-25]("
    assert_line --partial "05-streams-timeline-depth-first.svg)"
    for f in 01-coalescing-time 01-coalescing-segments 01-coalescing-sums 05-streams-pipeline 05-streams-timeline-depth-first; do
        [ -s "$out/$f.svg" ] || fail "no $f.svg"
        run python3 -c 'import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(" ".join(t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "caption"))' "$out/$f.svg"
        assert_success
        assert_output --regexp 'NVIDIA H100 80GB HBM3, 2026-11-25; make run LAB=0[15] REF=1 ARGS="--seed 1 --csv 0[15]-[a-z]*.csv"'
    done
    grep -q '<title>the kit.s reference</title>' "$out/01-coalescing-time.svg" || fail "no reference series"
    grep -q '<title>Tesla K40 (the course)' "$out/01-coalescing-time.svg" || fail "no K40 series"
    # A run whose command is not recorded, and a malformed table: refused, nothing drawn.
    rm -rf "$out"
    sed -i '/^command:/d' "$in/05-streams.txt"
    run bash "$REPORT/handout-figures.sh" "$in" "$out"
    assert_failure 65
    assert_output --partial "05-streams.txt: no 'command:' line"
    [ ! -e "$out" ] || fail "figures were drawn"
    printf 'command: x\ndate: 2026-11-25\n' >"$in/05-streams.txt"
    sed -i '1s/version/what/' "$in/05-streams.csv"
    run bash "$REPORT/handout-figures.sh" "$in" "$out"
    assert_failure 65
    assert_output --partial "no column 'version'"
    run bash "$REPORT/handout-figures.sh" --run
    assert_failure 64
}

# --------------------------------------------------------------------------
# class.html
# --------------------------------------------------------------------------

# class_submissions DIR: a class's submissions for the similarity list:
# honest and slow (the references), broken (a reference that does not
# compile), copy-a and copy-b (one partial attempt, the second renamed and
# re-spaced, in archives), idle and idle2 (the skeletons untouched), and
# three that are never taken.
class_submissions() {
    local subs=$1 t=$BATS_TEST_TMPDIR/t copy
    mkdir -p "$subs" "$t/a/labs/01-coalescing" "$t/b/hw1/labs/01-coalescing" "$t/fay/x/labs/01-coalescing"
    copy=$t/a/labs/01-coalescing/coalescing.cu
    sed -f "$FIX/near-copy.sed" "$KIT_ROOT/labs/01-coalescing/coalescing.cu" >"$copy"
    ! cmp -s "$copy" "$KIT_ROOT/labs/01-coalescing/coalescing.cu" || fail "near-copy.sed no longer changes the skeleton"
    sed -f "$FIX/rename.sed" "$copy" >"$t/b/hw1/labs/01-coalescing/coalescing.cu"
    tar -czf "$subs/copy-a.tar.gz" -C "$t/a" labs
    (cd "$t/b" && python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.write(sys.argv[2]); z.close()' \
        "$subs/copy-b.zip" hw1/labs/01-coalescing/coalescing.cu)
    submission "$subs/honest" reference=01-coalescing reference=05-streams
    submission "$subs/slow" reference=01-coalescing reference=05-streams
    submission "$subs/broken" no-compile
    submission "$subs/idle" skeleton
    submission "$subs/idle2" skeleton
    # Never taken: a link for a submission, a lab file that is a link to
    # the reference, an archive with a path outside itself (the copy again).
    ln -s "$KIT_ROOT/solutions" "$subs/linked"
    mkdir -p "$subs/eda/labs/01-coalescing"
    ln -s "$KIT_ROOT/solutions/01-coalescing/coalescing.cu" "$subs/eda/labs/01-coalescing/coalescing.cu"
    cp "$copy" "$t/fay/x/labs/01-coalescing/"
    echo owned >"$t/fay/evil"
    (cd "$t/fay/x" && tar -cPf "$subs/fay.tar" labs ../evil)
}

@test "class.html: distributions, reasons with counts, a row per student linked to the report" {
    need_gnuplot
    local out="$BATS_TEST_TMPDIR/out"
    cp -R "$FIX/class" "$out"
    run python3 "$REPORT/class_page.py" "$out"
    assert_success
    assert_output "class.html: $out/class.html"
    run python3 "$CHECK" "$out/class.html"
    assert_success
    assert_line "figure points-01-coalescing: students"
    assert_line "figure time-01-coalescing: students"
    assert_line "figure points-05-streams: students"
    local page="$out/class.html"
    grep -q '7 students, 6 graded; labs: 01-coalescing, 05-streams' "$page" || fail "no summary"
    # Reasons grouped, with counts and who.
    python3 - "$page" <<'PY' || fail "the reasons' table is not as graded"
import re, sys
t = open(sys.argv[1]).read()
lab = re.search(r'<section id="lab-01-coalescing">(.*?)</section>', t, re.S).group(1)
rows = re.findall(r"<tr><td>([^<]*)</td><td class=\"num\">(\d+)</td><td>([^<]*)</td>", lab)
assert ("wrong result", "3", "copy-a, copy-b, idle") in rows, rows
assert ("does not compile", "1", "broken") in rows, rows
lab5 = re.search(r'<section id="lab-05-streams">(.*?)</section>', t, re.S).group(1)
assert "Reasons for SKIP" in lab5
assert re.search(r"<td>no usable GPU</td><td class=\"num\">1</td><td>copy-a</td>", lab5), lab5
assert re.search(r"<td>too slow against the reference</td><td class=\"num\">1</td>", lab5)
PY
    # A row per student, linked to the report the grader wrote.
    for s in honest slow broken copy-a copy-b idle; do
        grep -q "<a href=\"students/$s/report.txt\">$s</a>" "$page" || fail "no link to $s's report"
    done
    grep -q '<td>late</td>' "$page" || fail "the student not graded has no row"
    grep -q 'PASS</span> 13.6 <small>(1.74x)</small>' "$page" || fail "no points and time against the reference"
    # Without --submissions: no similarity section.
    ! grep -q 'id="similarity"' "$page" || fail "a similarity section without submissions"
}

@test "class.html: the similarity list pairs the near-copies, not the honest, the reference's copies or the untouched skeletons" {
    need_sim
    local out="$BATS_TEST_TMPDIR/out" subs="$BATS_TEST_TMPDIR/subs"
    cp -R "$FIX/class" "$out"
    class_submissions "$subs"
    run python3 "$REPORT/class_page.py" "$out" --submissions "$subs"
    assert_success
    assert_line "class.html: 1 pair of similar submissions to look at"
    run python3 "$CHECK" "$out/class.html"
    assert_success
    python3 - "$out/class.html" <<'PY' || fail "the similarity list is not as expected"
import re, sys
t = open(sys.argv[1]).read()
sim = re.search(r'<section id="similarity">(.*?)</section>', t, re.S).group(1)
lab1 = sim.split("<h3>01-coalescing</h3>")[1].split("<h3>")[0]
pairs = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td class=\"num\">(\d+)%</td><td class=\"num\">(\d+)%</td>", lab1)
assert [(a, b) for a, b, _, _ in pairs] == [("copy-a", "copy-b")], pairs
assert min(int(pairs[0][2]), int(pairs[0][3])) >= 90, pairs
close = re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">(\d+)%</td><td class=\"num\">\d+%</td></tr>", lab1)
assert sorted(n for n, _ in close) == ["broken", "honest", "slow"], close
assert "7 files taken from the submissions, 5 with code of their own" in lab1, lab1
lab5 = sim.split("<h3>05-streams</h3>")[1]
assert "No pair is unusually alike." in lab5
PY
}

@test "class.html: without similarity-tester it says what to install and still writes the tables" {
    local out="$BATS_TEST_TMPDIR/out" subs="$BATS_TEST_TMPDIR/subs"
    cp -R "$FIX/class" "$out"
    mkdir -p "$subs/honest"
    bare_path "$BATS_TEST_TMPDIR/bin"
    PATH="$BATS_TEST_TMPDIR/bin" run python3 "$REPORT/class_page.py" "$out" --submissions "$subs"
    assert_success
    assert_output --partial "class.html: similarity-tester is not installed"
    assert_output --partial "sudo apt-get install similarity-tester"
    assert_output --partial "gnuplot is not installed"
    grep -q 'Similarity-tester is not installed: the similarity list needs its sim_c (Debian, Ubuntu: sudo apt-get install similarity-tester); the rest of this page does not need it.' "$out/class.html" ||
        fail "the page does not say what to install"
    grep -q '<a href="students/honest/report.txt">honest</a>' "$out/class.html" || fail "no student table"
    run python3 "$CHECK" "$out/class.html"
    assert_success
}

@test "class.html: tables that are not the grader's are refused; bad command lines exit 64" {
    local out="$BATS_TEST_TMPDIR/out"
    cp -R "$FIX/class" "$out"
    sed -i '1s/verdict/result/' "$out/class-labs.csv"
    run python3 "$REPORT/class_page.py" "$out"
    assert_failure 65
    assert_output --partial "class-labs.csv: no column 'verdict'"
    [ ! -e "$out/class.html" ] || fail "a page from tables it could not read"
    run python3 "$REPORT/class_page.py" "$BATS_TEST_TMPDIR/nowhere"
    assert_failure 64
    run python3 "$REPORT/class_page.py" "$out" --submissions "$BATS_TEST_TMPDIR/nowhere"
    assert_failure 64
    run python3 "$REPORT/class_page.py"
    assert_failure 64
}

# --------------------------------------------------------------------------
# make report itself
# --------------------------------------------------------------------------

@test "make report: without a GPU it says so, runs nothing and writes no page (exit 2)" {
    [ -x "$KIT_BUILD/bin/kit-query" ] || skip "the kit is not built (make)"
    local out="$BATS_TEST_TMPDIR/report"
    CUDA_VISIBLE_DEVICES="" run bash "$REPORT/report.sh" --labs 01 --out "$out"
    assert_failure 2
    assert_output --partial "cannot run here"
    assert_output --partial "make report runs your programs and the reference on a GPU, and the kit cannot use one here"
    [ ! -e "$out" ] || fail "$out was written"
    run bash "$REPORT/report.sh" --labs 09
    assert_failure 64
    assert_output --partial "there is no lab '09'"
    run bash "$REPORT/report.sh" --seed x
    assert_failure 64
}

# stub_kit DIR: a copy of the kit whose build holds Lab 01 as make built
# it, its two programs and kit-query replaced by stand-ins that answer as
# the programs do (a GPU, the recorded table) and note their arguments in
# DIR/argv.log: report.sh's own logic, on the CPU.
stub_kit() {
    local k=$1 b=$1/build
    mkdir -p "$k"
    cp -Rp "$KIT_ROOT/Makefile" "$KIT_ROOT/common" "$KIT_ROOT/solutions" "$KIT_ROOT/labs" "$KIT_ROOT/handouts" "$k/"
    mkdir -p "$b/labs" "$b/solutions" "$b/bin" "$b/harness"
    cp -a "$KIT_BUILD"/harness/01-coalescing "$KIT_BUILD"/harness/count-runtime "$b/harness/"
    cp -a "$KIT_BUILD/labs/01-coalescing" "$b/labs/"
    cp -a "$KIT_BUILD/solutions/01-coalescing" "$b/solutions/"
    printf '#!/usr/bin/env bash\necho "device: NVIDIA H100 80GB HBM3"\necho "compute-capability: 9.0"\n' >"$b/bin/kit-query"
    local side
    for side in labs solutions; do
        cat >"$b/$side/01-coalescing/coalescing" <<EOF
#!/usr/bin/env bash
# A stand-in for Lab 01's program (tests/95-report.bats).
echo "$side \$*" >>"$k/argv.log"
case " \$* " in *" --help "*) printf '  --size N   elements\n  --matrix N  part 2\n  --seed S\n  --csv FILE\n'; exit 0 ;; esac
while [ \$# -gt 0 ]; do case \$1 in --csv) csv=\$2; shift ;; --seed) seed=\$2; shift ;; esac; shift; done
cp "$FIX/01-coalescing.$([ $side = labs ] && echo student || echo reference).csv" "\$csv"
printf 'device: NVIDIA H100 80GB HBM3\nsize: 67108864\nmatrix: 8192\nseed: %s\nresult: PASS\n' "\$seed"
EOF
        chmod +x "$b/$side/01-coalescing/coalescing"
    done
    chmod +x "$b/bin/kit-query"
}

@test "make report: both programs run with the same seed and the reference's sizes; a file that does not build is said" {
    need_gnuplot
    [ -x "$KIT_BUILD/solutions/01-coalescing/coalescing" ] || skip "the kit is not built (make)"
    command -v "${NVCC:-nvcc}" >/dev/null 2>&1 || skip "nvcc is not on PATH (make needs it to check the build)"
    local k="$BATS_TEST_TMPDIR/kit"
    stub_kit "$k"
    KIT_BUILD="$k/build" run make -s --no-print-directory -C "$k" report LAB=01 SEED=4242
    assert_success
    assert_output --partial "make report: 01-coalescing: your program PASS; the reference PASS"
    assert_output --partial "make report: open $k/build/report/report.html in a browser"
    run cat "$k/argv.log"
    assert_line --regexp "^solutions --seed 4242 --csv $k/build/report/01-coalescing/reference/table.csv\$"
    assert_line --regexp "^labs --seed 4242 --size 67108864 --matrix 8192 --csv $k/build/report/01-coalescing/student/table.csv\$"
    run python3 "$CHECK" "$k/build/report/report.html"
    assert_success
    [[ "$(figure_series 01-coalescing-time)" == *"your program"*"reference"* ]] || fail "$(figure_series 01-coalescing-time)"
    # ARGS go to both, and a size in them is not overridden.
    : >"$k/argv.log"
    KIT_BUILD="$k/build" run make -s --no-print-directory -C "$k" report LAB=coalescing SEED=7 ARGS="--size 4M"
    assert_success
    run cat "$k/argv.log"
    assert_line --regexp "^labs --seed 7 --matrix 8192 --csv .* --size 4M\$"
    # The student's file does not compile: said on screen and in the page, the reference alone.
    sed -i 's/^    \/\* TODO(1) \*\/$/    int broken(/' "$k/labs/01-coalescing/coalescing.cu"
    KIT_BUILD="$k/build" run make -s --no-print-directory -C "$k" report LAB=01
    assert_success
    assert_output --partial "make report: 01-coalescing: your file does not build:"
    run section 01-coalescing "$k/build/report/report.html"
    assert_output --partial "Your file does not build: the figures show the reference alone."
    run python3 "$CHECK" "$k/build/report/report.html"
    [[ "$(figure_series 01-coalescing-time)" != *"your program"* ]] || fail "$(figure_series 01-coalescing-time)"
}

# --------------------------------------------------------------------------
# On a GPU
# --------------------------------------------------------------------------

# bats test_tags=gpu,report
@test "make report on a GPU: the skeleton FAILs and the reference is drawn alone" {
    require_gpu
    local out="$BATS_TEST_TMPDIR/report"
    run bash "$REPORT/report.sh" --labs 01 --seed 11 --out "$out" -- --size 4M --matrix 2048
    assert_success
    assert_output --partial "make report: 01-coalescing: your program FAIL; the reference PASS"
    run section 01-coalescing "$out/report.html"
    assert_output --partial "Your program FAILs its checks: the figures show the reference alone."
    assert_output --partial "TODO(1)"
    run python3 "$CHECK" "$out/report.html"
    assert_success
    if command -v gnuplot >/dev/null 2>&1; then
        [[ "$(figure_series 01-coalescing-time)" == "reference | Tesla K40 (the course), 4,194,304 floats" ]] ||
            fail "$(figure_series 01-coalescing-time)"
    fi
    grep -q "seed 11" "$out/report.html" || fail "no seed in the captions"
    grep -qF "$("$KIT_BUILD/bin/kit-query" | sed -n 's/^device: //p')" "$out/report.html" || fail "no GPU name"
}

# bats test_tags=gpu,report
@test "make report on a GPU: the references as the student's files, their curves beside the reference's" {
    # Lab 01's run is judged on its results (the GPU shared); Lab 05's
    # judges the overlap of its streams (the GPU alone, below).
    require_gpu
    local k="$BATS_TEST_TMPDIR/kit" lab
    mkdir -p "$k/build/labs" "$k/build/solutions" "$k/build/bin"
    cp -Rp "$KIT_ROOT/Makefile" "$KIT_ROOT/common" "$KIT_ROOT/solutions" "$KIT_ROOT/handouts" "$k/"
    mkdir -p "$k/labs"
    cp -a "$KIT_BUILD/harness" "$k/build/"
    cp -a "$KIT_BUILD/bin/kit-query" "$k/build/bin/"
    for lab in 01-coalescing 05-streams; do
        # The reference's file and build, as the student's: nothing to compile.
        cp -Rp "$KIT_ROOT/solutions/$lab" "$k/labs/"
        cp -a "$KIT_BUILD/solutions/$lab" "$k/build/solutions/"
        cp -a "$KIT_BUILD/solutions/$lab" "$k/build/labs/"
    done
    KIT_BUILD="$k/build" run make -s --no-print-directory -C "$k" report LAB=01 SEED=3 ARGS="--size 4M --matrix 2048"
    assert_success
    assert_output --partial "make report: 01-coalescing: your program PASS; the reference PASS"
    run python3 "$CHECK" "$k/build/report/report.html"
    assert_success
    if command -v gnuplot >/dev/null 2>&1; then
        [[ "$(figure_series 01-coalescing-time)" == "your program | reference | Tesla K40 (the course)"* ]] ||
            fail "$(figure_series 01-coalescing-time)"
    fi
    kit_gpu_lock -x
    KIT_BUILD="$k/build" run make -s --no-print-directory -C "$k" report LAB=05 SEED=3 ARGS="--size 4M"
    assert_success
    assert_output --partial "make report: 05-streams: your program PASS; the reference PASS"
    run python3 "$CHECK" "$k/build/report/report.html"
    assert_success
    if command -v gnuplot >/dev/null 2>&1; then
        assert_line --partial "figure 05-streams-timeline-reference-depth-first: copy in (host to device) | kernel | copy out (device to host)"
        assert_line --partial "figure 05-streams-timeline-student-depth-first: copy in (host to device) | kernel | copy out (device to host)"
        # Both orders, from the programs' own traced runs.
        assert_line --partial "figure 05-streams-timeline-reference-breadth-first: copy in (host to device) | kernel | copy out (device to host)"
        assert_line --partial "figure 05-streams-timeline-student-breadth-first: copy in (host to device) | kernel | copy out (device to host)"
    else
        grep -q 'copy in (host to device)' "$k/build/report/report.html" || fail "no timeline table"
    fi
}

# bats test_tags=gpu,report
@test "grade-class on a GPU: class.html for an honest, a broken and two near-copies, the copies paired" {
    require_gpu_unlocked
    sandbox_works || true
    local subs="$BATS_TEST_TMPDIR/subs" out="$BATS_TEST_TMPDIR/out" t="$BATS_TEST_TMPDIR/t"
    mkdir -p "$subs" "$t/a/labs/01-coalescing" "$t/b/labs/01-coalescing"
    submission "$subs/honest" reference=01-coalescing
    submission "$subs/broken" no-compile
    sed -f "$FIX/near-copy.sed" "$KIT_ROOT/labs/01-coalescing/coalescing.cu" >"$t/a/labs/01-coalescing/coalescing.cu"
    sed -f "$FIX/rename.sed" "$t/a/labs/01-coalescing/coalescing.cu" >"$t/b/labs/01-coalescing/coalescing.cu"
    cp -R "$t/a" "$subs/copy-a"
    cp -R "$t/b" "$subs/copy-b"
    run timeout 900 bash "$KIT_ROOT/common/grade/grade-class.sh" --reference-build "$KIT_BUILD" "${sandbox_opt[@]}" \
        --labs 01 "$subs" "$out"
    assert_success
    assert_output --regexp "grade-class: class.html: .*/class.html"
    [ -s "$out/class.html" ] || fail "no class.html in $out"
    run python3 "$CHECK" "$out/class.html"
    assert_success
    grep -q '<a href="students/honest/report.txt">honest</a>' "$out/class.html" || fail "no row for honest"
    grep -q '<td>does not compile</td><td class="num">1</td><td>broken</td>' "$out/class.html" || fail "no reason for broken"
    if command -v sim_c >/dev/null 2>&1; then
        python3 - "$out/class.html" <<'PY' || fail "the near-copies are not the one pair listed"
import re, sys
sim = re.search(r'<section id="similarity">(.*?)</section>', open(sys.argv[1]).read(), re.S).group(1)
pairs = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td class=\"num\">\d+%</td>", sim)
assert pairs == [("copy-a", "copy-b")], pairs
PY
    else
        grep -q 'apt-get install similarity-tester' "$out/class.html" || fail "no word of similarity-tester"
    fi
}
