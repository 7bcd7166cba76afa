#!/usr/bin/env bash
# make check E=NN (or: bash tests/check_exercise.sh NN): the whole check of
# your exercises/NN_*.cu, the one the tests run on the solutions.
#
#   1. build exerciseNN (make, into BUILDDIR when that is set);
#   2. on the GPU, smallest n first, stopping at the first failure:
#      n in {0, 1, 2, 31, 32, 33, 255, 257, 1000, 4097, 65537, 2^20+3, 2^24,
#      2^26} x seeds 1, 2 x inputs ints, uniform; --offset 1..3 from exercise
#      11 on (1..7 for exercise 11, whose offsets count halves); every -b from
#      32 to 1024 where the exercise takes -b; n = 3G·B+5 and 7G·B+5 where the
#      exercise prints its grid of at most G blocks of B threads (exercise 09);
#   3. compute-sanitizer memcheck, racecheck and synccheck, where installed
#      (racecheck fails on any hazard it displays, warnings included);
#   4. exercises 12, 13, 15: the same input 10 times gives the same bits;
#   5. the PTX shows the exercise's technique (tests/exercise_expect.txt);
#   6. on success: the speed at n = 2^26 of the exercise, lesson NN and
#      solution NN on this GPU, one line each.
# A failure prints the smallest failing case, what the exercise got and
# expected, and the command that reproduces it.
#
# Exit code: 0 = passed; 1 = failed; 2 = bad usage. Without a GPU (no
# nvidia-smi, or it lists none) only steps 1 and 5 run, the last line says
# "GPU checks SKIPPED" and why, and the exit code is 0: nothing that could
# be checked failed. The same holds where the exercise cannot run here
# (exercise 13 on a GPU older than sm_90 prints SKIP; exercise 18 without
# NCCL is not built).
set -u
cd "$(dirname "$0")/.." || exit 2

usage() { echo "usage: make check E=NN  (or: bash tests/check_exercise.sh NN), NN = 02..18" >&2; exit 2; }
[ $# -eq 1 ] || usage
case $1 in "" | *[!0-9]*) usage ;; esac
NN=$(printf %02d "$((10#$1))")
SRC=$(ls exercises/"$NN"_*.cu 2>/dev/null | head -n 1)
[ -n "$SRC" ] || { echo "no exercise $NN: exercises/${NN}_*.cu does not exist" >&2; usage; }

BUILDDIR=${BUILDDIR:-.}
NVCC=${NVCC:-nvcc}
TIMEOUT=${CHECK_TIMEOUT:-600} # seconds for one run
path_of() { if [ "$BUILDDIR" = . ]; then echo "./$1"; else echo "$BUILDDIR/$1"; fi; }
EX=$(path_of exercise"$NN")
WORK=$(mktemp -d) || exit 2
trap 'rm -rf "$WORK"' EXIT

# The end of every run that could not check everything: say what was
# skipped and why, then exit 0.
skipped() {
    echo
    echo "exercise$NN: GPU checks SKIPPED: $1."
    echo "Checked here: the build and the PTX only. Passing them does not make yours right: only the GPU checks say that. Run make check E=$NN where a GPU can run it."
    exit 0
}

# ---- 1. build -----------------------------------------------------------------
echo "[build] exercise$NN from $SRC"
if ! make --no-print-directory BUILDDIR="$BUILDDIR" "exercise$NN" >"$WORK/build.log" 2>&1; then
    grep -v '^nvcc ' "$WORK/build.log" | tail -n 30
    echo "FAIL  exercise$NN does not build (the compiler's messages are above)"
    exit 1
fi
if [ ! -x "$EX" ]; then # the Makefile skips a program it cannot build here (NCCL)
    cat "$WORK/build.log"
    echo "exercise$NN: not built here, nothing was checked: $(grep -m1 'skipped:' "$WORK/build.log" | sed 's/.*skipped: //')"
    exit 0
fi

# ---- the PTX checks (run here without a GPU, and after the GPU checks) -------
# ptx_has REGEX FILE: a line of FILE matches REGEX; z:REGEX: the whole file does
ptx_has() {
    case $1 in z:*) grep -Ezq "${1#z:}" "$2" ;; *) grep -Eq "$1" "$2" ;; esac
}
check_ptx() {
    if ! grep -q "^$NN " tests/exercise_expect.txt; then
        echo "[ptx] no PTX expectations for exercise $NN"
        return 0
    fi
    echo "[ptx] the technique shows in the PTX (nvcc -ptx -arch=sm_90)"
    if ! "$NVCC" -ptx -arch=sm_90 -std=c++17 -Icommon -o "$WORK/ex.ptx" "$SRC" >"$WORK/ptx.log" 2>&1; then
        cat "$WORK/ptx.log"
        echo "FAIL  could not make the PTX: $NVCC -ptx -arch=sm_90 -std=c++17 -Icommon $SRC"
        exit 1
    fi
    local n regex what
    while read -r n regex what; do
        [ "$n" = "$NN" ] || continue
        if ptx_has "$regex" "$WORK/ex.ptx"; then
            echo "  ok    $what"
        else
            case $regex in z:*) echo "FAIL  the PTX of exercise$NN lacks $what (the pattern: tests/exercise_expect.txt)" ;;
            *) echo "FAIL  the PTX of exercise$NN lacks $what (no line matches /$regex/)" ;; esac
            case $regex in
            z:*) echo "  look: $NVCC -ptx -arch=sm_90 -std=c++17 -Icommon -o ex$NN.ptx $SRC && grep -nE 'membar|fence|atom|acquire|ld\.global' ex$NN.ptx   # the order of these lines is what the pattern checks" ;;
            *) echo "  look: $NVCC -ptx -arch=sm_90 -std=c++17 -Icommon -o ex$NN.ptx $SRC && grep -E '$regex' ex$NN.ptx" ;;
            esac
            exit 1
        fi
    done <tests/exercise_expect.txt
}

# ---- no GPU: build and PTX only ----------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
    check_ptx
    skipped "no GPU (nvidia-smi not found)"
elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    check_ptx
    skipped "no GPU (nvidia-smi lists none)"
fi
echo "GPU: $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null | head -n 1)"

# ---- 2. the correctness matrix, smallest n first -------------------------------
SIZES="0 1 2 31 32 33 255 257 1000 4097 65537 2^20+3 2^24 2^26"
OFFSET_SIZES="1 3 33 1000 65537 2^20+3"
BLOCK_SIZES="32 64 128 256 512 1024"
value() { echo $((${1//^/**})); } # 2^20+3 -> 1048579

# The grid of an exercise that prints one ("at most G blocks of B threads"): "G B".
GRID=$("$EX" -n 1 --check 2>/dev/null | sed -n 's/.*at most \([0-9]*\) blocks of \([0-9]*\) threads.*/\1 \2/p' | head -n 1)

# One case a line: "n as a number<TAB>the options". Built group by group,
# then sorted by n only (stable): at one n the plain runs come first.
{
    for s in $SIZES; do
        for seed in 1 2; do
            for d in ints uniform; do printf '%s\t-n %s -s %s -d %s\n' "$(value "$s")" "$s" "$seed" "$d"; done
        done
    done
    if [ "$((10#$NN))" -ge 11 ]; then # inputs that start off a 16-byte boundary
        offs="1 2 3"; [ "$NN" = 11 ] && offs="1 2 3 4 5 6 7" # exercise 11's offsets count halves: every head
        for s in $OFFSET_SIZES; do
            for o in $offs; do printf '%s\t-n %s --offset %s -d uniform\n' "$(value "$s")" "$s" "$o"; done
        done
    fi
    if [ -n "$GRID" ]; then # a grid-stride exercise that prints its grid: sizes just past 3 and 7 grids'
        set -- $GRID         # worth, where a loop taking several strides a round meets n in its last one
        for k in 3 7; do
            for seed in 1 2; do
                for d in ints uniform; do printf '%s\t-n %s -s %s -d %s\n' "$((k * $1 * $2 + 5))" "$((k * $1 * $2 + 5))" "$seed" "$d"; done
            done
        done
    fi
    if "$EX" -b 64 -h >/dev/null 2>&1; then # takes -b at run time: every block size
        for s in 1000 2^20+3; do
            for b in $BLOCK_SIZES; do printf '%s\t-n %s -b %s\n' "$(value "$s")" "$s" "$b"; done
        done
    fi
} | sort -s -t $'\t' -k1,1n >"$WORK/cases.txt"

# Runs the exercise with the given options; on a failure prints the case and
# exits 1. Exit 0 with a SKIP line (sm_90 exercise on an older GPU): skipped.
run_case() {
    local out rc
    # shellcheck disable=SC2086
    out=$(timeout "$TIMEOUT" "$EX" $1 --check 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^SKIP' <<<"$out"; then
        check_ptx
        skipped "exercise$NN cannot run on this GPU ($(grep -m1 '^SKIP' <<<"$out"))"
    fi
    [ $rc -eq 0 ] && ! grep -q 'FAIL' <<<"$out" && return 0
    echo
    echo "FAIL  exercise$NN, smallest failing case: $1"
    case $rc in
    124) echo "  it ran for more than $TIMEOUT s (a hang? a barrier that not every thread reaches?)" ;;
    2) echo "  it refused the options (exit 2):"; sed 's/^/  /' <<<"$out" | tail -n 5 ;;
    *) if grep -q 'FAIL' <<<"$out"; then
           echo "  what it printed (got / expected):"
           grep -E 'FAIL|wrong' <<<"$out" | head -n 5 | sed 's/^/  /'
       else
           echo "  it stopped with exit code $rc; the end of its output:"
           tail -n 5 <<<"$out" | sed 's/^/  /'
       fi ;;
    esac
    echo "  reproduce: $EX $1 --check"
    exit 1
}

echo "[gpu] $(wc -l <"$WORK/cases.txt") runs, smallest n first; the first failure stops the check"
prev="" shown="" count=0
while IFS=$'\t' read -r n opts; do
    if [ "$n" != "$prev" ] && [ -n "$prev" ]; then echo "  ok    n = $shown ($count runs)"; count=0; fi
    prev=$n shown=$(awk '{ print $2 }' <<<"$opts") # as written: 2^20+3
    run_case "$opts" </dev/null
    count=$((count + 1))
done <"$WORK/cases.txt"
[ -n "$prev" ] && echo "  ok    n = $shown ($count runs)"

# ---- 3. sanitizers ---------------------------------------------------------------
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
SAN_ARGS="-n 2^17+3,33 --check" # two runs in one process: the second must not trip over the first's leftovers;
# 2^17+3 floats take several blocks in every exercise (lesson 12's tiles of 16 Ki floats: 9)
[ "$((10#$NN))" -ge 11 ] && SAN_ARGS="$SAN_ARGS --offset 1"
if [ -z "$CS" ]; then
    echo "[sanitizers] compute-sanitizer not found: memcheck, racecheck and synccheck SKIPPED"
    [ "$NN" = 07 ] && echo "  (exercise 07: the race is then caught only if the split_warp line shows it)"
else
    echo "[sanitizers] memcheck, racecheck, synccheck: $EX $SAN_ARGS"
    extra="" leaks="--leak-check full"
    if grep -q -- '-lnccl' "$SRC"; then # NCCL's own kernels and probes are NCCL's to check
        extra="--report-api-errors no"
        "$CS" --help 2>&1 | grep -q -- '--kernel-name-exclude' && extra="$extra --kernel-name-exclude kns=nccl"
        leaks=""
    fi
    for tool in memcheck racecheck synccheck; do
        x=$extra
        [ $tool = memcheck ] && x="$x $leaks"
        # racecheck files warp-level hazards (lesson 07's classic code) as
        # warnings, which --error-exitcode ignores: any hazard it displays fails too.
        # shellcheck disable=SC2086
        if timeout "$TIMEOUT" "$CS" --tool $tool $x --error-exitcode 99 --print-limit 5 --log-file "$WORK/$tool.txt" \
            "$EX" $SAN_ARGS >/dev/null 2>&1 &&
            ! grep -Eq 'RACECHECK SUMMARY: [1-9][0-9]* hazard' "$WORK/$tool.txt"; then
            echo "  ok    $tool"
        else
            echo
            echo "FAIL  exercise$NN under compute-sanitizer $tool:"
            grep -v '^========= *$' "$WORK/$tool.txt" | head -n 20 | sed 's/^/  /'
            echo "  reproduce: $CS --tool $tool $x $EX $SAN_ARGS"
            exit 1
        fi
    done
fi

# ---- 4. the same bits every run (the deterministic exercises) -------------------
case $NN in 12 | 13 | 15)
    cmd="$EX -n 2^24+7 -d uniform -s 3 --check --csv"
    echo "[repeat] 10 runs of: $cmd"
    for i in 1 2 3 4 5 6 7 8 9 10; do timeout "$TIMEOUT" $cmd; done >"$WORK/repeat.csv" 2>&1
    # column 2: the line's name, column 12: the result it printed
    awk -F, 'NF >= 15 { runs[$2]++; if (!seen[$2 SUBSEP $12]++) distinct[$2]++ }
             END { for (v in runs) print v, runs[v], distinct[v] }' "$WORK/repeat.csv" >"$WORK/repeat.txt"
    if [ ! -s "$WORK/repeat.txt" ] || awk '$2 != 10 || $3 != 1 { bad = 1 } END { exit !bad }' "$WORK/repeat.txt"; then
        echo
        echo "FAIL  exercise$NN: not the same bits in 10 runs of one input (line: runs, distinct results)"
        sed 's/^/  /' "$WORK/repeat.txt"
        grep -v '^[^,]*,[^,]*,[^,]*,[0-9]' "$WORK/repeat.csv" | head -n 5 | sed 's/^/  /'
        echo "  reproduce: for i in \$(seq 10); do $cmd; done"
        exit 1
    fi
    echo "  ok    $(awk '{ printf "%s%s", sep, $1; sep = ", " }' "$WORK/repeat.txt"): 1 result in 10 runs"
    ;;
esac

# ---- 5. PTX ----------------------------------------------------------------------
check_ptx

# ---- 6. how fast -----------------------------------------------------------------
echo
echo "exercise$NN passed every check."
echo "[speed] n = 2^26, median of the timed runs (median us, GB/s per line of each program):"
make --no-print-directory BUILDDIR="$BUILDDIR" "lesson$NN" "solution$NN" >"$WORK/build2.log" 2>&1
for b in exercise"$NN" lesson"$NN" solution"$NN"; do
    p=$(path_of "$b")
    if [ ! -x "$p" ]; then
        printf '  %-11s not built: %s\n' "$b" "$(grep -v '^nvcc ' "$WORK/build2.log" | tail -n 1)"
        continue
    fi
    out=$(timeout "$TIMEOUT" "$p" -n 2^26 --csv 2>&1)
    rc=$?
    # sums only: lesson 18's all-reduce bandwidth lines time another operation
    line=$(awk -F, 'NF >= 15 && $6 > 0 && $2 !~ /^allreduce_/ { printf "%s%s %s us %s GB/s", sep, $2, $7, $10; sep = ";  " }' <<<"$out")
    printf '  %-11s %s\n' "$b" "${line:-$(tail -n 1 <<<"$out")}"
    if [ "$b" = "exercise$NN" ] && { [ $rc -ne 0 ] || grep -q FAIL <<<"$out"; }; then
        echo
        echo "FAIL  exercise$NN failed its timed run (every repetition's result counts; the last one is checked):"
        grep -E 'FAIL|wrong' <<<"$out" | head -n 5 | sed 's/^/  /'
        echo "  reproduce: $p -n 2^26"
        exit 1
    fi
done
exit 0
