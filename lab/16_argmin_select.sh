#!/bin/sh
# Exercise 16's argmin combine decides which of two (value, index) states
# wins. How that decision is written sets the speed. This builds five copies
# of solutions/16_beyond_sum.cu that differ only in argmin_combine's body,
# with the solution's own compile line, all with the same rule:
#   fields    one decision, then each field selected on its own:
#             arg_state(take_a ? a.v : b.v, take_a ? a.i : b.i), as the solution has it
#   select    the same one decision, returning a whole state: take_a ? a : b
#   branches  one return per case, each returning a whole state:
#             if (a_nan != b_nan) return a_nan ? a : b; ... return a.v < b.v ? a : b;
#   logical   fields, the decision written with && and ||
#   bitwise   fields, the decision written with & and | on the comparisons
# It writes instruction counts of each copy's argmin_kernel to
# results/sass-lab16-argmin-select-sm_90.txt (cuobjdump, no GPU needed), checks
# each copy at six sizes, then times each at n = 2^26 on both inputs, three
# rounds, the copies in turns within a round:
# results/argmin-select-lab16-<gpu>.csv (copy, input, round, then the
# harness's CSV line).
#
#     sh lab/16_argmin_select.sh
set -u
cd "$(dirname "$0")/.." || exit 1
B=build/argmin_select
mkdir -p "$B" results
src=solutions/16_beyond_sum.cu
grep -q 'return arg_state(take_a ? a.v : b.v, take_a ? a.i : b.i);' "$src" || { echo "16_argmin_select.sh: $src does not select the fields" >&2; exit 1; }
ME=$(basename "$0")
. lab/copies.sh
lab_compile_line solution16 "$src"
cp "$src" "$B/fields.cu"
# select: only the return changed
sed 's|return arg_state(take_a ? a.v : b.v, take_a ? a.i : b.i);|return take_a ? a : b;|' "$src" >"$B/select.cu"
# logical and bitwise: only the decision changed, written with && and || or with & and |
dec='int take_a = a_nan != b_nan ? a_nan : (a_nan || a.v == b.v) ? a.i <= b.i : a.v < b.v;'
grep -qF "$dec" "$src" || { echo "16_argmin_select.sh: $src has another decision" >&2; exit 1; }
sed "s/int take_a = a_nan != b_nan .*/int take_a = a_nan ? (!b_nan || a.i < b.i) : (!b_nan \&\& (a.v < b.v || (a.v == b.v \&\& a.i < b.i)));/" "$src" >"$B/logical.cu"
sed "s/int take_a = a_nan != b_nan .*/int take_a = a_nan ? (!b_nan | (a.i < b.i)) : (!b_nan \& ((a.v < b.v) | ((a.v == b.v) \& (a.i < b.i))));/" "$src" >"$B/bitwise.cu"
# branches: the body between the exercise markers replaced, nothing else
awk '/TODO\(exercise\)/ { print; print "    int a_nan = a.v != a.v, b_nan = b.v != b.v;"
                                 print "    if (a_nan != b_nan) return a_nan ? a : b;"
                                 print "    if (a_nan || a.v == b.v) return a.i <= b.i ? a : b;"
                                 print "    return a.v < b.v ? a : b;"; skip = 1; next }
     /END\(exercise\)/ { skip = 0 } !skip' "$src" >"$B/branches.cu"
copies="fields select branches logical bitwise"
for v in $copies; do
    lab_build_copy "$v"
done
count_sass() { # $1: the CUDA release
    echo "# lab/16_argmin_select.sh: argmin_kernel of each copy (cuobjdump -sass, sm_90, CUDA $1):"
    echo "# copy, instructions in the kernel, of them SEL (selects; FSEL not counted), PRMT (byte permutes), BRA (branches)"
    for v in $copies; do
        lab_sass_count "$v" argmin_kernel ' SEL ' ' PRMT ' ' BRA '
    done
}
lab_sass sass-lab16-argmin-select-sm_90.txt ex16 count_sass
lab_check_and_time "$copies" argmin-select-lab16 ex16 argmin
