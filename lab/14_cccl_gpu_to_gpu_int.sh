#!/bin/sh
# lab/14_cccl_gpu_to_gpu.cu passes CUB a 64-bit element count, as lesson 15
# does. Lesson 14 passes an int wherever n fits one (up to 2^31 - 1), and
# CUB picks its offset type from the count's type. This builds a copy of the
# lab program with only that changed, (long long)n -> (int)n in its three
# calls (every size it tries fits an int), with the lab's own compile line,
# runs it, and writes its lines to results/cccl-gpu-to-gpu-int-<gpu>.txt.
#
#     sh lab/14_cccl_gpu_to_gpu_int.sh      (CCCL_HOME as for make lab_14_cccl_gpu_to_gpu)
set -u
cd "$(dirname "$0")/.." || exit 1
B=build/g2g_int
mkdir -p "$B" results
src=lab/14_cccl_gpu_to_gpu.cu
[ "$(grep -c 'cub::DeviceReduce::Sum(x, out, (long long)n,' "$src")" = 3 ] || { echo "14_cccl_gpu_to_gpu_int.sh: $src does not make three calls with (long long)n" >&2; exit 1; }
ME=$(basename "$0")
. lab/copies.sh
lab_compile_line lab_14_cccl_gpu_to_gpu "$src"
sed 's/cub::DeviceReduce::Sum(x, out, (long long)n,/cub::DeviceReduce::Sum(x, out, (int)n,/' "$src" >"$B/lab_14_cccl_gpu_to_gpu_int.cu"
[ "$(grep -c 'cub::DeviceReduce::Sum(x, out, (int)n,' "$B/lab_14_cccl_gpu_to_gpu_int.cu")" = 3 ] || { echo "14_cccl_gpu_to_gpu_int.sh: the copy did not get three int counts" >&2; exit 1; }
rm -f "$B/lab_14_cccl_gpu_to_gpu_int"
lab_build_copy lab_14_cccl_gpu_to_gpu_int
nvidia-smi -L >/dev/null 2>&1 || { echo "14_cccl_gpu_to_gpu_int.sh: no GPU: built only"; exit 0; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
out=results/cccl-gpu-to-gpu-int-$slug.txt
(cd "$B" && ./lab_14_cccl_gpu_to_gpu_int) >"$B/out.txt"
rc=$?
# only a run that got as far as its verdicts replaces the kept file (an older CUB prints one line on stderr and nothing here)
grep -q '^# [0-9]* wrong with no error' "$B/out.txt" || { echo "14_cccl_gpu_to_gpu_int.sh: the run gave no verdicts (needs CUB 3.4 or newer: CCCL_HOME); $out is left as it is" >&2; exit 1; }
cp "$B/out.txt" "$out"
sh scripts/stamp.sh "$out" lab_14_cccl_gpu_to_gpu # records the code it measured (the lab's, one cast changed) in results/code.txt
tail -n 1 "$out"
exit $rc
