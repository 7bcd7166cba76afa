#!/bin/sh
# make run: every lesson in order, then the staircase.
# usage: sh scripts/run.sh N lesson01 lesson02 ...
#   Lesson 01 (one GPU thread) runs at its own default n, which is smaller;
#   every other lesson at N. The staircase compares time per element.
#   Environment: BIN (folder of the binaries, default .), OUT (default runs).
#   Writes OUT/run-<gpu>.csv (every line) and OUT/run-<gpu>.txt (the table).
# sh scripts/run.sh --table FILE.csv [DATE] prints the table of an earlier run.
# sh scripts/run.sh --preflight N lesson01: only the two checks below (make run
# makes them with lesson 01 alone built, before it builds the rest).
. "$(dirname "$0")/common.sh"

# Lessons that run at their own default n instead of N.
OWN_N=" lesson01 "
# The staircase: lessons up to here get "x prev" and "x 01"; later ones are
# libraries and other operations, which the table lists without speedups.
STAIR_LAST=13

table() {
    awk -F, -v gpu="$2" -v date="$3" -v last="$STAIR_LAST" -v sfile="$(dirname "$0")/../lessons/manifest.txt" '
    function ok_row(i) { return f6[i] > 0 && f4[i] > 0 && f15[i] == "PASS" }
    function is_step(l) { return (l in step) || !(l in nostep) && l + 0 <= last }
    BEGIN {
      # lessons/manifest.txt: lesson, the variant it shows, whether it is a step (yes/no), ...
      while ((getline line < sfile) > 0) {
        if (line !~ /^[0-9][0-9]\t/ || split(line, w, "\t") < 3) continue
        show[w[1]] = w[2]; if (w[3] == "yes") step[w[1]] = 1; else nostep[w[1]] = 1
      }
    }
    NR == 1 { next }
    { k++; row[k] = $0; les[k] = substr($1, 1, 2); f4[k] = $4; f6[k] = $6; f15[k] = $15
      per[k] = $4 > 0 ? $7 * 1000 / $4 : 0
      # a lesson is represented by the variant the README shows (else its first timed row), if it passed
      if (ok_row(k) && (!(les[k] in ref) || $2 == show[les[k]] && refv[les[k]] != $2)) { ref[les[k]] = per[k]; refv[les[k]] = $2 }
      if (!(les[k] in nof)) nof[les[k]] = $4 }
    END {
      printf "Staircase on %s, %s\n", gpu, date
      printf "x prev and x 01 compare time per element (ns/elem = median / n), so that lessons run at\n"
      printf "different n compare fairly (lesson 01 runs at its own, smaller default n).\n"
      printf "A lesson is compared by the variant it shows in README.md; libraries and other\n"
      printf "operations (lesson 14 on) get no speedups.\n\n"
      fmt = "%-28s %-16s %10s %12s %9s %9s %7s %8s %7s  %s\n"
      printf fmt, "lesson", "variant", "n", "median us", "ns/elem", "GB/s", "% peak", "x prev", "x 01", "check"
      prev = ""
      for (i = 1; i <= k; i++) {
        split(row[i], f, ","); l = les[i]
        if (l != cur) { if (cur != "") prev = (cur in ref) ? ref[cur] : ""; cur = l }
        chk = f[15] == "PASS" ? f[15] : f[15] "  <-- wrong result"
        if (f[6] == 0) { printf fmt, f[1], f[2], f[4], "(check)", "-", "-", "-", "-", "-", chk; continue }
        stair = is_step(l) && ok_row(i)
        sp = (stair && prev != "" && l != "01") ? sprintf("%.2fx", prev / per[i]) : "-"
        s1 = (stair && ("01" in ref) && l != "01") ? sprintf("%.0fx", ref["01"] / per[i]) : "-"
        printf fmt, f[1], f[2], f[4], sprintf("%.1f", f[7]), sprintf("%.3g", per[i]), sprintf("%.1f", f[10]),
               sprintf("%.1f%%", f[11]), sp, s1, chk
      }
    }' "$1"
}

if [ "${1:-}" = "--table" ]; then
    [ -f "${2:-}" ] || { echo "usage: sh scripts/run.sh --table FILE.csv [DATE]" >&2; exit 2; }
    table "$2" "$(sed -n 2p "$2" | cut -d, -f3)" "${3:-$(date -u -r "$2" +%Y-%m-%d 2>/dev/null || echo "date unknown")}"
    exit
fi
only_checks=""
[ "${1:-}" = "--preflight" ] && { only_checks=yes; shift; }
[ $# -ge 2 ] || { echo "usage: sh scripts/run.sh [--preflight] N lesson01 lesson02 ..." >&2; exit 2; }
n=$1
shift
BIN=${BIN:-.}
OUT=${OUT:-runs}

scratch_dir run

# Two checks before eighteen runs: is N a size (the lessons parse it before
# they touch the GPU), and is there a GPU at all?
for b in "$@"; do
    [ -x "$BIN/$b" ] || continue
    "$BIN/$b" -n "$n" -h >/dev/null 2>"$tmp/nerr"
    [ $? -ne 2 ] || { echo "make run: N=$n is not a size: $(sed 's/^[^:]*: //' "$tmp/nerr" | head -n 1)" >&2; exit 2; }
    break
done
preflight_first "make run" "$@" || exit 1
[ -z "$only_checks" ] || exit 0

: >"$tmp/all"
nfail=0 failed="" nskip=0
for b in "$@"; do
    if [ ! -x "$BIN/$b" ]; then echo "$b: not built (skipped)"; nskip=$((nskip + 1)); continue; fi
    case $OWN_N in
    *" $b "*) echo "running $b (its own default n) ..." >&2; "$BIN/$b" --csv >"$tmp/out" 2>"$tmp/err" ;;
    *) echo "running $b -n $n ..." >&2; "$BIN/$b" -n "$n" --csv >"$tmp/out" 2>"$tmp/err" ;;
    esac
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^SKIP' "$tmp/out"; then
        echo "$b: $(grep -m 1 '^SKIP' "$tmp/out")"
        nskip=$((nskip + 1))
        continue
    fi
    take_rows "$tmp/out" "$tmp/all" $rc
    if [ -n "$WHY" ]; then
        nfail=$((nfail + 1)) failed="$failed $b"
        msg=$(grep -v '^ *$' "$tmp/err" | tail -n 2 | tr '\n' ' ')
        echo "$b: FAILED ($WHY)${msg:+: $msg}"
    fi
done
[ -s "$tmp/all" ] || { echo "make run: no lesson printed a result line"; exit 1; }
gpu=$(head -n 1 "$tmp/all" | cut -d, -f3)
mkdir -p "$OUT" || exit 1
csv=$OUT/run-$(gpu_slug "$gpu").csv
txt=$OUT/run-$(gpu_slug "$gpu").txt
{ echo "$HEADER"; cat "$tmp/all"; } >"$csv"
table "$csv" "$gpu" "$(date -u +%Y-%m-%d)" >"$txt"
cat "$txt"
echo
echo "wrote $csv and $txt$([ "$OUT" = results ] || echo " (make plot draws them beside the reference runs in results/)")"
skipped=""
[ $nskip -eq 0 ] || skipped=", $nskip skipped"
if [ $nfail -eq 0 ]; then
    echo "all lessons passed$skipped"
else
    echo "$nfail lesson$([ $nfail -eq 1 ] || echo s) failed:$failed$skipped"
fi
[ $nfail -eq 0 ]
