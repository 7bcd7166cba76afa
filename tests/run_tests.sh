#!/usr/bin/env bash
# The test driver behind `make test`: five tiers.
#   1 host       unit tests of common/harness.h, compiled as C11
#   2 build      every lesson, exercise, solution and lab program for sm_75 and sm_90,
#                warnings as errors; every lesson rejects bad options (exit 2, one line); the
#                lessons for every other architecture the README names; the build
#                follows the flags; the tree with CUDA 12.4 where found (tests/check_build.sh)
#   3 ptx        each lesson's PTX shows its technique (lessons/manifest.txt)
#   4 exercises  each stub differs from its solution only inside TODO regions
#   5 gpu        size x seed x distribution matrix, offsets, block sizes, n > 2^31
#                where claimed, exercise stubs must FAIL (an exercise that is not the
#                shipped stub, per tests/stubs.sha256, gets the matrix instead),
#                determinism, sanitizers; SKIPPED (and said so) without a GPU or a build
# Ends with "N passed, M failed, K skipped"; exit 0 only if nothing failed.
# Environment: TIERS="host build ..." runs a subset of tiers; GPU_PARTS="matrix big
# det san" a subset of the gpu tier; GPU_JOBS sets how many GPU runs go at once;
# STUBS_STRICT=1 (set by .ci/run) fails a tests/stubs.sha256 that the exercises do
# not match, where elsewhere that is your work and the check is skipped.
set -u
cd "$(dirname "$0")/.." || exit 1

B=build/test
LOG=$B/logs
mkdir -p "$LOG"
JOBS=$(nproc 2>/dev/null || echo 2)
GPU_JOBS=${GPU_JOBS:-$(( JOBS < 12 ? JOBS : 12 ))}
TIERS=${TIERS:-"host build ptx exercises gpu"}
GPU_PARTS=${GPU_PARTS:-"matrix big det san"}
part() { case " $GPU_PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
PASS=0 FAIL=0 SKIP=0

ok()   { PASS=$((PASS + 1)); echo "  ok    $1"; }
bad()  { FAIL=$((FAIL + 1)); echo "  FAIL  $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -n 15 | sed 's/^/          /'; }
skip() { SKIP=$((SKIP + 1)); echo "  skip  $1"; }
want() { case " $TIERS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
num()  { basename "$1" | cut -c1-2; }

LESSON_SRCS=$(ls lessons/[0-9][0-9]_*/[0-9][0-9]_*.cu 2>/dev/null)
EXERCISE_SRCS=$(ls exercises/[0-9][0-9]_*.cu 2>/dev/null)
SOLUTION_SRCS=$(ls solutions/[0-9][0-9]_*.cu 2>/dev/null)
LESSONS=$(for s in $LESSON_SRCS; do echo "lesson$(num "$s")"; done)
EXERCISES=$(for s in $EXERCISE_SRCS; do echo "exercise$(num "$s")"; done)
SOLUTIONS=$(for s in $SOLUTION_SRCS; do echo "solution$(num "$s")"; done)
LABS=$(for s in $(ls lab/[0-9][0-9]_*.cu 2>/dev/null); do basename "$s" .cu | sed 's/^/lab_/'; done)

# Binaries the build tier skipped on purpose (e.g. no NCCL): not failures.
skipped_build() { grep -q "^$1: skipped:" "$LOG/build.log" 2>/dev/null; }

# ---- 1. host ----------------------------------------------------------------
if want host; then
    echo "[host] unit tests of common/harness.h (C11)"
    if gcc -std=c11 -Wall -Wextra -Werror -pedantic -Icommon tests/test_harness.c -o $B/test_harness -lm \
        >"$LOG/host_build.log" 2>&1; then
        $B/test_harness >"$LOG/host.log" 2>&1
        while IFS= read -r line; do
            case "$line" in
            "ok "*) ok "${line#ok }" ;;
            "not ok "*) bad "${line#not ok }" ;;
            esac
        done <"$LOG/host.log"
        [ -s "$LOG/host.log" ] || bad "host unit tests printed nothing"
    else
        bad "tests/test_harness.c does not compile as C11" "$(cat "$LOG/host_build.log")"
    fi
    # The same tests under AddressSanitizer and UBSan: no input may crash the parser.
    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    # shellcheck disable=SC2086
    if gcc -std=c11 -Wall -Wextra -Werror -pedantic $SAN -Icommon tests/test_harness.c -o $B/test_harness_san -lm \
        >"$LOG/host_san_build.log" 2>&1; then
        if $B/test_harness_san >"$LOG/host_san.log" 2>&1 && ! grep -q '^not ok' "$LOG/host_san.log"; then
            ok "host unit tests clean under -fsanitize=address,undefined ($(grep -c '^ok' "$LOG/host_san.log") checks)"
        else
            bad "host unit tests under -fsanitize=address,undefined" "$(grep -v '^ok' "$LOG/host_san.log" | head -n 15)"
        fi
    else
        skip "host unit tests with sanitizers: gcc cannot build with -fsanitize=address,undefined here"
    fi
    # make plot (scripts/plot.sh) in a scratch results/: it must draw a results
    # CSV, pass over a file that only matches the name, and stop.
    P=$LOG/plot
    rm -rf "$P" && mkdir -p "$P/results"
    H="lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"
    { echo "$H"
      echo "12_single_pass,fixed,Test GPU,1048576,4194304,100,7.0,6.9,7.5,599.2,12.4,5,5,0,PASS"
      echo "12_single_pass,fixed,Test GPU,4194304,16777216,100,10.0,9.9,10.5,1677.7,34.9,5,5,0,PASS"; } >"$P/results/bench-test-gpu.csv"
    cp "$P/results/bench-test-gpu.csv" "$P/results/run-test-gpu.csv"
    { echo "# a hand-made note"; echo "variant,n,median_us"; echo "cub,1048576,8.4"; } >"$P/results/bench-note.csv"
    cp "$P/results/bench-note.csv" "$P/results/run-note.csv"
    root=$PWD
    if (cd "$P" && ulimit -f 10240 && timeout 60 sh "$root/scripts/plot.sh") >"$P/out.txt" 2>&1 &&
        [ -s "$P/results/bench-test-gpu.svg" ] && [ -s "$P/results/run-test-gpu.svg" ] &&
        [ ! -e "$P/results/bench-note.svg" ] && [ ! -e "$P/results/run-note.svg" ] &&
        grep -q "points=\"[0-9]" "$P/results/bench-test-gpu.svg"; then
        ok "make plot draws results CSVs and passes over other files"
    else
        bad "make plot: wrong on a scratch results/ (a good CSV and a stray one)" "$(cat "$P/out.txt"; ls -la "$P/results")"
    fi
    # make plot after make run alone (a run CSV of yours, no bench yet): it draws it
    # and must not say that runs/ is empty
    mkdir -p "$P/runs" && cp "$P/results/run-test-gpu.csv" "$P/runs/run-test-gpu.csv"
    if (cd "$P" && ulimit -f 10240 && timeout 60 sh "$root/scripts/plot.sh" results runs) >"$P/out2.txt" 2>&1 &&
        [ -s "$P/runs/run-test-gpu.svg" ] && ! grep -q "no runs of yours" "$P/out2.txt"; then
        ok "make plot with only make run's CSV in runs/ draws it and does not call runs/ empty"
    else
        bad "make plot with only a run CSV in runs/" "$(cat "$P/out2.txt"; ls -la "$P/runs")"
    fi
    # make diff/profile/check, ARCH and the nvcc checks, make run/bench's pre-flight
    # and failure report, the charts' XML: under POSIX sh, no GPU needed
    sh tests/test_make.sh >"$LOG/test_make.log" 2>&1
    while IFS= read -r line; do
        case "$line" in
        "ok "*"# skip"*) skip "${line#ok }" ;;
        "ok "*) ok "${line#ok }" ;;
        "not ok "*) bad "${line#not ok }" "$(grep -A8 -F -x -- "$line" "$LOG/test_make.log" | sed 1d | awk '!/^    / { exit } { print }')" ;;
        esac
    done <"$LOG/test_make.log"
    [ -s "$LOG/test_make.log" ] || bad "tests/test_make.sh printed nothing"
    # Lesson 16's Welford bounds (common/welford_bound.h) against a host replay of its merges.
    if gcc -std=c11 -Wall -Wextra -Werror -pedantic -O2 -Icommon tests/welford_sim.c -o $B/welford_sim -lm \
        >"$LOG/welford_sim_build.log" 2>&1; then
        if $B/welford_sim >"$LOG/welford_sim.log" 2>&1; then
            ok "$(grep -m1 '^ok ' "$LOG/welford_sim.log" | cut -c4-); $(grep -m1 '^# worst variance' "$LOG/welford_sim.log" | cut -c3- | sed 's/ (.*//')"
        else
            bad "Welford bounds: lesson 16's merges replayed on the host break them" "$(grep -v '^ok' "$LOG/welford_sim.log")"
        fi
    else
        bad "tests/welford_sim.c does not compile as C11" "$(cat "$LOG/welford_sim_build.log")"
    fi
    # Without cuobjdump or ncu, make lessonNN.sass and make profile show what results/ ships.
    out=$(CUOBJDUMP= sh scripts/listing.sh sass lesson04 ./lesson04 "$LOG/none.sass" 2>&1); rc=$?
    if [ $rc -eq 2 ] && grep -q 'cuobjdump not found' <<<"$out" && grep -q 'Function : _Z13reduce_kernelPKfmPf' <<<"$out" &&
        [ ! -e "$LOG/none.sass" ]; then ok "make lesson04.sass without cuobjdump shows results/sass-lesson04-sm_90.txt"
    else bad "make lesson04.sass without cuobjdump shows no shipped listing (exit $rc)" "$out"; fi
    out=$(NCU=/nonexistent/ncu sh scripts/profile.sh 4 2>&1); rc=$?
    if [ $rc -eq 2 ] && grep -q 'Nsight Compute' <<<"$out" && grep -Eq '^  launch__grid_size +65536 ' <<<"$out"; then
        ok "make profile L=4 without ncu shows lesson 04's rows of results/counters-<gpu>.csv"
    else bad "make profile L=4 without ncu shows no shipped counters (exit $rc)" "$out"; fi
    # The lessons' layout: manifest, sizes, make diff against the base, lesson 12's shared pieces.
    sh tests/check_layout.sh >"$LOG/layout.log" 2>&1
    while IFS= read -r line; do
        case "$line" in
        "ok "*"# skip") skip "${line#ok }" ;;
        "ok "*) ok "${line#ok }" ;;
        "not ok "*) bad "${line#not ok }" "$(grep -A3 -F -x -- "$line" "$LOG/layout.log" | sed 1d | awk '!/^    / { exit } { print }')" ;;
        esac
    done <"$LOG/layout.log"
    grep -q '^ok ' "$LOG/layout.log" || bad "tests/check_layout.sh printed no result" "$(head -n 5 "$LOG/layout.log")"
    # ... and it bites: a scratch copy with lesson 13's warp_sum changed, and one
    # with a lesson missing from the manifest, must each fail.
    S=$LOG/layout-self
    rm -rf "$S" && mkdir -p "$S" && cp -r lessons scripts tests "$S"/
    sed -i '/^__device__ float warp_sum(float v)/,/^}/ s/offset > 0/offset >= 1/' "$S"/lessons/13_*/13_*.cu
    if sh "$S/tests/check_layout.sh" "$S" | grep -q '^not ok warp_sum'; then
        ok "the layout check fails when a lesson's warp_sum drifts from lesson 12's"
    else
        bad "the layout check does not notice lesson 13's warp_sum drifting from lesson 12's"
    fi
    rm -rf "$S" && mkdir -p "$S" && cp -r lessons scripts tests "$S"/
    awk -F'\t' '$1 != "05"' lessons/manifest.txt >"$S/lessons/manifest.txt"
    if sh "$S/tests/check_layout.sh" "$S" | grep -q '^not ok lessons/manifest.txt lists every lesson folder'; then
        ok "the layout check fails when a lesson folder has no line in lessons/manifest.txt"
    else
        bad "the layout check does not notice a lesson missing from lessons/manifest.txt"
    fi
    rm -rf "$S" && mkdir -p "$S" && cp -r lessons scripts tests "$S"/
    yes 'one more sentence of prose' | head -n 400 >>"$S"/lessons/05_*/notes.md
    if sh "$S/tests/check_layout.sh" "$S" | grep -q '^not ok every notes.md within'; then
        ok "the layout check fails when a notes.md grows past 3,000 words"
    else
        bad "the layout check does not notice a notes.md of more than 3,000 words"
    fi
    # make hint: every exercise has its graded hints, shown one at a time.
    sh tests/check_hints.sh >"$LOG/hints.log" 2>&1
    while IFS= read -r line; do
        case "$line" in
        "ok "*"# skip"*) skip "${line#ok }" ;;
        "ok "*) ok "${line#ok }" ;;
        "not ok "*) bad "${line#not ok }" ;;
        esac
    done <"$LOG/hints.log"
    grep -q '^ok ' "$LOG/hints.log" || bad "tests/check_hints.sh printed no result" "$(head -n 5 "$LOG/hints.log")"
    # The concept diagrams are drawn from the lessons' parameters (scripts/diagrams.sh):
    # redrawn into a scratch folder, they must equal the committed SVGs.
    if out=$(sh scripts/diagrams.sh --check 2>&1); then
        ok "the notes' diagrams match what scripts/diagrams.sh draws from the lessons"
    else
        bad "diagrams differ from what the lessons' parameters give (sh scripts/diagrams.sh redraws them)" "$out"
    fi
    S=$LOG/diagrams-self   # ... and the check bites: lesson 04's default block size changed in a scratch copy
    rm -rf "$S" && mkdir -p "$S" && cp -r lessons scripts "$S"/
    sed -i 's/\(LessonInfo info = {"[^"]*", BLOCK_[A-Z]*, \)256,/\1128,/' "$S"/lessons/04_*/04_*.cu
    if ! sh "$S/scripts/diagrams.sh" --check >/dev/null 2>&1; then
        ok "the diagram check fails when a lesson's parameter changes under its diagram"
    else
        bad "the diagram check does not notice lesson 04's block size changing"
    fi
    # Tables of measurements are generated from results/ (scripts/tables.sh):
    # regenerated in a scratch copy, they must equal what README and notes show.
    if out=$(sh scripts/tables.sh --check 2>&1); then
        ok "generated tables in README and notes match results/"
    else
        bad "tables in README/notes differ from results/ (make tables regenerates them)" "$out"
    fi
    # ... and the check bites: one figure changed in a copy of a generated table fails it.
    md=$(grep -l '^<!-- table: \(lesson\|staircase\|bench\|rows\)' README.md lessons/*/notes.md 2>/dev/null | head -n 1)
    if [ -n "$md" ]; then
        cp "$md" "$LOG/drift.md"
        awk '/^<!-- table: / { t = 1 } t && /^\|.*[0-9]\.[0-9]/ && !done { sub(/[0-9]\./, "9."); done = 1 } { print }' \
            "$md" >"$LOG/drift.tmp" && mv "$LOG/drift.tmp" "$LOG/drift.md"
        if ! cmp -s "$md" "$LOG/drift.md" && ! TABLES_FILES="$PWD/$LOG/drift.md" sh scripts/tables.sh --check >/dev/null 2>&1; then
            ok "the table check fails on a hand-edited figure ($md)"
        else
            bad "the table check does not notice a hand-edited figure in $md"
        fi
    fi
    # ... and a lesson whose code changed after its results were made shows no
    # figure of the old code: in a scratch copy, lesson 05 changed -> --check fails.
    S=$LOG/stale-self
    rm -rf "$S" && mkdir -p "$S" && cp -r README.md lessons solutions scripts results "$S"/ && { [ ! -d lab ] || cp -r lab "$S"/; }
    sed -i '0,/^__global__/ s/^__global__/static const int changed_by_a_test = 1;\n__global__/' "$S"/lessons/05_*/05_*.cu
    if ! sh "$S/scripts/tables.sh" --check >"$LOG/stale-self.log" 2>&1 && grep -q 'stale:' "$LOG/stale-self.log"; then
        ok "the table check fails when a lesson's code changed after its results were measured (results/code.txt)"
    else
        bad "the table check does not notice lesson 05's code changing after its results were measured" "$(head -n 5 "$LOG/stale-self.log")"
    fi
    # The code checksums behind results/code.txt do not depend on the locale
    # (a locale that sorts punctuation differently once made every table stale).
    loc=$(locale -a 2>/dev/null | grep -i -m1 -E '^(en_US|de_DE|fr_FR)\.utf-?8$')
    if [ -z "$loc" ]; then
        skip "code checksums in another locale: no en_US/de_DE/fr_FR UTF-8 locale installed"
    elif [ "$(LANG=$loc LC_ALL=$loc sh scripts/code_hash.sh)" = "$(LANG=C LC_ALL=C sh scripts/code_hash.sh)" ]; then
        ok "code checksums are the same in the C locale and in $loc"
    else
        bad "code checksums differ between the C locale and $loc (scripts/code_hash.sh must sort in LC_ALL=C)"
    fi
    # Every decimal figure in a README, notes or lab table, generated or typed, is in a results/ file.
    if out=$(sh tests/check_figures.sh 2>&1); then
        ok "$(tail -n 1 <<<"$out")"
    else
        bad "table figures not found under results/" "$out"
    fi
    # The charts in results/ are drawn from results/ (scripts/plot.sh): redrawn in a scratch
    # copy they must match, a changed CSV figure must fail (self-test), and every SVG must
    # render in Chromium where it is installed (else skipped, and said so).
    sh tests/check_charts.sh >"$LOG/charts.log" 2>&1
    while IFS= read -r line; do
        case "$line" in
        "ok "*"# skip"*) skip "${line#ok }" ;;
        "ok "*) ok "${line#ok }" ;;
        "not ok "*) bad "${line#not ok }" "$(grep -A12 -F -x -- "$line" "$LOG/charts.log" | sed 1d | awk '!/^    / { exit } { print }')" ;;
        esac
    done <"$LOG/charts.log"
    grep -q '^\(not \)\{0,1\}ok ' "$LOG/charts.log" || bad "tests/check_charts.sh printed no result" "$(head -n 5 "$LOG/charts.log")"
fi

# ---- 2. build ---------------------------------------------------------------
if want build; then
    echo "[build] everything for sm_75 and sm_90, warnings as errors ($JOBS jobs)"
    command -v nvcc >/dev/null || { bad "nvcc not found: the build tier needs the CUDA toolkit"; }
    make --no-print-directory -k -j"$JOBS" BUILDDIR=$B ARCH="75 90" WERROR=1 all >"$LOG/build.log" 2>&1
    for b in $LESSONS $EXERCISES $SOLUTIONS $LABS; do
        case $b in
        lesson*) src=$(ls lessons/"${b#lesson}"_*/"${b#lesson}"_*.cu) ;;
        exercise*) src=$(ls exercises/"${b#exercise}"_*.cu) ;;
        solution*) src=$(ls solutions/"${b#solution}"_*.cu) ;;
        lab_*) src=lab/${b#lab_}.cu ;;
        esac
        if skipped_build "$b"; then
            skip "$b: $(grep "^$b: skipped:" "$LOG/build.log" | sed "s/^$b: skipped: //")"
        elif [ -x "$B/$b" ] && [ "$B/$b" -nt "$src" ]; then
            ok "$b builds"
        else
            bad "$b does not build" "$(grep -A3 -F "$src" "$LOG/build.log" | grep -v '^nvcc ' | head -n 12)"
        fi
    done
    # Bad options: parsed before the GPU is touched, so this needs no GPU.
    BAD_OPTS=("-n abc" "-n -5" "-n 1e6x" "-n 2^20+" "-n 1e30" "-n" "--bogus" "-r 0" "-d gauss" "-s -1"
              "--offset 99999" "stray" "-b 100" "-m 5" "-Z5" "--csv=1" "-n 1,000" "--flush x" "-s 0x10"
              "-n 2^99999999999")
    for b in $LESSONS; do
        [ -x "$B/$b" ] || continue
        fails=""
        for a in "${BAD_OPTS[@]}"; do
            # shellcheck disable=SC2086
            timeout 20 "$B/$b" $a >"$LOG/opt.out" 2>"$LOG/opt.err"
            rc=$?
            if [ $rc -ne 2 ] || [ "$(wc -l <"$LOG/opt.err")" -ne 1 ] || [ -s "$LOG/opt.out" ]; then
                fails="$fails'$a' -> exit $rc, $(wc -l <"$LOG/opt.err") stderr lines: $(head -c 200 "$LOG/opt.err")"$'\n'
            fi
        done
        "$B/$b" -h >"$LOG/opt.out" 2>&1 && grep -q "^usage:" "$LOG/opt.out" || fails="$fails-h does not print usage"$'\n'
        if [ -z "$fails" ]; then ok "$b rejects ${#BAD_OPTS[@]} bad options (exit 2, one line)"; else bad "$b bad options" "$fails"; fi
    done
    # Beyond sm_75 + sm_90: the build follows the flags; every architecture the README names that
    # this nvcc builds for (lessons); the oldest toolkit, CUDA 12.4, where found (else SKIPPED).
    JOBS="$JOBS" sh tests/check_build.sh >"$LOG/check_build.log" 2>&1
    while IFS= read -r line; do
        case "$line" in
        "ok "*"# skip"*) skip "${line#ok }" ;;
        "ok "*) ok "${line#ok }" ;;
        "not ok "*) bad "${line#not ok }" "$(grep -A12 -F -x -- "$line" "$LOG/check_build.log" | sed 1d | awk '!/^    / { exit } { print }')" ;;
        "# "*) echo "        ${line#\# }" ;;
        esac
    done <"$LOG/check_build.log"
    grep -q '^ok ' "$LOG/check_build.log" || bad "tests/check_build.sh printed no result" "$(head -n 5 "$LOG/check_build.log")"
    # Without a GPU the first line of a lesson's error names the cause, and the program as typed.
    if [ -x "$B/lesson04" ] && ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
        "$B/lesson04" -n 1 --check >/dev/null 2>"$LOG/nogpu.err"; rc=$?
        want='^lesson04: no usable GPU: '
        ldconfig -p 2>/dev/null | grep -q 'libcuda\.so' || want="${want}no NVIDIA driver was found \\("
        if [ $rc -eq 1 ] && [ "$(wc -l <"$LOG/nogpu.err")" -eq 2 ] && head -n 1 "$LOG/nogpu.err" | grep -Eq "$want"; then
            ok "no GPU: lesson04's first line says why ($(head -n 1 "$LOG/nogpu.err" | sed 's/ (.*//'))"
        else bad "no GPU: lesson04's first line does not say why (exit $rc)" "$(cat "$LOG/nogpu.err")"; fi
    fi
fi

# ---- 3. ptx -----------------------------------------------------------------
if want ptx; then
    echo "[ptx] each lesson's PTX shows its technique (the ptx lines of lessons/manifest.txt)"
    # The PTX embedded in the build (cuobjdump), or, where the toolkit has no
    # cuobjdump, nvcc -ptx for sm_90, in parallel.
    awk -F'\t' '$1 == "ptx" { print $2 "\t" $3 "\t" $4 }' lessons/manifest.txt >"$LOG/ptx_expect.tsv"
    for n in $(cut -f1 "$LOG/ptx_expect.tsv" | sort -u); do
        src=$(ls lessons/"$n"_*/"$n"_*.cu 2>/dev/null)
        [ -n "$src" ] && ! skipped_build "lesson$n" || continue
        out=$LOG/lesson$n.ptx
        [ -s "$out" ] && [ "$out" -nt "$src" ] && [ -z "$(find common -name '*.h' -newer "$out")" ] && continue
        if command -v cuobjdump >/dev/null && [ -x "$B/lesson$n" ]; then
            echo "cuobjdump -ptx $B/lesson$n >$out 2>&1"
        else
            echo "nvcc -ptx -arch=sm_90 -std=c++17 -Icommon -o $out $src >$out.err 2>&1"
        fi
    done | xargs -d '\n' -P "$JOBS" -I{} bash -c '{}'
    while IFS=$'\t' read -r n regex what; do
        b=lesson$n
        if skipped_build "$b"; then skip "$b PTX: binary skipped at build"; continue; fi
        if [ ! -s "$LOG/$b.ptx" ]; then bad "$b PTX: none made" "$(cat "$LOG/$b.ptx.err" 2>/dev/null)"; continue; fi
        if grep -Eq "$regex" "$LOG/$b.ptx"; then ok "$b PTX has $what"; else bad "$b PTX lacks $what (/$regex/)"; fi
    done <"$LOG/ptx_expect.tsv"
    # count_done's atom.global must get a global-space address: the register it
    # names comes from cvta.to.global (a generic pointer is not a global address
    # on every GPU), in every lesson whose PTX has the counter.
    for f in "$LOG"/lesson[0-9][0-9].ptx; do
        [ -s "$f" ] && grep -q 'atom\.acq_rel\.gpu\.global\.inc\.u32' "$f" || continue
        b=$(basename "$f" .ptx)
        if awk '/cvta\.to\.global\.u64/ { r = $2; sub(/,$/, "", r); g[r] = 1 }
                /^[ \t]*(add|sub)\.s64|^[ \t]*mov\.b64/ { d = $2; a = $3; b = $4; sub(/,$/, "", d); sub(/[,;]$/, "", a); sub(/[,;]$/, "", b)
                    if ((a in g) || (b in g)) g[d] = 1 }   # an offset from a global address is one
                /atom\.acq_rel\.gpu\.global\.inc\.u32/ { a = $0; sub(/.*\[/, "", a); sub(/\].*/, "", a); n++; if (!(a in g)) bad++ }
                END { exit !(n > 0 && bad == 0) }' "$f"; then
            ok "$b PTX: count_done's atom.global takes a cvta.to.global address"
        else
            bad "$b PTX: count_done's atom.global takes a generic address (convert it with __cvta_generic_to_global)"
        fi
    done
    # make lessonNN.ptx opens with the lesson's own kernels (scripts/listing.sh), and ptxas still takes the file.
    if nvcc -ptx -arch=sm_90 -std=c++17 -Icommon -o "$LOG/order04.ptx" lessons/04_*/04_*.cu >"$LOG/order04.log" 2>&1 &&
        sh scripts/listing.sh ptx lessons/04_*/04_*.cu "$LOG/order04.ptx" sm_90 >>"$LOG/order04.log" 2>&1 &&
        grep -m1 -E '^(\.visible |\.weak )*\.entry ' "$LOG/order04.ptx" | grep -q '_Z13reduce_kernelPKfmPf' &&
        grep -q 'harness_l2_clean_read' "$LOG/order04.ptx" &&
        { ! command -v ptxas >/dev/null || ptxas -arch=sm_90 -o "$LOG/order04.cubin" "$LOG/order04.ptx" >>"$LOG/order04.log" 2>&1; }; then
        ok "lesson04.ptx lists reduce_kernel first, the harness's kernel after it, and ptxas takes it"
    else bad "lesson04.ptx: the lesson's kernel is not first, or ptxas refuses the reordered file" "$(cat "$LOG/order04.log")"; fi
fi

# ---- 4. exercises -----------------------------------------------------------
# A region starts at a line with "TODO(exercise)" and ends at "END(exercise)";
# the marker lines must match, everything outside the regions must match.
strip_regions() { awk '/END\(exercise\)/ { inside = 0 } !inside { print } /TODO\(exercise\)/ { inside = 1 }' "$1"; }
if want exercises; then
    echo "[exercises] stubs differ from solutions only inside TODO(exercise) regions"
    for e in $EXERCISE_SRCS; do
        s=solutions/$(basename "$e")
        lesson_dir=$(ls -d lessons/"$(num "$e")"_* 2>/dev/null)
        if [ ! -f "$s" ]; then bad "$e has no $s"; continue; fi
        nb=$(grep -c 'TODO(exercise)' "$e"); ne=$(grep -c 'END(exercise)' "$e")
        if [ "$nb" -lt 1 ] || [ "$nb" -ne "$ne" ]; then bad "$e: $nb TODO(exercise) and $ne END(exercise) markers"; continue; fi
        if grep -q 'TODO(exercise)' "$e" && ! grep -Eq 'TODO\(exercise\): *[^ ]' "$e"; then bad "$e: a TODO(exercise) marker says nothing"; continue; fi
        if d=$(diff <(strip_regions "$e") <(strip_regions "$s")); then
            ok "$(basename "$e"): $nb region(s), identical outside them"
        else
            bad "$(basename "$e") and its solution differ outside TODO regions" "$d"
        fi
        [ -n "$lesson_dir" ] && [ "$(basename "$lesson_dir")" = "$(basename "$e" .cu)" ] ||
            bad "$(basename "$e") has no lesson of the same name"
        grep -q '^## Exercise' "$lesson_dir/notes.md" 2>/dev/null || bad "$lesson_dir/notes.md has no '## Exercise' section"
    done
    [ -n "$EXERCISE_SRCS" ] || skip "no exercises yet"
    # make check E=NN asks each exercise's PTX for its technique
    # (tests/exercise_expect.txt): every solution must show it.
    for n in $(awk '!/^#/ && NF { print $1 }' tests/exercise_expect.txt | sort -u); do
        s=$(ls solutions/"$n"_*.cu 2>/dev/null)
        [ -n "$s" ] || { bad "tests/exercise_expect.txt names exercise $n, which has no solution"; continue; }
        out=$LOG/solution$n.ptx
        [ -s "$out" ] && [ "$out" -nt "$s" ] && [ -z "$(find common -name '*.h' -newer "$out")" ] && continue
        echo "nvcc -ptx -arch=sm_90 -std=c++17 -Icommon -o $out $s >$out.err 2>&1"
    done | xargs -d '\n' -P "$JOBS" -I{} bash -c '{}'
    while read -r n regex what; do
        case "$n" in "" | \#*) continue ;; esac
        p=$LOG/solution$n.ptx
        if [ ! -s "$p" ]; then bad "solution$n PTX: none made" "$(cat "$p.err" 2>/dev/null)"; continue; fi
        case $regex in z:*) grep -Ezq "${regex#z:}" "$p" ;; *) grep -Eq "$regex" "$p" ;; esac
        if [ $? -eq 0 ]; then ok "solution$n PTX has $what"; else bad "solution$n PTX lacks $what (/${regex#z:}/)"; fi
    done <tests/exercise_expect.txt
    # tests/stubs.sha256 must describe the stubs as shipped: the gpu tier uses it
    # to tell a stub (must fail) from a solved exercise (must pass everything).
    # A match passes wherever it is found. A mismatch fails under STUBS_STRICT=1
    # (.ci/run sets it: CI tests the tree as shipped) and is skipped elsewhere,
    # where it is your solved exercises, committed or not.
    if diff <(sha256sum exercises/[0-9][0-9]_*.cu) tests/stubs.sha256 >"$LOG/stubs.diff" 2>&1; then
        ok "tests/stubs.sha256 matches the $(wc -l <tests/stubs.sha256) stubs"
    elif [ "${STUBS_STRICT:-0}" = 1 ]; then
        bad "tests/stubs.sha256 is stale: sha256sum exercises/[0-9][0-9]_*.cu >tests/stubs.sha256" "$(cat "$LOG/stubs.diff")"
    else
        skip "tests/stubs.sha256 against the stubs: the exercises differ from the shipped stubs (your work; CI, with STUBS_STRICT=1, fails here)"
    fi
fi

# ---- 5. gpu -----------------------------------------------------------------
SIZES="0 1 2 31 32 33 255 257 1000 4097 65537 2^20+3 2^24 2^26"
OFFSET_SIZES="1 3 33 1000 65537 2^20+3"
BLOCK_SIZES="32 64 128 256 512 1024"

gpu_present() {
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU' || return 1
    [ -x "$B/lesson01" ] && "$B/lesson01" -n 1 --check >/dev/null 2>&1
}

# Runs job lines "id<TAB>expect<TAB>command" (tests/run_job.sh), GPU_JOBS at a time.
run_jobs() {
    : >"$2"
    # the largest sizes first, so that no long run starts last
    awk -F'\t' '{ k = ($3 ~ /2\^2[0-9]/) ? 0 : 1; print k "\t" $0 }' "$1" | sort -s -t$'\t' -k1,1n | cut -f2- |
        tr '\n' '\0' | xargs -0 -P "$GPU_JOBS" -n 1 bash tests/run_job.sh "$2"
}

# One verdict per id: ok if every job of it went as expected; skip if none
# went wrong and one printed SKIP (an sm_90 lesson on an older GPU: exit 0).
tally() {
    local out=$1 id n badl skipl
    cut -f1 "$out" | sort -u >"$out.ids"
    while IFS= read -r id; do
        n=$(awk -F'\t' -v id="$id" '$1 == id' "$out" | wc -l)
        checks=$(awk -F'\t' -v id="$id" '$1 == id { k += $6 } END { print k + 0 }' "$out")
        badl=$(awk -F'\t' -v id="$id" '$1 == id && $2 == "bad" { print "exit " $3 ": " $4 "  | " $7 }' "$out")
        skipl=$(awk -F'\t' -v id="$id" '$1 == id && $2 == "skip" { print $7; exit }' "$out")
        what="$n processes"; [ "$checks" -gt 0 ] && what="$what, $checks PASS lines"
        if [ -n "$badl" ]; then bad "$id: $(wc -l <<<"$badl") of $n processes wrong" "$badl"
        elif [ -n "$skipl" ]; then skip "$id: $skipl"
        else ok "$id ($what)"; fi
    done <"$out.ids"
}

# An exercise is a shipped stub while its bytes are those recorded in
# tests/stubs.sha256 (the exercises tier checks that list under STUBS_STRICT=1,
# as CI runs it): a stub must FAIL. Anything else is the learner's work,
# committed or not, and is held to what a solution is.
exercise_is_stub() {
    local src want
    src=$(ls exercises/"${1#exercise}"_*.cu 2>/dev/null) || return 0
    want=$(awk -v f="$src" '$2 == f { print $1 }' tests/stubs.sha256 2>/dev/null)
    [ -n "$want" ] && [ "$(sha256sum "$src" | cut -d' ' -f1)" = "$want" ]
}

if want gpu; then
    echo "[gpu] correctness matrix, stubs, determinism, sanitizers"
    # Exercises as shipped must fail (STUBS); an exercise the learner changed
    # is held to everything a solution is (the matrix and the sanitizers).
    RUNNABLE="" STUBS=""
    for b in $LESSONS $SOLUTIONS; do skipped_build "$b" || RUNNABLE="$RUNNABLE $b"; done
    for b in $EXERCISES; do
        skipped_build "$b" && continue
        if exercise_is_stub "$b"; then STUBS="$STUBS $b"; else RUNNABLE="$RUNNABLE $b"; fi
    done
    BIG=$(awk -F'\t' '$1 ~ /^[0-9][0-9]$/ && $5 == "yes" { print "lesson" $1 }' lessons/manifest.txt)
    if ! gpu_present; then
        why="no GPU"
        command -v nvidia-smi >/dev/null 2>&1 || why="no GPU (nvidia-smi not found)"
        if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
            if [ ! -x "$B/lesson01" ]; then why="$B/lesson01 is not built (TIERS=\"build gpu\" builds first)"
            else
                res=$("$B/lesson01" -n 1 --check 2>&1)
                why=$(grep -m1 'no usable GPU' <<<"$res")
                # a GPU the program can use, where lesson 01 still fails: that is a failure, not a skip
                [ -n "$why" ] || { bad "lesson01 -n 1 --check fails on this GPU" "$res"; why="lesson01 fails (above)"; }
            fi
        fi
        for b in $RUNNABLE; do skip "$b matrix: $why"; done
        for b in $STUBS; do skip "$b stub must fail: $why"; done
        for b in $BIG; do skip "$b n = 2^31+5: $why"; done
        [[ " $RUNNABLE " == *" lesson18 "* ]] && skip "lesson18 --procs (one process per GPU): $why"
        skip "lesson12 fixed variant bitwise repeatable: $why"
        skip "lesson16 Welford sweep, n = 1..64: $why"
        skip "device-memory limits: $why"
        skip "compute-sanitizer memcheck, racecheck, synccheck: $why"
        echo "  gpu tier SKIPPED: $why"
    else
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/  GPU: /'
        J=$LOG/gpu_jobs.txt
        : >"$J"
        RUNNABLE_M=""
        part matrix && RUNNABLE_M=$RUNNABLE
        # One process runs a whole list of checks (-n a,b,c -s 1,2 -d ints,uniform):
        # each process pays for a CUDA context, each check in it only for its run.
        # "pass:K": exit 0, no FAIL, and at least K lines that say PASS.
        list() { tr ' ' ',' <<<"$*"; }
        nsizes=$(wc -w <<<"$SIZES")
        for b in $RUNNABLE_M; do
            n=${b#lesson}; n=${n#solution}; n=${n#exercise}
            printf '%s\tpass:%d\t%s\n' "$b matrix" $((nsizes * 4)) \
                "$B/$b -n $(list $SIZES) -s 1,2 -d ints,uniform --check" >>"$J"
            [ "$((10#$n))" -ge 11 ] && # misaligned starts, from lesson 11's vector loads on
                printf '%s\tpass:%d\t%s\n' "$b matrix" $(($(wc -w <<<"$OFFSET_SIZES") * 3)) \
                    "$B/$b -n $(list $OFFSET_SIZES) --offset 1,2,3 -d uniform --check" >>"$J"
            "$B/$b" -b 64 -h >/dev/null 2>&1 && # takes -b at run time: every block size
                printf '%s\tpass:%d\t%s\n' "$b matrix" $(($(wc -w <<<"$BLOCK_SIZES") * 2)) \
                    "$B/$b -n 1000,2^20+3 -b $(list $BLOCK_SIZES) --check" >>"$J"
        done
        # Lesson 18 with one process per GPU (--procs): every visible GPU, then one.
        if part matrix && [[ " $RUNNABLE " == *" lesson18 "* ]]; then
            L18="$B/lesson18 --procs"
            printf '%s\tpass:%d\t%s\n' "lesson18 --procs matrix" 20 "$L18 -n 0,1,2,33,2^20+3 -s 1,2 -d ints,uniform --check" >>"$J"
            printf '%s\tpass:%d\t%s\n' "lesson18 --procs matrix" 20 "CUDA_VISIBLE_DEVICES=0 $L18 -n 0,1,2,33,2^20+3 -s 1,2 -d ints,uniform --check" >>"$J"
            printf '%s\tpass:%d\t%s\n' "lesson18 --procs matrix" 12 "$L18 -n 1,33,65537,2^20+3 --offset 1,2,3 -d uniform --check" >>"$J"
            printf '%s\tpass:%d\t%s\n' "lesson18 --procs matrix" 4 "$L18 -n 1000,2^20+3 -s 1,2 -b 512 --check" >>"$J"
            printf '%s\tpass:%d\t%s\n' "lesson18 --procs timed" 3 "$L18 -n 2^20,2^24,2^26 -r 5 --flush clean" >>"$J"
            printf '%s\t2\t%s\n' "lesson18 --procs bad input" "$L18 -n 2^40 --check" >>"$J"
            printf '%s\t2\t%s\n' "lesson18 --procs bad input" "$L18 -b 100" >>"$J"
            # The multi-GPU checks grow with the machine: both modes on every
            # smaller power-of-two count of GPUs too (the full count runs above).
            NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
            for k in 1 2 4 8; do
                [ "$k" -lt "$NGPU" ] || continue
                vis=$(seq -s, 0 $((k - 1)))
                printf '%s\tpass:%d\t%s\n' "lesson18 on $k of $NGPU GPUs" 20 "CUDA_VISIBLE_DEVICES=$vis $B/lesson18 -n 0,1,2,33,2^20+3 -s 1,2 -d ints,uniform --check" >>"$J"
                [ "$k" -gt 1 ] && printf '%s\tpass:%d\t%s\n' "lesson18 --procs on $k of $NGPU GPUs" 20 "CUDA_VISIBLE_DEVICES=$vis $L18 -n 0,1,2,33,2^20+3 -s 1,2 -d ints,uniform --check" >>"$J"
            done
        fi
        for b in $STUBS; do
            part matrix || continue
            for a in "-n 65537" "-n 2^20+3 -d uniform"; do
                printf '%s\tfail\t%s\n' "$b stub must fail" "$B/$b $a --check" >>"$J"
            done
        done
        for b in $RUNNABLE_M; do
            case $b in lesson*)
                for a in "-n 2^40" "-n 2^36+1"; do
                    printf '%s\t2\t%s\n' "device-memory limits" "$B/$b $a --check" >>"$J"
                done ;;
            esac
        done
        if [ -s "$J" ]; then
            echo "  running $(wc -l <"$J") processes, $GPU_JOBS at a time"
            run_jobs "$J" "$LOG/gpu_results.txt"
            tally "$LOG/gpu_results.txt"
        fi

        if part matrix && [[ " $RUNNABLE " == *" lesson16 "* ]]; then
            sh tests/welford_sweep.sh "$B/lesson16" >"$LOG/welford_sweep.log" 2>&1; rc=$?
            nok=$(grep -c '^ok ' "$LOG/welford_sweep.log"); nbad=$(grep -c '^not ok ' "$LOG/welford_sweep.log")
            if [ $rc -eq 0 ] && [ "$nbad" -eq 0 ] && [ "$nok" -gt 0 ]; then ok "lesson16 Welford sweep: $nok of $nok (variant x input x seed) pass at every n from 1 to 64"
            else bad "lesson16 Welford sweep: $nbad failed (exit $rc)" "$(grep -A2 '^not ok' "$LOG/welford_sweep.log" | head -n 15)"; fi
        fi

        # lesson18 --procs: a rank killed mid-run is named, the others are
        # stopped, and the parent exits 1 (never a hang).
        if part matrix && [[ " $RUNNABLE " == *" lesson18 "* ]] && command -v pgrep >/dev/null; then
            "$B/lesson18" --procs -n 2^28 -r 100000 >/dev/null 2>"$LOG/procs_kill.txt" &
            p=$!
            sleep 10
            victim=$(pgrep -P "$p" | tail -n 1)
            [ -n "$victim" ] && kill -9 "$victim"
            (sleep 60; kill -9 "$p" 2>/dev/null) & w=$!
            wait "$p"; rc=$?
            kill "$w" 2>/dev/null
            if [ -n "$victim" ] && [ $rc -eq 1 ] && grep -q "rank [0-9]* of [0-9]* was killed by signal 9" "$LOG/procs_kill.txt"; then
                ok "lesson18 --procs: a rank killed mid-run is named, the parent exits 1"
            else
                bad "lesson18 --procs: a rank killed mid-run (exit $rc)" "$(cat "$LOG/procs_kill.txt")"
            fi
        fi

        # n > 2^31 (8 GiB of input): one at a time.
        for b in $BIG; do
            part big || continue
            skipped_build "$b" && continue
            res=$(timeout 600 "$B/$b" -n 2^31+5 --check 2>&1); rc=$?
            if [ $rc -eq 0 ] && grep -q 'SKIP' <<<"$res" && ! grep -q FAIL <<<"$res"; then skip "$b n = 2^31+5: $(grep -m1 SKIP <<<"$res")"
            elif [ $rc -eq 0 ] && ! grep -q FAIL <<<"$res"; then ok "$b n = 2^31+5"
            elif [ $rc -eq 2 ] && grep -q 'GiB of device memory' <<<"$res"; then skip "$b n = 2^31+5: $(grep -m1 'GiB of device memory' <<<"$res" | sed 's/^[^:]*: //')"
            else bad "$b n = 2^31+5 (exit $rc)" "$res"; fi
        done

        # Lesson 12's fixed-order finish must give the same bits every run.
        if part det && [ -x "$B/lesson12" ]; then
            for i in $(seq 20); do "$B/lesson12" -n 2^24+7 -d uniform -s 3 --check --csv; done >"$LOG/det.csv" 2>&1
            nfixed=$(awk -F, '$2 == "fixed" { print $12 }' "$LOG/det.csv" | sort -u | wc -l)
            nruns=$(awk -F, '$2 == "fixed"' "$LOG/det.csv" | wc -l)
            natomic=$(awk -F, '$2 == "atomic" { print $12 }' "$LOG/det.csv" | sort -u | wc -l)
            if [ "$nruns" -eq 20 ] && [ "$nfixed" -eq 1 ]; then
                ok "lesson12 fixed variant bitwise repeatable (20 runs, 1 result; atomic gave $natomic)"
            else
                bad "lesson12 fixed variant: $nfixed distinct results in $nruns runs" "$(head -n 5 "$LOG/det.csv")"
            fi
        fi

        # compute-sanitizer on every lesson and solution at a small n.
        CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
        if ! part san; then
            :
        elif [ -z "$CS" ]; then
            skip "compute-sanitizer not found"
        else
            J2=$LOG/san_jobs.txt
            : >"$J2"
            NCCL_EXCLUDE=""
            "$CS" --help 2>&1 | grep -q -- '--kernel-name-exclude' && NCCL_EXCLUDE="--kernel-name-exclude kns=nccl"
            for b in $RUNNABLE; do
                n=${b#lesson}; n=${n#solution}; n=${n#exercise}
                args="-n 2^17+3,33 --check" # two runs: the second must not trip over the first's leftovers; several blocks everywhere
                [ "$((10#$n))" -ge 11 ] && args="$args --offset 1"
                # NCCL lessons: NCCL probes kernels built for other GPUs
                # (cudaFuncGetAttributes -> no kernel image), which memcheck would
                # report as our API error, and NCCL's own kernels are NCCL's to
                # check (synccheck flags their barriers on 2 GPUs): the tools check
                # our kernels only. Everyone else must free every byte (the harness
                # frees its own). racecheck's warp-level hazards are warnings, which
                # --error-exitcode ignores: any hazard it displays fails as well.
                extra="" leaks="--leak-check full"
                grep -q -- '-lnccl' "$(ls lessons/"$n"_*/"$n"_*.cu)" && extra="--report-api-errors no $NCCL_EXCLUDE" leaks=""
                for tool in memcheck racecheck synccheck; do
                    x=$extra; [ $tool = memcheck ] && x="$x $leaks"
                    printf '%s\t0\t%s\n' "sanitizer $tool" \
                        "$CS --tool $tool $x --error-exitcode 99 --print-limit 5 --log-file $LOG/san_${tool}_$b.txt $B/$b $args >/dev/null 2>&1 && ! grep -Eq 'RACECHECK SUMMARY: [1-9][0-9]* hazard' $LOG/san_${tool}_$b.txt || { grep -m3 -E 'rror|ace|azard' $LOG/san_${tool}_$b.txt; exit 99; }" >>"$J2"
                done
            done
            echo "  running $(wc -l <"$J2") sanitizer processes"
            run_jobs "$J2" "$LOG/san_results.txt"
            tally "$LOG/san_results.txt"
        fi
    fi
fi

echo
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" -eq 0 ]
