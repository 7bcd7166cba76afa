#!/bin/sh
# make bench: size sweep n = 2^10 .. 2^30 (every 2x) of the given lessons
# (09-15: the fast kernels and, in 14, the libraries), one CSV line per
# variant and size, with L2 flushed two ways between repetitions:
#   dirty  the harness writes a 2 x L2 buffer (L2 left full of dirty lines)
#   clean  it reads a 2 x L2 buffer that nothing writes (L2 left clean)
# then the table and the charts. usage: sh scripts/bench.sh lesson09 ...
# Environment: LO and HI (exponents) narrow the sweep (make bench LO=20 HI=24);
# BIN (folder of the binaries, default .), OUT (default runs).
# Writes OUT/bench-<gpu>.csv (dirty) and OUT/bench-<gpu>-clean.csv.
. "$(dirname "$0")/common.sh"

[ $# -ge 1 ] || { echo "usage: sh scripts/bench.sh lesson09 lesson10 ..." >&2; exit 2; }
lo=${LO:-10}
hi=${HI:-30}
BIN=${BIN:-.}
OUT=${OUT:-runs}
case "$lo$hi" in *[!0-9]*) echo "LO=$lo HI=$hi: give exponents, e.g. LO=20 HI=24" >&2; exit 2 ;; esac

scratch_dir bench

preflight_first "make bench" "$@" || exit 1

# Binaries without the --flush option can only do the dirty flush.
if "$BIN/$FIRST" -h 2>&1 | grep -q -- '--flush'; then modes="dirty clean"; else modes="dirty"; fi

: >"$tmp/failures"
for mode in $modes; do
    : >"$tmp/$mode"
    flag=""
    [ "$modes" = dirty ] || flag="--flush $mode"
    e=$lo
    while [ "$e" -le "$hi" ]; do
        for b in "$@"; do
            [ -x "$BIN/$b" ] || continue
            # shellcheck disable=SC2086
            "$BIN/$b" -n "2^$e" $flag --csv >"$tmp/out" 2>"$tmp/err"
            rc=$?
            [ $rc -eq 0 ] && grep -q '^SKIP' "$tmp/out" && continue
            take_rows "$tmp/out" "$tmp/$mode" $rc
            if [ -n "$WHY" ]; then
                echo "$b -n 2^$e ($mode flush): FAILED ($WHY) $(grep -v '^ *$' "$tmp/err" | tail -n 1)"
                echo "$b 2^$e/$mode" >>"$tmp/failures"
            fi
        done
        echo "n = 2^$e done ($mode flush)" >&2
        e=$((e + 1))
    done
done
[ -s "$tmp/dirty" ] || { echo "make bench: no lesson printed a result line"; exit 1; }
gpu=$(head -n 1 "$tmp/dirty" | cut -d, -f3)
mkdir -p "$OUT" || exit 1
csv=$OUT/bench-$(gpu_slug "$gpu").csv
{ echo "$HEADER"; cat "$tmp/dirty"; } >"$csv"
wrote=$csv
if [ -s "$tmp/clean" ]; then
    { echo "$HEADER"; cat "$tmp/clean"; } >"$OUT/bench-$(gpu_slug "$gpu")-clean.csv"
    wrote="$wrote and $OUT/bench-$(gpu_slug "$gpu")-clean.csv"
fi

# The table: median microseconds of each variant (columns) at each n (rows).
awk -F, 'NR > 1 && $6 > 0 { k = substr($1, 1, 2) "_" $2; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                  if (!($4 in seenn)) { seenn[$4] = 1; ns[++nn] = $4 }; t[$4, k] = $7 ($15 == "PASS" ? "" : "!") }
END { printf "%-11s", "n"; for (j = 1; j <= nk; j++) printf " %14s", keys[j]; print ""
      for (i = 1; i <= nn; i++) { printf "%-11s", ns[i]; for (j = 1; j <= nk; j++) printf " %14s", ((ns[i], keys[j]) in t) ? t[ns[i], keys[j]] : "-"; print "" } }' "$csv"
echo "median us by n, L2 flushed dirty (! marks a failed check); wrote $wrote"
[ "$modes" = dirty ] && echo "(these binaries have no --flush option: the clean-flush sweep was left out)"
sh "$(dirname "$0")/plot.sh" "$OUT"
nfail=$(cut -d' ' -f1 "$tmp/failures" | sort -u | wc -l | tr -d ' ')
if [ "$nfail" -eq 0 ]; then
    echo "all lessons passed"
else
    echo "$nfail lesson$([ "$nfail" -eq 1 ] || echo s) failed: $(sort "$tmp/failures" | awk '$1 != b { if (b != "") printf "%s (%s) ", b, w; b = $1; w = "" }
        { w = w (w == "" ? "" : ", ") $2 } END { printf "%s (%s)", b, w }')"
fi
[ "$nfail" -eq 0 ]
