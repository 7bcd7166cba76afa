#!/bin/sh
# Exercise 03 keeps the minima and the maxima in two shared arrays; its
# stretch puts both values of a thread in one float2 slot, so that each step
# issues one 8-byte shared load where it issued two 4-byte ones. Does lesson
# 03's slot pattern stay free of bank conflicts once a slot is 8 bytes? This
# builds two copies of solutions/03_interleaved_divergent.cu, with the
# solution's own compile line:
#   two      two float arrays, smin and smax, as the solution has it
#   float2   one float2 array, slot t = (min, max) of thread t's values
# It writes the shared loads and stores of each copy's minmax_kernel to
# results/sass-lab03-float2-slots-sm_90.txt (cuobjdump, no GPU needed). On a
# GPU it then counts, with Nsight Compute (ncu), the instructions, the
# shared-memory instructions, wavefronts and bank conflicts of each copy's first launch at
# n = 2^24 (results/counters-lab03-float2-slots-<gpu>.csv: copy, metric,
# value), checks each copy at six sizes and times each at n = 2^26 on both
# inputs, three rounds, the copies in turns within a round:
# results/float2-slots-lab03-<gpu>.csv (copy, input, round, then the
# harness's CSV line).
#
#     sh lab/03_float2_slots.sh
set -u
cd "$(dirname "$0")/.." || exit 1
B=build/float2_slots
mkdir -p "$B" results
src=solutions/03_interleaved_divergent.cu
ME=$(basename "$0")
# The lines the float2 copy replaces, each exactly once in the solution.
decl='float \*smin = smem, \*smax = smem + blockDim.x; // blockDim.x slots each'
ldmin='smin\[tid\] = i < n ? in_min\[i\] : INFINITY;  // past n: the identities,'
ldmax='smax\[tid\] = i < n ? in_max\[i\] : -INFINITY; // which change neither result'
stepmin='smin\[tid\] = fminf(smin\[tid\], smin\[tid + s\]);'
stepmax='smax\[tid\] = fmaxf(smax\[tid\], smax\[tid + s\]);'
outmin='out_min\[blockIdx.x\] = smin\[0\];'
outmax='out_max\[blockIdx.x\] = smax\[0\];'
for s in "$decl" "$ldmin" "$ldmax" "$stepmin" "$stepmax" "$outmin" "$outmax"; do
    [ "$(grep -c "$s" "$src")" = 1 ] || { echo "$ME: $src has another kernel (not one line matching: $s)" >&2; exit 1; }
done
. lab/copies.sh
lab_compile_line solution03 "$src"
cp "$src" "$B/two.cu"
# float2: the same shared bytes (2 x blockDim.x floats = blockDim.x float2s),
# one slot per thread; the loads, the step and the writes on its two halves.
sed -e "s|$decl|float2 *slot = (float2 *)smem; // blockDim.x slots of (min, max)|" \
    -e "s|$ldmin|slot[tid] = i < n ? make_float2(in_min[i], in_max[i]) : make_float2(INFINITY, -INFINITY); // past n: the identities|" \
    -e "s|$ldmax|// (one slot holds both)|" \
    -e "s|$stepmin|float2 a = slot[tid], b = slot[tid + s]; // one 8-byte load each|" \
    -e "s|$stepmax|slot[tid] = make_float2(fminf(a.x, b.x), fmaxf(a.y, b.y));|" \
    -e "s|$outmin|out_min[blockIdx.x] = slot[0].x;|" \
    -e "s|$outmax|out_max[blockIdx.x] = slot[0].y;|" "$src" >"$B/float2.cu"
grep -q 'smin\|smax' "$B/float2.cu" && { echo "$ME: the float2 copy still names smin or smax" >&2; exit 1; }
copies="two float2"
for v in $copies; do
    lab_build_copy "$v"
done
list_shared() { # $1: the CUDA release
    echo "# lab/03_float2_slots.sh: the shared loads and stores of minmax_kernel in each copy (cuobjdump -sass, sm_90, CUDA $1)"
    for v in $copies; do
        echo "## $v"
        lab_sass_lines "$v" minmax_kernel ' (LDS|STS)'
    done
    echo "# end of the listing"
}
lab_sass sass-lab03-float2-slots-sm_90.txt ex03 list_shared
if nvidia-smi -L >/dev/null 2>&1 && command -v ncu >/dev/null 2>&1; then
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
    m=sm__sass_inst_executed_op_shared_ld.sum,sm__sass_inst_executed_op_shared_st.sum
    m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
    m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,gpu__time_duration.sum,smsp__inst_executed.sum
    echo "copy,metric,value" >"$B/counters.csv"
    for v in $copies; do
        # the first launch: pass 1 over 2^24 elements (65,536 blocks of 256)
        ncu --csv --print-units base --clock-control none --kernel-name regex:minmax_kernel --launch-count 1 \
            --metrics "$m" "$B/$v" -n 2^24 --check 2>/dev/null |
            awk -v v="$v" '/^"[0-9]/ { s = substr($0, 2, length($0) - 2); n = split(s, f, "\",\"") # ncu: quoted fields, the metric last
                                       x = f[n]; gsub(/,/, "", x); print v "," f[n - 2] "," x }' >>"$B/counters.csv"
    done
    [ "$(wc -l <"$B/counters.csv")" -eq 17 ] || { echo "$ME: ncu gave no complete counters (see $B/counters.csv); results/ keeps its file" >&2; exit 1; }
    cp "$B/counters.csv" "results/counters-lab03-float2-slots-$slug.csv"
    sh scripts/stamp.sh "results/counters-lab03-float2-slots-$slug.csv" ex03
    cat "results/counters-lab03-float2-slots-$slug.csv"
elif nvidia-smi -L >/dev/null 2>&1; then
    echo "$ME: no ncu on PATH: no counters" >&2
fi
lab_check_and_time "$copies" float2-slots-lab03 ex03 min
