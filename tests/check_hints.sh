#!/bin/sh
# The hints of the exercises (make hint E=NN, scripts/hint.sh), checked on the
# host: every exercise has exercises/hints/NN.txt with its three graded hints
# (and maybe the stretch's answer), the answer key's code is the solution's,
# and hint.sh hands them out one at a time. One "ok ..." or "not ok ..." line
# per check; exit 1 if any is not ok. POSIX sh; needs no GPU and no build.
set -u
cd "$(dirname "$0")/.." || exit 1
fails=0
ok() { echo "ok $*"; }
bad() { echo "not ok $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-hints.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# ---- the files ---------------------------------------------------------------
for src in exercises/[0-9][0-9]_*.cu; do
    [ -f "$src" ] || continue
    nn=$(basename "$src" | cut -c1-2)
    f=exercises/hints/$nn.txt
    if [ ! -f "$f" ]; then
        bad "hints $nn: $f is missing"
        continue
    fi
    # The section titles, in order: Hint 1, Hint 2, Hint 3, then at most the stretch's answer.
    titles=$(grep '^== ' "$f" | sed 's/:.*//' | tr '\n' '|')
    case $titles in
    "== Hint 1|== Hint 2|== Hint 3|" | "== Hint 1|== Hint 2|== Hint 3|== The stretch's answer|") ;;
    *) bad "hints $nn: the sections must be '== Hint 1: ...', '== Hint 2: ...', '== Hint 3: ...' [, '== The stretch's answer'], found: $titles"; continue ;;
    esac
    if [ -n "$(sed -n '1{/^== /!p;}' "$f")" ]; then
        bad "hints $nn: $f must start with its '== Hint 1: ...' line"
        continue
    fi
    empty=$(awk '/^== / { if (c && !text) print name; c++; name = $0; text = 0; next }
                 /[^ \t]/ { text = 1 }
                 END { if (c && !text) print name }' "$f")
    if [ -n "$empty" ]; then
        bad "hints $nn: a section says nothing: $empty"
        continue
    fi
    ok "hints $nn: $(grep -c '^== ' "$f") sections, hints 1 to 3 in order, none empty"

    # The answer key's code (its lines indented by 4 or more spaces) must be
    # the solution's own lines, so that the key cannot drift from it.
    sol=$(ls solutions/"$nn"_*.cu 2>/dev/null | head -n 1)
    if [ -z "$sol" ]; then
        bad "hints $nn: no solutions/${nn}_*.cu to hold the answer key against"
        continue
    fi
    awk '/^== / { c++; next } c == 3 && /^    / { sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); print }' "$f" >"$tmp/key"
    sed 's/^[ \t]*//; s/[ \t]*$//' "$sol" >"$tmp/sol"
    missing=$(grep -vxF -f "$tmp/sol" "$tmp/key" | head -n 3)
    if [ ! -s "$tmp/key" ]; then
        bad "hints $nn: hint 3 holds no code (lines indented by 4 spaces)"
    elif [ -n "$missing" ]; then
        bad "hints $nn: hint 3 has code that $sol does not: $(echo "$missing" | head -n 1)"
    else
        ok "hints $nn: the answer key's $(wc -l <"$tmp/key" | tr -d ' ') code lines are $sol's"
    fi
done
for f in exercises/hints/*.txt; do
    [ -f "$f" ] || continue
    nn=$(basename "$f" .txt)
    ls exercises/"$nn"_*.cu >/dev/null 2>&1 || bad "hints: $f belongs to no exercise"
done

# ---- hint.sh, with its progress in a scratch folder ------------------------------
export HINTS_STATE="$tmp/state"
hint() { sh scripts/hint.sh "$@" >"$tmp/out" 2>"$tmp/err"; }
first_line() { head -n 1 "$tmp/out"; }
e=$(ls exercises/hints/*.txt 2>/dev/null | head -n 1 | xargs -n 1 basename 2>/dev/null | cut -c1-2)
if [ -z "$e" ]; then
    bad "hint.sh: no hints file to try it on"
else
    n=$(grep -c '^== ' "exercises/hints/$e.txt")
    short=$(echo "$e" | sed 's/^0//')
    hint "$short" ""
    rc=$?
    if [ $rc -eq 0 ] && first_line | grep -q "Hint 1: .*(1 of $n)" && ! grep -q '^== ' "$tmp/out"; then
        ok "hint.sh: the first call (E=$short) prints hint 1 of $n"
    else
        bad "hint.sh: the first call should print hint 1 (exit $rc): $(first_line)"
    fi
    hint "$e" ""
    if first_line | grep -q "Hint 2: .*(2 of $n)"; then ok "hint.sh: the second call (E=$e) prints hint 2"; else bad "hint.sh: the second call should print hint 2: $(first_line)"; fi
    grep -q "more" "$tmp/out" && ok "hint.sh: says how many remain" || bad "hint.sh: does not say how many remain"
    hint "$e" 0
    hint "$e" ""
    if first_line | grep -q "Hint 1: "; then ok "hint.sh: H=0 starts over (the next call prints hint 1)"; else bad "hint.sh: after H=0 the next call should print hint 1: $(first_line)"; fi
    hint "$e" 3
    if first_line | grep -q "Hint 3: .*(3 of $n)"; then ok "hint.sh: H=3 prints hint 3"; else bad "hint.sh: H=3 should print hint 3: $(first_line)"; fi
    k=3
    while [ $k -lt "$n" ]; do hint "$e" ""; k=$((k + 1)); done
    if grep -q "last one" "$tmp/out"; then ok "hint.sh: says when the last hint is shown"; else bad "hint.sh: the last hint should say it is the last: $(tail -n 1 "$tmp/out")"; fi
    hint "$e" ""
    if [ $? -eq 0 ] && grep -q "hint $n was its last" "$tmp/out"; then ok "hint.sh: after the last, says it was the last"; else bad "hint.sh: after the last: $(first_line)"; fi
    for args in "" "abc" "99" "$e x" "$e 99"; do
        # shellcheck disable=SC2086
        if [ -z "$args" ]; then hint "" ""; else hint $args; fi
        rc=$?
        if [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then
            ok "hint.sh '$args': exit 2, one line on stderr"
        else
            bad "hint.sh '$args': want exit 2 and one stderr line, got exit $rc: $(head -n 1 "$tmp/err")"
        fi
    done
fi

[ "$fails" -eq 0 ] || { echo "check_hints: $fails not ok"; exit 1; }
exit 0
