#!/bin/sh
# make plot: SVG charts of the CSVs in results/, with POSIX sh and awk only.
#   results/run-<gpu>.csv   -> results/run-<gpu>.svg   (GB/s per lesson, log scale)
#   results/bench-<gpu>.csv -> results/bench-<gpu>.svg (GB/s against n)
# Only CSVs that start with the harness's header are drawn; any other file that
# happens to match the names (notes, hand-made tables) is passed over, and
# rows that are not whole numeric result lines are ignored.
HEADER="lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"
ours() { [ -f "$1" ] && [ "$(head -n 1 "$1")" = "$HEADER" ] || { [ -f "$1" ] && echo "skipped $1: not a results CSV"; return 1; }; }
found=0
for csv in results/run-*.csv; do
    ours "$csv" || continue
    found=1
    svg=${csv%.csv}.svg
    awk -F, '
    NR == 1 { next }
    NF != 15 || !($4 + 0 > 0) { next }
    gpu == "" { gpu = $3; n = $4 }
    $6 > 0 && $4 == n { k++; lab[k] = $1 " " $2; v[k] = $10
             if ($11 > pmax) { pmax = $11; peak = $10 * 100 / $11 }
             if ($10 > vmax) vmax = $10 }
    END {
      if (peak > vmax) vmax = peak
      lo = 0.01; hi = vmax * 1.5; L = 290; W = 560; rowh = 22; top = 50
      H = top + k * rowh + 50
      printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", L + W + 90, H
      printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      printf "<text x=\"10\" y=\"22\" font-size=\"15\">Sum of %s floats: GB/s per lesson on %s (log scale)</text>\n", n, gpu
      for (d = lo; d <= hi; d *= 10) {
        x = L + W * (log(d) - log(lo)) / (log(hi) - log(lo))
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, top - 5, x, top + k * rowh
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%g</text>\n", x, top + k * rowh + 16, d
      }
      for (i = 1; i <= k; i++) {
        y = top + (i - 1) * rowh
        w = v[i] > lo ? W * (log(v[i]) - log(lo)) / (log(hi) - log(lo)) : 1
        printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", L - 6, y + 15, lab[i]
        printf "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#4477aa\"/>\n", L, y + 3, w, rowh - 6
        printf "<text x=\"%.1f\" y=\"%d\" fill=\"#222\">%.4g</text>\n", L + w + 4, y + 15, v[i]
      }
      if (peak > 0) {
        x = L + W * (log(peak) - log(lo)) / (log(hi) - log(lo))
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#cc3311\" stroke-dasharray=\"4,3\"/>\n", x, top - 8, x, top + k * rowh
        printf "<text x=\"%.1f\" y=\"%d\" fill=\"#cc3311\" text-anchor=\"middle\">nominal peak ~%.1f TB/s</text>\n", x, top - 12, peak / 1000
      }
      printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">GB/s (n x 4 bytes / median time)</text>\n", L + W / 2, H - 10
      print "</svg>"
    }' "$csv" >"$svg" && echo "wrote $svg"
done
for csv in results/bench-*.csv; do
    ours "$csv" || continue
    found=1
    svg=${csv%.csv}.svg
    awk -F, '
    NR == 1 || NF != 15 || !($4 + 0 > 0) { next }
    $6 > 0 { key = substr($1, 1, 2) " " $2
             if (!(key in idx)) { idx[key] = ++nk; name[nk] = key }
             j = idx[key]; c[j]++; xs[j, c[j]] = log($4) / log(2); ys[j, c[j]] = $10
             gpu = $3; if ($11 > pmax) { pmax = $11; peak = $10 * 100 / $11 }
             if ($10 > ymax) ymax = $10
             e = log($4) / log(2); if (xmin == "" || e < xmin) xmin = e; if (e > xmax) xmax = e }
    END {
      split("#4477aa #ee6677 #228833 #ccbb44 #66ccee #aa3377 #bbbbbb #000000 #ee7733 #009988 #33bbee #cc3311", col, " ")
      if (peak > ymax) ymax = peak; ymax *= 1.05
      if (xmax == xmin) xmax = xmin + 1
      L = 70; T = 40; W = 640; H = 400
      printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", L + W + 200, T + H + 60
      printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      printf "<text x=\"10\" y=\"22\" font-size=\"15\">Sum of n floats on %s: GB/s against n (L2 flushed)</text>\n", gpu
      for (e = int(xmin); e <= xmax; e += 2) {
        x = L + W * (e - xmin) / (xmax - xmin)
        printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>\n", x, T, x, T + H
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">2^%d</text>\n", x, T + H + 16, e
      }
      step = ymax > 2000 ? 500 : (ymax > 500 ? 100 : 50)
      for (g = 0; g <= ymax; g += step) {
        y = T + H - H * g / ymax
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>\n", L, y, L + W, y
        printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%d</text>\n", L - 6, y + 4, g
      }
      if (peak > 0) {
        y = T + H - H * peak / ymax
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#cc3311\" stroke-dasharray=\"4,3\"/>\n", L, y, L + W, y
        printf "<text x=\"%d\" y=\"%.1f\" fill=\"#cc3311\">nominal peak ~%.1f TB/s</text>\n", L + 6, y - 4, peak / 1000
      }
      for (j = 1; j <= nk; j++) {
        pts = ""
        for (i = 1; i <= c[j]; i++)
          pts = pts sprintf("%.1f,%.1f ", L + W * (xs[j, i] - xmin) / (xmax - xmin), T + H - H * ys[j, i] / ymax)
        printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", col[(j - 1) % 12 + 1], pts
        printf "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>\n", L + W + 15, T + 10 + 18 * (j - 1), col[(j - 1) % 12 + 1]
        printf "<text x=\"%d\" y=\"%d\">%s</text>\n", L + W + 34, T + 15 + 18 * (j - 1), name[j]
      }
      printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">n (floats)</text>\n", L + W / 2, T + H + 40
      printf "<text x=\"16\" y=\"%d\" fill=\"#555\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">GB/s</text>\n", T + H / 2, T + H / 2
      print "</svg>"
    }' "$csv" >"$svg" && echo "wrote $svg"
done
[ $found = 1 ] || echo "no results/*.csv yet: make run (or make bench) first"
