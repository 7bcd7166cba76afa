#!/bin/sh
# The lessons' layout, checked without a GPU (host tier of make test):
#   - lessons/manifest.txt has one well-formed line for every lesson folder, and none for a missing one;
#   - each lesson file stays short (02-13: 250 lines, 14 on: 350), has no kernel
#     inside a macro and no #ifndef tuning override;
#   - make diff L=NN against the lesson's base stays small: 80 changed code
#     lines for 03-13, 150 for 14 on;
#   - from lesson 13 on, warp_sum, block_sum and count_done are lesson 12's,
#     byte for byte, unless the line above the copy says
#     "// differs from lesson 12's: <why>";
#   - lesson 14's reduce_atomic_kernel and reduce_fixed_kernel are lesson 12's
#     code, comments aside (lesson 14 times lesson 12's kernels unchanged);
#   - each lesson's notes.md is read in one sitting: at most 3,000 words in
#     all, 2,000 of them prose (outside code blocks, tables and markers).
# Prints "ok ..." / "not ok ..." lines. usage: sh tests/check_layout.sh [ROOT]
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 1
M=lessons/manifest.txt
T=${TMPDIR:-/tmp}/layout.$$
mkdir -p "$T" && trap 'rm -rf "$T"' EXIT

pass() { echo "ok $*"; }
fail() { echo "not ok $*"; [ -n "${WHY:-}" ] && printf '%s\n' "$WHY" | sed 's/^/    /'; WHY=""; }
WHY=""

# ---- the manifest
if [ ! -f "$M" ]; then
    fail "lessons/manifest.txt exists"
    exit 0
fi
folders=$(ls -d lessons/[0-9][0-9]_*/ 2>/dev/null | sed 's|lessons/||; s|_.*||')
listed=$(awk -F'\t' '$1 ~ /^[0-9][0-9]$/ { print $1 }' "$M")
missing="" extra="" malformed=""
for n in $folders; do echo "$listed" | grep -qx "$n" || missing="$missing $n"; done
for n in $listed; do echo "$folders" | grep -qx "$n" || extra="$extra $n"; done
malformed=$(awk -F'\t' '
    $1 ~ /^[0-9][0-9]$/ {
        if (NF != 7) { print $1 ": " NF " columns, not 7"; next }
        if ($3 !~ /^(yes|no)$/ || $5 !~ /^(yes|no)$/ || $6 !~ /^(yes|no)$/) print $1 ": step, big and bench are yes or no"
        if ($4 != "-" && ($4 !~ /^[0-9][0-9]$/ || $4 + 0 >= $1 + 0)) print $1 ": base " $4 " is not an earlier lesson"
        if ($2 == "" || $7 == "") print $1 ": shows and change must not be empty"
    }
    $1 == "ptx" && NF != 4 { print "ptx line for " $2 ": " NF " columns, not 4" }' "$M")
WHY="${missing:+lesson folders with no manifest line:$missing}${extra:+ manifest lines with no lesson folder:$extra}"
[ -z "$missing$extra" ] && pass "lessons/manifest.txt lists every lesson folder and no other" ||
    fail "lessons/manifest.txt lists every lesson folder and no other"
WHY=$malformed
[ -z "$malformed" ] && pass "lessons/manifest.txt: every line well formed (7 columns, bases earlier lessons)" ||
    fail "lessons/manifest.txt: every line well formed"
unk=$(awk -F'\t' '$1 == "ptx" { print $2 }' "$M" | sort -u | while read -r n; do echo "$folders" | grep -qx "$n" || printf ' %s' "$n"; done)
WHY=${unk:+ptx lines for lessons that do not exist:$unk}
[ -z "$unk" ] && pass "lessons/manifest.txt: ptx lines name existing lessons" || fail "lessons/manifest.txt: ptx lines name existing lessons"

# ---- each lesson file
for n in $folders; do
    f=$(ls lessons/"$n"_*/"$n"_*.cu 2>/dev/null | head -n 1)
    [ -n "$f" ] || { fail "lesson $n has its .cu file"; continue; }
    lim=250; [ "$n" -ge 14 ] && lim=350
    l=$(wc -l <"$f" | tr -d ' ')
    [ "$l" -le "$lim" ] && pass "$f: $l lines (at most $lim)" || fail "$f: $l lines, more than $lim"
    # A macro whose text (with its continuation lines) holds __global__.
    mk=$(awk '/^[ \t]*#[ \t]*define/ || cont { if ($0 ~ /__global__/) { print FILENAME ":" FNR; exit } cont = ($0 ~ /\\$/); next }' "$f")
    WHY=${mk:+__global__ inside a #define at $mk}
    [ -z "$mk" ] && pass "$f: every kernel is a __global__ function, none inside a macro" || fail "$f: a kernel inside a macro"
    nd=$(grep -n '^[ \t]*#[ \t]*ifndef' "$f" | head -n 3)
    WHY=${nd:+$nd}
    [ -z "$nd" ] && pass "$f: no #ifndef tuning override" || fail "$f: #ifndef override (one configuration per lesson: experiments go to lab/)"
done

# ---- make diff against the base
for n in $folders; do
    [ "$n" -ge 3 ] || continue
    base=$(awk -F'\t' -v n="$n" '$1 == n { print $4 }' "$M")
    [ -n "$base" ] && [ "$base" != "-" ] || continue
    lim=80; [ "$n" -ge 14 ] && lim=150
    c=$(sh scripts/diff.sh "$n" --count 2>"$T/err")
    case $c in
    '' | *[!0-9]*) WHY=$(cat "$T/err"); fail "make diff L=$n runs" ;;
    *) over=$(awk -F'\t' -v n="$n" '$1 == n { print $2 "\t" $3 }' tests/diff_over.txt 2>/dev/null)
       if [ "$c" -le "$lim" ]; then pass "make diff L=$n: $c changed code lines against lesson $base (at most $lim)"
       elif [ -n "$over" ] && [ "$c" -le "${over%%	*}" ]; then
           echo "ok make diff L=$n: $c changed code lines against lesson $base, over the limit of $lim (tests/diff_over.txt: ${over#*	}) # skip"
       else fail "make diff L=$n: $c changed code lines against lesson $base, more than $lim${over:+ and more than the ${over%%	*} of tests/diff_over.txt}"; fi ;;
    esac
done

# ---- lesson 12's shared pieces
# fn FILE NAME: the function NAME's text, from its signature line (at column 0)
# to its closing brace at column 0; "differs" first when the line above the
# signature says "differs from lesson 12's".
fn() {
    awk -v name="$2" '
        !on && $0 ~ ("^(static )?__device__[^(]*[ *]" name "\\(") && $0 !~ /\);[ \t]*(\/\/.*)?$/ {
            on = 1; if (prev ~ /differs from lesson 12.s:/) print "differs" }
        on { print }
        on && /^}/ { exit }
        { prev = $0 }' "$1"
}
L12=$(ls lessons/12_*/12_*.cu 2>/dev/null | head -n 1)
if [ -n "$L12" ]; then
    for piece in warp_sum block_sum count_done; do
        fn "$L12" "$piece" >"$T/ref"
        [ -s "$T/ref" ] || { fail "lesson 12 defines $piece"; continue; }
        drift=""
        for n in $folders; do
            [ "$n" -gt 12 ] || continue
            f=$(ls lessons/"$n"_*/"$n"_*.cu 2>/dev/null | head -n 1)
            [ -n "$f" ] || continue
            fn "$f" "$piece" >"$T/copy"
            [ -s "$T/copy" ] || continue
            head -n 1 "$T/copy" | grep -qx differs && continue
            cmp -s "$T/ref" "$T/copy" || drift="$drift $n"
        done
        WHY=""
        [ -z "$drift" ] || WHY="these lessons have another $piece:$drift. Copy lesson 12's, or say why on the line above it: // differs from lesson 12's: ..."
        [ -z "$drift" ] && pass "$piece in lessons 13 on is lesson 12's, byte for byte (or says why not)" ||
            fail "$piece in lessons 13 on is lesson 12's, byte for byte (or says why not)"
    done
fi

# Lesson 14 times lesson 12's two kernels as they are: their code (comments aside) must match.
kernel_code() { # FILE NAME: the __global__ function's lines, without // comments, blank lines and indentation
    awk -v name="$2" '
        !on && $0 ~ ("^__global__ .*[ *]" name "\\(") && $0 !~ /\);[ \t]*(\/\/.*)?$/ { on = 1 }
        on { print }
        on && /^}/ { exit }' "$1" | sed 's|//.*$||; s/^[ \t]*//; s/[ \t]*$//' | grep -v '^$'
}
L14=$(ls lessons/14_*/14_*.cu 2>/dev/null | head -n 1)
if [ -n "$L12" ] && [ -n "$L14" ]; then
    drift=""
    for k in reduce_atomic_kernel reduce_fixed_kernel; do
        kernel_code "$L12" "$k" >"$T/ref"; kernel_code "$L14" "$k" >"$T/copy"
        { [ -s "$T/ref" ] && cmp -s "$T/ref" "$T/copy"; } || drift="$drift $k"
    done
    WHY=${drift:+the copy in lesson 14 differs from lesson 12 (comments aside):$drift}
    [ -z "$drift" ] && pass "lesson 14's reduce_atomic_kernel and reduce_fixed_kernel are lesson 12's code" ||
        fail "lesson 14's reduce_atomic_kernel and reduce_fixed_kernel are lesson 12's code"
fi

# ---- notes a learner finishes: words in all, and prose outside code blocks and tables
long=""
for f in lessons/[0-9][0-9]_*/notes.md; do
    [ -f "$f" ] || continue
    all=$(wc -w <"$f")
    prose=$(awk '/^[ \t]*```/ { code = !code; next } code || /^[ \t]*\|/ || /^<!--/ { next } { print }' "$f" | wc -w)
    [ "$all" -le 3000 ] && [ "$prose" -le 2000 ] || long="$long $f ($all words, $prose of prose)"
done
WHY="${long:+over 3,000 words or 2,000 of prose:$long}"
[ -z "$long" ] && pass "every notes.md within 3,000 words, 2,000 of prose" ||
    fail "every notes.md within 3,000 words, 2,000 of prose"
exit 0
