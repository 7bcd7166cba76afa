#!/bin/sh
# make run: every lesson in order at one n, then the staircase.
# usage: scripts/run.sh N lesson01 lesson02 ...
# Writes results/run-<gpu>.csv (every line) and results/run-<gpu>.txt (the table).
# scripts/run.sh --table results/run-<gpu>.csv prints the table of an earlier run.
table() {
    awk -F, -v gpu="$2" -v date="$3" -f - "$1" <<'AWK'
NR == 1 { next }
{ rows[NR] = $0; l = substr($1, 1, 2); lesson[NR] = l
  if ($6 > 0 && (!(l in best) || $7 < best[l])) best[l] = $7
  if (!(l in first_n)) first_n[l] = $4 }
END {
  printf "Staircase on %s, %s (n = %s elements per sum)\n\n", gpu, date, first_n["01"] ? first_n["01"] : "?"
  printf "%-28s %-16s %12s %10s %7s %8s %8s  %s\n", "lesson", "variant", "median us", "GB/s", "% peak", "x prev", "x 01", "check"
  base = best["01"]
  for (i = 2; i <= NR; i++) {
    split(rows[i], f, ","); l = lesson[i]
    if (l != cur) { prevbest = (cur != "" && cur in best) ? best[cur] : ""; cur = l }
    if (f[6] == 0) { printf "%-28s %-16s %12s %10s %7s %8s %8s  %s\n", f[1], f[2], "(check)", "-", "-", "-", "-", f[15]; continue }
    same_n = f[4] == first_n["01"]
    sp = (prevbest != "" && same_n) ? sprintf("%.2fx", prevbest / f[7]) : "-"
    s1 = (base != "" && same_n) ? sprintf("%.0fx", base / f[7]) : "-"
    printf "%-28s %-16s %12.1f %10.1f %6.1f%% %8s %8s  %s\n", f[1], f[2], f[7], f[10], f[11], sp, s1, f[15]
  }
}
AWK
}
if [ "${1:-}" = "--table" ]; then
    table "$2" "$(sed -n 2p "$2" | cut -d, -f3)" "${3:-$(date -u -r "$2" +%Y-%m-%d)}"
    exit
fi
n=$1
shift
mkdir -p results
tmp=${TMPDIR:-/tmp}/reduce-run.$$
: >"$tmp"
status=0
for b in "$@"; do
    [ -x "./$b" ] || { echo "$b: not built (skipped)"; continue; }
    echo "running $b -n $n ..." >&2
    ./"$b" -n "$n" --csv >"$tmp.out" 2>"$tmp.err"
    rc=$?
    if grep -q '^SKIP' "$tmp.out"; then echo "$b: $(grep '^SKIP' "$tmp.out")"; fi
    grep -E '^[0-9][0-9]_[^,]*,([^,]*,){13}[^,]*$' "$tmp.out" >>"$tmp"
    if [ $rc -ne 0 ]; then echo "$b: exit $rc: $(tail -n 2 "$tmp.err" "$tmp.out" | tr '\n' ' ')"; status=1; fi
done
[ -s "$tmp" ] || { echo "no results"; rm -f "$tmp"*; exit 1; }
gpu=$(head -n 1 "$tmp" | cut -d, -f3)
slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
csv=results/run-$slug.csv
txt=results/run-$slug.txt
{ echo "lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"; cat "$tmp"; } >"$csv"
table "$csv" "$gpu" "$(date -u +%Y-%m-%d)" | tee "$txt"
echo
echo "wrote $csv and $txt"
rm -f "$tmp" "$tmp.out" "$tmp.err"
exit $status
