#!/bin/sh
# make diff L=NN: what lesson NN changes in the lesson it builds on (its base in
# lessons/manifest.txt: the lesson before it, or lesson 12 for 14-18).
#
# Both files are cut into top-level blocks (a function or kernel with the
# comment above it, a group of #defines, ...: text between blank lines outside
# any braces), and blocks are matched by the name they define. A block copied
# unchanged is only named, wherever it sits; a changed block is shown as a
# diff; new and removed blocks are shown whole. The last line counts the code
# lines that changed (added plus removed; comment and blank lines not counted).
#
# usage: sh scripts/diff.sh NN [--count]   (5, 05 and 005 all mean lesson 05;
#        --count prints only the number of changed code lines)
#        sh scripts/diff.sh --files A.cu B.cu [--count]   (any two files)
LC_ALL=C; export LC_ALL # the same sort order, number format and checksums in every locale
cd "$(dirname "$0")/.." || exit 1
. scripts/common.sh

count_only=0
if [ "${1:-}" = "--files" ]; then
    [ $# -ge 3 ] || { echo "usage: sh scripts/diff.sh --files A.cu B.cu [--count]" >&2; exit 2; }
    a=$2 b=$3
    [ "${4:-}" = "--count" ] && count_only=1
    [ -f "$a" ] && [ -f "$b" ] || { echo "diff.sh: $a or $b is not a file" >&2; exit 2; }
else
    [ $# -ge 1 ] && [ -n "$1" ] || { echo "usage: make diff L=NN (e.g. make diff L=05: what changed since lesson 04)" >&2; exit 2; }
    [ "${2:-}" = "--count" ] && count_only=1
    nn=$(lesson_num L "$1") || exit 2
    b=$(lesson_src "$nn")
    [ -n "$b" ] || { echo "there is no lesson $nn: the lessons are $(lesson_range) (ls lessons/)" >&2; exit 2; }
    base=$(lesson_field "$nn" base)
    if [ -z "$base" ]; then
        echo "lesson $nn is not in lessons/manifest.txt: add its line there (its base lesson, among others)" >&2
        exit 2
    fi
    if [ "$base" = "-" ]; then
        echo "lesson $nn is the first lesson: there is nothing before it to diff against." >&2
        echo "Read $b on its own, or try make diff L=02." >&2
        exit 2
    fi
    a=$(lesson_src "$base")
    [ -n "$a" ] || { echo "lesson $nn builds on lesson $base, which is not there" >&2; exit 2; }
fi

scratch_dir diff

# blocks FILE DIR: DIR/NNNN.txt is the NNNN-th block as written, DIR/NNNN.code
# the same without comments and blank lines, DIR/keys "NNNN<TAB>name" in order.
blocks() {
    mkdir -p "$2"
    awk -v dir="$2" -f scripts/blocks.awk "$1"
    [ -f "$2/keys" ] || : >"$2/keys"
}

blocks "$a" "$tmp/a"
blocks "$b" "$tmp/b"

# lines_of FILE: the number of lines in it
lines_of() { wc -l <"$1" | tr -d ' '; }
total=0
unchanged="" recommented="" changed="" added="" removed=""
: >"$tmp/show"
while IFS="$(printf '\t')" read -r k key; do
    match=$(awk -F'\t' -v key="$key" '$2 == key { print $1; exit }' "$tmp/a/keys")
    if [ -n "$match" ]; then
        echo "$match" >>"$tmp/matched"
        if cmp -s "$tmp/a/$match.txt" "$tmp/b/$k.txt"; then
            case $key in "comment: "*) ;; *) unchanged="$unchanged, $key" ;; esac
            continue
        fi
        if cmp -s "$tmp/a/$match.code" "$tmp/b/$k.code"; then # the same code, other comments
            recommented="$recommented, $key"
            continue
        fi
        n=$(diff "$tmp/a/$match.code" "$tmp/b/$k.code" | grep -c '^[<>]')
        total=$((total + n))
        changed="$changed, $key"
        { echo "@@ changed: $key ($n code lines)"
          diff -u "$tmp/a/$match.txt" "$tmp/b/$k.txt" | sed '1,2d'
          echo; } >>"$tmp/show"
    else
        n=$(lines_of "$tmp/b/$k.code")
        total=$((total + n))
        case $key in "comment: "*) ;; *) added="$added, $key" ;; esac
        { echo "@@ new: $key ($n code lines)"
          sed 's/^/+/' "$tmp/b/$k.txt"
          echo; } >>"$tmp/show"
    fi
done <"$tmp/b/keys"
while IFS="$(printf '\t')" read -r k key; do
    grep -qx "$k" "$tmp/matched" 2>/dev/null && continue
    n=$(lines_of "$tmp/a/$k.code")
    total=$((total + n))
    case $key in "comment: "*) ;; *) removed="$removed, $key" ;; esac
    { echo "@@ removed: $key ($n code lines)"
      sed 's/^/-/' "$tmp/a/$k.txt"
      echo; } >>"$tmp/show"
done <"$tmp/a/keys"

if [ $count_only = 1 ]; then echo "$total"; exit 0; fi
echo "--- $a"
echo "+++ $b"
[ -n "$unchanged" ] && echo "unchanged: ${unchanged#, }"
[ -n "$recommented" ] && echo "same code, other comments: ${recommented#, }"
[ -n "$changed" ] && echo "changed:   ${changed#, }"
[ -n "$added" ] && echo "new:       ${added#, }"
[ -n "$removed" ] && echo "removed:   ${removed#, }"
echo
cat "$tmp/show"
echo "$total changed code lines ($b against $a; comments and blank lines not counted)"
exit 0
