#!/bin/sh
# make diff L=NN: what changed from lesson NN-1 to lesson NN (unified diff).
# usage: sh scripts/diff.sh NN        (5, 05 and 005 all mean lesson 05)
cd "$(dirname "$0")/.." || exit 1
. scripts/common.sh

[ $# -ge 1 ] && [ -n "$1" ] || { echo "usage: make diff L=NN (e.g. make diff L=05: what changed since lesson 04)" >&2; exit 2; }
nn=$(lesson_num L "$1") || exit 2
b=$(lesson_src "$nn")
[ -n "$b" ] || { echo "there is no lesson $nn: the lessons are $(lesson_range) (ls lessons/)" >&2; exit 2; }
if [ "$nn" = 01 ]; then
    echo "lesson 01 is the first lesson: there is nothing before it to diff against." >&2
    echo "Read $b on its own, or try make diff L=02." >&2
    exit 2
fi
prev=$(printf '%02d' $(( $(echo "$nn" | sed 's/^0//') - 1 )))
a=$(lesson_src "$prev")
[ -n "$a" ] || { echo "lesson $nn has no lesson $prev before it to diff against" >&2; exit 2; }
diff -u "$a" "$b"
rc=$?
# diff says 1 when the files differ, which is the point here; 2 is real trouble.
[ $rc -le 1 ] || exit $rc
exit 0
