#!/bin/sh
# make tables: regenerate every table of measurements in README.md, in
# lessons/*/notes.md and in lab/*.md from the files in results/. A generated table is the text
# between two marker lines, and is never edited by hand:
#
#   <!-- table: KIND ARGS -->
#   <!-- end table -->
#
# KIND ARGS (every table shows each GPU found as results/run-<gpu>.csv, side by side):
#   staircase                      README's lesson table (lessons/manifest.txt says
#                                  which variant each lesson shows): GB/s and the
#                                  speedup over the lesson before, per element
#   gpus                           each GPU, its nominal peak and L2 size, the figures
#                                  the charts use (sh scripts/plot.sh --gpus)
#   lesson NN [prev=MM]            every variant of lesson NN in `make run`, after the
#                                  variant lesson MM (default NN-1) shows; x prev is
#                                  per element, so lessons run at other n compare too;
#                                  noratio=RE: no x prev for variants matching RE
#   counters NN[,NN] M[,M] [kernel=RE] [launch=K] [file=F] [elements=N]
#                                  Nsight Compute counters (results/counters-<gpu>.csv, or results/F-<gpu>.csv;
#                                  NN may be a lab program, lab_NN_topic); launch=K: only the K-th launch of each kernel
#                                  NN:RE: only that lesson's kernels matching RE (in place of kernel=); elements=N: after
#                                  smsp__inst_executed.sum, its thread instructions per element (× 32 / N)
#   bench V[,V] sizes=2^a,2^b [flush=clean] [ratio=A/B[,C/D]]
#                                  the size sweep (results/bench-<gpu>[-clean].csv); V is
#                                  a variant name or lesson:variant; A/B = time of A / time of B
#                                  [gpu=H100] one GPU only; [names=a;b] [rnames=c;d] headers for
#                                  the variants and ratios ("_" is a space), ratios then read 1.23×
#   rows FILE lesson=NN [variants=a,b] [n=N] [cols=c,d] [flush=dirty|clean] (flush: files with a flush column)
#                                  rows of results/FILE-<gpu>.csv (the harness's CSV); flush=clean,dirty: the
#                                  columns once per flush, side by side
#   lead A B sizes=2^a,2^b from=2^k [by=1.15] [flush=clean,dirty]
#                                  the model T(n) = T0 + bytes / B on the size sweeps: the bandwidth A would
#                                  need, over its fixed cost T0 (its own time at from), to be by times as
#                                  fast as B at each n, and its % of nominal peak; a row per GPU and flush
#   pairs FILE:A,B[;FILE:A,B] [gpu=H200] [sizes=2^a,2^b]
#                                  per n, A's time, B's time and B / A, each pair from one file
#                                  (results/FILE-<gpu>.csv); every n where either has a row, unless sizes=
#   loop FILE kernels=k1,k2 per=N [ops=OP,OP] [inside=RE]
#                                  a SASS listing (results/FILE), each kernel's trip loop: the first backward
#                                  branch whose body holds an instruction matching inside (default ^LDG);
#                                  its instructions, the most one forward branch in it skips, the count of
#                                  each OP (OP.* too), and instructions per element (per: elements a trip)
#   ratios FILE gpu=LABEL base=V variants=a,b sizes=2^a,2^b [where=col:val,col:val] [peak=2^k] [names=a;b] [by=col]
#                                  a lab sweep (results/FILE-<gpu>.csv, one GPU): each variant's
#                                  median time over base's from the same rows, per n, using only
#                                  rows whose columns hold the where values; peak=: a last column,
#                                  the variant's % of nominal peak at that n; by=: the column that
#                                  names the variants (default: variant)
#   scaling [mode=nccl|procs]      lesson 18 on 1, 2, 4, 8 GPUs (results/procs-<k>x-<gpu>.csv):
#                                  per n, the time on one GPU and on k, and one GPU's time over
#                                  k's (above 1: k GPUs are faster); one process for all GPUs
#                                  (nccl, default) or one per GPU (procs)
#   crossover                      per GPU count and mode, the smallest measured n from which k
#                                  GPUs beat one at every larger measured n
#   excerpt FILE /START/ /END/ [wrap=N]   lines of results/FILE, START through the next END
#                                  (wrap=N: lines longer than N broken at a space, the rest indented)
#
# A figure is shown only while the program that made it has the code it had
# then (results/code.txt, written by scripts/stamp.sh, against
# scripts/code_hash.sh); a row of older code shows "–" until it is measured again.
#
# Every table is also written to results/derived.txt, so each figure a table
# shows, the computed ones (speedups, ratios, ms) included, is found under results/.
#
# usage: sh scripts/tables.sh           rewrite the tables in place
#        sh scripts/tables.sh --check   change nothing; print what is stale, exit 1 if anything is
set -u
LC_ALL=C; export LC_ALL # the same sort order, number format and checksums in every locale
cd "$(dirname "$0")/.." || exit 1
R=${RESULTS_DIR:-results}
mode=write
[ "${1:-}" = "--check" ] && mode=check

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tables.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# The GPUs: every results/run-<gpu>.csv, labelled by its GPU column ("NVIDIA H200" -> "H200").
gpus="" labels=""
for f in "$R"/run-*.csv; do
    [ -f "$f" ] || continue
    slug=${f#"$R"/run-}; slug=${slug%.csv}
    label=$(awk -F, 'NR == 2 { sub(/^NVIDIA /, "", $3); sub(/ .*/, "", $3); print $3; exit }' "$f")
    gpus="$gpus $slug" labels="$labels ${label:-$slug}"
done

# Each GPU's nominal peak and L2 size, as the charts have them (one computation: scripts/plot.sh).
sh scripts/plot.sh --gpus "$R" >"$tmp/gpuinfo" 2>/dev/null || : >"$tmp/gpuinfo"

cat >"$tmp/prog.awk" <<'AWK'
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function pow2(s,   p) { if (s ~ /^2\^[0-9]+$/) { p = 2 ^ substr(s, 3); return sprintf("%.0f", p) } return s }
function fmt_n(n,   k, p) { p = 1; for (k = 0; k <= 62; k++) { if (p == n) return "2^" k; p *= 2 } return n }
function fus(us) { if (us == "") return "–"; us += 0
    if (us >= 10000) return sprintf("%.1f ms", us / 1000)
    if (us >= 100) return sprintf("%.1f µs", us); return sprintf("%.2f µs", us) }
function fgb(g) { if (g == "") return "–"; g += 0; return (g >= 100) ? sprintf("%.0f", g) : sprintf("%.1f", g) }
function fpct(p) { return (p == "") ? "–" : sprintf("%.1f", p + 0) }
function fx(r) { if (r == "") return ""; return (r >= 100) ? sprintf("%.0f×", r) : (r >= 10) ? sprintf("%.1f×", r) : sprintf("%.2f×", r) }
function fratio(r) { if (r == "") return "–"; return (r >= 0.9 && r <= 1.1) ? sprintf("%.3f", r) : sprintf("%.2f", r) }
function fint(v,   s, neg, out) { s = v ""; if (s !~ /^-?[0-9]+$/) return s
    neg = (substr(s, 1, 1) == "-"); if (neg) s = substr(s, 2); out = ""
    while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
    return (neg ? "-" : "") s out }
# The program a row's lesson column names: "12_single_pass" -> 12, "ex02_atomic" -> ex02, "lab_04_padding" stays;
# an "@..." suffix (counters taken at another n: "12@2^30") is not part of it.
function rkey(s) { sub(/@.*/, "", s); if (s ~ /^lab_[0-9][0-9]_/) return s; if (s ~ /^ex[0-9][0-9](_|$)/) return substr(s, 1, 4); if (s ~ /^[0-9][0-9](_|-|$)/) return substr(s, 1, 2); return s }
function base(f) { sub(/.*\//, "", f); return f }
# Did results file f measure the code program k has now? (results/code.txt against scripts/code_hash.sh)
function fresh(f, s,   k) { k = rkey(s); f = base(f); return ((f, k) in ST) && (k in CUR) && ST[f, k] == CUR[k] }
# A file none of whose stamped programs changed (an excerpt is shown only then).
function file_fresh(f,   k, any) { f = base(f); any = 0
    for (k in CUR) if ((f, k) in ST) { any = 1; if (ST[f, k] != CUR[k]) { STALEKEY = k; return 0 } }
    STALEKEY = ""; return any }
# Loads a CSV with a header once; C[f] = rows, V[f, row, column name] = value.
# Rows of a program whose code changed since the file was made are left out.
function load(f,   line, nf, i, hd, r) {
    if (f in C) return C[f] > 0
    C[f] = 0
    if ((getline line < f) <= 0) return 0
    nf = split(line, hd, ",")
    lc = 0; for (i = 1; i <= nf; i++) { HAS[f, hd[i]] = 1; if (hd[i] == "lesson") lc = i }
    while ((getline line < f) > 0) {
        if (line == "") continue
        split(line, cell, ",")
        if (lc && !fresh(f, cell[lc])) { STALE[f] = 1; continue } # measured older code: not shown
        r = ++C[f]
        for (i = 1; i <= nf; i++) V[f, r, hd[i]] = cell[i]
    }
    close(f)
    return C[f] > 0
}
function row(cells,   s, j) { s = "|"; for (j = 1; j <= cells; j++) s = s " " T[j] " |"; return s }
function emit(s) { out[++nout] = s }
function header(ncol, right,   j, s) {
    emit(row(ncol)); s = "|"
    for (j = 1; j <= ncol; j++) s = s ((j <= right) ? "---|" : "---:|")
    emit(s)
}
function none(what) { emit("(no " what " in results/ yet)") }
function shown_variant(l) { return (l in SHOWN) ? SHOWN[l] : "" }
function find(f, lesson, variant, n,   r) {  # row index of lesson/variant[/n] in f, or 0
    for (r = 1; r <= C[f]; r++)
        if (substr(V[f, r, "lesson"], 1, 2) == lesson && V[f, r, "variant"] == variant &&
            (n == "" || V[f, r, "n"] == n) && V[f, r, "reps"] > 0) return r
    return 0
}

# ---- kinds -------------------------------------------------------------------
function t_staircase(   g, f, l, r, p, ncol, any, pr, med, per, prevper) {
    ncol = 0; T[++ncol] = "#"; T[++ncol] = "lesson"; T[++ncol] = "the one change"
    for (g = 1; g <= NG; g++) { T[++ncol] = LABEL[g] " GB/s"; T[++ncol] = LABEL[g] " × prev, per element" }
    header(ncol, 3); any = 0
    for (p = 1; p <= NL; p++) {
        l = LORDER[p]; ncol = 0
        T[++ncol] = l; T[++ncol] = "[" substr(LNAME[l], 4) "](lessons/" LNAME[l] "/notes.md)"; T[++ncol] = DESC[l]
        for (g = 1; g <= NG; g++) {
            f = R "/run-" GPU[g] ".csv"; load(f); r = (C[f] > 0) ? find(f, l, SHOWN[l], "") : 0
            if (!r) { T[++ncol] = "–"; T[++ncol] = ""; continue }
            any = 1; med = V[f, r, "median_us"]; per = med / V[f, r, "n"]
            T[++ncol] = fgb(V[f, r, "gbps"])
            prevper = ""
            if (STEP[l] == "yes" && p > 1) { pr = find(f, LORDER[p - 1], SHOWN[LORDER[p - 1]], "")
                if (pr) prevper = V[f, pr, "median_us"] / V[f, pr, "n"] }
            T[++ncol] = (prevper != "") ? fx(prevper / per) : ""
        }
        emit(row(ncol))
    }
    if (!any) { nout = 0; none("make run results") }
}
function t_lesson(l, prev, noratio,   g, f, r, k, nv, vars, seen, ncol, pr, prevper, v, any) {
    if (prev == "" && l + 0 > 1) prev = sprintf("%02d", l - 1)
    nv = 0
    for (g = 1; g <= NG; g++) { f = R "/run-" GPU[g] ".csv"; if (!load(f)) continue
        for (r = 1; r <= C[f]; r++) if (substr(V[f, r, "lesson"], 1, 2) == l && V[f, r, "reps"] > 0) {
            v = V[f, r, "variant"]; if (!(v in seen)) { seen[v] = 1; vars[++nv] = v } } }
    if (!nv) { none("make run results for lesson " l); return }
    ncol = 0; T[++ncol] = "lesson · variant"; T[++ncol] = "n"
    for (g = 1; g <= NG; g++) { T[++ncol] = LABEL[g] " median"; T[++ncol] = LABEL[g] " GB/s"; T[++ncol] = LABEL[g] " % peak"
        T[++ncol] = LABEL[g] " × " (prev != "" ? prev : "prev") }
    header(ncol, 1)
    for (k = (prev != "" ? 0 : 1); k <= nv; k++) {
        ncol = 0; any = 0
        if (k == 0) { T[++ncol] = prev " " shown_variant(prev) (prev + 0 == l - 1 ? " (previous lesson)" : "") }
        else T[++ncol] = l " " vars[k]
        T[++ncol] = ""
        for (g = 1; g <= NG; g++) {
            f = R "/run-" GPU[g] ".csv"
            r = (k == 0) ? find(f, prev, shown_variant(prev), "") : find(f, l, vars[k], "")
            if (!r) { T[++ncol] = "–"; T[++ncol] = "–"; T[++ncol] = "–"; T[++ncol] = ""; continue }
            any = 1; if (T[2] == "") T[2] = fmt_n(V[f, r, "n"])
            T[++ncol] = fus(V[f, r, "median_us"]); T[++ncol] = fgb(V[f, r, "gbps"]); T[++ncol] = fpct(V[f, r, "pct_peak"])
            prevper = ""
            if (k > 0 && prev != "" && !(noratio != "" && vars[k] ~ noratio)) { pr = find(f, prev, shown_variant(prev), "")
                if (pr) prevper = V[f, pr, "median_us"] / V[f, pr, "n"] }
            T[++ncol] = (prevper != "") ? fx(prevper / (V[f, r, "median_us"] / V[f, r, "n"])) : ""
        }
        if (any) emit(row(ncol))
    }
}
function t_counters(lessons, metrics, kre, launch, file, elems,   nl, ls, lre, nm, ms, g, f, r, key, keys, nk, seen, i, j, k, ncol, lab, v, kn, re) {
    nl = split(lessons, ls, ","); nm = split(metrics, ms, ","); nk = 0
    # NN:RE: only that lesson's kernels matching RE (in place of kernel=)
    for (i = 1; i <= nl; i++) if (index(ls[i], ":")) { lre[i] = substr(ls[i], index(ls[i], ":") + 1); ls[i] = substr(ls[i], 1, index(ls[i], ":") - 1) }
    for (g = 1; g <= NG; g++) { f = R "/" (file == "" ? "counters" : file) "-" GPU[g] ".csv"; if (!load(f)) continue
        for (i = 1; i <= nl; i++) for (r = 1; r <= C[f]; r++) {
            if (V[f, r, "lesson"] != ls[i]) continue
            re = (i in lre) ? lre[i] : kre
            kn = V[f, r, "kernel"]; if (re != "" && kn !~ re) continue
            if (launch != "" && V[f, r, "launch"] != launch) continue
            key = ls[i] SUBSEP kn SUBSEP V[f, r, "launch"]
            if (!(key in seen)) { seen[key] = ++nk; keys[nk] = key }
            CV[g, key, V[f, r, "metric"]] = V[f, r, "value"]
        } }
    if (!nk) { none("counters for lesson " lessons); return }
    # keys in lesson order, then first appearance
    ncol = 0; T[++ncol] = "lesson · kernel"; T[++ncol] = "counter"
    for (g = 1; g <= NG; g++) T[++ncol] = LABEL[g]
    header(ncol, 2)
    for (i = 1; i <= nl; i++) for (k = 1; k <= nk; k++) {
        split(keys[k], p, SUBSEP); if (p[1] != ls[i]) continue
        lab = p[1] " " p[2] ((p[3] != "1" || ((p[1] SUBSEP p[2] SUBSEP "2") in seen)) ? " #" p[3] : "")
        for (j = 1; j <= nm; j++) {
            ncol = 0; T[++ncol] = (j == 1) ? lab : ""; T[++ncol] = "`" ms[j] "`"
            for (g = 1; g <= NG; g++) { v = ((g, keys[k], ms[j]) in CV) ? CV[g, keys[k], ms[j]] : "–"; T[++ncol] = fint(v) }
            emit(row(ncol))
            # elements=N: warp instructions x 32 / N, the thread instructions per element
            if (elems == "" || ms[j] != "smsp__inst_executed.sum") continue
            ncol = 0; T[++ncol] = ""; T[++ncol] = "× 32 / " elems ": thread instructions per element"
            for (g = 1; g <= NG; g++) { v = ((g, keys[k], ms[j]) in CV) ? CV[g, keys[k], ms[j]] : ""; T[++ncol] = (v == "") ? "–" : sprintf("%.1f", v * 32 / pow2(elems)) }
            emit(row(ncol))
        }
    }
}
function bench_row(f, spec, n,   r, l, v) {  # row index of variant spec at n in f, or 0
    if (index(spec, ":")) { l = substr(spec, 1, index(spec, ":") - 1); v = substr(spec, index(spec, ":") + 1) } else { l = ""; v = spec }
    for (r = 1; r <= C[f]; r++)
        if (V[f, r, "variant"] == v && V[f, r, "n"] == n && (l == "" || substr(V[f, r, "lesson"], 1, 2) == l) && V[f, r, "reps"] > 0)
            return r
    return 0
}
function bench_find(f, spec, n,   r) { r = bench_row(f, spec, n); return r ? V[f, r, "median_us"] : "" }
# a header given in a table spec: "_" stands for a space
function spaced(s) { gsub(/_/, " ", s); return s }
function t_bench(vars, sizes, flush, ratios, gsel, names, rnames,   nv, vs, ns, sz, nr, rs, g, f, i, j, ncol, a, b, t, ta, tb, any, have, nn, nm, nrn, rn, pre, rows) {
    nv = split(vars, vs, ","); ns = split(sizes, sz, ","); nr = (ratios == "") ? 0 : split(ratios, rs, ",")
    nn = (names == "") ? 0 : split(names, nm, ";"); nrn = (rnames == "") ? 0 : split(rnames, rn, ";")
    have = 0
    for (g = 1; g <= NG; g++) { if (gsel != "" && LABEL[g] != gsel) continue
        f = R "/bench-" GPU[g] (flush == "clean" ? "-clean" : "") ".csv"; if (load(f)) have = 1 }
    if (!have) { none("size sweep (" (flush == "clean" ? "clean" : "dirty") " L2)" (gsel != "" ? " on the " gsel : "")); return }
    ncol = 0; T[++ncol] = (gsel != "") ? "n (" gsel ")" : "n"
    for (g = 1; g <= NG; g++) { if (gsel != "" && LABEL[g] != gsel) continue
        pre = (gsel != "") ? "" : LABEL[g] " "
        for (i = 1; i <= nv; i++) T[++ncol] = pre ((i <= nn) ? spaced(nm[i]) : "`" vs[i] "`")
        for (j = 1; j <= nr; j++) T[++ncol] = pre ((j <= nrn) ? spaced(rn[j]) : rs[j]) }
    header(ncol, 1)
    for (i = 1; i <= ns; i++) {
        ncol = 0; T[++ncol] = sz[i]; any = 0
        for (g = 1; g <= NG; g++) {
            if (gsel != "" && LABEL[g] != gsel) continue
            f = R "/bench-" GPU[g] (flush == "clean" ? "-clean" : "") ".csv"
            for (j = 1; j <= nv; j++) { t[vs[j]] = bench_find(f, vs[j], pow2(sz[i])); T[++ncol] = fus(t[vs[j]]); if (t[vs[j]] != "") any = 1 }
            for (j = 1; j <= nr; j++) { split(rs[j], ab, "/"); ta = bench_find(f, ab[1], pow2(sz[i])); tb = bench_find(f, ab[2], pow2(sz[i]))
                T[++ncol] = (ta != "" && tb != "") ? fratio(ta / tb) (nn > 0 ? "×" : "") : "–" }
        }
        if (any) { emit(row(ncol)); rows++ }
    }
    # with the new options, a table with no row says so (a header alone tells nothing)
    if (!rows && (gsel != "" || nn > 0)) { nout = 0; none("size sweep of the current code (" (flush == "clean" ? "clean" : "dirty") " L2)" (gsel != "" ? " on the " gsel : "")) }
}
# the model T(n) = T0 + bytes / B: the bandwidth B that variant a would need, over its fixed
# cost T0 (its own time at n = from), to be by times as fast as variant b; one row per GPU and flush
function t_lead(a, b, sizes, from, by, flush,   ns, sz, nfl, fl, g, fi, f, ncol, t0, tb, r, d, need, any, i) {
    ns = split(sizes, sz, ","); if (by == "") by = 1.15; if (flush == "") flush = "dirty"; nfl = split(flush, fl, ",")
    ncol = 0; T[++ncol] = "GPU, flush"; T[++ncol] = "T₀ (`" a "` at " from ")"
    for (i = 1; i <= ns; i++) T[++ncol] = sz[i]
    header(ncol, 1); any = 0
    for (g = 1; g <= NG; g++) for (fi = 1; fi <= nfl; fi++) {
        f = R "/bench-" GPU[g] (fl[fi] == "clean" ? "-clean" : "") ".csv"; if (!load(f)) continue
        ncol = 0; T[++ncol] = LABEL[g] ", " fl[fi]; t0 = bench_find(f, a, pow2(from)); T[++ncol] = fus(t0)
        for (i = 1; i <= ns; i++) {
            r = bench_row(f, b, pow2(sz[i])); tb = r ? V[f, r, "median_us"] : ""
            if (t0 == "" || tb == "") { T[++ncol] = "–"; continue }
            any = 1; d = tb / by - t0
            if (d <= 0) { T[++ncol] = "out of reach"; continue }
            need = V[f, r, "bytes"] / d / 1000   # bytes per µs / 1000 = GB/s
            T[++ncol] = sprintf("%.0f GB/s", need) ((GPU[g] in GPEAK) && GPEAK[GPU[g]] > 0 ? sprintf(" (%.0f%%)", 100 * need / GPEAK[GPU[g]]) : "")
        }
        emit(row(ncol))
    }
    if (!any) { nout = 0; none("size sweep of the current code for " a " and " b) }
}
# variants side by side from one harness CSV each, one GPU: per n, A's time, B's time and B / A
function t_pairs(pairs, gsel, sizes,   np, pp, i, j, g, f, fa, va, vb, r, m, nl, ta, tb, ncol, any, seen, k, t) {
    np = split(pairs, pp, ";")
    for (i = 1; i <= np; i++) { fa[i] = substr(pp[i], 1, index(pp[i], ":") - 1); t = substr(pp[i], index(pp[i], ":") + 1)
        va[i] = substr(t, 1, index(t, ",") - 1); vb[i] = substr(t, index(t, ",") + 1) }
    m = 0
    if (sizes != "") { m = split(sizes, nl, ","); for (k = 1; k <= m; k++) nl[k] = pow2(nl[k]) }
    else for (g = 1; g <= NG; g++) { if (gsel != "" && LABEL[g] != gsel) continue
        for (i = 1; i <= np; i++) { f = R "/" fa[i] "-" GPU[g] ".csv"; if (!load(f)) continue
            for (r = 1; r <= C[f]; r++) if ((V[f, r, "variant"] == va[i] || V[f, r, "variant"] == vb[i]) && !(V[f, r, "n"] in seen)) {
                seen[V[f, r, "n"]] = 1; nl[++m] = V[f, r, "n"] + 0 } } }
    for (i = 2; i <= m; i++) { t = nl[i]; for (j = i - 1; j >= 1 && nl[j] + 0 > t + 0; j--) nl[j + 1] = nl[j]; nl[j + 1] = t }
    if (!m) { none(fa[1] " rows of the current code" (gsel != "" ? " on the " gsel : "")); return }
    ncol = 0; T[++ncol] = (gsel != "") ? "n (" gsel ")" : "n"
    for (g = 1; g <= NG; g++) { if (gsel != "" && LABEL[g] != gsel) continue
        for (i = 1; i <= np; i++) { t = (gsel != "") ? "" : LABEL[g] " "
            T[++ncol] = t "`" va[i] "`"; T[++ncol] = t "`" vb[i] "`"; T[++ncol] = t "`" vb[i] "` / `" va[i] "`" } }
    header(ncol, 1)
    for (k = 1; k <= m; k++) {
        ncol = 0; T[++ncol] = fmt_n(nl[k]); any = 0
        for (g = 1; g <= NG; g++) { if (gsel != "" && LABEL[g] != gsel) continue
            for (i = 1; i <= np; i++) { f = R "/" fa[i] "-" GPU[g] ".csv"; load(f)
                ta = bench_find(f, va[i], nl[k]); tb = bench_find(f, vb[i], nl[k])
                T[++ncol] = fus(ta); T[++ncol] = fus(tb); T[++ncol] = (ta != "" && tb != "") ? fratio(tb / ta) : "–"
                if (ta != "" || tb != "") any = 1 } }
        if (any) emit(row(ncol))
    }
}
function hexval(s,   i, v) { sub(/^0x/, "", s); v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1; return v }
# a SASS listing's trip loop per kernel: the first backward branch whose body (its target up to
# itself) holds an instruction matching inside; its instructions, the most that one forward branch
# inside it skips, the count of each opcode in ops (OP or OP.*), and instructions per element
function t_loop(file, kernels, per, ops, inside,   f, nk, ks, no, os, ncol, line, fn, on, n, A, I, i, k, j, a, t, c, skip, hit, op, cnt, w, ok, nm, p, lo, hi) {
    nk = split(kernels, ks, ","); no = (ops == "") ? 0 : split(ops, os, ","); if (inside == "") inside = "^LDG"; per = pow2(per)
    f = R "/" file; ok = file_fresh(f)
    ncol = 0; T[++ncol] = "kernel"; T[++ncol] = "instructions per trip"; T[++ncol] = "skipped by a branch"
    for (j = 1; j <= no; j++) T[++ncol] = "`" os[j] "`"
    T[++ncol] = "per element (" per " a trip)"
    header(ncol, 1)
    for (k = 1; k <= nk; k++) {
        # the kernel's instructions: A[i] address, I[i] opcode and operands, predicate dropped
        n = 0; on = 0; nm = ks[k]
        while (ok && (getline line < f) > 0) {
            if (line ~ /Function : /) { if (on) break; fn = line; sub(/.*Function : */, "", fn); sub(/[ \t]+$/, "", fn)
                p = index(fn, length(nm) nm); on = (fn == nm || (p > 1 && substr(fn, p - 1, 1) !~ /[0-9]/)); continue }
            if (!on || !match(line, /\/\*[0-9a-f]+\*\//)) continue
            A[++n] = hexval(substr(line, RSTART + 2, RLENGTH - 4)); t = substr(line, RSTART + RLENGTH); sub(/^[ \t]+/, "", t); sub(/^@!?U?P[0-9T] +/, "", t); sub(/ *;.*$/, "", t); I[n] = t
        }
        close(f)
        lo = 0
        for (i = 1; i <= n && !lo; i++) {
            split(I[i], w, " "); if (w[1] != "BRA" || w[2] !~ /^0x/ || (t = hexval(w[2])) >= A[i]) continue
            for (j = 1; j <= i; j++) if (A[j] >= t && I[j] ~ inside) { lo = 1; hi = i; break }
            if (lo) while (A[lo] < t) lo++
        }
        ncol = 0; T[++ncol] = nm
        if (!lo) { T[++ncol] = "–"; T[++ncol] = "–"; for (j = 1; j <= no; j++) T[++ncol] = "–"; T[++ncol] = "–"; emit(row(ncol)); continue }
        c = hi - lo + 1; skip = 0; delete cnt
        for (i = lo; i <= hi; i++) {
            split(I[i], w, " "); op = w[1]
            for (j = 1; j <= no; j++) if (op == os[j] || index(op, os[j] ".") == 1) cnt[j]++
            if (op == "BRA" && i < hi && w[2] ~ /^0x/ && (t = hexval(w[2])) > A[i] && t <= A[hi]) {
                hit = 0; for (j = i + 1; j <= hi && A[j] < t; j++) hit++; if (hit > skip) skip = hit }
        }
        T[++ncol] = c; T[++ncol] = skip
        for (j = 1; j <= no; j++) T[++ncol] = cnt[j] + 0
        T[++ncol] = (skip ? sprintf("%.1f to ", (c - skip) / per) : "") sprintf("%.1f", c / per)
        emit(row(ncol))
    }
}
# a lab sweep, one GPU: variant | time / base's time per n | [% peak at peak=]
function t_ratios(file, gsel, bv, vars, sizes, where, peak, names, by,   g, f, nv, vs, ns, sz, nw, ws, wc, wv, r, i, j, ok, key, MT, MP, nn, nm, ncol, a, b, any) {
    nv = split(vars, vs, ","); ns = split(sizes, sz, ","); nw = (where == "") ? 0 : split(where, ws, ",")
    nn = (names == "") ? 0 : split(names, nm, ";")
    for (g = 1; g <= NG; g++) if (LABEL[g] == gsel) break
    if (g > NG || !load(f = R "/" file "-" GPU[g] ".csv")) { none(file " sweep on the " gsel " of the current code"); return }
    if (by != "" && !((f, by) in HAS)) { print "tables.sh: " f " has no column " by > "/dev/stderr"; bad = 1; return }
    for (r = 1; r <= C[f]; r++) {
        ok = 1; for (i = 1; i <= nw; i++) { split(ws[i], wc, ":"); if (V[f, r, wc[1]] != wc[2]) ok = 0 }
        if (!ok || V[f, r, "reps"] <= 0) continue
        key = V[f, r, (by == "") ? "variant" : by] SUBSEP V[f, r, "n"]; MT[key] = V[f, r, "median_us"]; MP[key] = V[f, r, "pct_peak"]
    }
    ncol = 0; T[++ncol] = "variant (" gsel ")"
    for (j = 1; j <= ns; j++) T[++ncol] = sz[j]
    if (peak != "") T[++ncol] = "% peak at " peak
    header(ncol, 1)
    for (i = 1; i <= nv; i++) {
        ncol = 0; T[++ncol] = (i <= nn) ? spaced(nm[i]) : vs[i]; any = 0
        for (j = 1; j <= ns; j++) {
            a = MT[vs[i] SUBSEP pow2(sz[j])]; b = MT[bv SUBSEP pow2(sz[j])]
            T[++ncol] = (a != "" && b != "") ? sprintf("%.3f", a / b) : "–"; if (a != "") any = 1
        }
        if (peak != "") T[++ncol] = fpct(MP[vs[i] SUBSEP pow2(peak)])
        if (any) emit(row(ncol))
    }
}
# each GPU of the tables, its nominal peak and its L2 size (scripts/plot.sh --gpus)
function t_gpus(   g, ncol, any) {
    ncol = 0; T[++ncol] = "GPU"; T[++ncol] = "nominal peak"; T[++ncol] = "L2 cache"; header(ncol, 1)
    for (g = 1; g <= NG; g++) { if (!(GPU[g] in GPEAK)) continue
        ncol = 0; T[++ncol] = GNAME[GPU[g]]; T[++ncol] = GPEAK[GPU[g]] " GB/s"; T[++ncol] = (GL2[GPU[g]] == "-") ? "–" : GL2[GPU[g]] " MiB"
        emit(row(ncol)); any = 1 }
    if (!any) { nout = 0; none("make run results") }
}
function colfmt(c, v) {
    if (v == "") return "–"
    if (c == "median_us" || c == "min_us" || c == "max_us") return fus(v)
    if (c == "gbps") return fgb(v)
    if (c == "pct_peak") return fpct(v)
    if (c == "n") return fmt_n(v)
    return v
}
function colname(c) { return (c == "median_us") ? "median" : (c == "gbps") ? "GB/s" : (c == "pct_peak") ? "% peak" : (c == "abs_err") ? "error" : c }
function lnum(s) { sub(/^ex/, "", s); return substr(s, 1, 2) } # "ex02_atomic" (a solution's rows) -> "02"
function t_rows(file, lesson, variants, n, cols, flush,   nc, cs, g, f, r, key, keys, nk, seen, ns, nseen, k, j, ncol, p, v, showt, ok, nfl, fl, fi) {
    if (cols == "") cols = "median_us,gbps,pct_peak"
    nc = split(cols, cs, ","); nk = 0; ns = 0; n = pow2(n)
    nfl = (flush == "") ? 1 : split(flush, fl, ",")   # flush=a,b: the columns once per flush, side by side
    if (variants != "") { nvl = split(variants, vl, ","); for (k = 1; k <= nvl; k++) want[vl[k]] = k }
    for (g = 1; g <= NG; g++) { f = R "/" file "-" GPU[g] ".csv"; if (!load(f)) continue
        for (r = 1; r <= C[f]; r++) {
            if (lesson != "" && lnum(V[f, r, "lesson"]) != lesson) continue
            v = V[f, r, "variant"]; if (variants != "" && !(v in want)) continue
            if (n != "" && V[f, r, "n"] != n) continue
            fi = 1; if (flush != "") { for (fi = 1; fi <= nfl; fi++) if (V[f, r, "flush"] == fl[fi]) break; if (fi > nfl) continue }
            key = v SUBSEP V[f, r, "n"]
            if (!(key in seen)) { seen[key] = ++nk; keys[nk] = key }
            if (!(V[f, r, "n"] in nseen)) { nseen[V[f, r, "n"]] = 1; ns++ }
            RW[g, fi, key] = r
        } }
    if (!nk) { none(file " rows for lesson " lesson); return }
    if (variants != "") {   # the order given in variants=; one variant's rows stay in file order (a stable sort)
        for (a = 2; a <= nk; a++) {
            t0 = keys[a]; split(t0, pa, SUBSEP)
            for (b = a - 1; b >= 1; b--) { split(keys[b], pb, SUBSEP); if (want[pb[1]] <= want[pa[1]]) break; keys[b + 1] = keys[b] }
            keys[b + 1] = t0 } }
    ncol = 0; T[++ncol] = "variant"; if (ns > 1) T[++ncol] = "n"
    for (g = 1; g <= NG; g++) for (fi = 1; fi <= nfl; fi++) for (j = 1; j <= nc; j++) T[++ncol] = LABEL[g] (nfl > 1 ? " " fl[fi] : "") " " colname(cs[j])
    header(ncol, 1)
    for (k = 1; k <= nk; k++) {
        split(keys[k], p, SUBSEP); ncol = 0; T[++ncol] = p[1]; if (ns > 1) T[++ncol] = fmt_n(p[2])
        for (g = 1; g <= NG; g++) { f = R "/" file "-" GPU[g] ".csv"
            for (fi = 1; fi <= nfl; fi++) for (j = 1; j <= nc; j++) T[++ncol] = ((g, fi, keys[k]) in RW) ? colfmt(cs[j], V[f, RW[g, fi, keys[k]], cs[j]]) : "–" }
        emit(row(ncol))
    }
    delete RW; delete want
}
# lesson 18's time of variant v at n in results/procs-<k>x-<gpu>.csv ("" when missing)
function procs_us(g, k, v, n,   f, r) { f = R "/procs-" k "x-" GPU[g] ".csv"; if (!load(f)) return ""
    for (r = 1; r <= C[f]; r++) if (V[f, r, "variant"] == v && V[f, r, "n"] == n && V[f, r, "reps"] > 0) return V[f, r, "median_us"]
    return "" }
# the sizes lesson 18 was measured at on GPU g with k GPUs, ascending, into NS[]; returns their count
function procs_sizes(g, k,   f, r, m, i, j, t, seen) { f = R "/procs-" k "x-" GPU[g] ".csv"; m = 0; if (!load(f)) return 0
    for (r = 1; r <= C[f]; r++) if (V[f, r, "variant"] == "1gpu" && !(V[f, r, "n"] in seen)) { seen[V[f, r, "n"]] = 1; NS[++m] = V[f, r, "n"] + 0 }
    for (i = 2; i <= m; i++) { t = NS[i]; for (j = i - 1; j >= 1 && NS[j] > t; j--) NS[j + 1] = NS[j]; NS[j + 1] = t }
    return m }
function t_scaling(mode,   g, k, ks, nk, i, m, ncol, a, b, any, v) {
    if (mode == "") mode = "nccl"
    for (g = 1; g <= NG; g++) {
        nk = 0; for (k = 2; k <= 8; k *= 2) if (procs_us(g, k, k "gpu_" mode, "") != "" || load(R "/procs-" k "x-" GPU[g] ".csv")) ks[++nk] = k
        if (!nk) continue
        m = procs_sizes(g, ks[nk]); if (!m) continue
        ncol = 0; T[++ncol] = LABEL[g] ": n"; T[++ncol] = "1 GPU"
        for (i = 1; i <= nk; i++) { T[++ncol] = ks[i] " GPUs"; T[++ncol] = "× 1 GPU, same run" }
        header(ncol, 1)
        for (i = 1; i <= m; i++) {
            ncol = 0; T[++ncol] = fmt_n(NS[i]); any = 0
            a = procs_us(g, ks[nk], "1gpu", NS[i]); T[++ncol] = fus(a)
            for (v = 1; v <= nk; v++) {
                b = procs_us(g, ks[v], ks[v] "gpu_" mode, NS[i]); T[++ncol] = fus(b)
                # one GPU's time from the same file (the same process, in the nccl mode)
                a = procs_us(g, ks[v], "1gpu", NS[i])
                T[++ncol] = (a != "" && b != "") ? fx(a / b) : "–"; if (b != "") any = 1
            }
            if (any) emit(row(ncol))
        }
        emit("")
    }
    if (nout) nout--; else none("lesson 18 runs on several GPUs")
}
function t_crossover(   g, k, md, modes, i, m, a, b, from, ncol, any) {
    ncol = 0; T[++ncol] = "GPU"; T[++ncol] = "GPUs"; T[++ncol] = "one process for all (`Ngpu_nccl`)"; T[++ncol] = "one process per GPU (`Ngpu_procs`)"
    header(ncol, 2); any = 0; split("nccl procs", modes, " ")
    for (g = 1; g <= NG; g++) for (k = 2; k <= 8; k *= 2) {
        m = procs_sizes(g, k); if (!m) continue
        ncol = 0; T[++ncol] = LABEL[g]; T[++ncol] = k
        for (md = 1; md <= 2; md++) {
            from = ""
            for (i = m; i >= 1; i--) { a = procs_us(g, k, "1gpu", NS[i]); b = procs_us(g, k, k "gpu_" modes[md], NS[i])
                if (a == "" || b == "" || b + 0 >= a + 0) break; from = NS[i] }
            T[++ncol] = (from == "") ? "never, up to " fmt_n(NS[m]) : (from == NS[1]) ? "from " fmt_n(from) " (the smallest measured)" : "from " fmt_n(from) " (slower at " fmt_n(NS[i]) ")"
        }
        emit(row(ncol)); any = 1
    }
    if (!any) { nout = 0; none("lesson 18 runs on several GPUs") }
}
function t_excerpt(spec,   file, s, e, line, on, n, f, i, wrap, cut, k) {
    wrap = 0; if (match(spec, / wrap=[0-9]+$/)) { wrap = substr(spec, RSTART + 6) + 0; spec = substr(spec, 1, RSTART - 1) }
    file = spec; sub(/ .*/, "", file); s = spec; sub(/^[^ ]* +/, "", s)
    if (match(s, /^\/[^\/]*\//)) { st = substr(s, 2, RLENGTH - 2); s = trim(substr(s, RLENGTH + 1)) } else st = "."
    en = ""; if (match(s, /^\/[^\/]*\//)) en = substr(s, 2, RLENGTH - 2)
    f = R "/" file; on = 0; n = 0
    if (!file_fresh(f)) {
        emit("(" file ": " (STALEKEY != "" ? "the code of " (STALEKEY ~ /^ex/ ? "solution " substr(STALEKEY, 3) : STALEKEY ~ /^lab_/ ? STALEKEY : "lesson " STALEKEY) " has changed since this run" : "no record of the code it measured") "; " (STALEKEY ~ /^lab_/ ? "the page says how to run it again)" : "scripts/reference.sh measures it again)"))
        excerpt = 1; return }
    while ((getline line < f) > 0) {
        if (!on && line ~ st) on = 1
        if (on) { ex[++n] = line; if (n > 1 && en != "" && line ~ en) break; if (n >= 40) break }
    }
    close(f)
    if (!n) { none("excerpt of " file); return }
    emit("```text")
    for (i = 1; i <= n; i++) {
        line = ex[i]
        # wrap=N: break at the last gap between columns (two spaces or more) within N
        # characters, else at the last space; the rest follows, indented
        while (wrap > 0 && length(line) > wrap) {
            cut = 0; for (k = wrap + 1; k > 8; k--) if (substr(line, k - 1, 2) == "  ") { cut = k; break }
            if (!cut) for (k = wrap + 1; k > 8; k--) if (substr(line, k, 1) == " ") { cut = k; break }
            if (!cut) break
            s = substr(line, 1, cut - 1); sub(/ +$/, "", s); emit(s)
            line = substr(line, cut); sub(/^ +/, "", line); line = "    " line
        }
        emit(line)
    }
    emit("```")
    excerpt = 1
}
function render(spec,   kind, a, na, i, kv, opt, pos) {
    nout = 0; excerpt = 0; delete T
    kind = spec; sub(/ .*/, "", kind); a[0] = ""
    rest = spec; sub(/^[^ ]*/, "", rest); rest = trim(rest)
    na = split(rest, a, " "); delete opt; pos = 0
    for (i = 1; i <= na; i++) if (index(a[i], "=")) opt[substr(a[i], 1, index(a[i], "=") - 1)] = substr(a[i], index(a[i], "=") + 1)
                              else pa[++pos] = a[i]
    if (kind == "staircase") t_staircase()
    else if (kind == "lesson") t_lesson(pa[1], opt["prev"], opt["noratio"])
    else if (kind == "counters") t_counters(pa[1], pa[2], opt["kernel"], opt["launch"], opt["file"], opt["elements"])
    else if (kind == "bench") t_bench(pa[1], opt["sizes"], opt["flush"], opt["ratio"], opt["gpu"], opt["names"], opt["rnames"])
    else if (kind == "gpus") t_gpus()
    else if (kind == "rows") t_rows(pa[1], opt["lesson"], opt["variants"], opt["n"], opt["cols"], opt["flush"])
    else if (kind == "ratios") t_ratios(pa[1], opt["gpu"], opt["base"], opt["variants"], opt["sizes"], opt["where"], opt["peak"], opt["names"], opt["by"])
    else if (kind == "lead") t_lead(pa[1], pa[2], opt["sizes"], opt["from"], opt["by"], opt["flush"])
    else if (kind == "pairs") t_pairs(pa[1], opt["gpu"], opt["sizes"])
    else if (kind == "loop") t_loop(pa[1], opt["kernels"], opt["per"], opt["ops"], opt["inside"])
    else if (kind == "scaling") t_scaling(opt["mode"])
    else if (kind == "crossover") t_crossover()
    else if (kind == "excerpt") t_excerpt(rest)
    else { emit("(unknown table kind: " kind ")"); bad = 1 }
    delete pa
}
BEGIN {
    NG = split(GPUS, GPU, " "); split(LABELS, LABEL, " ")
    while ((getline line < GPUINFO) > 0) { split(line, h, "\t"); GPEAK[h[1]] = h[2]; GL2[h[1]] = h[3]; GNAME[h[1]] = h[4] }
    while ((getline line < HASHES) > 0) { split(line, h, "\t"); CUR[h[1]] = h[2] }
    while ((getline line < STAMPS) > 0) { if (line ~ /^#/) continue; split(line, h, "\t"); ST[h[1], h[2]] = h[3] }
    while ((getline line < STAIRS) > 0) {
        if (line !~ /^[0-9][0-9]\t/) continue
        split(line, s, "\t"); LORDER[++NL] = s[1]; SHOWN[s[1]] = s[2]; STEP[s[1]] = s[3]; DESC[s[1]] = s[7]
    }
    cmd = "ls -d lessons/[0-9][0-9]_* 2>/dev/null"
    while ((cmd | getline d) > 0) { sub(/^lessons\//, "", d); LNAME[substr(d, 1, 2)] = d }
    close(cmd)
}
{
    if (skipping) { if ($0 ~ /^<!-- end table -->/) { skipping = 0; print } ; next }
    print
    if ($0 ~ /^<!-- table: .* -->$/) {
        spec = $0; sub(/^<!-- table: */, "", spec); sub(/ *-->$/, "", spec)
        render(spec)
        for (i = 1; i <= nout; i++) print out[i]
        if (!excerpt) { print "### " FILENAME ": " spec >> DERIVED; for (i = 1; i <= nout; i++) print out[i] >> DERIVED; print "" >> DERIVED }
        skipping = 1; opened++
    }
}
END { if (skipping) { print "tables.sh: " FILENAME ": a table marker has no <!-- end table -->" > "/dev/stderr"; exit 3 }
      if (bad) exit 4 }
AWK

stale=0
: >"$tmp/derived.txt"
# The code each program has now, and the code each results file measured.
sh scripts/code_hash.sh >"$tmp/hashes" || exit 2
for md in ${TABLES_FILES:-README.md lessons/[0-9][0-9]_*/notes.md lab/[0-9][0-9]_*.md}; do
    [ -f "$md" ] || continue
    grep -q '^<!-- table: ' "$md" || continue
    out=$tmp/$(echo "$md" | tr / _)
    awk -v R="$R" -v GPUS="$gpus" -v LABELS="$labels" -v STAIRS=lessons/manifest.txt \
        -v DERIVED="$tmp/derived.txt" -v GPUINFO="$tmp/gpuinfo" -v HASHES="$tmp/hashes" -v STAMPS="$R/code.txt" -f "$tmp/prog.awk" "$md" >"$out"
    rc=$?
    [ $rc -eq 0 ] || { echo "tables.sh: $md: failed (awk exit $rc)" >&2; exit 2; }
    if ! cmp -s "$md" "$out"; then
        if [ $mode = check ]; then
            echo "stale: $md (a table differs from what results/ gives; run make tables)"
            diff -u "$md" "$out" | sed -n '3,40p' | grep '^[-+]' | head -n 12 | sed 's/^/    /'
            stale=1
        else
            cat "$out" >"$md" && echo "updated $md" && changed=1
        fi
    fi
done
if [ -z "${TABLES_FILES:-}" ] && ! cmp -s "$tmp/derived.txt" "$R/derived.txt" 2>/dev/null; then
    if [ $mode = check ]; then echo "stale: $R/derived.txt (run make tables)"; stale=1
    else cp "$tmp/derived.txt" "$R/derived.txt" && echo "updated $R/derived.txt" && changed=1; fi
fi
[ $mode = check ] && [ $stale -eq 0 ] && echo "every generated table matches results/"
[ $mode = check ] || [ "${changed:-0}" = 1 ] || echo "every generated table already matched results/: nothing to update"
exit $stale
