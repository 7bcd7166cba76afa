#!/bin/sh
# Every decimal figure in a markdown table of README.md, a lesson's notes.md or a lab page
# must be found in a file under results/: the same digits, or a value there
# that rounds to it. Code cells and exponents (2^26) are not figures.
# Prints the count and each figure not found; exit 1 if any.
cd "$(dirname "$0")/.." || exit 1
find results -type f ! -name '*.svg' | sort >"${TMPDIR:-/tmp}/figs.$$"
awk -v LIST="${TMPDIR:-/tmp}/figs.$$" '
BEGIN {
    while ((getline f < LIST) > 0) {
        while ((getline line < f) > 0) {
            s = line
            while (match(s, /[0-9]+(\.[0-9]+)?/)) {
                t = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
                have[t] = 1
                if (index(t, ".")) for (d = 0; d <= 4; d++) have[sprintf("%." d "f", t + 0)] = 1
                else have[t ".0"] = 1
            }
        }
        close(f)
    }
}
/^[ \t]*\|/ {
    if ($0 ~ /^[ \t|:-]+$/) next
    nc = split($0, cell, "|")
    for (i = 1; i <= nc; i++) {
        c = cell[i]; if (index(c, "`") || index(c, "^")) continue
        while (match(c, /[0-9]+\.[0-9]+/)) {
            t = substr(c, RSTART, RLENGTH); before = (RSTART > 1) ? substr(c, RSTART - 1, 1) : " "
            after = substr(c, RSTART + RLENGTH, 1); c = substr(c, RSTART + RLENGTH)
            if (before ~ /[A-Za-z0-9_.^]/ || after ~ /[A-Za-z0-9_.]/) continue
            total++
            if (!(t in have)) { bad++; if (bad <= 40) printf "  %s:%d: %s\n", FILENAME, FNR, t }
        }
    }
}
END { printf "table figures: %d, not found under results/: %d\n", total, bad; exit bad > 0 }
' README.md lessons/[0-9][0-9]_*/notes.md lab/*.md
rc=$?
rm -f "${TMPDIR:-/tmp}/figs.$$"
exit $rc
