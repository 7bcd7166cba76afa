#!/bin/sh
# The code a results file measured, as one checksum per program: the program's
# source cut into top-level blocks (scripts/blocks.awk), without comments and
# blank lines, the blocks sorted (so moving a function or rewording a comment
# changes nothing). Keys: NN (lessons/NN_*/NN_*.cu), exNN (solutions/NN_*.cu:
# an exercise's measured rows come from its solution), lab_NN_topic (lab/).
# usage: sh scripts/code_hash.sh [KEY ...]     prints "KEY<TAB>checksum" lines (all keys by default)
LC_ALL=C; export LC_ALL # the same sort order, number format and checksums in every locale
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/code-hash.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
src_of() {
    case $1 in
    ex[0-9][0-9]) ls solutions/"${1#ex}"_*.cu 2>/dev/null | head -n 1 ;;
    lab_*) ls lab/"${1#lab_}".cu 2>/dev/null ;;
    *) ls lessons/"$1"_*/"$1"_*.cu 2>/dev/null | head -n 1 ;;
    esac
}
if [ $# -eq 0 ]; then
    set -- $(ls -d lessons/[0-9][0-9]_*/ 2>/dev/null | sed 's|lessons/||; s|_.*||') \
           $(ls solutions/[0-9][0-9]_*.cu 2>/dev/null | sed 's|solutions/|ex|; s|_.*||') \
           $(ls lab/[0-9][0-9]_*.cu 2>/dev/null | sed 's|lab/|lab_|; s|\.cu$||')
fi
for key in "$@"; do
    src=$(src_of "$key")
    [ -n "$src" ] || continue
    rm -rf "$tmp/b" && mkdir -p "$tmp/b" && awk -v dir="$tmp/b" -f scripts/blocks.awk "$src"
    sum=$(for c in "$tmp"/b/*.code; do [ -s "$c" ] && { sed 's/^[ \t]*//' "$c" | tr -s ' \t' '  '; echo "----"; }; done | sort | cksum | cut -d' ' -f1)
    printf '%s\t%s\n' "$key" "$sum"
done
