#!/bin/sh
# Exercise 15's stretch. Lesson 15's `kahan` carries its compensation only
# along each chain (a thread's, the last block's): the trees between them add
# plain floats. The solution of exercise 15 (`kahan_tree`) carries the pair
# (s, c) through every tree too. On the lesson's ill-conditioned `cancel`
# input, where does that start to matter, and what does it cost?
#
# This builds lesson15 and solution15 with make, as they are: make's own rule,
# the flags `make run` uses, CCCL_HOME followed (make's flag stamps rebuild
# when it changes). Nothing in them is changed, so there is no copy to point
# a compile line at (lab/copies.sh). BUILDDIR=build/cancel_tree keeps a
# ./lesson15 you built (with DEBUG=1, say) as you built it. Then, on a GPU,
# for n = 2^16, 2^18, ..., 2^28:
#   errors  ./lesson15 -n N once, in its human mode: the `fixed` and `kahan`
#           lines of its table's cancel rows (the result, and |error| printed
#           to two digits); the solution's `cancel` line (its kahan_tree on
#           the same input: result, the exact sum, abs_err, PASS or FAIL
#           against the exercise's budget) from round 1 below;
#   times   the two programs in turns, three rounds, every n in each round:
#           ./lesson15 --csv keeping its `kahan` line, ./solution15 --csv
#           keeping its `kahan_tree` line, both on -d ints.
# It writes
#   results/cancel-tree-lab15-<gpu>.csv      program, input, round, then the
#                                            harness's CSV line (the times)
#   results/cancel-tree-err-lab15-<gpu>.csv  lesson, variant, gpu, input, n,
#                                            kappa, result, expected, abs_err,
#                                            rel_err, status (the errors)
# The lesson's rows take the exact sum (expected) from the solution's cancel
# line at the same n (the same make_cancel, seed and alignment); their
# abs_err is recomputed from it and must agree with the |error| the lesson
# printed, or nothing is written. Both files are stamped with 15 and ex15.
#
#     sh lab/15_cancel_tree.sh      (CCCL_HOME as for make lesson15)
set -u
cd "$(dirname "$0")/.." || exit 1
ME=15_cancel_tree.sh
B=build/cancel_tree
R=$B/runs
mkdir -p "$B" results
les=lessons/15_determinism_and_accuracy/15_determinism_and_accuracy.cu
sol=solutions/15_determinism_and_accuracy.cu
# the lines this script reads must still be printed
grep -q '"atomic", "fixed", "kahan",' "$les" || { echo "$ME: $les has no fixed and kahan variants" >&2; exit 1; }
grep -q 'run_variant(&opt, &in, "kahan_tree", sum_pair);' "$sol" &&
    grep -q 'run_variant(&once, &cancel, "cancel", sum_pair);' "$sol" || { echo "$ME: $sol prints no kahan_tree or cancel line" >&2; exit 1; }
# One line, exit 1, results/ untouched.
refuse() { echo "$ME: $*; results/ is left as it is" >&2; exit 1; }

make -s BUILDDIR="$B" lesson15 solution15 || refuse "make lesson15 solution15 failed"
nvidia-smi -L >/dev/null 2>&1 || { echo "$ME: no GPU: built only"; exit 0; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
out=results/cancel-tree-lab15-$slug.csv
err=results/cancel-tree-err-lab15-$slug.csv
sizes="16 18 20 22 24 26 28" # n = 2^k
d=ints                       # the -d input of the timed lines (the input of make run's rows)
rm -rf "$R" && mkdir -p "$R"

# 1. The lesson's table, one n at a time (it holds every variant on three inputs).
for k in $sizes; do
    f=$R/table-$k.txt
    "$B/lesson15" -n 2^$k -d $d >"$f" 2>&1 ||
        refuse "./lesson15 -n 2^$k -d $d failed: $({ grep ' FAIL ' "$f"; grep '^lesson15: ' "$f"; tail -n 1 "$f"; } | head -n 1)"
done
# 2. The times, and the solution's cancel lines: the programs in turns.
for r in 1 2 3; do for k in $sizes; do for p in lesson15 solution15; do
    f=$R/$p-$k-$r.csv
    "$B/$p" -n 2^$k -d $d --csv-header >"$f" 2>"$f.err"
    rc=$? # solution15 exits 1 when its cancel line misses the exercise's budget: that line is kept
    [ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ $p = solution15 ]; } ||
        refuse "./$p -n 2^$k -d $d --csv exited $rc: $({ grep -v '^#' "$f.err"; grep ',FAIL$' "$f"; } | head -n 1)"
done; done; done

# pick FILE VARIANT N: FILE's one CSV line of VARIANT at n = N, checked (the
# header the first file had, n, a PASS for a timed line); else exit 1.
hdr=$(head -n 1 "$R/lesson15-${sizes%% *}-1.csv")
pick() {
    awk -F, -v h="$hdr" -v v="$2" -v n="$3" '
        NR == 1 { if ($0 != h) exit 1; for (i = 1; i <= NF; i++) c[$i] = i
                  if (!c["variant"] || !c["n"] || !c["reps"] || !c["status"]) exit 1; next }
        $c["variant"] == v { k++; l = $0; if ($c["n"] != n || ($c["reps"] > 0 && $c["status"] != "PASS")) bad = 1 }
        END { if (k != 1 || bad) exit 1; print l }' "$1"
}
case $hdr in lesson,variant,gpu,n,*result,expected,abs_err,status) ;; *) refuse "lesson15 --csv-header printed no CSV header" ;; esac

echo "program,input,round,$hdr" >"$R/times.csv"
for r in 1 2 3; do for k in $sizes; do
    n=$((1 << k))
    l=$(pick "$R/lesson15-$k-$r.csv" kahan $n) || refuse "no passing kahan line at n = $n in $R/lesson15-$k-$r.csv"
    s=$(pick "$R/solution15-$k-$r.csv" kahan_tree $n) || refuse "no passing kahan_tree line at n = $n in $R/solution15-$k-$r.csv"
    printf 'lesson15,%s,%s,%s\nsolution15,%s,%s,%s\n' $d $r "$l" $d $r "$s" >>"$R/times.csv"
done; done

echo "lesson,variant,gpu,input,n,kappa,result,expected,abs_err,rel_err,status" >"$R/err.csv"
for k in $sizes; do
    n=$((1 << k))
    c=$(pick "$R/solution15-$k-1.csv" cancel $n) || refuse "no cancel line at n = $n in $R/solution15-$k-1.csv"
    l=$(pick "$R/lesson15-$k-1.csv" kahan $n) || refuse "no kahan line at n = $n in $R/lesson15-$k-1.csv"
    # the lesson's fixed and kahan on cancel, against the exact sum of the solution's line; then that line
    awk -v hdr="$hdr" -v cl="$c" -v ll="$l" -v n="$n" '
        function fl(x,   a, u) { # x, printed to 9 digits, back to the float it was
            if (x == 0) return 0; a = x < 0 ? -x : x
            u = 1; while (u > a) u /= 2; while (u * 2 <= a) u *= 2; u /= 8388608
            a = int(a / u + 0.5) * u; return x < 0 ? -a : a }
        function rel(e, x) { return x == 0 ? "" : sprintf("%.3g", e / (x < 0 ? -x : x)) }
        function fail(why) { print why > "/dev/stderr"; bad = 1; exit 1 }
        BEGIN { m = split(hdr, h, ","); split(cl, cv, ","); split(ll, lv, ",")
                for (i = 1; i <= m; i++) { C[h[i]] = cv[i]; L[h[i]] = lv[i] }
                x = C["expected"] + 0 }
        /runs of each variant on n=/ { if (index($0, "on n=" n ";")) seen = 1 }
        seen && $1 == "cancel" && ($3 == "fixed" || $3 == "kahan") {
            if ($3 in got || $4 !~ /^[0-9]+[/][0-9]+$/ || NF < 7) fail("an unexpected " $3 " line on cancel: " $0)
            got[$3] = 1; kappa = $2
            e = fl($5 + 0) - x; if (e < 0) e = -e
            if (sprintf("%.2g", e) != $6) fail("the exact sums differ: " $3 " prints |error| " $6 ", " sprintf("%.2g", e) " against the solution sum " C["expected"])
            row[$3] = L["lesson"] "," $3 "," C["gpu"] ",cancel," n "," kappa "," $5 "," C["expected"] "," sprintf("%.3g", e) "," rel(e, x) "," }
        END { if (bad) exit 1
              if (!("fixed" in got) || !("kahan" in got)) fail("no fixed and kahan lines on cancel")
              print row["fixed"]; print row["kahan"]
              print C["lesson"] ",cancel," C["gpu"] ",cancel," n "," kappa "," C["result"] "," C["expected"] "," C["abs_err"] "," rel(C["abs_err"], x) "," C["status"] }' \
        "$R/table-$k.txt" >"$R/err-$k.csv" 2>"$R/err-$k.why" ||
        refuse "lesson15's table at n = $n: $(head -n 1 "$R/err-$k.why") (see $R/table-$k.txt)"
    cat "$R/err-$k.csv" >>"$R/err.csv"
done

# Both complete: into results/, stamped with the code of both programs.
cp "$R/times.csv" "$out.new" && cp "$R/err.csv" "$err.new" && mv "$out.new" "$out" && mv "$err.new" "$err" ||
    { rm -f "$out.new" "$err.new"; refuse "cannot write $out and $err"; }
sh scripts/stamp.sh "$out" 15 ex15 # records the code it measured in results/code.txt
sh scripts/stamp.sh "$err" 15 ex15
echo "$(($(wc -l <"$out") - 1)) rows in $out, $(($(wc -l <"$err") - 1)) in $err"
# a summary: each n's errors on cancel, then kahan_tree's time over kahan's in each round
awk -F, -v ef="$err" '
    FILENAME == ef { if (FNR > 1) { E[$5, $2] = $9; N[$5] = 1 }; next }
    FNR == 1 { for (i = 1; i <= NF; i++) if ($i == "median_us") m = i; next }
    { T[$1, $3, $7] = $m }
    END { printf "%-6s %-10s %-10s %-10s %s\n", "n", "fixed err", "kahan err", "cancel err", "kahan_tree / kahan time, rounds 1 2 3"
          for (k = 16; k <= 28; k += 2) { n = sprintf("%.0f", 2 ^ k); if (!(n in N)) continue
              printf "%-6s %-10s %-10s %-10s", "2^" k, E[n, "fixed"], E[n, "kahan"], E[n, "cancel"]
              for (r = 1; r <= 3; r++) printf " %.3f", T["solution15", r, n] / T["lesson15", r, n]; printf "\n" } }' "$err" "$out"
