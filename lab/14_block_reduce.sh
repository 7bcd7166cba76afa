#!/bin/sh
# Exercise 14 combines each block's values with cub::BlockReduce, which takes
# an algorithm as its third template argument. Does the algorithm set the
# speed, or do the loads? This builds four copies of
# solutions/14_libraries.cu, with the solution's own compile line:
#   warp         BLOCK_REDUCE_WARP_REDUCTIONS, CUB's default, as the solution has it
#   raking       BLOCK_REDUCE_RAKING
#   commutative  BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY
#   items4       the default algorithm; each thread keeps four maxima, one per
#                load of a trip (four loads in flight), and hands them to
#                Reduce(float (&items)[4], op)
# It writes instruction counts of each copy's max_kernel to
# results/sass-lab14-block-reduce-sm_90.txt (cuobjdump, no GPU needed), checks
# each copy at six sizes, then times each at n = 2^26 on both inputs, three
# rounds, the copies in turns within a round:
# results/block-reduce-lab14-<gpu>.csv (copy, input, round, then the harness's
# CSV line).
#
#     sh lab/14_block_reduce.sh
set -u
cd "$(dirname "$0")/.." || exit 1
B=build/block_reduce
mkdir -p "$B" results
src=solutions/14_libraries.cu
td='typedef cub::BlockReduce<float, BLOCK_SIZE> BlockReduce;'
loop='for (size_t i = (size_t)blockIdx.x \* BLOCK_SIZE + threadIdx.x; i < n; i += stride) m = fmaxf(m, in\[i\]);'
red='float block_max = BlockReduce(temp).Reduce(m, MaxOp());'
for s in "$td" "$loop" "$red"; do
    grep -q "$s" "$src" || { echo "14_block_reduce.sh: $src has another kernel (no line matches: $s)" >&2; exit 1; }
done
ME=$(basename "$0")
. lab/copies.sh
lab_compile_line solution14 "$src"
cp "$src" "$B/warp.cu"
sed "s|$td|typedef cub::BlockReduce<float, BLOCK_SIZE, cub::BLOCK_REDUCE_RAKING> BlockReduce;|" "$src" >"$B/raking.cu"
sed "s|$td|typedef cub::BlockReduce<float, BLOCK_SIZE, cub::BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY> BlockReduce;|" "$src" >"$B/commutative.cu"
# items4: a trip reads four elements BLOCK_SIZE apart (each still read by one
# thread, coalesced); blocks start 4 x BLOCK_SIZE apart, a block's trips 4 x stride.
sed -e "s|$loop|float items[4] = {m, m, m, m}; for (size_t i = (size_t)blockIdx.x * 4 * BLOCK_SIZE + threadIdx.x; i < n; i += 4 * stride) for (int k = 0; k < 4; k++) if (i + (size_t)k * BLOCK_SIZE < n) items[k] = fmaxf(items[k], in[i + (size_t)k * BLOCK_SIZE]);|" \
    -e "s|$red|float block_max = BlockReduce(temp).Reduce(items, MaxOp());|" "$src" >"$B/items4.cu"
copies="warp raking commutative items4"
for v in $copies; do
    lab_build_copy "$v"
done
count_sass() { # $1: the CUDA release
    echo "# lab/14_block_reduce.sh: max_kernel of each copy (cuobjdump -sass, sm_90, CUDA $1):"
    echo "# copy, instructions in the kernel (padding NOPs included), of them LDG (global loads), SHFL (shuffles), STS and LDS (shared stores and loads), BAR (barriers)"
    for v in $copies; do
        lab_sass_count "$v" max_kernel ' LDG\.' ' SHFL\.' ' STS' ' LDS' ' BAR\.'
    done
}
lab_sass sass-lab14-block-reduce-sm_90.txt ex14 count_sass
lab_check_and_time "$copies" block-reduce-lab14 ex14 block_max
