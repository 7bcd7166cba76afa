#!/bin/sh
# Exercise 02's float max reads the current maximum once before its CAS loop.
# How it reads it sets the speed. This builds four copies of
# solutions/02_atomic.cu that differ only in that read (nothing else changed),
# with the solution's own compile line:
#   relaxed   a relaxed atomic load at device scope (cuda::atomic_ref), as
#             the solution has it
#   volatile  *(volatile unsigned int *)bits
#   ldcg      __ldcg(bits): an L2-only load, which skips the SM's L1 cache
#   plain     *bits
# It writes the load and CAS instructions of each copy's max_kernel to
# results/sass-lab02-first-read-sm_90.txt (cuobjdump, no GPU needed), checks
# each copy at six sizes, then times each at n = 2^26 on both inputs, three
# rounds, the four copies in turns within a round:
# results/first-read-lab02-<gpu>.csv (copy, input, round, then the harness's
# CSV line).
#
#     sh lab/02_first_read.sh
set -u
cd "$(dirname "$0")/.." || exit 1
B=build/first_read
mkdir -p "$B" results
src=solutions/02_atomic.cu
old='cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(\*bits).load(cuda::memory_order_relaxed);'
grep -q "$old" "$src" || { echo "02_first_read.sh: $src has no relaxed atomic first read" >&2; exit 1; }
ME=$(basename "$0")
. lab/copies.sh
lab_compile_line solution02 "$src"
copies="relaxed volatile ldcg plain"
for v in $copies; do
    case $v in
    volatile) new='*(volatile unsigned int *)bits;' ;;
    relaxed) new='cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(*bits).load(cuda::memory_order_relaxed);' ;;
    ldcg) new='__ldcg(bits);' ;;
    plain) new='*bits;' ;;
    esac
    # the copy: the one read replaced
    sed -e "s|$old|$new|" "$src" >"$B/$v.cu"
    lab_build_copy "$v"
done
list_loads() { # $1: the CUDA release
    echo "# lab/02_first_read.sh: the loads and the CAS of max_kernel in each copy (cuobjdump -sass, sm_90, CUDA $1)"
    for v in $copies; do
        echo "## $v"
        lab_sass_lines "$v" max_kernel ' (LDG|LD|ATOMG)\.E'
    done
    echo "# end of the listing"
}
lab_sass sass-lab02-first-read-sm_90.txt ex02 list_loads
lab_check_and_time "$copies" first-read-lab02 ex02 atomic_max
