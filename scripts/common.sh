# Shared by the scripts behind make run, bench, diff, profile and check
# (POSIX sh; sourced, not run).

HEADER="lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"
# A whole result line of the harness's CSV (15 fields, the first a lesson name).
RESULT_RE='^[0-9][0-9]_[^,]*,([^,]*,){13}[^,]*$'

# lesson_num KIND VALUE: prints VALUE as two digits (5, 05 and 005 -> 05), or
# says what is wrong on stderr and returns 2. KIND names the variable (L, E).
lesson_num() {
    case $2 in
    "") echo "$1 is empty: give a number, e.g. $1=04" >&2; return 2 ;;
    *[!0-9]*) echo "$1=$2 is not a number: give one like $1=4 or $1=04" >&2; return 2 ;;
    esac
    _n=$(echo "$2" | sed 's/^0*//')
    [ -n "$_n" ] || _n=0
    if [ ${#_n} -gt 2 ]; then echo "$1=$2: there is no such lesson (they are numbered 01 to 99 at most)" >&2; return 2; fi
    printf '%02d\n' "$_n"
}

# lesson_src NN: the lesson's source file, or nothing.
lesson_src() { ls lessons/"$1"_*/"$1"_*.cu 2>/dev/null | head -n 1; }

# The range of lessons there are, e.g. "01 to 18".
lesson_range() {
    _all=$(ls -d lessons/[0-9][0-9]_* 2>/dev/null | sed 's|^lessons/||; s|_.*||')
    echo "$(echo "$_all" | head -n 1) to $(echo "$_all" | tail -n 1)"
}

# gpu_slug "NVIDIA H200" -> nvidia-h200 (the GPU part of a results file name).
gpu_slug() { echo "$1" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-'; }

# preflight BINARY WHAT: is there a GPU this binary can use? One check before a
# long series of runs; on failure one message, and returns 1.
preflight() {
    if [ ! -x "$1" ]; then
        echo "$2: $1 is not built, nothing to run" >&2
        return 1
    fi
    _pf=$("$1" -n 1 --check 2>&1) && return 0
    _smi=$(nvidia-smi -L 2>&1 | head -n 2 | tr '\n' ' ')
    command -v nvidia-smi >/dev/null 2>&1 || _smi="nvidia-smi not found (no NVIDIA driver installed?)"
    {
        echo "$2: no usable GPU, so nothing was run."
        echo "  nvidia-smi -L: ${_smi:-lists no GPU}"
        echo "  $1 -n 1 --check said:"
        printf '%s\n' "$_pf" | grep -v '^ *$' | tail -n 2 | sed 's/^/    /'
        echo "  The usual causes and their fixes: README.md, section Troubleshooting."
    } >&2
    return 1
}

# preflight_first WHAT LESSON...: the first of the lessons built in $BIN
# becomes $FIRST, and preflight checks the GPU with it. Returns 1, with one
# message, when none is built or there is no usable GPU.
preflight_first() {
    _what=$1
    shift
    FIRST=""
    for _b in "$@"; do [ -x "$BIN/$_b" ] && { FIRST=$_b; break; }; done
    [ -n "$FIRST" ] || { echo "$_what: no lesson is built in $BIN" >&2; return 1; }
    preflight "$BIN/$FIRST" "$_what"
}

# scratch_dir NAME: a temporary folder in $tmp, removed when the script exits.
scratch_dir() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/reduce-$1.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 130' INT TERM
}

# take_rows OUT ALL RC: the result lines of OUT (one program's output) are
# appended to ALL; WHY says why that run failed, or is empty: a non-zero exit
# RC, rows that are not PASS, or no result line at all.
take_rows() {
    grep -E "$RESULT_RE" "$1" >"$tmp/rows"
    cat "$tmp/rows" >>"$2"
    WHY=""
    [ "$3" -eq 0 ] || WHY="exit $3"
    _bad=$(awk -F, '$15 != "PASS" { printf "%s%s", sep, $2; sep = " " }' "$tmp/rows")
    [ -z "$_bad" ] || WHY="${WHY:+$WHY, }FAIL: $_bad"
    [ -s "$tmp/rows" ] || WHY="${WHY:+$WHY, }no result lines"
}

# lesson_field NN FIELD: one field of lesson NN's line in lessons/manifest.txt
# (shows, step, base, big, bench, change), or nothing when NN has no line.
MANIFEST=lessons/manifest.txt
lesson_field() {
    awk -F'\t' -v n="$1" -v f="$2" '
        BEGIN { split("lesson shows step base big bench change", h, " "); for (i in h) col[h[i]] = i }
        $1 == n { print $(col[f]); exit }' "$MANIFEST"
}

# manifest_lessons FIELD VALUE: the lessons whose FIELD is VALUE (every lesson when no FIELD).
manifest_lessons() {
    awk -F'\t' -v f="${1:-}" -v v="${2:-}" '
        BEGIN { split("lesson shows step base big bench change", h, " "); for (i in h) col[h[i]] = i }
        $1 ~ /^[0-9][0-9]$/ && (f == "" || $(col[f]) == v) { print $1 }' "$MANIFEST"
}
