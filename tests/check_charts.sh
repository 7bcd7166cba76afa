#!/bin/sh
# The charts in results/ (run-<gpu>.svg, bench-<gpu>.svg) are drawn by
# scripts/plot.sh from results/ and never edited by hand: redrawn in a scratch
# copy, each must equal the committed one, and no committed chart may be one
# that plot.sh no longer draws. Then a self-test (a scratch copy whose charts
# are up to date passes; the same copy with one CSV figure changed fails), and,
# where Chromium is installed, every SVG under results/ and lessons/ rendered
# headless: it must load without an error and give a picture.
# usage: sh tests/check_charts.sh [ROOT]   ROOT: another copy of the project to
#        check (drift only: no self-test, no browser)
# Prints "ok ..." / "not ok ..." lines (details indented below); exit 1 if any failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${1:-$here/..}" && pwd) || exit 2
nested=${1:+yes}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-charts.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
ok() { echo "ok $1"; }
notok() { echo "not ok $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed '/^$/d' | head -n 12 | sed 's/^/    /'; fails=$((fails + 1)); }
charts() { ls "$1"/results/run-*.svg "$1"/results/bench-*.svg 2>/dev/null; }

# A copy of what plot.sh reads: results/, the scripts, and the sources whose
# checksums say which rows are of current code (lessons/, solutions/, lab/).
copy() { # FROM TO
    mkdir -p "$2" && cp -r "$1/results" "$1/scripts" "$1/lessons" "$2"/ || return 1
    for d in solutions lab; do [ ! -d "$1/$d" ] || cp -r "$1/$d" "$2"/ || return 1; done
}

# ---- the committed charts against what results/ draws now
S=$tmp/drift
if ! copy "$root" "$S"; then
    notok "charts: cannot copy $root to a scratch folder"
else
    rm -f "$S"/results/run-*.svg "$S"/results/bench-*.svg
    (cd "$S" && sh scripts/plot.sh results) >"$tmp/plot.log" 2>&1
    stale="" n=0
    for svg in $(charts "$S"); do
        n=$((n + 1)); b=$(basename "$svg")
        if [ ! -f "$root/results/$b" ]; then
            stale="${stale}results/$b: not committed (make plot draws it)
"
        elif ! cmp -s "$svg" "$root/results/$b"; then
            stale="${stale}results/$b differs from what results/ draws (make plot redraws it):
$(diff "$root/results/$b" "$svg" | grep '^[<>]' | head -n 4 | cut -c1-150)
"
        fi
    done
    for svg in $(charts "$root"); do
        b=$(basename "$svg")
        [ -f "$S/results/$b" ] || stale="${stale}results/$b: a chart scripts/plot.sh no longer draws (remove it)
"
    done
    if [ -n "$stale" ]; then
        notok "charts in results/ differ from what scripts/plot.sh draws from results/" "$stale"
    elif [ $n -eq 0 ]; then
        notok "scripts/plot.sh drew no chart from results/" "$(cat "$tmp/plot.log")"
    else
        ok "charts in results/ match what scripts/plot.sh draws from results/ ($n charts)"
    fi
fi
[ -z "$nested" ] || { [ $fails -eq 0 ]; exit; }

# ---- self-test: in a scratch copy whose every row counts as current code and
# whose charts are redrawn, the check passes; one figure of a run CSV changed
# (the share of peak of a lesson the staircase draws), it fails on that chart.
S=$tmp/self
if copy "$root" "$S" && (cd "$S" && sh scripts/code_hash.sh >"$tmp/hashes" &&
    awk -F'\t' 'NR == FNR { cur[$1] = $2; next } /^#/ || !($2 in cur) { print; next } { print $1 "\t" $2 "\t" cur[$2] }' \
        "$tmp/hashes" results/code.txt >"$tmp/code.txt" && cp "$tmp/code.txt" results/code.txt &&
    rm -f results/run-*.svg results/bench-*.svg && sh scripts/plot.sh results >/dev/null 2>&1); then
    csv=$(ls "$S"/results/run-*.csv 2>/dev/null | head -n 1)
    before=$(sh "$here/check_charts.sh" "$S" 2>&1)
    if [ -n "$csv" ]; then
        awk -F, -v OFS=, 'NR == FNR { split($0, w, "\t"); if (w[1] ~ /^[0-9][0-9]$/) shows[w[1]] = w[2]; next }
            FNR > 1 && !done && $1 ~ /^(0[3-9]|1[0-3])_/ && $2 == shows[substr($1, 1, 2)] && $11 + 0 > 0 { $11 = sprintf("%.1f", $11 / 2); done = 1 }
            { print }' "$S/lessons/manifest.txt" "$csv" >"$tmp/changed.csv" && cp "$tmp/changed.csv" "$csv"
    fi
    after=$(sh "$here/check_charts.sh" "$S" 2>&1)
    if [ -z "$csv" ]; then
        notok "chart check self-test: no results/run-*.csv to change"
    elif echo "$before" | grep -q '^ok ' && echo "$after" | grep -q '^not ok ' && echo "$after" | grep -q "$(basename "${csv%.csv}").svg differs"; then
        ok "the chart check fails when a figure in results/$(basename "$csv") changes after the charts were drawn (self-test)"
    else
        notok "chart check self-test: a changed figure in results/$(basename "$csv") went unnoticed" "$before
$after"
    fi
else
    notok "chart check self-test: cannot set up a scratch copy"
fi

# ---- every SVG, charts and diagrams, rendered in a real browser where there is one
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
svgs=$(find "$root/results" "$root/lessons" -name '*.svg' -type f 2>/dev/null | sort)
if [ -z "$BROWSER" ]; then
    echo "ok every SVG renders in a browser # skip: no chromium"
elif [ -z "$svgs" ]; then
    echo "ok every SVG renders in a browser # skip: no SVG files"
else
    bad="" n=0
    for svg in $svgs; do
        n=$((n + 1)); rm -f "$tmp/shot.png"
        # --dump-dom prints the document as loaded: an SVG that is not well-formed XML
        # comes back as Chromium's <parsererror> page (still drawn as a picture)
        timeout 60 "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,900 \
            --screenshot="$tmp/shot.png" --dump-dom "file://$svg" >"$tmp/dom" 2>"$tmp/browser.log"
        rc=$?
        if [ $rc -ne 0 ]; then bad="$bad${svg#"$root"/}: $(basename "$BROWSER") exit $rc: $(grep -v dbus "$tmp/browser.log" | tail -n 1)
"
        elif grep -q '<parsererror' "$tmp/dom"; then bad="$bad${svg#"$root"/}: $(sed -n 's/.*\(error on line [^<]*\).*/\1/p' "$tmp/dom" | head -n 1)
"
        elif [ ! -s "$tmp/shot.png" ]; then bad="$bad${svg#"$root"/}: no picture
"
        fi
    done
    if [ -n "$bad" ]; then notok "SVGs that do not render in $(basename "$BROWSER")" "$bad"
    else ok "every SVG under results/ and lessons/ renders in $(basename "$BROWSER") ($n files)"; fi
fi
[ $fails -eq 0 ]
