#!/bin/sh
# The lessons' concept diagrams (SVG 1.1), drawn with POSIX sh and awk from
# each lesson's own parameters: the block size, UNROLL, the tile and chunk
# sizes are read from the lesson's .cu file, so a diagram follows its lesson.
# usage: sh scripts/diagrams.sh [OUT]      writes OUT/lessons/NN_name/*.svg
#                                          (default OUT: the repository itself)
#        sh scripts/diagrams.sh --check    regenerates into a scratch folder and
#                                          fails (exit 1) on any difference
LC_ALL=C; export LC_ALL # the same sort order, number format and checksums in every locale
cd "$(dirname "$0")/.." || exit 1
if [ "${1:-}" = --check ]; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/diagrams.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    sh scripts/diagrams.sh "$tmp" >/dev/null || exit 1
    bad=0
    for f in $(cd "$tmp" && find lessons -name '*.svg' | sort); do
        cmp -s "$tmp/$f" "$f" || { echo "stale: $f (sh scripts/diagrams.sh rewrites it)"; bad=1; }
    done
    [ $bad = 0 ] && echo "diagrams: up to date"
    exit $bad
fi
OUT=${1:-.}

# The value of `#define NAME v` in a file, or of the default block size of a
# lesson whose block is chosen at run time (its LessonInfo line).
def() { awk -v n="$2" '$1 == "#define" && $2 == n { print $3; exit }' "$1"; }
info_block() { sed -n 's/.*LessonInfo info = {"[^"]*", BLOCK_[A-Z]*, \([0-9][0-9]*\),.*/\1/p' "$1" | head -n 1; }
src() { ls lessons/"$1"_*/"$1"_*.cu 2>/dev/null | head -n 1; }
dir() { d=$(ls -d lessons/"$1"_* 2>/dev/null | head -n 1); mkdir -p "$OUT/$d" && echo "$OUT/$d"; }
need() { [ -n "$2" ] || { echo "diagrams.sh: cannot read $1" >&2; exit 1; }; }

B03=$(info_block "$(src 03)"); B04=$(info_block "$(src 04)"); B05=$(info_block "$(src 05)")
B06=$(info_block "$(src 06)"); B07=$(info_block "$(src 07)")
B08=$(def "$(src 08)" BLOCK_SIZE); B09=$(def "$(src 09)" BLOCK_SIZE); B10=$(def "$(src 10)" BLOCK_SIZE)
B11=$(def "$(src 11)" BLOCK_SIZE); U11=$(def "$(src 11)" UNROLL)
B12=$(def "$(src 12)" BLOCK_SIZE); U12=$(def "$(src 12)" UNROLL)
B13=$(def "$(src 13)" BLOCK_SIZE); M13=$(def "$(src 13)" MIN_BLOCKS)
B15=$(info_block "$(src 15)"); U15=$(def "$(src 15)" UNROLL)
C15=$(def "$(src 15)" CHUNKS_MAX); F15=$(def "$(src 15)" FINISH_LANES)
B17=$(info_block "$(src 17)"); U17=$(def "$(src 17)" UNROLL); GB17=$(def "$(src 17)" GROUP_BYTES)
W17=$(def "$(src 17)" WARP_MAX_COLS)
B18=$(def "$(src 18)" BLOCK_SIZE); U18=$(def "$(src 18)" UNROLL)
for v in B03 B04 B05 B06 B07 B08 B09 B10 B11 U11 B12 U12 B13 M13 B15 U15 C15 F15 B17 U17 GB17 W17 B18 U18; do
    eval "need $v \"\$$v\""
done

tmpa=$(mktemp "${TMPDIR:-/tmp}/diagrams-awk.XXXXXX") || exit 1
trap 'rm -f "$tmpa"' EXIT
cat >"$tmpa" <<'AWK'
# ---- drawing helpers --------------------------------------------------------
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
function open(w, h, title,   c, i, n, col) {
    printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", w, h, w, h
    printf "<title>%s</title>\n<defs>\n", esc(title)
    n = split("dark:#444444 blue:#2f6fb0 red:#c0392b orange:#d9822b green:#2e8b57 purple:#7d5ba6", c, " ")
    for (i = 1; i <= n; i++) {
        split(c[i], col, ":")
        printf "<marker id=\"ah-%s\" markerWidth=\"9\" markerHeight=\"8\" refX=\"8\" refY=\"4\" orient=\"auto\" markerUnits=\"userSpaceOnUse\"><path d=\"M0,0 L9,4 L0,8 z\" fill=\"%s\"/></marker>\n", col[1], col[2]
    }
    printf "</defs>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h
    printf "<g font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"13\" fill=\"#222222\">\n"
    W = w
}
function close_svg() { print "</g>\n</svg>" }
function R(x, y, w, h, fill, stroke, extra) {
    printf "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"%s\"%s%s/>\n", x, y, w, h, fill,
        stroke == "" ? "" : " stroke=\"" stroke "\"", extra == "" ? "" : " " extra
}
# text: anchor s(tart), m(iddle), e(nd); size 0 means 13
function T(x, y, s, size, anchor, extra) {
    printf "<text x=\"%g\" y=\"%g\"%s%s%s>%s</text>\n", x, y, size ? " font-size=\"" size "\"" : "",
        anchor == "m" ? " text-anchor=\"middle\"" : anchor == "e" ? " text-anchor=\"end\"" : "",
        extra == "" ? "" : " " extra, esc(s)
}
function TB(x, y, s, size, anchor) { T(x, y, s, size, anchor, "font-weight=\"bold\"") }
function TM(x, y, s, size, anchor, extra) { T(x, y, s, size, anchor, "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\"" (extra == "" ? "" : " " extra)) }
function L(x1, y1, x2, y2, color, width, extra) {
    printf "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"%g\"%s/>\n", x1, y1, x2, y2, color,
        width ? width : 1, extra == "" ? "" : " " extra
}
# an arrow in one of the marker colours (dark, blue, red, orange, green, purple)
function A(x1, y1, x2, y2, cname, width, extra) {
    L(x1, y1, x2, y2, HEX[cname], width ? width : 1.4, "marker-end=\"url(#ah-" cname ")\"" (extra == "" ? "" : " " extra))
}
function P(d, cname, width, extra) { # a path with an arrow at its end
    printf "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%g\" marker-end=\"url(#ah-%s)\"%s/>\n", d, HEX[cname],
        width ? width : 1.4, cname, extra == "" ? "" : " " extra
}
function BAR(x1, x2, y, label) { # a barrier: a dashed red line with its name
    L(x1, y, x2, y, HEX["red"], 2, "stroke-dasharray=\"7 4\"")
    if (label != "") TM(x2 + 6, y + 4, label, 12, "s", "fill=\"" HEX["red"] "\"")
}
function box(x, y, w, h, fill, label, size, tcolor) { # a box with a centred label
    R(x, y, w, h, fill, "#555555", "rx=\"3\"")
    if (label != "") T(x + w / 2, y + h / 2 + (size ? size : 13) * 0.36, label, size, "m", tcolor == "" ? "" : "fill=\"" tcolor "\"")
}
function legend(x, y, fill, label) { R(x, y - 10, 14, 12, fill, "#555555"); T(x + 20, y, label, 12); }
function comma(v,   s, r) { s = sprintf("%d", v); r = ""; while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } return s r }
function lg2(v,   k) { k = 0; while (v > 1) { v /= 2; k++ } return k }
function init() {
    HEX["dark"] = "#444444"; HEX["blue"] = "#2f6fb0"; HEX["red"] = "#c0392b"
    HEX["orange"] = "#d9822b"; HEX["green"] = "#2e8b57"; HEX["purple"] = "#7d5ba6"
    WORK = "#2f6fb0"; IDLE = "#dce5ef"; READ = "#f2b36b"; SOFT = "#f3f3f3"; EDGE = "#555555"; LAST = "#7d5ba6"
    MEM = "#fde9cf"; SHARED = "#dff0e3"; REG = "#e8e1f3"
}
AWK

cat >>"$tmpa" <<'AWK'
# ---- lessons 03-05: the block tree --------------------------------------------
# mode 3: tid % (2s) == 0 works on slot tid; 4: thread tid works on slot 2*s*tid; 5: tid < s, s halving.
function works(mode, t, s) { return mode == 3 ? t % (2 * s) == 0 : mode == 4 ? 2 * s * t < B : t < s }
# The whole block: one row per step, one cell per thread, dark where the thread adds.
function activity(mode, x0, y0,   cw, nsteps, k, s, t, y, nw, w, cnt, warps, seen, txt, gap, wx) {
    cw = 616 / B; nsteps = lg2(B); gap = 24 / (B / 32 - 1)
    TB(x0, y0, "The whole block, " B " threads (" B / 32 " warps): who adds at each step")
    for (w = 0; w < B / 32; w++) T(x0 + 70 + (w + 0.5) * 32 * cw + w * gap, y0 + 20, "warp " w, 12, "m")
    T(x0 + 70 + 640 + 10, y0 + 20, "threads that add", 12)
    for (k = 0; k < nsteps; k++) {
        s = mode == 5 ? B / 2 / 2 ^ k : 2 ^ k
        y = y0 + 28 + k * 22
        TM(x0 + 62, y + 13, "s = " s, 12, "e")
        for (w = 0; w < B / 32; w++) R(x0 + 70 + w * (32 * cw + gap), y, 32 * cw, 16, IDLE)
        cnt = 0; warps = 0; split("", seen)
        for (t = 0; t < B; t++) if (works(mode, t, s)) {
            R(x0 + 70 + t * cw + int(t / 32) * gap, y, cw, 16, WORK); cnt++
            if (!(int(t / 32) in seen)) { seen[int(t / 32)] = 1; warps++ }
        }
        txt = cnt " in " warps " warp" (warps > 1 ? "s" : "")
        T(x0 + 70 + 640 + 10, y + 13, txt, 12)
    }
    y = y0 + 28 + nsteps * 22 + 14
    legend(x0 + 70, y, WORK, "adds (its predicate is true)")
    legend(x0 + 300, y, IDLE, "issues the step anyway, does nothing (predicate false)")
    return y
}
# The first 16 slots, s = 1, 2, 4, 8: which slot each thread writes (lessons 03 and 04).
function zoom(mode, x0, y0,   i, k, s, y, py, x, lab, pitch) {
    pitch = 46
    TB(x0, y0, "The first 16 of the block's " B " shared-memory slots, steps s = 1, 2, 4, 8")
    for (i = 0; i < 16; i++) T(x0 + 70 + i * pitch + 20, y0 + 22, i, 12, "m", "fill=\"#666666\"")
    T(x0 + 62, y0 + 22, "slot", 12, "e", "fill=\"#666666\"")
    y = y0 + 30
    TM(x0 + 62, y + 17, "load", 12, "e")
    for (i = 0; i < 16; i++) box(x0 + 70 + i * pitch, y, 40, 24, SOFT, "x" i, 12)
    for (k = 0; k < 4; k++) {
        s = 2 ^ k; py = y; y += 52
        TM(x0 + 62, y + 17, "s = " s, 12, "e")
        for (i = 0; i < 16; i++) {
            x = x0 + 70 + i * pitch
            if (i % (2 * s) == 0) {
                lab = mode == 3 ? "t" i : "t" int(i / (2 * s))
                box(x, y, 40, 24, WORK, lab, 12, "#ffffff")
                L(x + 20, py + 24, x + 20, y, "#888888", 1.2)
                A(x + pitch * s + 20, py + 24, x + 24, y - 1, "orange", 1.4)
            } else box(x, y, 40, 24, "#ffffff", "", 12)
        }
    }
    T(x0 + 70, y + 44, "Dark: the slot a thread writes, its own value plus the slot s to its right (orange arrow).", 12)
    T(x0 + 70, y + 62, "Steps s = 16 ... " B / 2 " go on the same way across the whole block; thread 0 ends with the block's sum.", 12)
    return y + 62
}
function d_tree(mode,   y, h) {
    h = mode == 5 ? 610 : 650
    if (mode == 3) open(880, h, "Lesson 03: the interleaved tree, tid % (2s) == 0, " B " threads")
    if (mode == 4) open(880, h, "Lesson 04: the same tree with the working threads packed, index = 2*s*tid, " B " threads")
    if (mode == 5) open(880, h, "Lesson 05: sequential addressing, the tree folded in halves, " B " threads")
    if (mode == 5) y = fold(20, 24)
    else y = zoom(mode, 20, 24)
    y = activity(mode, 20, y + 34)
    if (mode == 3) T(90, y + 26, "Every warp issues all 28 instructions of every step (17 compute tid % (2s)): the if is a predicate, not a branch.", 12)
    if (mode == 4) T(90, y + 26, "The workers are packed (threads 0, 1, 2, ...), but their slots are 2s apart: see the bank diagram.", 12)
    if (mode == 5) T(90, y + 26, "Threads 0 .. s-1 work on slots 0 .. s-1: the workers are packed and their words consecutive (no bank conflict).", 12)
    close_svg()
}
# Lesson 05: the slots of each step, [s, 2s) added onto [0, s).
function fold(x0, y0,   cw, k, s, y, nsteps, fw) {
    fw = 600; cw = fw / B; nsteps = lg2(B)
    TB(x0, y0, "The block's " B " shared-memory slots: the upper half folds onto the lower half")
    T(x0 + 70, y0 + 22, "slot 0", 12, "s", "fill=\"#666666\"")
    T(x0 + 70 + fw, y0 + 22, "slot " B - 1, 12, "e", "fill=\"#666666\"")
    for (k = 0; k < nsteps; k++) {
        s = B / 2 / 2 ^ k
        y = y0 + 44 + k * 30
        TM(x0 + 62, y + 13, "s = " s, 12, "e")
        R(x0 + 70, y, fw, 16, SOFT, "#bbbbbb")
        R(x0 + 70, y, s * cw, 16, WORK)
        R(x0 + 70 + s * cw, y, s * cw, 16, READ)
        if (s * cw >= 8) P(sprintf("M%g,%g C%g,%g %g,%g %g,%g", x0 + 70 + 1.5 * s * cw, y, x0 + 70 + 1.5 * s * cw, y - 13,
            x0 + 70 + 0.5 * s * cw, y - 13, x0 + 70 + 0.5 * s * cw, y - 1), "dark", 1.2)
        T(x0 + 70 + fw + 10, y + 13, s > 1 ? "[" s ", " 2 * s ") onto [0, " s ")" : "[1] onto [0]", 12)
    }
    y = y0 + 44 + nsteps * 30 + 6
    legend(x0 + 70, y, WORK, "slots written: [0, s), by threads 0 .. s-1")
    legend(x0 + 360, y, READ, "slots read: [s, 2s)")
    legend(x0 + 520, y, SOFT, "no longer used")
    return y
}
# ---- lessons 04, 05: shared-memory banks ----------------------------------------
# The worst bank of any warp at step s: the most distinct words one bank must deliver.
function degree(mode, s,   w, l, t, word, bank, cnt, key, seen, worst, m) {
    worst = 0
    for (w = 0; w < B / 32; w++) {
        split("", cnt); split("", seen); m = 0
        for (l = 0; l < 32; l++) {
            t = 32 * w + l
            if (!works(mode, t, s)) continue
            word = mode == 4 ? 2 * s * t : t
            bank = word % 32; key = bank SUBSEP word
            if (!(key in seen)) { seen[key] = 1; cnt[bank]++; if (cnt[bank] > m) m = cnt[bank] }
        }
        if (m > worst) worst = m
    }
    return worst
}
# One access of warp 0: a column per bank, the lanes that hit it stacked, each with its word.
function bankrow(x0, y, s, off, title,   l, word, bank, h, depth, deg, x) {
    split("", depth); deg = 0
    T(x0, y, title, 13)
    y += 8
    for (l = 0; l < 32; l++) {
        if (!works(MODE, l, s)) continue
        word = (MODE == 4 ? 2 * s * l : l) + off; bank = word % 32
        x = x0 + 70 + bank * 22
        box(x, y + depth[bank] * 18, 21, 17, depth[bank] ? "#f6c9c3" : "#cfe0f1", l, 12)
        depth[bank]++; if (depth[bank] > deg) deg = depth[bank]
    }
    TB(x0 + 70 + 32 * 22 + 10, y + 13, deg > 1 ? deg "-way" : "no conflict", 13)
    return y + deg * 18 + 14
}
function d_banks(mode,   x0, y, l, s, k, n, h) {
    MODE = mode; x0 = 20
    h = mode == 4 ? 560 : 350
    open(900, h, "Lesson 0" mode ": shared-memory banks hit by warp 0, " B " threads per block")
    TB(x0, 24, "Warp 0's shared-memory accesses: 32 banks, word w lives in bank w mod 32")
    for (l = 0; l < 32; l++) T(x0 + 70 + l * 22 + 10.5, 48, l, 12, "m", "fill=\"#666666\"")
    T(x0 + 62, 48, "bank", 12, "e", "fill=\"#666666\"")
    y = 74
    if (mode == 4) {
        y = bankrow(x0, y, 1, 0, "s = 1: lane t reads and writes word 2t (lane number in the box)")
        y = bankrow(x0, y + 10, 2, 0, "s = 2: lane t reads and writes word 4t")
        y = bankrow(x0, y + 10, 4, 0, "s = 4: lane t reads and writes word 8t")
        T(x0, y + 4, "The second read, word 2st + s, lands s banks further on and conflicts the same way.", 12)
        y += 10
    } else {
        y = bankrow(x0, y, B / 2, 0, "s = " B / 2 ": lane t writes word t (and reads it)")
        y = bankrow(x0, y + 10, B / 2, B / 2, "s = " B / 2 ": lane t reads word t + " B / 2)
        y = bankrow(x0, y + 10, 16, 16, "s = 16: lanes 0 .. 15 read words 16 .. 31")
    }
    legend(x0 + 70, y + 24, "#cfe0f1", mode == 4 ? "first word a bank delivers" : "one word per bank: the access takes one pass (wavefront)")
    if (mode == 4) legend(x0 + 320, y + 24, "#f6c9c3", "each further word: one more pass over the banks (wavefront)")
    y += 56
    TB(x0, y, "Every step of a " B "-thread block (the worst warp)")
    n = lg2(B); y += 26
    TM(x0 + 62, y, "s", 12, "e"); TM(x0 + 62, y + 22, "conflict", 12, "e")
    for (k = 0; k < n; k++) {
        s = mode == 4 ? 2 ^ k : B / 2 / 2 ^ k
        TM(x0 + 70 + k * 80 + 30, y, s, 13, "m")
        d = degree(mode, s)
        TM(x0 + 70 + k * 80 + 30, y + 22, d > 1 ? d "-way" : "none", 13, "m", d > 1 ? "fill=\"" HEX["red"] "\"" : "fill=\"" HEX["green"] "\"")
    }
    close_svg()
}
# ---- lesson 06: the first add during the load --------------------------------------
function d_load_add(   x0, y, w, x, ex, wx, nw, pitch, wp, n) {
    x0 = 80; nw = B / 32; pitch = 640 / (2 * nw); wp = 640 / nw
    open(900, 470, "Lesson 06: each thread adds two elements while loading; a block of " B " covers " 2 * B)
    TB(20, 24, "One block of " B " threads covers " 2 * B " elements: thread t adds in[i] and in[i + " B "] on the way in")
    T(20, 69, "in[ ]", 13)
    T(x0, 48, "first half: i = b*" 2 * B " + t", 12)
    T(x0 + 328, 48, "second half: i + " B, 12)
    for (w = 0; w < 2 * nw; w++) {
        x = x0 + w * pitch
        box(x, 56, pitch - 3, 24, w % nw == 0 ? WORK : MEM, "w" w % nw, 12, w % nw == 0 ? "#ffffff" : "")
    }
    L(x0 + 320 - 1.5, 52, x0 + 320 - 1.5, 84, "#333333", 2)
    T(x0 + 648, 66, "a box: 32 floats,", 12); T(x0 + 648, 82, "one 128-byte line", 12)
    T(20, 171, "threads", 13)
    for (w = 0; w < nw; w++) {
        wx = x0 + w * wp
        box(wx, 152, wp - 4, 30, w == 0 ? WORK : IDLE, "warp " w, 12, w == 0 ? "#ffffff" : "")
        A(x0 + w * pitch + pitch / 2 - 1.5, 81, wx + wp * 0.35, 151, w == 0 ? "blue" : "dark", w == 0 ? 1.8 : 0.8, w == 0 ? "" : "opacity=\"0.45\"")
        A(x0 + (w + nw) * pitch + pitch / 2 - 1.5, 81, wx + wp * 0.6, 151, w == 0 ? "blue" : "dark", w == 0 ? 1.8 : 0.8, w == 0 ? "" : "opacity=\"0.45\"")
    }
    T(x0 + 648, 163, "thread t:", 12); TM(x0 + 648, 179, "v = in[i] + in[i+" B "]", 12)
    T(x0, 204, "warp 0 (blue): two load instructions, each reading one whole 128-byte line (coalesced)", 12, "s", "fill=\"" HEX["blue"] "\"")
    T(20, 239, "sdata", 13)
    R(x0, 224, 640, 24, SHARED, EDGE)
    T(x0 + 320, 241, "sdata[t] = v: " B " slots, each the sum of two elements", 12, "m")
    A(x0 + 320, 249, x0 + 320, 277, "dark", 1.2)
    box(x0 + 120, 278, 400, 30, "#ffffff", "lesson 05's tree, unchanged: s = " B / 2 " ... 1, " lg2(B) " steps", 13)
    A(x0 + 320, 309, x0 + 320, 333, "dark", 1.2)
    box(x0 + 220, 334, 200, 28, "#ffffff", "out[b]: the block's sum", 13)
    n = 2 ^ 26
    TB(20, 404, "At n = 2^26:")
    T(130, 404, "lesson 05: one element per thread, " comma(n / B) " blocks in pass 1, threads " B / 2 " .. " B - 1 " idle from the first step", 12)
    T(130, 424, "lesson 06: two elements per thread, " comma(n / (2 * B)) " blocks in pass 1, every thread adds once before the tree", 12)
    T(130, 444, "passes: " comma(n / (2 * B)) " partials, then " comma(n / (2 * B) / (2 * B)) ", then 1 (three launches instead of four)", 12)
    close_svg()
}
# ---- lesson 07: the last warp without block barriers ----------------------------------
function d_last_warp(   nw, x0, cw, y, w, s, k, lane, off, need, y1, y2, txt) {
    nw = B / 32; x0 = 110; cw = 640 / nw
    open(900, 525, "Lesson 07: the tree stops at 64 sums; warp 0 finishes alone with __syncwarp(), " B " threads")
    TB(20, 24, "The block, " B " threads = " nw " warps: block barriers only while more than one warp works")
    for (w = 0; w < nw; w++) T(x0 + (w + 0.5) * cw, 48, "warp " w, 12, "m")
    y = 56
    TM(x0 - 8, y + 17, "load", 12, "e")
    for (w = 0; w < nw; w++) box(x0 + w * cw + 2, y, cw - 4, 24, WORK, "", 12)
    y += 30; BAR(x0, x0 + 640, y, "__syncthreads()"); y += 6
    for (s = B / 2; s > 32; s /= 2) {
        TM(x0 - 8, y + 17, "s = " s, 12, "e")
        for (w = 0; w < nw; w++) box(x0 + w * cw + 2, y, cw - 4, 24, w * 32 < s ? WORK : IDLE, "", 12)
        y += 30; BAR(x0, x0 + 640, y, "__syncthreads()"); y += 6
    }
    TM(x0 - 8, y + 17, "s = 32 .. 1", 12, "e")
    box(x0 + 2, y, cw - 4, 24, LAST, "6 steps", 12, "#ffffff")
    R(x0 + cw + 2, y, 640 - cw - 4, 24, "#ffffff", "#aaaaaa", "stroke-dasharray=\"4 3\" rx=\"3\"")
    T(x0 + cw + (640 - cw) / 2, y + 17, "warps 1 .. " nw - 1 " have left: nobody waits for them", 12, "m", "fill=\"#666666\"")
    y += 40
    legend(x0, y, WORK, "adds"); legend(x0 + 90, y, IDLE, "issues the step, no lane adds")
    legend(x0 + 330, y, LAST, "warp 0 alone, below")
    y += 40
    TB(20, y, "Warp 0 alone: slots 0 .. 63 to one sum, v += sdata[tid + s] in every lane, s = 32, 16, 8, 4, 2, 1")
    y += 22
    for (lane = 0; lane < 32; lane += 4) T(x0 + lane * 16 + 7.5, y, lane, 12, "m", "fill=\"#666666\"")
    T(x0 - 8, y, "lane", 12, "e", "fill=\"#666666\"")
    y += 8; y1 = 0
    for (k = 0; k < 6; k++) {
        off = 32 / 2 ^ k
        TM(x0 - 8, y + 13, "s = " off, 12, "e")
        for (lane = 0; lane < 32; lane++) R(x0 + lane * 16, y, 15, 18, lane < (off == 32 ? 32 : off) ? WORK : IDLE)
        txt = k == 0 ? "read, write, __syncwarp()" : k == 5 ? "read: the block's sum in lane 0" : "read, __syncwarp(), write, __syncwarp()"
        T(x0 + 520, y + 14, txt, 12)
        if (k == 0) y1 = y
        if (k == 1) y2 = y
        y += 30
    }
    R(x0 + 16 * 16, y1, 15, 18, "none", HEX["red"], "stroke-width=\"2.5\"")
    R(x0, y2, 15, 18, "none", HEX["red"], "stroke-width=\"2.5\"")
    A(x0 + 16 * 16 + 7.5, y1 + 19, x0 + 10, y2 - 1, "red", 2)
    y -= 4
    legend(x0, y + 10, WORK, "result still needed"); legend(x0 + 170, y + 10, IDLE, "adds too (all 32 lanes reach every __syncwarp), result unused")
    y += 40
    T(20, y, "Red: lane 16 writes sdata[16] at s = 32, lane 0 reads it at s = 16. The 2007 form (volatile, no __syncwarp)", 12, "s", "fill=\"" HEX["red"] "\"")
    T(20, y + 18, "orders nothing between them: racecheck reports this RAW hazard. __syncwarp() makes the order a promise.", 12, "s", "fill=\"" HEX["red"] "\"")
    close_svg()
}
# ---- lesson 08: a constant trip count, every step written out -------------------------
function d_unrolled(   xl, xr, y, s, n, bw, k) {
    xl = 20; xr = 470; bw = 360
    open(880, 420, "Lesson 08: BLOCK_SIZE " B " known at compile time: the tree loop becomes straight-line steps")
    TB(xl, 24, "Lesson 07: blockDim.x known only at run time")
    TB(xr, 24, "Lesson 08: #define BLOCK_SIZE " B)
    y = 44
    box(xl, y, bw, 28, SOFT, "s = blockDim.x / 2", 12)
    A(xl + bw / 2, y + 29, xl + bw / 2, y + 45, "dark", 1.2)
    box(xl, y + 46, bw, 28, IDLE, "if (tid < s) sdata[tid] += sdata[tid + s]", 12)
    A(xl + bw / 2, y + 75, xl + bw / 2, y + 91, "dark", 1.2)
    box(xl, y + 92, bw, 28, "#ffffff", "__syncthreads()", 12, HEX["red"])
    A(xl + bw / 2, y + 121, xl + bw / 2, y + 137, "dark", 1.2)
    box(xl, y + 138, bw, 28, SOFT, "s >>= 1;  s > 32 ?", 12)
    P(sprintf("M%g,%g L%g,%g L%g,%g L%g,%g", xl + bw, y + 152, xl + bw + 22, y + 152, xl + bw + 22, y + 60, xl + bw + 2, y + 60), "red", 1.6)
    T(xl + bw + 26, y + 110, "yes", 12, "s", "fill=\"" HEX["red"] "\"")
    A(xl + bw / 2, y + 167, xl + bw / 2, y + 187, "dark", 1.2)
    T(xl + bw / 2 + 8, y + 182, "no", 12)
    box(xl, y + 188, bw, 28, "#ffffff", "warp 0: lesson 07's six steps", 12)
    T(xl, y + 240, "A loop: every step shifts s, compares, computes the", 12)
    T(xl, y + 256, "address tid + s and branches back, " lg2(B) - 6 " times for " B " threads.", 12)
    y = 44; n = 0
    for (s = B / 2; s > 32; s /= 2) {
        box(xr, y, bw, 28, IDLE, "if (tid < " s ") sdata[tid] += sdata[tid + " s "]", 12)
        T(xr + bw + 6, y + 12, "+" 4 * s, 12, "s", "fill=\"" HEX["blue"] "\"")
        T(xr + bw + 6, y + 26, "bytes", 12, "s", "fill=\"" HEX["blue"] "\"")
        A(xr + bw / 2, y + 29, xr + bw / 2, y + 45, "dark", 1.2)
        box(xr, y + 46, bw, 28, "#ffffff", "__syncthreads()", 12, HEX["red"])
        A(xr + bw / 2, y + 75, xr + bw / 2, y + 91, "dark", 1.2)
        y += 92; n++
    }
    box(xr, y, bw, 28, "#ffffff", "warp 0: lesson 07's six steps", 12)
    T(xr, y + 52, "Straight-line code: " n " steps, each with its offset a constant", 12)
    T(xr, y + 68, "inside the load (blue: bytes past sdata[tid]); no counter,", 12)
    T(xr, y + 84, "no compare of s, no branch back.", 12)
    if (B == 256) {
        TB(xl, 360, "Per block of 256 threads (SASS, sm_90):")
        T(xl, 382, "warp instructions 508 -> 354 (30% fewer); branches (BRA, EXIT) 34 -> 10; block barriers 3 in both.", 12)
        T(xl, 400, "Whether that saves time depends on what the kernel waits on: the Measured section tells.", 12)
    }
    close_svg()
}
# ---- lesson 09: the grid-stride loop ------------------------------------------------
# A round's row: blocks 0..3, a gap, block G-1; each block's span 2B floats in two halves.
function stride_row(x0, y, label, last_blocks,   k, x, bw, blk, exists) {
    bw = 90
    TM(x0 - 8, y + 16, label, 12, "e")
    for (k = 0; k < 6; k++) {
        if (k == 4) { T(x0 + 4 * bw + 60, y + 16, "...", 14, "m"); continue }
        x = k < 4 ? x0 + k * bw : x0 + 4 * bw + 120
        blk = k < 4 ? k : G - 1
        exists = blk < last_blocks
        R(x, y, bw / 2 - 1, 22, exists ? MEM : SOFT, exists ? "#b9a27f" : "#cccccc")
        R(x + bw / 2, y, bw / 2 - 3, 22, exists ? MEM : SOFT, exists ? "#b9a27f" : "#cccccc")
        if (exists && blk == 1) {
            R(x + 10, y, 6, 22, WORK); R(x + bw / 2 + 10, y, 6, 22, WORK)
        }
        if (label == "round 0") T(x + bw / 2 - 2, y - 6, blk == G - 1 ? "block " comma(G - 1) : "block " blk, 12, "m")
    }
}
function d_grid_stride(   x0, y, n, stride, rounds, lastf, lastb, per) {
    x0 = 100
    n = 2 ^ 26; stride = G * 2 * B; rounds = int((n + stride - 1) / stride)
    lastf = n - (rounds - 1) * stride; lastb = lastf / (2 * B)
    open(880, 390, "Lesson 09: the grid-stride loop, " G " blocks of " B " threads, n = 2^26")
    TB(20, 24, "Grid = " SMS " SMs x " G / SMS " resident blocks of " B " = " comma(G) " blocks (one wave); each round the grid reads " comma(stride) " floats")
    y = 64
    stride_row(x0, y, "round 0", G); y += 34
    stride_row(x0, y, "round 1", G); y += 34
    stride_row(x0, y, "round 2", G); y += 34
    T(x0 + 250, y + 12, "...", 14, "m"); y += 24
    stride_row(x0, y, "round " rounds - 2, G); y += 34
    stride_row(x0, y, "round " rounds - 1, lastb)
    y += 44
    T(690, 80, "a block's span:", 12); T(690, 96, 2 * B " floats in two", 12); T(690, 112, "halves of " B, 12)
    T(690, 214, "last round: " comma(lastf), 12); T(690, 230, "floats, the spans of", 12); T(690, 246, "blocks 0 .. " comma(lastb - 1) " only", 12)
    legend(x0, y, WORK, "thread t of block 1: in[i] and in[i + " B "], every round")
    legend(x0 + 380, y, MEM, "the other threads")
    legend(x0 + 530, y, SOFT, "past n")
    y += 34
    TM(x0, y, "i = b*" 2 * B " + t + k*" comma(stride) ",  k = 0, 1, ... while i < n", 12)
    y += 30
    per = 2 * n / (G * 2 * B)
    T(20, y, "At n = 2^26 a thread adds about " int(per + 0.5) " elements in a register (" rounds - 1 " or " rounds " rounds, two loads in flight per round),", 12)
    T(20, y + 18, "then the block's tree runs once: " comma(G) " partials from pass 1. Pass 2 is the same kernel as ONE block of " B, 12)
    T(20, y + 36, "threads, looping over the " comma(G) " partials: two launches for any n.", 12)
    close_svg()
}
# ---- lesson 10: warp shuffles, one barrier per block -------------------------------
# xor 0: __shfl_down_sync, lane k adds lane k + offset; xor 1: __shfl_xor_sync, lane k adds lane k ^ offset.
function d_shuffle(xor,   x0, y, py, k, o, lane, src, need, pitch) {
    x0 = 110; pitch = 22
    open(880, xor ? 470 : 490, xor ? "Lesson 10: the butterfly, __shfl_xor_sync, every lane ends with the warp's sum" : "Lesson 10: warp_sum with __shfl_down_sync, offsets 16, 8, 4, 2, 1")
    if (xor) TB(20, 24, "__shfl_xor_sync: lane k adds the v of lane k ^ offset; after 5 steps EVERY lane holds the sum")
    else TB(20, 24, "warp_sum: lane k adds the v of lane k + offset, register to register (no shared memory, no barrier)")
    for (lane = 0; lane < 32; lane++) T(x0 + lane * pitch + 10, 50, lane, 12, "m", "fill=\"#666666\"")
    T(x0 - 8, 50, "lane", 12, "e", "fill=\"#666666\"")
    y = 58
    TM(x0 - 8, y + 15, "v", 12, "e")
    for (lane = 0; lane < 32; lane++) R(x0 + lane * pitch, y, 20, 20, WORK)
    for (k = 0; k < 5; k++) {
        o = 16 / 2 ^ k; py = y; y += 64
        TM(x0 - 8, y + 15, "offset " o, 12, "e")
        for (lane = 0; lane < 32; lane++) {
            need = xor || lane < o
            src = xor ? (lane < o || int(lane / o) % 2 == 0 ? lane + o : lane - o) : lane + o
            if (xor) src = lane - lane % (2 * o) + (lane % (2 * o) + o) % (2 * o)
            if (need && src < 32) A(x0 + src * pitch + 10, py + 21, x0 + lane * pitch + 10, y - 1, xor ? "blue" : "dark", 1, xor ? "opacity=\"0.6\"" : "")
            R(x0 + lane * pitch, y, 20, 20, need ? WORK : IDLE)
        }
    }
    y += 44
    if (xor) {
        T(20, y + 8, "Each step pairs lanes offset apart, both ways (the arrows cross as an X). After offsets 16, 8, 4, 2, 1", 12)
        T(20, y + 26, "every lane has added all 32 values: for when all lanes need the total.", 12)
    } else {
        legend(x0, y - 4, WORK, "its sum is still needed"); legend(x0 + 210, y - 4, IDLE, "adds too (a lane past 31 gets its own v back), result unused")
        T(20, y + 24, "Lane 0 ends with the warp's sum after 5 shuffles. __shfl_down_sync(FULL_MASK, v, offset) waits for", 12)
        T(20, y + 42, "the 32 lanes its mask names, so every lane must call it, as in lesson 07's __syncwarp().", 12)
    }
    close_svg()
}
function d_block_sum(   nw, x0, wp, w, y, x, lp) {
    nw = B / 32; x0 = 140; wp = 672 / nw; lp = 21
    open(880, 430, "Lesson 10: block_sum, " B " threads = " nw " warps, one shared slot per warp, one barrier")
    TB(20, 24, "block_sum: " nw " warps, each sums its 32 lanes with shuffles, then one slot per warp and one barrier")
    y = 44
    for (w = 0; w < nw; w++) {
        x = x0 + w * wp
        box(x, y, wp - 6, 40, IDLE, "", 12)
        T(x + (wp - 6) / 2, y + 16, "warp " w, 12, "m"); T(x + (wp - 6) / 2, y + 32, "warp_sum", 12, "m")
        A(x + 12, y + 41, x + 12, y + 79, "dark", 1.2)
        T(x + 18, y + 64, "lane 0", 12)
    }
    y = 124
    T(20, y + 17, "warp_sums", 12)
    for (w = 0; w < nw; w++) box(x0 + w * wp, y, wp - 6, 24, SHARED, "[" w "]", 12)
    BAR(x0, x0 + 672, y + 40, "")
    TM(20, y + 44, "__syncthreads()", 12, "s", "fill=\"" HEX["red"] "\"")
    T(20, y + 60, "the one barrier", 12, "s", "fill=\"" HEX["red"] "\"")
    y = 214
    T(20, y + 17, "warp 0", 12)
    for (w = 0; w < 32; w++) R(x0 + w * lp, y, lp - 2, 20, w < nw ? WORK : IDLE)
    for (w = 0; w < nw; w++) A(x0 + w * wp + 12, 149, x0 + w * lp + 9, y - 1, "blue", 1.2, "opacity=\"0.7\"")
    T(x0, y + 40, "lanes 0 .. " nw - 1 " read warp_sums[lane]; lanes " nw " .. 31 add 0", 12)
    A(x0 + 336, y + 50, x0 + 336, y + 74, "dark", 1.2)
    box(x0 + 186, y + 76, 300, 28, LAST, "warp_sum again: thread 0 has the block's sum", 12, "#ffffff")
    if (B == 256) {
        TB(20, 370, "Per block of 256, against lesson 09's shared-memory tree:")
        T(20, 392, "lesson 09: 19 shared stores, 19 shared loads, 3 __syncthreads(), 9 __syncwarp() (warp instructions)", 12)
        T(20, 410, "lesson 10: 8 stores, 1 load, 1 __syncthreads(); 10 SHFL in warp 0 and 5 in each other warp", 12)
    }
    close_svg()
}
# ---- lesson 11: float4 head, body and tail ---------------------------------------
function hexa(v) { return sprintf("0x%X", v) }
function d_float4(   x0, cw, x, y, i, k, n, head, nvec, tail, base, half, wseg, w, nwarps, G) {
    x0 = 70; cw = 24
    n = 2 ^ 20 + 1; base = 4096 + 4; head = 3; nvec = int((n - head) / 4); tail = n - head - 4 * nvec
    G = 132 * int(2048 / B)
    open(880, 395, "Lesson 11: head, float4 body and tail for a start 4 bytes past a 16-byte boundary; " B " threads, UNROLL " U)
    TB(20, 24, "in starts at " hexa(base) ", 4 bytes past a 16-byte boundary (--offset 1); n = 2^20 + 1 floats")
    y = 62; x = x0
    T(x0, y - 10, "head", 12, "s", "fill=\"" HEX["orange"] "\"")
    for (i = 0; i < head; i++) { box(x, y, cw - 2, 26, READ, "", 12); x += cw }
    L(x - 1, y - 6, x - 1, y + 34, "#222222", 2); T(x - 1, y + 48, hexa(base + 4 * head), 12, "m")
    T(x + 2, y - 10, "body: aligned float4 loads", 12, "s", "fill=\"" HEX["blue"] "\"")
    for (k = 0; k < 4; k++) {
        if (k == 3) { T(x + 30, y + 18, "...", 14, "m"); x += 60; L(x - 1, y - 6, x - 1, y + 34, "#222222", 2); continue }
        R(x, y, 4 * cw - 2, 26, "#cfe0f1", "#2f6fb0", "stroke-width=\"2\" rx=\"3\"")
        for (i = 1; i < 4; i++) L(x + i * cw - 1, y + 3, x + i * cw - 1, y + 23, "#8fb3d9", 1)
        x += 4 * cw
        L(x - 1, y - 6, x - 1, y + 34, "#222222", 2)
        if (k < 2) T(x - 1, y + 48, hexa(base + 4 * head + 16 * (k + 1)), 12, "m")
    }
    R(x, y, 4 * cw - 2, 26, "#cfe0f1", "#2f6fb0", "stroke-width=\"2\" rx=\"3\"")
    for (i = 1; i < 4; i++) L(x + i * cw - 1, y + 3, x + i * cw - 1, y + 23, "#8fb3d9", 1)
    x += 4 * cw; L(x - 1, y - 6, x - 1, y + 34, "#222222", 2); T(x - 1, y + 48, hexa(base + 4 * head + 16 * nvec), 12, "m")
    T(x + 2, y - 10, "tail", 12, "s", "fill=\"" HEX["orange"] "\"")
    for (i = 0; i < tail; i++) { box(x, y, cw - 2, 26, READ, "", 12); x += cw }
    y += 80
    T(x0, y, "head = 3 floats, in[0 .. 2]: scalar loads by threads 0 .. 2 of block 0", 12)
    T(x0, y + 18, "body = " comma(nvec) " float4s, in[3 .. " comma(head + 4 * nvec - 1) "]: 16-byte aligned, grid-stride, " U " per thread per round", 12)
    T(x0, y + 36, "tail = " tail " floats, in[" comma(n - 2) " .. " comma(n - 1) "]: scalar loads by threads 0 .. " tail - 1 " of block 0", 12)
    T(x0, y + 54, "head = ((16 - address mod 16) mod 16) / 4, at most n;  nvec = (n - head) / 4;  tail = n - head - 4*nvec", 12, "s", "fill=\"#555555\"")
    y += 92
    TB(20, y, "The body, one round of block b: TILE = " B " x " U " = " comma(B * U) " float4s (" B * U * 16 / 1024 " KiB), all " U " loads issued before any add")
    y += 20; nwarps = B / 32; wseg = 640 / (U * nwarps)
    for (half = 0; half < U; half++) {
        T(x0 + half * 640 / U, y + 12, half == 0 ? "float4 b*" B * U " + t" : "+ " half * B, 12)
        for (w = 0; w < nwarps; w++) {
            x = x0 + half * 640 / U + w * wseg
            R(x, y + 20, wseg - 1, 24, w == 0 ? WORK : "#cfe0f1", "#2f6fb0")
        }
    }
    T(x0 + 660, y + 37, "a box: one warp", 12)
    y += 64
    T(x0, y, "Blue: warp 0's " U " loads, each 32 float4s = 512 contiguous bytes (lesson 10's: 128). Thread t reads float4 b*" B * U " + t", 12)
    T(x0, y + 18, "and the one " B " further on, then the same one grid further on (up to " G " blocks: 132 SMs x " 2048 / B ").", 12)
    T(x0, y + 44, "Bytes in flight per thread: " U " x 16 = " U * 16 "; per SM (2048 threads): " comma(2048 * U * 16) ", against lesson 10's 16,384.", 12)
    close_svg()
}
# ---- lesson 12: the two finishes -------------------------------------------------
function d_last_block(   lv, order, slots, sx, i, k, x, y, cw, n, b, last) {
    open(900, 520, "Lesson 12: the fixed finish, last block done: " comma(G) " blocks of " B " threads, one launch")
    TB(20, 24, "Fixed finish at n = 2^26, one block per 4 tiles: each block stores its sum and counts itself; the last adds all " comma(G) " partials")
    last = 17
    n = split("0 1 2 3 . " last " . " G - 1, slots, " ")
    T(20, 74, "partials", 12)
    for (i = 1; i <= n; i++) {
        x = 90 + (i - 1) * 62
        if (slots[i] == ".") { T(x + 28, 74, "...", 14, "m"); continue }
        box(x, 56, 56, 26, SHARED, "[" slots[i] "]", 12)
        sx[slots[i]] = x + 28
    }
    T(90 + n * 62 + 4, 68, "global memory, one float per block", 12)
    T(90 + n * 62 + 4, 84, "(reused by every launch)", 12)
    split("3 0 " G - 1 " . " last, order, " ")
    T(20, 44, "Below, the blocks in the order they finish in one run (the order changes every run): 3, 0, " G - 1 ", ..., " last, 12, "s", "fill=\"#555555\"")
    cw = 150
    for (k = 1; k <= 5; k++) {
        x = 20 + (k - 1) * (cw + 16); b = order[k]
        if (b == ".") { T(x + 40, 200, "...", 14, "m"); continue }
        if (k == 5) x -= 110
        box(x, 124, cw - 26, 26, IDLE, "block " b " sums", 12)
        A(x + cw / 2, 151, x + cw / 2, 163, "dark", 1)
        box(x, 164, cw, 26, WORK, "partials[" b "] = v", 12, "#ffffff")
        lv = 92 + 7 * (k == 5 ? 3 : k - 1)
        P(sprintf("M%g,%g V%g H%g V%g", x + cw - 12, 163, lv, sx[b], 84), "blue", 1.4)
        T(x + cw / 2 + 6, 205, "release", 12, "s", "fill=\"" HEX["green"] "\"")
        A(x + cw / 2, 191, x + cw / 2, 213, "green", 1.3)
        box(x, 214, cw, 26, "#ffffff", "count_done: old = " (k == 5 ? G - 1 : k - 1), 12)
        if (k < 5) T(x + cw / 2, 258, "not last: exit", 12, "m", "fill=\"#666666\"")
    }
    x = 20 + 4 * (cw + 16) - 110; cw = 260
    T(x + 156, 205, "", 12)
    A(x + 75, 241, x + 75, 263, "green", 1.3)
    T(x + 81, 257, "acquire: it sees every partial", 12, "s", "fill=\"" HEX["green"] "\"")
    box(x, 264, cw, 26, LAST, G - 1 " = gridDim.x - 1: the last block", 12, "#ffffff")
    A(x + 75, 291, x + 75, 303, "dark", 1)
    box(x, 304, cw, 40, LAST, "", 12)
    if (G > B) {
        T(x + cw / 2, 320, "thread t loads partials[t], [t + " B "], ...", 12, "m", "fill=\"#ffffff\"")
        T(x + cw / 2, 337, "(" G / B " of them, all in flight), adds in order", 12, "m", "fill=\"#ffffff\"")
    } else {
        T(x + cw / 2, 320, "thread t < " G " loads partials[t],", 12, "m", "fill=\"#ffffff\"")
        T(x + cw / 2, 337, "then block_sum in a fixed tree", 12, "m", "fill=\"#ffffff\"")
    }
    A(x + 75, 345, x + 75, 357, "dark", 1)
    box(x, 358, cw, 26, LAST, "block_sum, then *out = the sum", 12, "#ffffff")
    R(20, 286, 480, 62, SOFT, "#bbbbbb", "rx=\"4\"")
    TM(30, 306, "retired: 0 -> 1 -> 2 -> ... -> " G - 1, 12)
    T(30, 324, "atom.acq_rel.gpu.inc: returns the old count; at " G - 1 " it", 12)
    T(30, 340, "stores 0, ready for the next launch (no memset).", 12)
    y = 420
    TB(20, y, "What each step protects")
    T(20, y + 22, "release: a block's partial is visible before its count, or the last block could add an old partial (the buffer is reused).", 12)
    T(20, y + 40, "acquire: the block that sees " G - 1 " also sees every partial stored before the other counts.", 12)
    T(20, y + 58, "__syncthreads() hands the flag `last` (and what thread 0 acquired) to the whole last block.", 12)
    T(20, y + 76, "Which block is last varies; the order of the additions does not: the same bits every run.", 12)
    close_svg()
}
function d_atomic(   y, k, x, r, ord, n, b) {
    open(880, 360, "Lesson 12: the atomic finish, one atomicAdd per block into a zeroed *out")
    TB(20, 24, "Atomic finish at n = 2^26: the first block to swap zeroes *out; each of " comma(G) " blocks adds after it")
    for (r = 1; r <= 2; r++) {
        y = 56 + (r - 1) * 120
        T(20, y + 18, "run " r, 13)
        box(80, y, 120, 26, SOFT, "first: *out = 0", 12)
        n = split(r == 1 ? "3 0 " G - 1 " . 17" : "0 17 3 . " G - 1, ord, " ")
        for (k = 1; k <= n; k++) {
            x = 220 + (k - 1) * 92; b = ord[k]
            if (b == ".") { T(x + 40, y + 18, "...", 14, "m"); continue }
            box(x, y, 84, 26, IDLE, "block " b, 12)
            A(x + 42, y + 27, 710, y + 66, "orange", 1.2, "opacity=\"0.8\"")
        }
        box(690, y + 66, 90, 26, READ, "*out", 12)
        TM(80, y + 84, (r == 1 ? "*out = ((0 + p3) + p0) + p" G - 1 " ..." : "*out = ((0 + p0) + p17) + p3 ...") "   (pb: block b's sum)", 12)
    }
    T(20, 312, "Float addition is not associative: another order rounds differently, so a uniform input's last bits change run to", 12)
    T(20, 330, "run. " comma(G) " float atomics to one L2 address, issued while other blocks still read: only the last one waits.", 12)
    close_svg()
}
# ---- lesson 13: a cluster adds through distributed shared memory ----------------------
function d_cluster(   c, x0, sw, r, x, y, line, f, n, size, fit, blocks, idle, k, bx) {
    c = 8; x0 = 130; sw = 90
    open(880, 540, "Lesson 13: a cluster of " c " blocks adds its totals through distributed shared memory, one atomic per cluster")
    TB(20, 24, "A cluster of " c " blocks of " B " threads, resident together on the SMs of one GPC (drawn: cluster8)")
    R(x0 - 8, 40, c * sw + 6, 110, "none", "#888888", "stroke-dasharray=\"6 4\" rx=\"8\"")
    T(20, 100, "one GPC", 12, "s", "fill=\"#666666\"")
    for (r = 0; r < c; r++) {
        x = x0 + r * sw
        R(x, 48, sw - 6, 94, r == 0 ? "#efe9f7" : "#f7f7f7", "#666666", "rx=\"4\"")
        T(x + (sw - 6) / 2, 66, "block rank " r, 12, "m")
        T(x + (sw - 6) / 2, 86, "block_sum", 12, "m", "fill=\"#555555\"")
        box(x + 5, 102, sw - 16, 28, SHARED, "block_total", 12)
    }
    BAR(x0 - 8, x0 + c * sw - 2, 172, "")
    TM(20, 176, "cluster.sync", 12, "s", "fill=\"" HEX["red"] "\"")
    y = 198
    T(20, y + 10, "rank 0's", 12); T(20, y + 26, "warp 0", 12)
    for (r = 0; r < c; r++) {
        x = x0 + r * sw
        A(x + (sw - 6) / 2, 131, x + (sw - 6) / 2, y - 1, "purple", 1.6, r ? "stroke-dasharray=\"5 3\"" : "")
        box(x, y, sw - 6, 30, LAST, "lane " r, 12, "#ffffff")
        A(x + (sw - 6) / 2, y + 31, x0 + 250, y + 73, "dark", 1, "opacity=\"0.6\"")
    }
    bx = x0 + 100
    box(bx, y + 74, 300, 28, LAST, "warp_sum: the cluster's total in lane 0", 12, "#ffffff")
    A(bx + 301, y + 88, bx + 420, y + 88, "orange", 1.6)
    T(bx + 310, y + 80, "atomicAdd", 12)
    box(bx + 422, y + 74, 110, 28, READ, "*out (L2)", 12)
    BAR(x0 - 8, x0 + c * sw - 2, y + 128, "")
    TM(20, y + 132, "cluster.sync", 12, "s", "fill=\"" HEX["red"] "\"")
    y += 160
    T(20, y, "Purple: lane r of rank 0's warp 0 reads rank r's block_total (map_shared_rank; dashed: from another block's", 12)
    T(20, y + 18, "shared memory, DSMEM); lanes " c " .. 31 take 0. First cluster.sync(): every block_total is written before it is", 12)
    T(20, y + 36, "read. Second: no block exits, freeing its shared memory, while rank 0 may still read it. One atomic per cluster.", 12)
    y += 74
    n = 0
    while ((getline line < FITS) > 0) {
        if (line !~ /^clusters of/) continue
        sub(/^clusters of */, "", line); gsub(/[:=,]/, " ", line)
        split(line, f, " ")
        n++; size[n] = f[1]; fit[n] = f[2]; blocks[n] = f[6]; idle[n] = f[8]
    }
    if (n == 5) {
        F = FITS; sub(/.*\//, "", F)
        TB(20, y, "At large n (" G " block slots: 132 SMs x " PER "; results/" F "):")
        T(20, y + 24, "blocks per cluster", 12); T(20, y + 44, "blocks that fit at once", 12); T(20, y + 64, "atomics to *out", 12)
        for (k = 1; k <= 5; k++) {
            T(260 + k * 90, y + 24, size[k], 12, "e"); T(260 + k * 90, y + 44, blocks[k], 12, "e", blocks[k] < G ? "fill=\"" HEX["red"] "\"" : "")
            T(260 + k * 90, y + 64, fit[k], 12, "e")
        }
        T(20, y + 88, "From clusters of 4 up, whole clusters leave " idle[3] " to " idle[5] " block slots idle (red): fewer atomics, but fewer bytes in flight.", 12)
    }
    close_svg()
}
# ---- lesson 15: a fixed logical partition; Kahan's compensation ----------------------------
function d_partition(   n4, tiles, C, per, x0, cw, y, r, k, c, x, col, cols, lab, warps) {
    n4 = 2 ^ 24; tiles = n4 / 32; C = tiles < CMAX ? tiles : CMAX; per = tiles / C
    open(880, 560, "Lesson 15: gpu_to_gpu, an order fixed by n alone: tiles dealt round-robin to chunks, a warp per chunk")
    TB(20, 24, "n = 2^26 floats (aligned): " comma(n4) " float4s = " comma(tiles) " tiles of 32 float4s (512 bytes), dealt to C = " comma(C) " chunks")
    split(HEX["blue"] " " HEX["orange"] " " HEX["green"] " " HEX["purple"], cols, " ")
    x0 = 130; cw = 84
    for (k = 0; k < 7; k++) {
        c = k < 4 ? k : k == 4 ? -1 : k == 5 ? -2 : C - 1
        x = x0 + k * (cw + 6)
        if (c == -1) { T(x + cw / 2, 52, "...", 14, "m"); continue }
        if (c == -2) continue
        T(x + cw / 2, 52, "chunk " (c == C - 1 ? comma(c) : c), 12, "m", c < 4 ? "fill=\"" cols[c + 1] "\"" : "")
    }
    y = 60
    for (r = 0; r < 4; r++) {
        if (r == 2) { TM(x0 - 8, y + 16, "...", 12, "e"); T(x0 + 250, y + 14, "...", 14, "m"); y += 24; continue }
        TM(x0 - 8, y + 17, "deal " (r == 3 ? per - 1 : r), 12, "e")
        for (k = 0; k < 7; k++) {
            c = k < 4 ? k : k == 4 ? -1 : k == 5 ? -2 : C - 1
            x = x0 + k * (cw + 6)
            if (c == -1) { T(x + cw / 2, y + 17, "...", 14, "m"); continue }
            if (c == -2) continue
            lab = comma((r == 3 ? per - 1 : r) * C + c)
            R(x, y, cw, 24, c < 4 ? cols[c + 1] : "#d0d0d0", "#ffffff", "rx=\"3\"")
            T(x + cw / 2, y + 16, lab, 12, "m", c < 4 ? "fill=\"#ffffff\"" : "")
        }
        y += 30
    }
    T(x0, y + 14, "A box: one tile, by its index. Chunk c holds tiles c, c + " comma(C) ", c + " comma(2 * C) ", ...: " per " tiles each;", 12)
    T(x0, y + 32, "warps that take neighbouring chunks read neighbouring tiles.", 12)
    y += 60
    TB(20, y, "One warp sums one chunk, always in the same order")
    y += 12
    box(20, y, 260, 44, IDLE, "", 12)
    T(30, y + 18, "lane l adds float4 l of each of", 12); T(30, y + 35, "its " per " tiles, in tile order", 12)
    A(281, y + 22, 309, y + 22, "dark", 1.2)
    box(310, y + 8, 150, 28, IDLE, "warp_sum (shuffles)", 12)
    A(461, y + 22, 489, y + 22, "dark", 1.2)
    box(490, y + 8, 150, 28, SHARED, "chunk_sums[c]", 12)
    y += 78
    TB(20, y, "The grid only decides which warp takes which chunk; no add changes")
    warps = 132 * (2048 / B) / (B / 32) * (B / 32)
    T(20, y + 22, "This H100 or H200, -b " B ": " comma(C / (B / 32)) " blocks x " B / 32 " warps = " comma(C) " warps, warp w takes chunk w.", 12)
    T(20, y + 40, "Fewer warps (another GPU, another -b): warp w takes chunks w, w + warps, ... The chunk sums are the same bits.", 12)
    y += 76
    TB(20, y, "The last block (lesson 12's counter) adds the " comma(C) " chunk sums in a fixed tree")
    y += 12
    box(20, y, 170, 44, SHARED, "", 12)
    T(30, y + 18, comma(C) " chunk_sums", 12); T(30, y + 35, "(" comma(C / FL) " per logical lane)", 12)
    A(191, y + 22, 215, y + 22, "dark", 1.2)
    box(216, y, 200, 44, IDLE, "", 12)
    T(226, y + 18, FL " logical lanes: lane f adds", 12); T(226, y + 35, "sums f, f + " FL ", ... in order", 12)
    A(417, y + 22, 441, y + 22, "dark", 1.2)
    box(442, y, 250, 44, IDLE, "", 12)
    T(452, y + 18, "warp 0: lane l adds lanes[" FL / 32 "l]", 12); T(452, y + 35, "... lanes[" FL / 32 "l + " FL / 32 - 1 "], then warp_sum", 12)
    A(693, y + 22, 715, y + 22, "dark", 1.2)
    box(716, y + 8, 150, 28, LAST, "+ head + tail: *out", 12, "#ffffff")
    T(20, y + 72, "Whatever blockDim the last block has, the same " FL " logical lanes: every add's operands and order are set by n", 12)
    T(20, y + 90, "and the input's address mod 16 alone, so another GPU gives the same bits.", 12)
    close_svg()
}
function d_kahan(   y, x, k) {
    open(880, 365, "Lesson 15: Kahan's compensation in Neumaier's form, on adds that lose a whole 1")
    TB(20, 24, "Compensated summation (acc_add, Neumaier's form): keep what each add rounds away")
    TM(40, 54, "t = s + x;", 13)
    TM(40, 76, "c += |s| >= |x| ? (s - t) + x : (x - t) + s;", 13)
    TM(40, 98, "s = t;", 13); T(100, 98, "and at the end, once: s + c", 12, "s", "fill=\"#555555\"")
    TB(20, 138, "From s = 2^24 = 16,777,216, add x = 1 twice in fp32 (above 2^24 the floats are 2 apart):")
    y = 156
    for (k = 1; k <= 2; k++) {
        box(40, y, 150, 32, REG, "s = 16,777,216", 12)
        T(202, y + 21, "+", 16, "m")
        box(214, y, 60, 32, REG, "x = 1", 12)
        A(280, y + 16, 306, y + 16, "dark", 1.4)
        box(310, y, 150, 32, WORK, "t = 16,777,216", 12, "#ffffff")
        A(466, y + 16, 492, y + 16, "green", 1.4)
        box(496, y, 200, 32, SHARED, "c += (s - t) + x: c = " k, 12)
        if (k == 1) { T(706, y + 13, "the 1 is rounded away;", 12); T(706, y + 29, "c keeps it, exactly", 12) }
        y += 44
    }
    box(40, y + 4, 234, 32, SOFT, "plain fp32: 16,777,216", 12)
    T(284, y + 25, "lost 2", 12, "s", "fill=\"" HEX["red"] "\"")
    box(356, y + 4, 340, 32, LAST, "compensated: s + c = 16,777,218 (exact)", 12, "#ffffff")
    y += 76
    T(20, y, "s - t and the add of x lose nothing when |s| >= |x|: c collects every rounding error of the chain. A thread's sum then errs", 12)
    T(20, y + 18, "by at most ~2u sum|x| (u = 2^-24). In the lesson c stops at each chain (a thread's, the last block's): the trees add s + c in fp32.", 12)
    close_svg()
}
# ---- lesson 17: rows mapped to lanes, warps and blocks -----------------------------------
function d_rows(   x0, y, r, k, l, G, U, gcols, cols, f4, x, c, wave, rows, kk, trips) {
    x0 = 110
    open(900, 510, "Lesson 17: who sums a row depends on its width: lanes, a warp or blocks; " B " threads per block")
    split(HEX["blue"] " " HEX["orange"] " " HEX["green"] " " HEX["purple"], gcols, " ")
    # narrow: width 32, float4 loads
    G = 32 / 4; U = GB / 16
    TB(20, 24, "Narrow, width 32: a row is 8 float4 loads, so G = 8 lanes a row; one warp load covers 32 / G = 4 whole rows")
    y = 44
    T(x0 - 8, y + 16, "in", 12, "e")
    for (r = 0; r < 4; r++) {
        R(x0 + r * 160, y, 158, 22, gcols[r + 1], "", "fill-opacity=\"0.25\"")
        for (k = 0; k < 8; k++) R(x0 + r * 160 + k * 20 + 1, y + 2, 18, 18, gcols[r + 1], "", "fill-opacity=\"0.7\"")
        T(x0 + r * 160 + 79, y - 4, "row r + " r, 12, "m")
    }
    T(x0 + 648, y + 16, "512 bytes", 12)
    y += 40
    T(x0 - 8, y + 14, "lane", 12, "e")
    for (l = 0; l < 32; l++) {
        R(x0 + l * 20 + 1, y, 18, 18, gcols[int(l / G) + 1])
        L(x0 + l * 20 + 10, y - 17, x0 + l * 20 + 10, y - 1, "#666666", 1)
    }
    T(x0 + 648, y + 14, "lane l: float4 l", 12)
    y += 40
    T(x0, y, "A trip issues U = GROUP_BYTES / 16 = " U " such loads per lane before adding (" 4 * U " rows), then " lg2(G) " __shfl_xor_sync", 12)
    T(x0, y + 18, "(offsets " G / 2 ", ..., 1) add each row inside its group of " G " lanes; its first lane writes out[r].", 12)
    # medium: width 1000, a warp a row
    y += 56
    f4 = 1000 / 4
    TB(20, y, "Medium, width 1000 (up to " comma(WMAX) " floats): a warp a row, " f4 " float4s, lane l reads float4s l, l + 32, ...")
    y += 16
    T(x0 - 8, y + 16, "row r", 12, "e")
    for (k = 0; k < U2; k++) {
        c = f4 - 32 * k < 32 ? f4 - 32 * k : 32
        if (c <= 0) break
        R(x0 + k * 80, y, c * 2.5 - 1, 22, "#cfe0f1", "#2f6fb0")
        R(x0 + k * 80, y, 5, 22, WORK)
        T(x0 + k * 80 + 42, y + 16, "u = " k, 12, "m")
    }
    T(x0 + 648, y + 16, f4 " float4s", 12)
    y += 42
    T(x0, y, "A box: 32 float4s, one per lane. Dark: lane 0's " U2 " float4s, all in flight at once (UNROLL " U2 ": one trip", 12)
    y += 18
    T(x0, y, "covers " 32 * U2 " >= " f4 "), then warp_sum, with no block barrier.", 12)
    T(x0, y + 18, "Lesson 11's head, float4 body and tail apply to each row.", 12)
    # long: blocks a row
    y += 56
    wave = 660; rows = 64; kk = int(wave / rows)
    TB(20, y, "Long, width 2^20, 64 rows: a block a row would leave SMs idle, so k = " wave " / " rows " = " kk " blocks a row")
    y += 16
    T(x0 - 8, y + 17, "row r", 12, "e")
    for (k = 0; k < kk; k++) box(x0 + k * 64, y, 62, 26, k == 6 ? LAST : "#dce5ef", "block", 12, k == 6 ? "#ffffff" : "")
    T(x0 + kk * 64 + 8, y + 17, "a chunk each", 12)
    y += 34
    for (k = 0; k < kk; k++) A(x0 + k * 64 + 31, y, x0 + 6 * 64 - 80 + k * 222 / (kk - 1), y + 36, k == 6 ? "purple" : "dark", 1.2, "opacity=\"0.6\"")
    y += 38
    box(x0 + 6 * 64 - 100, y, 262, 26, LAST, "row's last block: " kk " partials, fixed order", 12, "#ffffff")
    y += 48
    T(x0, y, wave " = the blocks of " B " that fit at once (5 per SM; launch__grid_size, results/counters-<gpu>.csv).", 12)
    T(x0, y + 18, "Each block stores its chunk's partial and counts itself on the row's own counter (lesson 12's count_done);", 12)
    T(x0, y + 36, "the row's last block adds the " kk " partials in a fixed order: the same bits whichever block is last.", 12)
    close_svg()
}
# ---- lesson 18: shards and the all-reduce ----------------------------------------
function d_shards(   g, n, q, rem, d, y, cols, cnt) {
    g = 4; n = 2 ^ 26 + 3; q = int(n / g); rem = n - q * g
    open(880, 410, "Lesson 18: the array sharded over " g " GPUs, each reduced there, the partials all-reduced by NCCL")
    TB(20, 24, "n = 2^26 + 3 floats over g = " g " GPUs: one shard each (sizes differ by at most one)")
    split(HEX["blue"] " " HEX["orange"] " " HEX["green"] " " HEX["purple"], cols, " ")
    for (d = 0; d < g; d++) {
        y = 50 + d * 66
        TB(20, y + 22, "GPU " d)
        cnt = q + (d < rem ? 1 : 0)
        R(80, y, 210, 34, cols[d + 1], "", "rx=\"3\" fill-opacity=\"0.8\"")
        T(185, y + 15, "shard " d, 12, "m", "fill=\"#ffffff\"")
        T(185, y + 29, comma(cnt) " floats", 12, "m", "fill=\"#ffffff\"")
        A(291, y + 17, 313, y + 17, "dark", 1.2)
        box(314, y, 190, 34, IDLE, "", 12)
        T(409, y + 15, "reduce_fixed_kernel", 12, "m"); T(409, y + 29, G " blocks x " B, 12, "m")
        A(505, y + 17, 527, y + 17, "dark", 1.2)
        box(528, y + 4, 74, 26, SHARED, "part[" d "]", 12)
        A(603, y + 17, 631, y + 17, "dark", 1.2)
        A(751, y + 17, 779, y + 17, "dark", 1.2)
        box(780, y + 4, 82, 26, LAST, "total", 12, "#ffffff")
    }
    R(632, 50, 118, 3 * 66 + 34, READ, EDGE, "rx=\"4\"")
    T(691, 150, "ncclAllReduce", 12, "m"); T(691, 168, "(ncclSum),", 12, "m"); T(691, 186, "one float", 12, "m"); T(691, 204, "per GPU", 12, "m")
    y = 50 + g * 66 + 14
    T(20, y, "Each GPU's kernel and its part of the all-reduce go on that GPU's stream: the all-reduce reads part[d] only after", 12)
    T(20, y + 18, "the kernel wrote it, with no host synchronisation between them. Afterwards EVERY GPU holds the total.", 12)
    T(20, y + 44, "Large n: each GPU reads n / g floats from its own memory, so the GB/s of all GPUs add up.", 12)
    T(20, y + 62, "Small n: all-reducing one float costs a handshake over the link, which does not shrink with n.", 12)
    close_svg()
}
function d_ring(   g, cx, cy, rr, d, a, x, y, k, st, xs, c, full, cols) {
    g = 4
    open(880, 345, "Lesson 18: the ring all-reduce of a vector of S bytes over " g " GPUs, and why busbw = algbw x 2(g-1)/g")
    TB(20, 24, "Ring all-reduce over g = " g " GPUs: the vector is cut into " g " chunks of S/" g)
    cx = 110; cy = 150; rr = 70
    for (d = 0; d < g; d++) {
        a = -3.14159265 / 2 + d * 2 * 3.14159265 / g
        x = cx + rr * cos(a); y = cy + rr * sin(a)
        box(x - 32, y - 14, 64, 28, IDLE, "GPU " d, 12)
    }
    for (d = 0; d < g; d++) {
        a = -3.14159265 / 2 + (d + 0.5) * 2 * 3.14159265 / g
        A(cx + (rr - 20) * cos(a - 0.35), cy + (rr - 20) * sin(a - 0.35), cx + (rr - 20) * cos(a + 0.35), cy + (rr - 20) * sin(a + 0.35), "dark", 1.4)
    }
    T(cx, cy + rr + 40, "each sends to the next", 12, "m")
    split("start|after reduce-scatter, " g - 1 " steps|after all-gather, " g - 1 " more", st, "|")
    split(HEX["blue"] " " HEX["orange"] " " HEX["green"] " " HEX["purple"], cols, " ")
    for (k = 0; k < 3; k++) {
        xs = 260 + k * 205
        T(xs, 60, st[k + 1], 12)
        for (c = 0; c < g; c++) T(xs + c * 40 + 18, 80, "c" c, 12, "m", "fill=\"#666666\"")
        for (d = 0; d < g; d++) {
            y = 88 + d * 34
            if (k == 0) T(xs - 8, y + 19, "GPU " d, 12, "e")
            for (c = 0; c < g; c++) {
                full = k == 2 || (k == 1 && c == d)
                if (full) box(xs + c * 40, y, 36, 28, cols[c + 1], "sum", 12, "#ffffff")
                else if (k == 0) box(xs + c * 40, y, 36, 28, "#ffffff", "own", 12)
                else box(xs + c * 40, y, 36, 28, SOFT, "part", 12, "#888888")
            }
        }
        if (k < 2) A(xs + g * 40 + 6, 88 + 2 * 34, xs + g * 40 + 34, 88 + 2 * 34, "dark", 1.4)
    }
    y = 88 + g * 34 + 30
    T(260, y, "reduce-scatter: each step a GPU sends one chunk (S/" g ") to the next, which adds it in; GPU k ends", 12)
    T(260, y + 18, "with the full sum of chunk k. all-gather: the finished chunks travel on until every GPU has all.", 12)
    y += 52
    T(20, y, "Bytes each GPU sends: 2(g - 1) S / g = " 2 * (g - 1) / g " S for g = " g ". So busbw = algbw x 2(g - 1)/g, what each link carried per second:", 12)
    T(20, y + 18, "factor 1 for 2 GPUs, 1.5 for 4, 1.75 for 8 (and 0 for one GPU, where the program prints 0).", 12)
    close_svg()
}
AWK

cat >>"$tmpa" <<'AWK'
BEGIN {
    init()
    if (D == "03") { B = b; d_tree(3) }
    if (D == "04") { B = b; d_tree(4) }
    if (D == "05") { B = b; d_tree(5) }
    if (D == "06") { B = b; d_load_add() }
    if (D == "07") { B = b; d_last_warp() }
    if (D == "08") { B = b; d_unrolled() }
    if (D == "09") { B = b; SMS = sms; G = sms * int(2048 / b); d_grid_stride() }
    if (D == "10") { d_shuffle(0) }
    if (D == "10x") { d_shuffle(1) }
    if (D == "10b") { B = b; d_block_sum() }
    if (D == "11") { B = b; U = u; d_float4() }
    if (D == "12") { B = b; G = 67108864 / (4 * b * u) / 4; d_last_block() } # one block per 4 tiles of b x u float4s, n = 2^26
    if (D == "12a") { B = b; G = 67108864 / (4 * b * u); d_atomic() } # one block per tile of b x u float4s, n = 2^26
    if (D == "13") { B = b; PER = m; G = 132 * m; d_cluster() }
    if (D == "15") { B = b; CMAX = cmax; FL = fl; d_partition() }
    if (D == "15k") { d_kahan() }
    if (D == "17") { B = b; GB = gb; WMAX = w; U2 = u; d_rows() }
    if (D == "18") { B = b; G = 132 * int(2048 / b); d_shards() }
    if (D == "18r") { d_ring() }
    if (D == "04b") { B = b; d_banks(4) }
    if (D == "05b") { B = b; d_banks(5) }
}
AWK

draw() { # draw KEY FILE [awk -v assignments]
    key=$1 file=$2; shift 2
    awk -v D="$key" "$@" -f "$tmpa" >"$file" || { echo "diagrams.sh: $file failed" >&2; exit 1; }
    echo "wrote $file"
}
d=$(dir 03); draw 03 "$d/tree.svg" -v b="$B03"
d=$(dir 04); draw 04 "$d/tree.svg" -v b="$B04"; draw 04b "$d/banks.svg" -v b="$B04"
d=$(dir 05); draw 05 "$d/tree.svg" -v b="$B05"; draw 05b "$d/banks.svg" -v b="$B05"
d=$(dir 06); draw 06 "$d/load_add.svg" -v b="$B06"
d=$(dir 07); draw 07 "$d/last_warp.svg" -v b="$B07"
d=$(dir 08); draw 08 "$d/unrolled.svg" -v b="$B08"
d=$(dir 09); draw 09 "$d/grid_stride.svg" -v b="$B09" -v sms=132
d=$(dir 10); draw 10 "$d/shuffle_down.svg"; draw 10x "$d/shuffle_xor.svg"; draw 10b "$d/block_sum.svg" -v b="$B10"
d=$(dir 11); draw 11 "$d/head_body_tail.svg" -v b="$B11" -v u="$U11"
d=$(dir 12); draw 12 "$d/last_block.svg" -v b="$B12" -v u="$U12"; draw 12a "$d/atomic.svg" -v b="$B12" -v u="$U12"
fits=$(ls results/lesson13-clusters-*.txt 2>/dev/null | head -n 1)
d=$(dir 13); draw 13 "$d/cluster.svg" -v b="$B13" -v m="$M13" -v FITS="$fits"
d=$(dir 15); draw 15 "$d/partition.svg" -v b="$B15" -v cmax="$C15" -v fl="$F15"; draw 15k "$d/kahan.svg"
d=$(dir 17); draw 17 "$d/rows.svg" -v b="$B17" -v gb="$GB17" -v w="$W17" -v u="$U17"
d=$(dir 18); draw 18 "$d/shards.svg" -v b="$B18"; draw 18r "$d/ring.svg"
