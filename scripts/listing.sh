#!/bin/sh
# The listings behind make lessonNN.ptx and make lessonNN.sass (POSIX sh, awk).
#
#   sh scripts/listing.sh ptx SOURCE FILE [TARGET]
#       FILE is nvcc's PTX of SOURCE (for TARGET, e.g. sm_90). Moves the
#       kernels SOURCE does not define (the harness's L2 flush, CUB's) after
#       SOURCE's own, so the listing opens with the lesson's kernels, and says
#       where each starts. Only whole .entry blocks move: nothing calls an
#       entry, and all it uses stays declared above it, so the file is still
#       valid PTX. FILE is left as it was if anything goes wrong.
#   sh scripts/listing.sh sass NAME BINARY OUT [ARCHS]
#       cuobjdump -sass BINARY >OUT. Without cuobjdump (CUOBJDUMP in the
#       environment, else the one on PATH): says so and shows the listing
#       results/ ships for NAME's lesson (results/sass-lessonNN*-sm_90.txt):
#       its kernels with their instruction counts, and the whole listing when
#       it is short. Exit 2 then (OUT is not written), 0 when OUT was written.
cd "$(dirname "$0")/.." || exit 1

# demangle: plain names (_Z13reduce_kernelPKfmPf -> reduce_kernel); others as they are.
DEMANGLE='function demangle(s,   n) {
    if (match(s, /^_Z[0-9]+/)) { n = substr(s, 3, RLENGTH - 2) + 0; return substr(s, RLENGTH + 1, n) }
    return s
}'

ptx() {
    src=$1 file=$2 target=${3:-}
    if [ ! -f "$src" ] || [ ! -s "$file" ]; then echo "listing.sh ptx: no $src or no $file" >&2; return 2; fi
    # The kernels SOURCE defines: the name before the first "(" after __global__ (launch bounds skipped).
    names=$(sed -n 's/__launch_bounds__([^)]*)//; s/__cluster_dims__([^)]*)//; s/.*__global__[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\) *(.*/\1/p' "$src" |
        sort -u | tr '\n' ' ')
    tmp=$file.order.$$
    rm -f "$file.out" "$file.msg"
    awk -v names="$names" "$DEMANGLE"'
        BEGIN { n = split(names, a, " "); for (i = 1; i <= n; i++) own[a[i]] = 1 }
        { line[NR] = $0 }
        /^}/ { last = NR }
        END {
            # Blocks: an optional "// .globl" line, the .entry line, through "}" at column 0.
            for (i = 1; i <= last; i++) {
                if (line[i] ~ /^[\t ]*\/\/ \.globl/ && line[i + 1] ~ /^(\.visible |\.weak )*\.entry /) start = i++
                else if (line[i] ~ /^(\.visible |\.weak )*\.entry /) start = i
                else { keep[i] = 1; continue }
                name = line[i]; sub(/^(\.visible |\.weak )*\.entry[ \t]+/, "", name); sub(/\(.*/, "", name)
                k = ++nb; bstart[k] = start; bentry[k] = i; bname[k] = demangle(name); mine[k] = (bname[k] in own)
                while (i <= last && line[i] !~ /^}/) i++
                bend[k] = i
                if (mine[k]) for (j = start; j <= i; j++) keep[j] = 1
                else moved++
            }
            out = 0 # the lines in their new order: kept, the moved blocks, the trailer (.file lines)
            for (i = 1; i <= last; i++) if (keep[i]) { text[++out] = line[i]; entry_at[i] = out }
            if (moved) {
                text[++out] = ""
                text[++out] = "// ---- below: the kernels this source does not define (the harness'"'"'s, a library'"'"'s)"
                for (k = 1; k <= nb; k++) if (!mine[k]) {
                    text[++out] = ""
                    for (i = bstart[k]; i <= bend[k]; i++) { text[++out] = line[i]; entry_at[i] = out }
                }
            }
            for (i = last + 1; i <= NR; i++) text[++out] = line[i]
            outfile = FILENAME ".out"
            for (i = 1; i <= out; i++) print text[i] > outfile
            close(outfile)
            first = ""; rest = ""; libs = 0
            for (k = 1; k <= nb; k++) {
                at = " (line " entry_at[bentry[k]] ")"
                if (mine[k]) first = first (first == "" ? "" : ", ") bname[k] at
                else if (bname[k] ~ /^_Z/) { if (!libs++) lib_at = entry_at[bentry[k]] } # a library template: CUB
                else rest = rest (rest == "" ? "" : ", ") "the harness'"'"'s " bname[k] at
            }
            if (libs) rest = rest (rest == "" ? "" : ", ") libs " of the libraries'"'"' (CUB'"'"'s) from line " lib_at
            msg = first == "" ? "no kernel of its own" : "its own kernels first: " first
            if (rest != "") msg = msg "; then " rest
            msgfile = FILENAME ".msg"
            print msg > msgfile
            close(msgfile)
        }' "$file" || { rm -f "$file.out" "$file.msg"; return 1; }
    mv "$file.out" "$tmp" && mv "$tmp" "$file"
    echo "wrote $file (PTX${target:+ for $target}): $(cat "$file.msg")"
    rm -f "$file.msg"
}

# Shipped SASS files: each one's kernels and instruction counts, and the listing if short.
shipped_sass() {
    files=$1
    for f in $files; do
        echo
        echo "== $f ($(wc -l <"$f" | tr -d ' ') lines, cuobjdump -sass of the sm_90 build)"
        [ "$(wc -l <"$f")" -le 200 ] || grep '^#' "$f" | head -n 5
        awk "$DEMANGLE"'
            function flush() { if (name != "") printf "  %-24s %6d %5d %5d %8d %5d %5d %5d %5d   %d-%d\n", name, inst, ldg, stg, lds + sts, shfl, bar, atom, mufu, from, NR - 1 }
            BEGIN { printf "  %-24s %6s %5s %5s %8s %5s %5s %5s %5s   %s\n", "kernel", "instr", "LDG", "STG", "LDS/STS", "SHFL", "BAR", "ATOM", "MUFU", "lines" }
            /Function :/ { flush(); name = demangle($NF); from = NR; inst = ldg = stg = lds = sts = shfl = bar = atom = mufu = 0; next }
            /\/\*[0-9a-f]+\*\// {
                inst++
                if (/ LDG/) ldg++; if (/ STG/) stg++; if (/ LDS/) lds++; if (/ STS/) sts++; if (/ SHFL/) shfl++
                if (/ BAR\./) bar++; if (/ (ATOMG|ATOM|RED|REDG)[. ]/) atom++; if (/ MUFU/) mufu++
            }
            END { flush() }' "$f"
        if [ "$(wc -l <"$f")" -le 200 ]; then
            echo
            cat "$f"
        else
            echo "  (one kernel's listing: sed -n 'FROM,TOp' $f with the lines above)"
        fi
    done
}

sass() {
    name=$1 bin=$2 out=$3 archs=${4:-}
    tool=${CUOBJDUMP-$(command -v cuobjdump 2>/dev/null)}
    if [ -n "$tool" ] && command -v "$tool" >/dev/null 2>&1; then
        [ -x "$bin" ] || { echo "$name was not built, so there is no SASS to show" >&2; return 1; }
        if ! "$tool" -sass "$bin" >"$out.tmp"; then rm -f "$out.tmp"; return 1; fi
        mv "$out.tmp" "$out" || return 1
        echo "wrote $out (machine code${archs:+ for $(echo "$archs" | sed 's/\([0-9][0-9]*a\{0,1\}\)/sm_\1/g')}; its kernels: grep -n Function $out)"
        return 0
    fi
    case $name in
    lesson[0-9][0-9] | exercise[0-9][0-9] | solution[0-9][0-9]) nn=$(echo "$name" | sed 's/^[a-z]*//') ;;
    lab_[0-9][0-9]_*) nn=$(echo "$name" | cut -c5-6) ;;
    *) nn="" ;;
    esac
    files=$(ls results/sass-lesson"$nn"-sm_90.txt results/sass-lesson"$nn"-*-sm_90.txt 2>/dev/null)
    echo "cuobjdump not found: it comes with the CUDA toolkit, in the bin/ folder beside nvcc (NVIDIA's apt package cuda-cuobjdump-X-Y, e.g. cuda-cuobjdump-13-0)," >&2
    archnote=""
    case " ${archs:-90} " in *" 90 "*) ;; *) archnote="(Your build is for sm_$archs: its code may differ.)" ;; esac
    case $name in lab_[0-9][0-9]_*) # a lab program's own listing, where results/ ships one (lab_04_padding: sass-lab04-padding)
        own=results/sass-lab$nn-$(echo "$name" | cut -c8- | tr _ -)-sm_90.txt
        if [ -f "$own" ]; then
            echo "so $out was not made. Below instead: $name's SASS for sm_90 as results/ ships it.${archnote:+ $archnote}" >&2
            shipped_sass "$own"
            return 2
        fi ;;
    esac
    if [ -z "$nn" ] || [ -z "$files" ]; then
        have=$(ls results/sass-lesson*-sm_90.txt 2>/dev/null | sed 's|.*sass-lesson\([0-9][0-9]\).*|\1|' | sort -u | tr '\n' ' ')
        echo "so $out was not made, and results/ ships no SASS of lesson ${nn:-$name}: only of lessons $have(results/sass-lessonNN-sm_90.txt)." >&2
        labs=$(ls results/sass-lab"$nn"-*-sm_90.txt 2>/dev/null | tr '\n' ' ')
        [ -n "$nn" ] && [ -n "$labs" ] && echo "Lesson $nn's labs' listings are there: $labs" >&2
        return 2
    fi
    echo "so $out was not made. Below instead: lesson $nn's SASS for sm_90 as results/ ships it.${archnote:+ $archnote}" >&2
    case $name in lesson*) ;; *) echo "(lesson $nn's kernels: $name's own may differ)" ;; esac
    shipped_sass "$files"
    return 2
}

case ${1:-} in
ptx) shift; ptx "$@" ;;
sass) shift; sass "$@" ;;
*) echo "usage: sh scripts/listing.sh ptx SOURCE FILE [TARGET] | sass NAME BINARY OUT [ARCHS]" >&2; exit 2 ;;
esac
