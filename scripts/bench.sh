#!/bin/sh
# make bench: size sweep n = 2^10 .. 2^30 (every 2x) of the given lessons
# (09-14: the fast kernels and, in 14, the libraries), one CSV line per
# variant and size; then the chart. usage: scripts/bench.sh lesson09 ...
# LO and HI (exponents) narrow the sweep: make bench LO=20 HI=24
lo=${LO:-10}
hi=${HI:-30}
mkdir -p results
tmp=${TMPDIR:-/tmp}/reduce-bench.$$
: >"$tmp"
status=0
e=$lo
while [ "$e" -le "$hi" ]; do
    for b in "$@"; do
        [ -x "./$b" ] || continue
        ./"$b" -n "2^$e" --csv >"$tmp.out" 2>"$tmp.err" || { echo "$b -n 2^$e: exit $?: $(tail -n 1 "$tmp.err")"; status=1; }
        grep -E '^[0-9][0-9]_[^,]*,([^,]*,){13}[^,]*$' "$tmp.out" >>"$tmp"
    done
    echo "n = 2^$e done" >&2
    e=$((e + 1))
done
[ -s "$tmp" ] || { echo "no results"; rm -f "$tmp"*; exit 1; }
gpu=$(head -n 1 "$tmp" | cut -d, -f3)
slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
csv=results/bench-$slug.csv
{ echo "lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"; cat "$tmp"; } >"$csv"
rm -f "$tmp" "$tmp.out" "$tmp.err"
# The table: GB/s of each variant (columns) at each n (rows).
awk -F, 'NR > 1 { k = $1 ":" $2; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                  if (!($4 in seenn)) { seenn[$4] = 1; ns[++nn] = $4 }; g[$4, k] = $10 }
END { printf "%-12s", "n"; for (j = 1; j <= nk; j++) { split(keys[j], p, ":"); printf " %12s", substr(p[1], 1, 2) "_" p[2] } ; print ""
      for (i = 1; i <= nn; i++) { printf "%-12s", ns[i]; for (j = 1; j <= nk; j++) printf " %12s", ((ns[i], keys[j]) in g) ? g[ns[i], keys[j]] : "-"; print "" } }' "$csv"
echo "GB/s by n; wrote $csv"
sh scripts/plot.sh
exit $status
