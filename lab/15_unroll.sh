#!/bin/sh
# Lessons 15 and 16 issue UNROLL float4 loads per thread before adding any
# (lesson 11's idea). This sweep builds copies of the two lessons with
# UNROLL = 1, 2, 4 and 8 (nothing else changed), with the lesson's own
# compile line and -Xptxas -v, and writes each kernel's registers and spills
# to results/ptxas-lab15-unroll-sm_90.txt (no GPU needed for that part).
# Then it times every variant of each copy at n = 2^26 and 2^30, L2 dirty,
# in one process per copy: results/tune-unroll-lesson15-16-<gpu>.csv, the
# unroll value, then the harness's CSV line (a GPU needed).
#
#     sh lab/15_unroll.sh               (CCCL_HOME as for make lesson15)
set -u
cd "$(dirname "$0")/.." || exit 1
B=build/unroll
mkdir -p "$B" results
for l in 15 16; do
    src=$(ls lessons/${l}_*/${l}_*.cu)
    grep -q "^#define UNROLL [0-9]* " "$src" || { echo "15_unroll.sh: $src has no UNROLL define" >&2; exit 1; }
    # the lesson's own compile line, pointed at the copy
    cmd=$(make -s -n -B "lesson$l" | grep nvcc) || { echo "15_unroll.sh: no compile line for lesson$l" >&2; exit 1; }
    nv=${cmd%% *} # make's NVCC, named in the listing's header
    for u in 1 2 4 8; do
        sed "s/^#define UNROLL [0-9]* /#define UNROLL $u /" "$src" >"$B/l${l}_u$u.cu"
        eval "$(echo "$cmd" | sed "s|-o lesson$l $src|-Xptxas -v -o $B/l${l}_u$u $B/l${l}_u$u.cu|") 2>$B/l${l}_u$u.ptxas" &
    done
done
wait
# the lessons' kernels only (not CUB's, Thrust's or the harness's), and only
# from a build with sm_90 code: make picks the GPU's own arch unless ARCH says
if ! grep -q 'sm_90' "$B/l15_u1.ptxas"; then
    echo "15_unroll.sh: this build has no sm_90 code, so results/ptxas-lab15-unroll-sm_90.txt is left as it is (ARCH=\"90 ...\" adds it)" >&2
else
{ echo "# ptxas -v (sm_90, CUDA $("$nv" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')) of lessons 15 and 16 built with UNROLL = 1, 2, 4, 8 (lab/15_unroll.sh's copies): each kernel's stack and spills, then its registers"
  for l in 15 16; do for u in 1 2 4 8; do
      echo "## lesson $l, UNROLL $u"
      awk '/Compiling entry function/ && /sm_90/ { f = $0; sub(/.*function ./, "", f); sub(/^_Z[0-9]+/, "", f); k = index(f, "_kernel")
                                                 keep = (k > 0 && f !~ /cub|CUB|thrust|harness|fill|check|count_wrong/); f = substr(f, 1, k + 6); next }
           /Compiling entry function/ { keep = 0 }
           keep && /spill|Used/ { sub(/^ *(ptxas info *: )?/, ""); print f ": " $0 }' "$B/l${l}_u$u.ptxas"
  done; done; } >results/ptxas-lab15-unroll-sm_90.txt
fi
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q '^GPU' || { echo "15_unroll.sh: no GPU, so no timings (the ptxas part is done)" >&2; exit 1; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
out=results/tune-unroll-lesson15-16-$slug.csv
echo "unroll,lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status" >"$out"
for l in 15 16; do
    for u in 1 2 4 8; do
        [ -x "$B/l${l}_u$u" ] || { echo "15_unroll.sh: l${l}_u$u did not build" >&2; continue; }
        "$B/l${l}_u$u" -n 2^26,2^30 --csv 2>/dev/null | grep -E "^${l}_" | sed "s/^/$u,/" >>"$out"
    done
done
echo "$(($(wc -l <"$out") - 1)) rows in $out"
