#!/bin/sh
# make plot: SVG charts of the results CSVs, with POSIX sh and awk only.
# usage: sh scripts/plot.sh [DIR ...]     (default: results runs)
#        sh scripts/plot.sh --gpus DIR    per DIR/run-<gpu>.csv one line "slug<TAB>nominal
#                                         peak GB/s<TAB>L2 MiB (or -)<TAB>GPU": the figures
#                                         scripts/tables.sh quotes, so that both say the same
#   DIR/run-<gpu>.csv -> DIR/run-<gpu>.svg   the staircase: one bar per lesson 03-13 (the
#       variant lessons/manifest.txt says it shows), % of the nominal peak on a linear
#       axis, each bar labelled with its speedup over the lesson before (per element);
#       lessons 01-02, too slow to see on that axis, in a line below. Outside results/,
#       the reference GPUs of results/run-*.csv are drawn beside yours.
#   DIR/bench-<gpu>.csv (L2 dirty) and DIR/bench-<gpu>-clean.csv -> DIR/bench-<gpu>.svg
#       the size sweep: % of the nominal peak against n (log2 axis), dirty and clean side
#       by side. Top row: lesson 14's like-for-like pairs, all timed in one process
#       (ours_fixed with CUB's default call, ours_atomic with CUB's not-guaranteed one);
#       bottom row: each bench lesson (manifest: bench=yes) at the variant it shows, with
#       CUB's default call for reference. A dashed line marks n = 2 x L2.
# One figure per GPU: its nominal peak is computed once, from DIR/run-<gpu>.csv (else
# the bench CSV): the value every row's GB/s and rounded % of peak agree on. Its L2
# size comes from a results file that records it ("60 MiB L2"), else the table in l2_of.
# Like the tables, a chart leaves out rows measured by code that has changed since
# (DIR/code.txt against scripts/code_hash.sh; a DIR without code.txt is all shown).
# Only CSVs that start with the harness's header are drawn; any other file that
# happens to match the names (notes, hand-made tables) is passed over, and rows
# that are not whole numeric result lines are ignored.
LC_ALL=C; export LC_ALL # the same sort order and number format in every locale
HEADER="lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"
ours() { [ -f "$1" ] && [ "$(head -n 1 "$1")" = "$HEADER" ]; }
ours_or_say() { ours "$1" || { [ -f "$1" ] && echo "skipped $1: not a results CSV"; return 1; }; }
here=$(dirname "$0")
MANIFEST=$here/../lessons/manifest.txt

# The nominal peak of the GPU of a harness CSV, and its name: each row with a
# share of 1% or more bounds the peak to GB/s x 100 / (share +- 0.05); the
# middle of what all rows allow, rounded to GB/s (the harness prints the same).
# Rows of several GPUs together ("2 x ...") are passed over.
gpu_peak() {
    awk -F, 'NR == 1 || NF != 15 || !($6 + 0 > 0) || !($7 + 0 > 0) || !($11 + 0 >= 1) { next }
    $3 ~ /^[0-9]+ x / && $3 !~ /^1 x / { next }
    { g = $5 / $7 / 1000; lo = g * 100 / ($11 + 0.05); hi = g * 100 / ($11 - 0.05)
      if (k == 0 || lo > L) L = lo; if (k == 0 || hi < H) H = hi; k++
      if ($11 + 0 > best) { best = $11 + 0; est = g * 100 / $11 }
      if (name == "") { name = $3; sub(/^1 x /, "", name) } }
    END { if (k == 0) exit 1; printf "%.0f\t%s\n", (L <= H) ? (L + H) / 2 : est, name }' "$1"
}
# The L2 size of a GPU in MiB: as a results file of this GPU records it, else
# the figure its maker publishes, else "-".
l2_of() { # DIR SLUG GPU
    v=$(cat "$1"/*-"$2".txt results/*-"$2".txt 2>/dev/null | sed -n 's/.*[^0-9]\([0-9][0-9]*\) MiB L2.*/\1/p' | head -n 1)
    [ -n "$v" ] || case $3 in
        *H100*) v=50 ;; # NVIDIA H100 Tensor Core GPU Architecture (whitepaper, 2022): 50 MB of L2
        *H200*) v=60 ;; # results/tune-lesson12-nvidia-h200.txt: "132 SMs, 60 MiB L2"
    esac
    echo "${v:--}"
}
# peak<TAB>L2<TAB>GPU for DIR and SLUG, from one source: run-SLUG.csv, else the CSVs given.
gpu_info() { # DIR SLUG [CSV ...]
    d=$1 s=$2; shift 2
    for c in "$d/run-$s.csv" "$@"; do
        ours "$c" || continue
        pn=$(gpu_peak "$c") || continue
        printf '%s\t%s\t%s\n' "${pn%%	*}" "$(l2_of "$d" "$s" "${pn#*	}")" "${pn#*	}"
        return 0
    done
    return 1
}

if [ "${1:-}" = "--gpus" ]; then
    d=${2:-results}
    for c in "$d"/run-*.csv; do
        ours "$c" || continue
        s=${c#"$d"/run-}; s=${s%.csv}
        i=$(gpu_info "$d" "$s") && printf '%s\t%s\n' "$s" "$i"
    done
    exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plot.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

[ $# -gt 0 ] || set -- results runs
# Which rows measured the code their program has now: "D<TAB>dir" for each DIR
# that keeps a code.txt (its rows are checked), "F<TAB>dir/file<TAB>key" for each
# file and program whose code is unchanged (results/code.txt, scripts/code_hash.sh).
: >"$tmp/fresh"
hashed=0
for d in results "$@"; do
    [ -f "$d/code.txt" ] || continue
    grep -q "^D	$d\$" "$tmp/fresh" && continue
    [ $hashed = 1 ] || { sh "$here/code_hash.sh" >"$tmp/hashes"; hashed=1; }
    printf 'D\t%s\n' "$d" >>"$tmp/fresh"
    awk -F'\t' -v d="$d" 'NR == FNR { cur[$1] = $2; next } /^#/ { next }
        ($2 in cur) && cur[$2] == $3 { print "F\t" d "/" $1 "\t" $2 }' "$tmp/hashes" "$d/code.txt" >>"$tmp/fresh"
done

# Pieces both charts use.
COMMON='
# a white outline behind a text that may cross grid lines
function halo() { return "stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"" }
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); gsub(/"/, "\\&quot;", s); return s }
# the width of a text in pixels, roughly (an entity such as &#215; is one character)
function tw(s, size,   t) { t = s; gsub(/&#?[a-z0-9]+;/, "x", t); return length(t) * size * 0.56 }
function x_of(r) { return (r >= 100) ? sprintf("&#215;%.0f", r) : (r >= 10) ? sprintf("&#215;%.1f", r) : sprintf("&#215;%.2f", r) }
function pct_of(p) { return (p >= 0.1) ? sprintf("%.1f%%", p) : sprintf("%.2g%%", p) }
function text(x, y, s, attr) { printf "<text x=\"%.1f\" y=\"%.1f\"%s>%s</text>\n", x, y, (attr == "" ? "" : " " attr), s }
function seg(x1, y1, x2, y2, attr) { printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", x1, y1, x2, y2, attr }
# The program a row comes from: "12_single_pass" -> 12 (as scripts/tables.sh reads it)
function rkey(s) { if (s ~ /^lab_[0-9][0-9]_/) return s; if (s ~ /^ex[0-9][0-9]/) return substr(s, 1, 4); return substr(s, 1, 2) }
function dirof(f) { if (!index(f, "/")) return "."; sub(/\/[^\/]*$/, "", f); return f }
# Did file f measure the code lesson column s names has now? (files outside a DIR with code.txt: yes)
function fresh(f, s) { return !(dirof(f) in CHECKED) || ((f, rkey(s)) in FRESH) }
function load_fresh(   line, w) {
  while ((getline line < FRESHFILE) > 0) { split(line, w, "\t"); if (w[1] == "D") CHECKED[w[2]] = 1; else FRESH[w[2], w[3]] = 1 }
  close(FRESHFILE)
}
# lessons/manifest.txt: lesson, the variant it shows, step (yes/no), base, big, bench, change
function load_manifest(   line, w) {
  while ((getline line < MANIFEST) > 0) {
    if (line !~ /^[0-9][0-9]\t/ || split(line, w, "\t") < 6) continue
    LORDER[++NL] = w[1]; SHOWS[w[1]] = w[2]; STEP[w[1]] = (w[3] == "yes"); BENCH[w[1]] = (w[6] == "yes")
  }
  close(MANIFEST)
}
# base^e as text; rest follows on the baseline again
function sup(base, e, rest) { return base "<tspan dy=\"-5\" font-size=\"9\">" e "</tspan>" (rest == "" ? "" : "<tspan dy=\"5\">" rest "</tspan>") }
'

STAIRCASE='
BEGIN { load_fresh(); load_manifest(); nf = split(PEAKS, pk, ";"); split(NAMES, gname, ";") }
FNR == 1 { fi++; next }
NF != 15 || !($4 + 0 > 0) || !($6 + 0 > 0) || !($7 + 0 > 0) { next }
{ l = substr($1, 1, 2)
  if (NL > 0 && !STEP[l]) next
  if (!fresh(FILENAME, $1)) { if (l + 0 <= last) old[fi, l] = 1; next }
  # one row per lesson: the variant the README shows, else the first timed one
  if ((fi, l) in med && !($2 == SHOWS[l] && var[fi, l] != SHOWS[l])) next
  med[fi, l] = $7; nn[fi, l] = $4; pct[fi, l] = $11; st[fi, l] = $15; var[fi, l] = $2; lname[l] = substr($1, 4)
  if (NL == 0 && !(l in seen)) { seen[l] = 1; LORDER[++NL] = l; STEP[l] = 1 }
}
END {
  nf = fi
  # the lessons drawn: the steps from 03 to the last; 01 and 02 go in a line below
  for (i = 1; i <= NL; i++) { l = LORDER[i]; if (STEP[l]) { steps[++ns] = l; if (l + 0 >= 3 && l + 0 <= last) les[++nl] = l } }
  for (i = 1; i <= nl; i++) if (!(les[i] in lname)) { l = les[i]; lname[l] = l }
  cmd = "ls -d " LESSONS "/[0-9][0-9]_* 2>/dev/null"
  while ((cmd | getline d) > 0) { sub(/.*\//, "", d); if (!(substr(d, 1, 2) in lname) || lname[substr(d, 1, 2)] == substr(d, 1, 2)) lname[substr(d, 1, 2)] = substr(d, 4) }
  close(cmd)
  split("#0072B2 #E69F00 #009E73 #CC79A7", colr, " ")
  Lx = 170; PW = 290; Wtot = Lx + PW + 24; bh = 18; gap = 7; rowh = nf * bh + gap
  T = (nf > 1) ? 104 + 16 * nf : 96
  H1 = nl * rowh; y1 = T + H1
  H = y1 + 40 + 16 * (nf > 1 ? 2 * nf : 2) + 8
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", Wtot, H, Wtot, H
  printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
  text(12, 22, "The staircase" (nf == 1 ? " on " esc(gname[1]) : ", your GPU beside the reference GPUs"), "font-size=\"15\" font-weight=\"bold\"")
  # n: the one most rows share
  for (f = 1; f <= nf; f++) for (i = 1; i <= nl; i++) if ((f, les[i]) in nn) ncount[nn[f, les[i]]]++
  best = 0; for (v in ncount) if (ncount[v] > best) { best = ncount[v]; nmost = v }
  ne = ""; if (nmost != "") { v = nmost + 0; for (e = 0; e <= 40; e++) if (2 ^ e == v) ne = e }
  text(12, 42, "Bars: % of the nominal peak" (nf == 1 ? " (100% = " pk[1] " GB/s)" : "") (ne != "" ? ", n = " sup("2", ne, " floats.") : "."), "fill=\"#444\"")
  text(12, 58, "On a bar: its speedup over the lesson before, per element", "fill=\"#444\"")
  text(12, 74, "(the lesson before&#8217;s time per element / this one&#8217;s).", "fill=\"#444\"")
  if (nf > 1) for (f = 1; f <= nf; f++) {
    y = 74 + 16 * f
    printf "<rect x=\"12\" y=\"%d\" width=\"11\" height=\"11\" fill=\"%s\"/>\n", y - 10, colr[(f - 1) % 4 + 1]
    text(28, y, esc(gname[f]) (f == 1 ? " (yours)" : " (reference)") ", peak " pk[f] " GB/s", "")
  }
  # the axis: 0-100 % of peak, grid every 20; the peak line at 100
  for (p = 0; p <= 100; p += 20) {
    x = Lx + PW * p / 100
    seg(x, T - 4, x, y1, "stroke=\"" (p == 0 ? "#888" : "#e2e2e2") "\"")
    text(x, y1 + 15, p, "text-anchor=\"middle\" fill=\"#555\"")
  }
  text(Lx + PW / 2, y1 + 31, "% of nominal peak (memory bandwidth)", "text-anchor=\"middle\" fill=\"#555\"")
  seg(Lx + PW, T - 16, Lx + PW, y1, "stroke=\"#cc3311\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\"")
  text(Lx + PW - 4, T - 8, "nominal peak" (nf == 1 ? ", " pk[1] " GB/s" : ""), "text-anchor=\"end\" fill=\"#cc3311\"")
  for (i = 1; i <= nl; i++) {
    l = les[i]; y = T + (i - 1) * rowh
    nm = lname[l]; gsub(/_/, " ", nm)
    text(Lx - 8, y + (nf * bh - 2) / 2 + 4, l " " esc(nm), "text-anchor=\"end\"")
    for (f = 1; f <= nf; f++) {
      by = y + (f - 1) * bh; ty = by + bh / 2 + 2.5
      if (!((f, l) in med)) {
        text(Lx + 6, ty, (f, l) in old ? "not yet measured with its current code" : "not measured", "fill=\"#888\" font-style=\"italic\" font-size=\"11\" " halo())
        continue
      }
      p = pct[f, l] + 0; w = PW * (p > 104 ? 104 : p) / 100; fail = st[f, l] != "PASS"
      printf "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %s: %s of %s GB/s</title></rect>\n", Lx, by, w, bh - 2,
        fail ? "#cc3311" : colr[(f - 1) % 4 + 1], l, esc(var[f, l]), pct_of(p), pk[f]
      # the speedup over the step before, per element
      sp = ""; pl = ""; for (k = 2; k <= ns; k++) if (steps[k] == l) pl = steps[k - 1]
      if (!fail && ((f, pl) in med) && st[f, pl] == "PASS") sp = x_of((med[f, pl] / nn[f, pl]) / (med[f, l] / nn[f, l]))
      lp = fail ? "FAIL: wrong sum" : pct_of(p); vn = (var[f, l] != SHOWS[l] && NL > 0) ? " (" esc(var[f, l]) ")" : ""
      if (w >= tw(lp vn, 11) + tw(sp, 11) + 18) {
        text(Lx + 5, ty, lp vn, "fill=\"white\" font-size=\"11\"")
        if (sp != "") text(Lx + w - 5, ty, sp, "text-anchor=\"end\" fill=\"white\" font-weight=\"bold\" font-size=\"11\"")
      } else {
        text(Lx + w + 5, ty, lp vn (sp == "" ? "" : "  <tspan font-weight=\"bold\">" sp "</tspan>"), "fill=\"#222\" font-size=\"11\"")
      }
    }
  }
  # lessons 01 and 02: far below 1% of peak, so told in words
  y = y1 + 52
  for (f = 1; f <= nf; f++) {
    s = ""
    for (k = 1; k <= ns && steps[k] + 0 < 3; k++) {
      l = steps[k]
      if (!((f, l) in med)) continue
      g = nn[f, l] * 4 / med[f, l] / 1000
      s = s (s == "" ? "" : "; ") l " " esc(lname[l]) " " (g >= 1 ? sprintf("%.1f", g) : sprintf("%.2g", g)) " GB/s"
      if (k > 1 && ((f, steps[k - 1]) in med)) s = s " (" x_of((med[f, steps[k - 1]] / nn[f, steps[k - 1]]) / (med[f, l] / nn[f, l])) ")"
    }
    if (s == "") continue
    text(12, y, (nf > 1 ? esc(gname[f]) ": " : "Too slow to draw: ") s, "fill=\"#444\" font-size=\"11\"")
    y += 16
  }
  print "</svg>"
}'

BENCH='
function px(e) { return Lx + PW * (e - xmin) / (xmax - xmin) }
function py(v) { if (v > ymax) v = ymax; return Ty + PH - PH * v / ymax }
# one series: key "NN variant", its label, colour and dash
function series(r, key, label, colour, dash) { ns[r]++; SK[r, ns[r]] = key; SL[r, ns[r]] = label; SC[r, ns[r]] = colour; SD[r, ns[r]] = dash }
BEGIN { load_fresh(); load_manifest() }
FNR == 1 { next }
NF != 15 || !($4 + 0 > 0) || !($6 + 0 > 0) || !($7 + 0 > 0) || $15 != "PASS" { next }
{ p = (FILENAME == CLEAN) ? 2 : 1; l = substr($1, 1, 2); key = l " " $2
  if (!fresh(FILENAME, $1)) { old[l] = 1; oldp[p, l] = 1; next }
  e = log($4) / log(2)
  if (!((p, key, $4) in y)) { c[p, key]++; xs[p, key, c[p, key]] = e; nat[p, key, c[p, key]] = $4 }
  y[p, key, $4] = $5 / $7 / 1000 / PEAK * 100
  have[key] = 1; if (!(l in firstv)) firstv[l] = $2
  if (xmin == "" || e < xmin) xmin = e; if (e > xmax) xmax = e
}
END {
  # row 1: lesson 14, one process: each of our two finishes beside the CUB call that promises as much
  series(1, "14 ours_fixed", "ours, fixed order", "#0072B2", "")
  series(1, "14 cub", "CUB default", "#56B4E9", "6,4")
  series(1, "14 ours_atomic", "ours, atomic", "#D55E00", "")
  series(1, "14 cccl_not_guaranteed", "CUB, not guaranteed", "#E69F00", "6,4")
  # row 2: the bench lessons, each at the variant it shows (else its first), with CUB for reference
  split("#332288 #117733 #AA4499 #882255 #999933 #44AA99 #661100 #6699CC #AA4466", lc, " ")
  k = 0
  for (i = 1; i <= NL; i++) { l = LORDER[i]; if (!BENCH[l] || l == "14") continue
    v = ((l " " SHOWS[l]) in have) ? SHOWS[l] : firstv[l]
    if (v == "") { if (!(l in old)) continue; v = SHOWS[l] }
    k++; series(2, l " " v, l " " v, lc[(k - 1) % 9 + 1], ""); row2l[l] = 1 }
  if (NL == 0) for (kk in have) { split(kk, w, " "); if (w[1] != "14") { k++; series(2, kk, kk, lc[(k - 1) % 9 + 1], "") } }
  series(2, "14 cub", "CUB default", "#777777", "6,4")
  # a row is drawn when it has a line to draw, or a lesson left out for its changed code
  for (j = 1; j <= ns[1]; j++) if (SK[1, j] in have) any[1] = 1
  for (j = 1; j < ns[2]; j++) if (SK[2, j] in have) any[2] = 1
  r1old = ("14" in old); r2old = 0; for (l in row2l) if (l in old) r2old = 1
  showrow[1] = any[1] || r1old; showrow[2] = any[2] || r2old
  # the points of each line in order of n
  for (r = 1; r <= 2; r++) for (j = 1; j <= ns[r]; j++) for (p = 1; p <= 2; p++) { key = SK[r, j]; m = c[p, key]
    for (i = 2; i <= m; i++) for (q = i; q > 1 && xs[p, key, q] < xs[p, key, q - 1]; q--) {
      t = xs[p, key, q]; xs[p, key, q] = xs[p, key, q - 1]; xs[p, key, q - 1] = t
      t = nat[p, key, q]; nat[p, key, q] = nat[p, key, q - 1]; nat[p, key, q - 1] = t } }
  if (!any[1] && !any[2] && !r1old && !r2old) exit 1
  if (xmin == "") { xmin = 10; xmax = 30 }
  xmin = int(xmin); if (xmin % 2) xmin--; xmax = int(xmax + 0.999); if (xmax - xmin < 4) xmax = xmin + 4
  ymax = 100
  for (r = 1; r <= 2; r++) for (j = 1; j <= ns[r]; j++) for (p = 1; p <= 2; p++) for (i = 1; i <= c[p, SK[r, j]]; i++) {
    v = y[p, SK[r, j], nat[p, SK[r, j], i]]; while (v > ymax) ymax += 20 }
  PW = 320; PH = 220; PANEL = 494; Wtot = 2 * PANEL + 8
  rows = showrow[1] + showrow[2]
  ROWH = PH + 108
  Htot = 84 + rows * ROWH + (length(oldlist()) ? 22 : 4)
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", Wtot, Htot, Wtot, Htot
  printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
  text(12, 24, "Sum of n floats on " esc(GPU) ": % of the nominal peak (" PEAK " GB/s) against n", "font-size=\"16\" font-weight=\"bold\"")
  text(12, 44, "A point: the median time at that n as a share of the peak; higher is faster. L2 is emptied before each timed", "fill=\"#444\"")
  text(12, 60, "repetition: on the left by writing a 2 &#215; L2 buffer (L2 full of dirty lines), on the right by reading one.", "fill=\"#444\"")
  top = 84
  if (showrow[1]) {
    row_title(top, "Ours against CUB, like for like: lesson 14 times all four in one process",
      "ours, fixed order and CUB default give the same bits on every run; ours, atomic and CUB, not guaranteed need not.")
    for (p = 1; p <= 2; p++) panel(1, p, top + 46); top += ROWH }
  if (showrow[2]) {
    row_title(top, "The lessons, each in its own process",
      "One line per lesson, at the variant the staircase shows; CUB default (grey, dashed) for reference.")
    for (p = 1; p <= 2; p++) panel(2, p, top + 46); top += ROWH }
  s = oldlist()
  if (s != "") text(12, Htot - 10, "Not drawn, not yet measured with their current code: lesson" (index(s, ",") ? "s " : " ") s ".", "fill=\"#888\" font-style=\"italic\" font-size=\"11\"")
  print "</svg>"
}
function oldlist(   i, s, l) { s = ""; for (i = 1; i <= NL; i++) { l = LORDER[i]; if (l in old) s = s (s == "" ? "" : ", ") l } return s }
function row_title(t, a, b) {
  text(12, t + 6, a, "font-size=\"14\" font-weight=\"bold\"")
  if (b != "") text(12, t + 23, b, "fill=\"#444\"")
}
function panel(r, p, t,   x0, e, x, v, j, i, pts, n, m, q, qq, tmp, ly, key, e2, any, lx) {
  x0 = 8 + (p - 1) * PANEL; Lx = x0 + 36; Ty = t
  text(Lx, Ty - 7, p == 1 ? "L2 dirty" : "L2 clean", "font-weight=\"bold\"")
  # grid: n every 2 powers (labelled every 4), % every 20
  for (e = xmin; e <= xmax; e += 2) {
    seg(px(e), Ty, px(e), Ty + PH, "stroke=\"#eeeeee\"")
    if ((e - xmin) % 4 == 0) text(px(e), Ty + PH + 15, sup("2", e), "text-anchor=\"middle\" fill=\"#555\"")
  }
  for (v = 0; v <= ymax; v += 20) { seg(Lx, py(v), Lx + PW, py(v), "stroke=\"" (v == 0 ? "#999" : (v == 100 ? "#cc3311" : "#e2e2e2")) "\"" (v == 100 ? " stroke-dasharray=\"5,3\"" : "")); text(Lx - 5, py(v) + 4, v, "text-anchor=\"end\" fill=\"#555\"") }
  printf "<text x=\"%d\" y=\"%.1f\" fill=\"#555\" text-anchor=\"middle\" transform=\"rotate(-90 %d %.1f)\">%% of peak</text>\n", x0 + 8, Ty + PH / 2, x0 + 8, Ty + PH / 2
  text(Lx + PW / 2, Ty + PH + 31, "n (floats)", "text-anchor=\"middle\" fill=\"#555\"")
  # n = 2 x L2: above it the input cannot stay in L2 between repetitions
  if (L2 + 0 > 0) { e2 = log(2 * L2 * 1048576 / 4) / log(2)
    if (e2 > xmin && e2 < xmax) { seg(px(e2), Ty, px(e2), Ty + PH, "stroke=\"#555\" stroke-dasharray=\"2,3\"")
      text(px(e2) - 4, Ty + 13, "2 &#215; L2 = " 2 * L2 " MiB", "text-anchor=\"end\" fill=\"#555\" font-size=\"11\"") } }
  # the lines, then their labels at the right end, pushed apart where they crowd
  n = 0; any = 0
  for (j = 1; j <= ns[r]; j++) {
    key = SK[r, j]; m = c[p, key]; if (m == 0) continue
    any = 1; pts = ""
    for (i = 1; i <= m; i++) pts = pts sprintf("%.1f,%.1f ", px(xs[p, key, i]), py(y[p, key, nat[p, key, i]]))
    printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"><title>%s</title></polyline>\n", SC[r, j], SD[r, j] == "" ? "" : " stroke-dasharray=\"" SD[r, j] "\"", pts, esc(SL[r, j])
    for (i = 1; i <= m; i++) printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"%s\"/>\n", px(xs[p, key, i]), py(y[p, key, nat[p, key, i]]), SC[r, j]
    n++; LY[n] = py(y[p, key, nat[p, key, m]]); LY0[n] = LY[n]; LX[n] = px(xs[p, key, m]); LJ[n] = j
  }
  if (!any) {
    v = ((p == 1 ? DIRTY : CLEAN) == "") ? "no sweep with L2 " (p == 1 ? "dirty" : "clean") : (r == 1 && oldp[p, "14"]) ? "lesson 14 not yet measured with its current code" : "not measured"
    for (j = 1; j <= ns[r] && v == "not measured"; j++) { split(SK[r, j], qq, " "); if (oldp[p, qq[1]]) v = "not yet measured with the current code" }
    text(Lx + PW / 2, Ty + PH / 2, v, "text-anchor=\"middle\" fill=\"#888\" font-style=\"italic\" " halo())
  }
  # sort the labels by height, then keep 12 px between neighbours, inside the panel
  for (i = 2; i <= n; i++) for (q = i; q > 1 && LY[q] < LY[q - 1]; q--) {
    tmp = LY[q]; LY[q] = LY[q - 1]; LY[q - 1] = tmp; tmp = LY0[q]; LY0[q] = LY0[q - 1]; LY0[q - 1] = tmp
    tmp = LX[q]; LX[q] = LX[q - 1]; LX[q - 1] = tmp; tmp = LJ[q]; LJ[q] = LJ[q - 1]; LJ[q - 1] = tmp }
  for (i = 2; i <= n; i++) if (LY[i] < LY[i - 1] + 12) LY[i] = LY[i - 1] + 12
  if (n > 0 && LY[n] > Ty + PH) { LY[n] = Ty + PH; for (i = n - 1; i >= 1; i--) if (LY[i] > LY[i + 1] - 12) LY[i] = LY[i + 1] - 12 }
  lx = Lx + PW + 12
  for (i = 1; i <= n; i++) {
    j = LJ[i]
    seg(LX[i] + 3, LY0[i], lx - 3, LY[i], "stroke=\"" SC[r, j] "\" stroke-width=\"0.8\"")
    text(lx, LY[i] + 4, esc(SL[r, j]), "fill=\"" SC[r, j] "\" font-size=\"11\" font-weight=\"bold\"")
  }
}'

refs=""
for csv in results/run-*.csv; do ours "$csv" && refs="$refs $csv"; done
found=0
for dir in "$@"; do
    for csv in "$dir"/run-*.csv; do
        ours_or_say "$csv" || continue
        found=1
        others=""
        # outside results/ itself, the reference runs go beside yours
        [ "$(cd "$dir" && pwd -P)" = "$(cd results 2>/dev/null && pwd -P)" ] || others=$refs
        peaks="" names=""
        for c in "$csv" $others; do
            d=$(dirname "$c"); s=${c#"$d"/run-}; s=${s%.csv}
            i=$(gpu_info "$d" "$s") || i="?	-	?"
            peaks="$peaks${peaks:+;}${i%%	*}" names="$names${names:+;}${i##*	}"
        done
        svg=${csv%.csv}.svg
        # shellcheck disable=SC2086
        awk -F, -v last=13 -v MANIFEST="$MANIFEST" -v LESSONS="$here/../lessons" -v FRESHFILE="$tmp/fresh" \
            -v PEAKS="$peaks" -v NAMES="$names" "$COMMON$STAIRCASE" "$csv" $others >"$svg.tmp" && mv "$svg.tmp" "$svg" &&
            echo "wrote $svg$([ -z "$others" ] || echo " (beside the reference runs in results/)")"
        rm -f "$svg.tmp"
    done
    # one chart per GPU from bench-<gpu>.csv (L2 dirty) and bench-<gpu>-clean.csv
    slugs=""
    for csv in "$dir"/bench-*.csv; do
        ours_or_say "$csv" || continue
        s=${csv#"$dir"/bench-}; s=${s%.csv}; s=${s%-clean}
        case " $slugs " in *" $s "*) ;; *) slugs="$slugs $s" ;; esac
    done
    for s in $slugs; do
        found=1
        dirty=$dir/bench-$s.csv clean=$dir/bench-$s-clean.csv
        ours "$dirty" || dirty=""
        ours "$clean" || clean=""
        svg=$dir/bench-$s.svg
        # (an empty $dirty or $clean is left out, unquoted on purpose)
        # shellcheck disable=SC2086
        i=$(gpu_info "$dir" "$s" $dirty $clean) || { echo "skipped $svg: no timed rows"; continue; }
        # shellcheck disable=SC2086
        if awk -F, -v MANIFEST="$MANIFEST" -v FRESHFILE="$tmp/fresh" -v DIRTY="$dirty" -v CLEAN="$clean" -v PEAK="${i%%	*}" \
            -v L2="$(echo "$i" | cut -f2)" -v GPU="${i##*	}" "$COMMON$BENCH" $dirty $clean >"$svg.tmp"; then
            mv "$svg.tmp" "$svg" && echo "wrote $svg"
        else
            echo "skipped $dir/bench-$s*.csv: no timed, passing rows to draw"
        fi
        rm -f "$svg.tmp"
    done
done
[ $found = 1 ] || echo "no results CSVs in $* yet: make run (or make bench) first"
for dir in "$@"; do # a folder of your runs with none in it yet: say so
    [ "$dir" != results ] || continue
    ls "$dir"/run-*.csv >/dev/null 2>&1 || ls "$dir"/bench-*.csv >/dev/null 2>&1 ||
        echo "no runs of yours in $dir/ yet: make run and make bench write them there, beside results/ in the charts"
done
exit 0
