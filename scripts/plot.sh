#!/bin/sh
# make plot: SVG charts of the results CSVs, with POSIX sh and awk only.
# usage: sh scripts/plot.sh [DIR ...]      (default: results runs)
#   DIR/run-<gpu>.csv   -> DIR/run-<gpu>.svg    the staircase: one bar per lesson
#                          01-13 (GB/s, log scale), the speedup over the lesson
#                          before written on each bar, lesson 14's libraries set
#                          apart. Outside results/, the reference GPUs of
#                          results/run-*.csv are drawn beside yours.
#   DIR/bench-<gpu>.csv -> DIR/bench-<gpu>.svg  median time against n (log-log,
#                          a marker shape per variant) and, below, each
#                          variant's time over CUB's at the same n.
# Only CSVs that start with the harness's header are drawn; any other file that
# happens to match the names (notes, hand-made tables) is passed over, and rows
# that are not whole numeric result lines are ignored.
HEADER="lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"
ours() { [ -f "$1" ] && [ "$(head -n 1 "$1")" = "$HEADER" ]; }
ours_or_say() { ours "$1" || { [ -f "$1" ] && echo "skipped $1: not a results CSV"; return 1; }; }

# Pieces both charts use: XML escapes, log-scale ticks at 1-2-5 steps.
COMMON='
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); gsub(/"/, "\\&quot;", s); return s }
function log10(v) { return log(v) / log(10) }
function num(v) { return v >= 100 ? sprintf("%.0f", v) : (v >= 10 ? sprintf("%.1f", v) : sprintf("%.3g", v)) }
function is_decade(v,   e) { e = log10(v); e = e < 0 ? -int(-e + 0.5) : int(e + 0.5); return (v / 10 ^ e > 0.999 && v / 10 ^ e < 1.001) }
function tick(v) { return v >= 1000 ? sprintf("%gk", v / 1000) : sprintf("%g", v) }
# ticks between lo and hi at 1, 2, 5 x 10^k, into t[1..]; returns the count
function ticks125(lo, hi, t,   k, d, m, c, v) {
  c = 0
  for (k = int(log10(lo)) - 1; k <= int(log10(hi)) + 1; k++)
    for (m = 1; m <= 3; m++) { v = (m == 1 ? 1 : (m == 2 ? 2 : 5)) * 10 ^ k; if (v >= lo && v <= hi) t[++c] = v }
  return c
}
'

STAIRCASE='
BEGIN {
  # lessons/manifest.txt: lesson, the variant it shows, whether it is a step (yes/no), ...
  while ((getline line < sfile) > 0) {
    if (line !~ /^[0-9][0-9]\t/ || split(line, sw, "\t") < 3) continue
    want[sw[1]] = sw[2]; if (sw[3] == "yes") step[sw[1]] = 1; else nostep[sw[1]] = 1
  }
  if (!("12" in want)) want["12"] = "atomic"
}
FNR == 1 { fi++; next }
NF != 15 || !($4 + 0 > 0) || !($6 + 0 > 0) || !($7 + 0 > 0) { next }
{ if (!(fi in gpu)) gpu[fi] = $3
  l = substr($1, 1, 2); name = substr($1, 4)
  # nominal peak = GB/s / share of peak, from the row with the largest share
  # (the share is printed to 0.1%: a small one gives a poor estimate)
  if ($11 + 0 > pbest[fi]) { pbest[fi] = $11 + 0; peak[fi] = $10 * 100 / $11 }
  if ((l in step) || !(l in nostep) && l + 0 <= last) {
    if (++nv[fi, l] > 1) several[l] = 1
    # one bar per lesson: the variant the README shows (want), else the first timed row
    if ((fi, l) in got && !(l in want && $2 == want[l] && gotv[fi, l] != want[l])) next
    got[fi, l] = 1; gotv[fi, l] = $2; lname[l] = name
    gb[fi, l] = $4 * 4 / $7 / 1000; st[fi, l] = $15; lab[l] = $2
    if (!(l in isles)) { isles[l] = 1; les[++nl] = l }
  } else if (l == "14" && $2 !~ /^ours/) {
    key = $2
    if ((fi, key) in lgb) next
    lgb[fi, key] = $4 * 4 / $7 / 1000; lst[fi, key] = $15
    if (!(key in islib)) { islib[key] = 1; libs[++nlib] = key }
  }
}
END {
  nf = fi
  # sort the lessons (they arrive in file order, which may differ between files)
  for (i = 2; i <= nl; i++) { v = les[i]; for (j = i - 1; j >= 1 && les[j] > v; j--) les[j + 1] = les[j]; les[j + 1] = v }
  vmin = 0; vmax = 0; pk = 0
  for (f = 1; f <= nf; f++) {
    if (peak[f] > pk) pk = peak[f]
    for (i = 1; i <= nl; i++) if ((f, les[i]) in gb) { v = gb[f, les[i]]; if (vmin == 0 || v < vmin) vmin = v; if (v > vmax) vmax = v }
    for (i = 1; i <= nlib; i++) if ((f, libs[i]) in lgb) { v = lgb[f, libs[i]]; if (vmin == 0 || v < vmin) vmin = v; if (v > vmax) vmax = v }
  }
  if (vmax == 0) { vmin = 1; vmax = 10 }
  if (pk > vmax) vmax = pk
  lo = vmin / 1.6; hi = vmax * 1.35
  if (hi / lo < 10) { lo = lo / 2; hi = hi * 2 }
  Lx = 260; W = 640; top = 92; bh = 15; gap = 9
  rowh = nf * bh + gap
  H1 = nl * rowh; H2 = nlib > 0 ? 34 + nlib * rowh : 0
  H = top + H1 + H2 + 56
  split("#4477aa #ee7733 #228833 #aa3377", colr, " ")
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", Lx + W + 150, H, Lx + W + 150, H
  printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
  printf "<text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">The staircase: GB/s of each lesson%s</text>\n", nf == 1 ? " on " esc(gpu[1]) : ""
  printf "<text x=\"12\" y=\"44\" fill=\"#444\">GB/s = 4 bytes x n / median time: a rate per element, so lessons run at different n (lesson 01 at a smaller one) compare fairly.</text>\n"
  printf "<text x=\"12\" y=\"60\" fill=\"#444\">Log scale. The figure on a bar: its speedup over the lesson before (time per element). One variant per lesson.</text>\n"
  for (f = 1; f <= nf; f++) {
    lx = 12 + (f - 1) * 260
    printf "<rect x=\"%d\" y=\"68\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"78\">%s%s</text>\n", lx, colr[(f - 1) % 4 + 1], lx + 17, esc(gpu[f]), (nf > 1 ? (f == 1 ? " (yours)" : " (reference)") : "")
  }
  y0 = top; y1 = top + H1 + H2
  nt = ticks125(lo, hi, t)
  for (i = 1; i <= nt; i++) {
    x = Lx + W * (log(t[i]) - log(lo)) / (log(hi) - log(lo))
    major = is_decade(t[i])
    printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", x, y0 - 4, x, y1, major ? "#bbb" : "#e4e4e4"
    if (major || W / log10(hi / lo) >= 100)
      printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s</text>\n", x, y1 + 16, tick(t[i])
  }
  for (i = 1; i <= nl; i++) {
    l = les[i]; y = top + (i - 1) * rowh
    printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s %s%s</text>\n", Lx - 8, y + nf * bh / 2 + 3, l, esc(lname[l]), (l in several) ? " (" esc(lab[l]) ")" : ""
    for (f = 1; f <= nf; f++) {
      if (!((f, l) in gb)) { pv[f] = ""; continue }
      v = gb[f, l]; by = y + (f - 1) * bh
      w = W * (log(v) - log(lo)) / (log(hi) - log(lo))
      fail = st[f, l] != "PASS"
      printf "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", Lx, by, w, bh - 2, fail ? "#cc3311" : colr[(f - 1) % 4 + 1]
      sp = ""
      if (!fail && pv[f] != "") { r = v / pv[f]; sp = "&#215;" sprintf(r >= 100 ? "%.0f" : (r >= 10 ? "%.1f" : "%.2f"), r) }
      if (sp != "" && w > 58)
        printf "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"white\" font-weight=\"bold\">%s</text>\n", Lx + w - 4, by + bh - 5, sp
      else if (sp != "") { printf "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">%s</text>\n", Lx + w + 4, by + bh - 5, sp; w += 46 }
      printf "<text x=\"%.1f\" y=\"%.1f\" fill=\"#333\" font-size=\"11\">%s GB/s%s</text>\n", Lx + w + 4, by + bh - 5, num(v), fail ? " FAIL: wrong result" : ""
      pv[f] = fail ? "" : v
    }
  }
  if (nlib > 0) {
    y = top + H1 + 8
    printf "<line x1=\"12\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\" stroke-dasharray=\"2,3\"/>\n", y, Lx + W, y
    printf "<text x=\"12\" y=\"%d\" fill=\"#444\" font-style=\"italic\">Libraries (lesson 14), the same sum: not part of the staircase</text>\n", y + 18
    for (i = 1; i <= nlib; i++) {
      k = libs[i]; ly = y + 26 + (i - 1) * rowh
      printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">14 %s</text>\n", Lx - 8, ly + nf * bh / 2 + 3, esc(k)
      for (f = 1; f <= nf; f++) {
        if (!((f, k) in lgb)) continue
        v = lgb[f, k]; by = ly + (f - 1) * bh
        w = W * (log(v) - log(lo)) / (log(hi) - log(lo))
        printf "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" fill-opacity=\"0.45\"/>\n", Lx, by, w, bh - 2, lst[f, k] != "PASS" ? "#cc3311" : colr[(f - 1) % 4 + 1]
        printf "<text x=\"%.1f\" y=\"%.1f\" fill=\"#333\" font-size=\"11\">%s GB/s%s</text>\n", Lx + w + 4, by + bh - 5, num(v), lst[f, k] != "PASS" ? " FAIL" : ""
      }
    }
  }
  if (pk > 0) {
    x = Lx + W * (log(pk) - log(lo)) / (log(hi) - log(lo))
    printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#cc3311\" stroke-dasharray=\"5,3\"/>\n", x, y0 - 6, x, y1
    printf "<text x=\"%.1f\" y=\"%d\" fill=\"#cc3311\" text-anchor=\"end\">nominal peak %s GB/s</text>\n", x - 3, y0 - 6, num(pk)
  }
  printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">GB/s (log scale)</text>\n", Lx + W / 2, H - 12
  print "</svg>"
}'

BENCH='
function px(e) { return Lx + W * (e - xmin) / (xmax - xmin) }
function py(v) { return T + H1 - H1 * (log(v) - log(ylo)) / (log(yhi) - log(ylo)) }
function pr(v) { return T2 + H2 - H2 * (log(v) - log(rlo)) / (log(rhi) - log(rlo)) }
function marker(s, x, y, c) {
  if (s == 0) printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"white\"/>\n", x, y, c
  else if (s == 1) printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\" stroke=\"white\"/>\n", x - 4, y - 4, c
  else if (s == 2) printf "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"white\"/>\n", x, y - 5, x - 5, y + 4, x + 5, y + 4, c
  else if (s == 3) printf "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"white\"/>\n", x, y - 5, x + 5, y, x, y + 5, x - 5, y, c
  else if (s == 4) printf "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"white\"/>\n", x, y + 5, x - 5, y - 4, x + 5, y - 4, c
  else printf "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"2.2\"/>\n", x - 4, y - 4, x + 4, y + 4, x - 4, y + 4, x + 4, y - 4, c
}
BEGIN { nshow = split(show, sh, ";"); for (i = 1; i <= nshow; i++) if (sh[i] != "") { want[sh[i]] = 1; nwant++ } }
NR == 1 || NF != 15 || !($4 + 0 > 0) || !($6 + 0 > 0) || !($7 + 0 > 0) || $15 != "PASS" { next }
{ key = substr($1, 1, 2) " " $2
  if (nwant > 0 && !(key in want)) next
  if (!(key in idx)) { idx[key] = ++nk; name[nk] = key }
  j = idx[key]; e = log($4) / log(2)
  c[j]++; xs[j, c[j]] = e; ys[j, c[j]] = $7; nat[j, c[j]] = $4; tm[key, $4] = $7
  gpu = $3; if ($11 + 0 > pbest) { pbest = $11 + 0; peak = $10 * 100 / $11 } # the largest share estimates best
  if (ymin == "" || $7 < ymin) ymin = $7; if ($7 > ymax) ymax = $7
  if (xmin == "" || e < xmin) xmin = e; if (e > xmax) xmax = e }
END {
  if (nk == 0) { exit 1 }
  split("#4477aa #ee6677 #228833 #ccbb44 #66ccee #aa3377 #555555", col, " ")
  if (xmax == xmin) { xmin -= 1; xmax += 1 }
  ylo = ymin / 1.4; yhi = ymax * 1.4
  if (yhi / ylo < 10) yhi = ylo * 10
  # the ratio panel: each variant over cub at the same n
  cub = ""
  for (j = 1; j <= nk; j++) if (name[j] ~ / cub$/) cub = name[j]
  rlo = 1; rhi = 1; nr = 0
  if (cub != "") for (j = 1; j <= nk; j++) if (name[j] != cub) for (i = 1; i <= c[j]; i++) {
    if ((cub, nat[j, i]) in tm) { r = ys[j, i] / tm[cub, nat[j, i]]; rat[j, i] = r; nr++; if (r < rlo) rlo = r; if (r > rhi) rhi = r }
  }
  rlo = rlo / 1.08; rhi = rhi * 1.08
  Lx = 80; T = 78; W = 620; H1 = 340; T2 = T + H1 + 70; H2 = nr > 0 ? 230 : 0
  Htot = T2 + H2 + 50; Wtot = Lx + W + 230
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", Wtot, Htot, Wtot, Htot
  printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
  printf "<text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">Sum of n floats on %s: median time against n</text>\n", esc(gpu)
  printf "<text x=\"12\" y=\"44\" fill=\"#444\">Log-log; L2 flushed between repetitions (%s). Lower is faster.</text>\n", flush == "clean" ? "clean: a read of a 2 x L2 buffer" : "dirty: a write of a 2 x L2 buffer"
  # x grid, both panels
  for (e = int(xmin + 0.999); e <= xmax + 0.001; e++) {
    x = px(e)
    printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", x, T, x, T + H1, e % 2 ? "#f0f0f0" : "#ddd"
    if (H2 > 0) printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", x, T2, x, T2 + H2, e % 2 ? "#f0f0f0" : "#ddd"
    if (e % 2 == 0 || xmax - xmin <= 8) {
      printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">2<tspan dy=\"-6\" font-size=\"9\">%d</tspan></text>\n", x, T + H1 + 16, e
      if (H2 > 0) printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">2<tspan dy=\"-6\" font-size=\"9\">%d</tspan></text>\n", x, T2 + H2 + 16, e
    }
  }
  nt = ticks125(ylo, yhi, t)
  for (i = 1; i <= nt; i++) {
    y = py(t[i]); major = is_decade(t[i])
    printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", Lx, y, Lx + W, y, major ? "#bbb" : "#eee"
    if (major || H1 / log10(yhi / ylo) >= 90)
      printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%s</text>\n", Lx - 6, y + 4, tick(t[i])
  }
  printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", Lx, T, W, H1
  printf "<text x=\"18\" y=\"%d\" fill=\"#555\" transform=\"rotate(-90 18 %d)\" text-anchor=\"middle\">median time, microseconds</text>\n", T + H1 / 2, T + H1 / 2
  printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">n (floats)</text>\n", Lx + W / 2, T + H1 + 34
  # the time to read n x 4 bytes at the nominal peak, from where it enters the panel
  e0 = peak > 0 ? log(ylo * peak * 1000 / 4) / log(2) : xmax
  if (e0 < xmin) e0 = xmin
  if (peak > 0 && e0 < xmax) {
    printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#cc3311\" stroke-dasharray=\"5,3\"/>\n", px(e0), py(2 ^ e0 * 4 / peak / 1000), px(xmax), py(2 ^ xmax * 4 / peak / 1000)
    printf "<text x=\"%.1f\" y=\"%.1f\" fill=\"#cc3311\" text-anchor=\"end\">reading n x 4 bytes at the nominal peak, %s GB/s</text>\n", px(xmax) - 4, py(2 ^ xmax * 4 / peak / 1000) + 16, num(peak)
  }
  for (j = 1; j <= nk; j++) {
    cl = col[(j - 1) % 7 + 1]; s = (j - 1) % 6; pts = ""
    for (i = 1; i <= c[j]; i++) pts = pts sprintf("%.1f,%.1f ", px(xs[j, i]), py(ys[j, i]))
    printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"%s\"/>\n", cl, pts
    for (i = 1; i <= c[j]; i++) marker(s, px(xs[j, i]), py(ys[j, i]), cl)
    ly = T + 8 + 20 * (j - 1)
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.6\"/>\n", Lx + W + 14, ly, Lx + W + 40, ly, cl
    marker(s, Lx + W + 27, ly, cl)
    printf "<text x=\"%d\" y=\"%d\">%s</text>\n", Lx + W + 48, ly + 4, esc(name[j])
  }
  if (H2 > 0) {
    printf "<text x=\"12\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">Time over CUB%s time at the same n (log scale): below 1 is faster than CUB</text>\n", T2 - 14, "&#8217;s"
    split("1 0.9 1.1 0.8 1.25 0.7 1.5 0.6 2 0.5 3 0.4 4 0.3 6 0.25 8 16", rt, " ")
    nl = 0
    for (i = 1; i <= 18; i++) {
      v = rt[i] + 0; if (v < rlo || v > rhi) continue
      y = pr(v); near = 0
      for (q = 1; q <= nl; q++) if (y - used[q] < 16 && used[q] - y < 16) near = 1
      if (near) continue
      used[++nl] = y
      printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"%s/>\n", Lx, y, Lx + W, y, v == 1 ? "#333" : "#e4e4e4", v == 1 ? " stroke-width=\"1.5\"" : ""
      printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%g</text>\n", Lx - 6, y + 4, v
    }
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", Lx, T2, W, H2
    printf "<text x=\"18\" y=\"%d\" fill=\"#555\" transform=\"rotate(-90 18 %d)\" text-anchor=\"middle\">time / CUB time</text>\n", T2 + H2 / 2, T2 + H2 / 2
    for (j = 1; j <= nk; j++) {
      if (name[j] == cub) continue
      cl = col[(j - 1) % 7 + 1]; s = (j - 1) % 6; pts = ""
      for (i = 1; i <= c[j]; i++) if ((j, i) in rat) pts = pts sprintf("%.1f,%.1f ", px(xs[j, i]), pr(rat[j, i]))
      if (pts == "") continue
      printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"%s\"/>\n", cl, pts
      for (i = 1; i <= c[j]; i++) if ((j, i) in rat) marker(s, px(xs[j, i]), pr(rat[j, i]), cl)
    }
  } else
    printf "<text x=\"%d\" y=\"%d\" fill=\"#555\">(no CUB rows in this file, so no panel of ratios to CUB)</text>\n", Lx, T2 - 14
  print "</svg>"
}'

[ $# -gt 0 ] || set -- results runs
refs=""
for csv in results/run-*.csv; do ours "$csv" && refs="$refs $csv"; done
found=0
# the lines of the size-sweep chart (scripts/bench-chart.txt); none listed: all
show=$(awk -F'\t' '!/^#/ && NF >= 2 { printf "%s %s;", $1, $2 }' "$(dirname "$0")/bench-chart.txt" 2>/dev/null)
for dir in "$@"; do
    for csv in "$dir"/run-*.csv; do
        ours_or_say "$csv" || continue
        found=1
        others=""
        # outside results/ itself, the reference runs go beside yours
        [ "$(cd "$dir" && pwd -P)" = "$(cd results 2>/dev/null && pwd -P)" ] || others=$refs
        svg=${csv%.csv}.svg
        # shellcheck disable=SC2086
        awk -F, -v last=13 -v sfile="$(dirname "$0")/../lessons/manifest.txt" "$COMMON$STAIRCASE" "$csv" $others >"$svg.tmp" && mv "$svg.tmp" "$svg" &&
            echo "wrote $svg$([ -z "$others" ] || echo " (beside the reference runs in results/)")"
        rm -f "$svg.tmp"
    done
    for csv in "$dir"/bench-*.csv; do
        ours_or_say "$csv" || continue
        found=1
        svg=${csv%.csv}.svg
        flush=dirty
        case $csv in *-clean.csv) flush=clean ;; esac
        if awk -F, -v flush=$flush -v show="$show" "$COMMON$BENCH" "$csv" >"$svg.tmp"; then
            mv "$svg.tmp" "$svg" && echo "wrote $svg"
        else
            echo "skipped $csv: no timed, passing rows to draw"
        fi
        rm -f "$svg.tmp"
    done
done
[ $found = 1 ] || echo "no results CSVs in $* yet: make run (or make bench) first"
exit 0
