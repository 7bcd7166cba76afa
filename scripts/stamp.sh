#!/bin/sh
# Records which code a results file measured, in results/code.txt
# ("file<TAB>key<TAB>checksum", the checksum from scripts/code_hash.sh). The
# tables (scripts/tables.sh) show a figure only while its program's code still
# has that checksum; otherwise "—" until it is measured again.
# usage: sh scripts/stamp.sh FILE [KEY ...]
#   KEYs: NN (lesson), exNN (the solution of exercise NN), lab_NN_topic. By
#   default, the keys of the programs whose rows FILE holds (its lesson column:
#   "12_single_pass" -> 12, "ex02_atomic" -> ex02), or the lesson its name
#   names (results/lesson15-... -> 15).
LC_ALL=C; export LC_ALL # the same sort order, number format and checksums in every locale
cd "$(dirname "$0")/.." || exit 1
[ $# -ge 1 ] || { echo "usage: sh scripts/stamp.sh results/FILE [KEY ...]" >&2; exit 2; }
f=$1; shift
[ -f "$f" ] || { echo "stamp.sh: $f is not a file" >&2; exit 2; }
name=$(basename "$f")
if [ $# -eq 0 ]; then
    keys=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "lesson") c = i; next }
                    c && $c ~ /^lab_[0-9][0-9]_/ { if (!($c in s)) { s[$c] = 1; print $c }; next }
                    c && $c ~ /^(ex)?[0-9][0-9]/ { k = $c; sub(/_.*/, "", k); sub(/[^0-9]+$/, "", k); if (!(k in s)) { s[k] = 1; print k } }' "$f")
    [ -n "$keys" ] || keys=$(echo "$name" | sed -n 's/.*lesson\([0-9][0-9]\).*/\1/p')
    [ -n "$keys" ] || { echo "stamp.sh: which program measured $name? name its keys" >&2; exit 2; }
    set -- $keys
fi
S=results/code.txt
[ -f "$S" ] || printf '# The code each results file measured: file, program (NN lesson, exNN solution,\n# lab_NN_topic), checksum of its code (scripts/code_hash.sh). Written by scripts/stamp.sh.\n' >"$S"
# the file's new lines where its old ones were (at the end for a new file), so that
# stamping a file again leaves the others in place
sh scripts/code_hash.sh "$@" | awk -v f="$name" '{ print f "\t" $0 }' >"$S.new"
awk -F'\t' -v f="$name" -v NEW="$S.new" '
    $1 == f { if (!done) { while ((getline l < NEW) > 0) print l; done = 1 } next }
    { print }
    END { if (!done) while ((getline l < NEW) > 0) print l }' "$S" >"$S.tmp"
rm -f "$S.new"
mv "$S.tmp" "$S"
