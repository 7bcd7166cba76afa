#!/bin/sh
# Lesson 16's Welford checks on every n from 1 to 64, both inputs, seeds 1..8:
# each run checks `welford` (ours), `cub_welford` and `welford_shift` (the
# input plus 1000, where rounding the mean costs the variance most). A correct
# kernel must pass them all: the bounds are derived, not tuned
# (common/welford_bound.h; tests/welford_sim.c checks them without a GPU).
# usage: sh tests/welford_sweep.sh [BINARY]   (default: $BIN/lesson16, BIN=.)
# Prints "ok ..." / "not ok ..." lines, one per variant, input and seed (a
# "not ok" per failing n, with the lesson's own FAIL lines); exit 1 if any
# failed. Without a GPU: one "ok ... # skip: no GPU" line, exit 0.
cd "$(dirname "$0")/.." || exit 1
bin=${1:-${BIN:-.}/lesson16}
SEEDS=${SEEDS:-1 2 3 4 5 6 7 8}
sizes=$(seq -s, 1 64)

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "ok lesson16 Welford sweep, n = 1..64 # skip: no GPU"
    exit 0
fi
if [ ! -x "$bin" ]; then
    echo "not ok lesson16 Welford sweep: $bin is not built (make lesson16)"
    exit 1
fi
if ! why=$("$bin" -n 1 --check 2>&1 >/dev/null) && printf '%s\n' "$why" | grep -q 'no usable GPU'; then
    echo "ok lesson16 Welford sweep, n = 1..64 # skip: no GPU ($(printf '%s\n' "$why" | head -n 1))"
    exit 0
fi

tmp=$(mktemp "${TMPDIR:-/tmp}/reduce-welford.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT
trap 'exit 130' INT TERM
bad=0
for d in ints uniform; do
    for s in $SEEDS; do
        "$bin" -n "$sizes" -s "$s" -d "$d" --check --csv >"$tmp" 2>&1
        rc=$?
        for v in welford cub_welford welford_shift; do
            lines=$(awk -F, -v v="$v" '$2 == v' "$tmp")
            total=$(printf '%s' "$lines" | grep -c .)
            fails=$(printf '%s\n' "$lines" | awk -F, '$15 != "PASS" && NF == 15 { print $4 }' | tr '\n' ' ')
            if [ "$v" = cub_welford ] && [ "$total" -eq 0 ] && grep -q 'cub_welford' "$tmp"; then
                echo "ok lesson16 $v -d $d -s $s # skip: $(grep -m1 'cub_welford' "$tmp" | sed 's/^# //')"
                continue
            fi
            if [ -z "$fails" ] && [ "$total" -eq 64 ]; then
                echo "ok lesson16 $v -d $d -s $s: n = 1..64, 64 PASS"
                continue
            fi
            bad=$((bad + 1))
            [ "$total" -eq 64 ] || echo "not ok lesson16 $v -d $d -s $s: $total result lines for 64 sizes (exit $rc)"
            for n in $fails; do
                echo "not ok lesson16 $v -d $d -s $s -n $n"
                "$bin" -n "$n" -s "$s" -d "$d" --check 2>&1 | grep -E "^[0-9]+_.* $v +n=.*FAIL|^    " | sed 's/^/    /'
            done
        done
        others=$(awk -F, 'NF == 15 && $15 != "PASS" && $2 !~ /welford/ { print $2 " n=" $4 }' "$tmp" | sort -u | head -n 5 | tr '\n' ' ')
        if [ -n "$others" ]; then
            bad=$((bad + 1))
            echo "not ok lesson16 other checks -d $d -s $s: $others"
        elif [ "$rc" -ne 0 ]; then
            bad=$((bad + 1))
            echo "not ok lesson16 -d $d -s $s: exit $rc: $(grep -v ',PASS$' "$tmp" | head -n 2 | tr '\n' ' ')"
        fi
    done
done
[ "$bad" -eq 0 ]
