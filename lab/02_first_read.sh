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
cmd=$(make -s -n -B solution02 | grep nvcc) || { echo "02_first_read.sh: no compile line for solution02" >&2; exit 1; }
nv=${cmd%% *} # make's NVCC, and the cuobjdump beside it (else the one on PATH)
cod=$(dirname "$(command -v "$nv")")/cuobjdump; [ -x "$cod" ] || cod=$(command -v cuobjdump)
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
    new=$(echo "$cmd" | sed "s|-o solution02 $src|-o $B/$v $B/$v.cu|")
    [ "$new" != "$cmd" ] || { echo "$(basename "$0"): cannot point the compile line at the copy (run it without BUILDDIR)" >&2; exit 1; }
    eval "$new" || exit 1
done
if [ -n "$cod" ] && "$cod" -sass -arch sm_90 "$B/relaxed" 2>/dev/null | grep -q 'sm_90'; then
    { echo "# lab/02_first_read.sh: the loads and the CAS of max_kernel in each copy (cuobjdump -sass, sm_90, CUDA $("$nv" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))"
      for v in $copies; do
          echo "## $v"
          "$cod" -sass -arch sm_90 "$B/$v" | awk '/Function : .*max_kernel/ { p = 1; next } /Function :/ { p = 0 } p && / (LDG|LD|ATOMG)\.E/' |
              sed 's|^ *||; s| *;.*|;|'
      done
      echo "# end of the listing"; } >results/sass-lab02-first-read-sm_90.txt
    sh scripts/stamp.sh results/sass-lab02-first-read-sm_90.txt ex02 # records the code it listed in results/code.txt
else
    echo "02_first_read.sh: no cuobjdump beside nvcc or on PATH, or no sm_90 code in this build: results/sass-lab02-first-read-sm_90.txt is left as it is" >&2
fi
nvidia-smi -L >/dev/null 2>&1 || { echo "02_first_read.sh: no GPU: built and listed only"; exit 0; }
for v in $copies; do
    "$B/$v" -n 0,1,33,4097,2^20+3,2^24 -d ints,uniform --check >"$B/$v.check" 2>&1 || { echo "02_first_read.sh: the $v copy fails its check:" >&2; grep FAIL "$B/$v.check" >&2; exit 1; }
done
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
out=results/first-read-lab02-$slug.csv
echo "copy,input,round,$("$B/plain" -n 1 --csv-header --csv 2>/dev/null | head -n 1)" >"$out"
for r in 1 2 3; do for d in ints uniform; do for v in $copies; do
    "$B/$v" -n 2^26 -d $d --csv 2>/dev/null | grep ',atomic_max,' | sed "s/^/$v,$d,$r,/" >>"$out"
done; done; done
sh scripts/stamp.sh "$out" ex02 # records the code it measured in results/code.txt
echo "$(($(wc -l <"$out") - 1)) rows in $out"
