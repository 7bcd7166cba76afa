#!/bin/sh
# make hint E=NN [H=k] (or: sh scripts/hint.sh NN [k]): the hints of exercise
# NN, one at a time, from exercises/hints/NN.txt.
#
#   no H   the next hint not yet shown (a nudge, then the approach, then the
#          answer key, and last the stretch's answer where there is one);
#          which one it is and how many remain. Progress is kept in
#          runs/hints/NN (HINTS_STATE names another folder).
#   H=k    hint k again (or ahead); the next plain call goes on after it.
#   H=0    forgets the progress: the next call starts at hint 1.
#
# A hints file is plain text: each hint starts with a line "== Hint K: what
# it is" (the stretch's answer with "== The stretch's answer"), and runs to
# the next such line. Exit code: 0, or 2 for bad usage. POSIX sh.
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/common.sh

usage() { echo "usage: make hint E=NN [H=k]  (e.g. make hint E=04; H=2 shows hint 2, H=0 starts over)" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
[ -n "$1" ] || usage
e=$(lesson_num E "$1") || exit 2
file=exercises/hints/$e.txt
if [ ! -f "$file" ]; then
    have=$(ls exercises/hints/ 2>/dev/null | sed -n 's/^\([0-9][0-9]\)\.txt$/\1/p')
    echo "there is no exercise $e with hints (the exercises: $(echo "$have" | head -n 1) to $(echo "$have" | tail -n 1))" >&2
    exit 2
fi
total=$(grep -c '^== ' "$file")
[ "$total" -ge 1 ] || { echo "$file holds no hint (no line starting with '== ')" >&2; exit 2; }

state_dir=${HINTS_STATE:-runs/hints}
state=$state_dir/$e
shown=0
[ -f "$state" ] && shown=$(sed -n '1{s/[^0-9]//g;p;}' "$state")
case $shown in "" | *[!0-9]* | ????*) shown=0 ;; esac

h=${2:-}
case $h in
"") k=$((shown + 1)) ;;
*[!0-9]*) echo "H=$h is not a number: give 1 to $total for a hint of exercise $e, or 0 to start over" >&2; exit 2 ;;
*) k=$(echo "$h" | sed 's/^0*//'); k=${k:-0} ;;
esac
if [ -z "$h" ] && [ "$shown" -ge "$total" ]; then
    echo "Exercise $e: hint $total was its last."
    echo "make hint E=$e H=k prints hint k again; H=0 starts over."
    exit 0
fi
if [ ${#k} -gt 3 ] || [ "$k" -gt "$total" ]; then
    echo "exercise $e has $total hints: H=$h is not one of them (H=1 to H=$total, or H=0 to start over)" >&2
    exit 2
fi

if [ "$k" -eq 0 ]; then
    rm -f "$state"
    echo "Exercise $e: hints start over. make hint E=$e prints hint 1."
    exit 0
fi

# Hint k: the lines after the k-th "== " line, up to the next one, without
# the blank lines at either end.
title=$(awk -v k="$k" '/^== / { if (++c == k) { sub(/^== */, ""); print; exit } }' "$file")
echo "Exercise $e, $title ($k of $total)"
echo
awk -v k="$k" '
    /^== / { c++; next }
    c == k { line[++m] = $0 }
    END {
        first = 1; while (first <= m && line[first] ~ /^[ \t]*$/) first++
        last = m; while (last >= first && line[last] ~ /^[ \t]*$/) last--
        for (i = first; i <= last; i++) print line[i]
    }' "$file"
echo

if mkdir -p "$state_dir" 2>/dev/null && [ "$k" -gt "$shown" ]; then echo "$k" >"$state"; fi
left=$((total - k))
if [ "$left" -eq 0 ]; then
    echo "-- That was the last one. make hint E=$e H=k prints hint k again; H=0 starts over."
else
    next=$(awk -v k=$((k + 1)) '/^== / { if (++c == k) { sub(/^== */, ""); print; exit } }' "$file")
    [ "$left" -eq 1 ] && more="1 more" || more="$left more"
    echo "-- $more: make hint E=$e prints the next ($next)."
fi
exit 0
