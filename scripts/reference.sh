#!/bin/sh
# The reference runs behind results/: every file README and the notes draw
# their tables from, for the GPU this runs on (its name is in each file name).
# Then `make tables` puts them into the markdown. Needs a GPU; the counters need
# Nsight Compute (ncu), the race logs compute-sanitizer, the listings cuobjdump.
#
# usage: sh scripts/reference.sh [PART ...]      (default: every part, in this order)
#   test       make test; its summary and any failure -> results/test-<gpu>.txt,
#              then the versions part
#   versions   the GPU's driver, memory, SMs and L2, the CUDA, CUB and NCCL
#              versions -> results/versions-<gpu>.txt
#   run        make run at 2^26 -> results/run-<gpu>.csv/.txt
#   bench      make bench (L2 dirty and clean) -> results/bench-<gpu>[-clean].csv
#   counters   ncu, one setup for every lesson: ./lessonNN -n 2^24 --check,
#              --clock-control none -> results/counters-<gpu>.csv
#   sass       cuobjdump -sass (sm_90) of the lessons whose notes show machine code
#   race       compute-sanitizer racecheck on lesson 07, as written and with the
#              classic volatile warp code -> results/racecheck-lesson07*-<gpu>.txt
#   det        distinct results over 20 runs of one input -> results/determinism-<gpu>.txt
#   exercises  every solution at 2^26 -> results/exercises-<gpu>.csv
#   lessons    the outputs notes 13-17 quote: lesson 15's accuracy and bit tables,
#              lesson 16's variance table and its combines beside lesson 12's sum
#              at 2^28 (both flushes), lesson 17's shapes
#   procs      lesson 18 on every visible GPU: one process for all, then one
#              process per GPU (--procs) -> results/procs-<g>x-<gpu>.csv/.txt
set -u
cd "$(dirname "$0")/.." || exit 1
. scripts/common.sh
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q '^GPU' || { echo "reference.sh: needs a GPU" >&2; exit 1; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
J=$(nproc 2>/dev/null || echo 4)
B=build/reference
mkdir -p results "$B"
parts=${*:-test run bench counters sass race det exercises lessons procs}
touch "$B/.started"
# stamp_new: every results file this run wrote records the code it measured (results/code.txt).
stamp_new() {
    for f in $(find results -maxdepth 1 -type f -newer "$B/.started" | sort); do
        case $(basename "$f") in
        code.txt | derived.txt | test-* | versions-* | *.svg) continue ;;
        determinism-*) sh scripts/stamp.sh "$f" 02 12 13 15 ;;
        run-*.txt) sh scripts/stamp.sh "$f" $(manifest_lessons) ;;
        procs-*.txt) sh scripts/stamp.sh "$f" 18 ;;
        *) sh scripts/stamp.sh "$f" ;;
        esac
    done
}
trap stamp_new EXIT
say() { echo "== reference.sh: $*" >&2; }
# the versions behind every other file of this GPU, and its SM count and L2 size
versions() {
    printf '#include <cstdio>\nint main() { int s = 0, l2 = 0; if (cudaDeviceGetAttribute(&s, cudaDevAttrMultiProcessorCount, 0) ||\n cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0)) return 1; printf("%%d SMs, %%d MiB L2\\n", s, l2 >> 20); }\n' >"$B/gpu_info.cu"
    { echo "gpu: $gpu"; nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader | sed 's/^/driver, memory: /'
      nvcc -o "$B/gpu_info" "$B/gpu_info.cu" && "$B/gpu_info" | sed 's/^/cudaDeviceGetAttribute: /'
      nvcc --version | tail -n 1; make -s lesson14 lesson18 >/dev/null 2>&1
      ./lesson14 -n 1 --check 2>&1 | grep '^# CUB'; ./lesson18 -n 1 --check 2>&1 | grep -m1 'NCCL'; } >"results/versions-$slug.txt"
}

METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed_op_branch.sum,sm__sass_inst_executed_op_shared_ld.sum,sm__sass_inst_executed_op_shared_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,lts__t_requests_op_red.sum,lts__t_requests_op_atom.sum

# ncu's CSV (quoted fields) -> lesson,kernel,launch,metric,unit,value, where
# launch counts the launches of that kernel in the process (1, 2, ...).
ncu_rows() { # LABEL < ncu --csv output
    awk -v L="$1" '/^"[0-9]/ {
        s = substr($0, 2, length($0) - 2); n = split(s, f, "\",\"")
        id = f[1]; k = f[5]; sub(/\(.*/, "", k); gsub(/,/, "", k)
        if (!(id in seen)) { seen[id] = ++cnt[k] }
        v = f[n]; gsub(/,/, "", v); u = f[n - 1]
        printf "%s,%s,%d,%s,%s,%s\n", L, k, seen[id], f[n - 2], u, v }'
}

for part in $parts; do
    case $part in
    test)
        say "make test"
        make test >"$B/test.log" 2>&1
        { echo "# make test on $gpu ($(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1) driver, $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/CUDA \1/p'), $J cores)"
          echo "# sources: cksum $(LC_ALL=C; cat Makefile common/*.h lessons/*/*.cu exercises/*.cu solutions/*.cu lab/*.cu scripts/*.sh tests/*.sh tests/*.c tests/*.txt | cksum | cut -d' ' -f1) (of Makefile, common/*.h, the lessons', exercises', solutions' and labs' .cu, scripts/*.sh and tests/*.sh, *.c, *.txt, in that order)"
          grep -E '^\[|  FAIL|GPU:|skip ' "$B/test.log"; grep -E '^[0-9]+ passed, [0-9]+ failed' "$B/test.log"; } >"results/test-$slug.txt"
        grep -E '^[0-9]+ passed, [0-9]+ failed' "$B/test.log"
        versions ;;
    versions)
        versions ;;
    run)
        say "make run"
        make -j"$J" lessons >/dev/null && make run RESULTS=results
        ./lesson12 >"results/lesson12-output-$slug.txt" 2>&1 ;;   # one lesson's own output, as a learner sees it
    bench)
        say "make bench"
        make bench RESULTS=results ;;
    counters)
        command -v ncu >/dev/null || { say "no ncu: counters skipped"; continue; }
        make -j"$J" lessons >/dev/null
        out=results/counters-$slug.csv
        [ -n "${COUNTER_APPEND:-}" ] || echo "lesson,kernel,launch,metric,unit,value" >"$out"
        for l in ${COUNTER_LESSONS:-$(manifest_lessons)}; do
            [ -x "./lesson$l" ] || continue
            say "counters lesson $l"
            [ "$l" = 18 ] && export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} # one GPU: our kernel, not NCCL's
            ncu --csv --print-units base --print-kernel-base function --clock-control none --launch-count 40 \
                --metrics "$METRICS" "./lesson$l" -n 2^24 --check 2>/dev/null | ncu_rows "$l" >>"$out"
        done
        # Two builds the notes compare with the lessons as written (once per file).
        [ -z "${COUNTER_APPEND:-}" ] && make -j"$J" BUILDDIR=$B/volatile EXTRA=-DCLASSIC_VOLATILE=1 lesson07 >/dev/null 2>&1 &&
            ncu --csv --print-units base --print-kernel-base function --clock-control none --metrics "$METRICS" \
                "$B/volatile/lesson07" -n 2^24 --check 2>/dev/null | ncu_rows 07-volatile >>"$out"
        # lab/04_padding: lesson 04's tree with padded shared memory (PAD 33:
        # conflict-free) and the same instructions without the bank change (PAD 32).
        if [ -z "${COUNTER_APPEND:-}" ] && make -j"$J" lab_04_padding >/dev/null 2>&1; then
            ncu --csv --print-units base --print-kernel-base function --clock-control none --launch-count 40 \
                --metrics "$METRICS" ./lab_04_padding -n 2^24 --check 2>/dev/null | ncu_rows lab_04_padding >>"$out"
            ./lab_04_padding -n 2^26 --csv --csv-header >"results/pad-lesson04-$slug.csv" 2>/dev/null
        fi
        echo "$(($(wc -l <"$out") - 1)) counter values in $out" ;;
    sass)
        command -v cuobjdump >/dev/null || { say "no cuobjdump: listings skipped"; continue; }
        make -j"$J" BUILDDIR=$B/sm90 ARCH=90 lesson01 lesson02 lesson03 lesson04 lesson05 lesson06 lesson07 lesson08 lesson09 lesson10 lesson11 lesson12 lesson13 lesson15 lesson16 lesson17 >/dev/null 2>&1
        make -j"$J" BUILDDIR=$B/sm90v ARCH=90 EXTRA=-DCLASSIC_VOLATILE=1 lesson07 >/dev/null 2>&1
        for b in $B/sm90/lesson0[1-9] $B/sm90/lesson1[0-3] $B/sm90/lesson1[567] $B/sm90v/lesson07; do
            [ -x "$b" ] || continue
            name=$(basename "$b"); case $b in *sm90v*) name=$name-volatile ;; esac
            # the lesson's kernels only (not the harness's), without the encodings
            cuobjdump -sass "$b" | grep -v '^ *\/\* 0x' | sed 's/ *\/\* 0x[0-9a-f]* \*\/ *$//' |
                awk '/Function : / { keep = ($0 !~ /harness|cub|CUB|thrust|THRUST/) } keep' >"results/sass-$name-sm_90.txt"
        done
        ls results/sass-*-sm_90.txt ;;
    race)
        CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
        [ -x "$CS" ] || { say "no compute-sanitizer: race logs skipped"; continue; }
        make -j"$J" lesson07 >/dev/null && make -j"$J" BUILDDIR=$B/volatile EXTRA=-DCLASSIC_VOLATILE=1 lesson07 >/dev/null
        "$CS" --tool racecheck --racecheck-report all ./lesson07 -n 4099 --check >"results/racecheck-lesson07-$slug.txt" 2>&1
        "$CS" --tool racecheck --racecheck-report all --print-limit 8 "$B/volatile/lesson07" -n 4099 --check \
            >"results/racecheck-lesson07-volatile-$slug.txt" 2>&1
        tail -n 2 results/racecheck-lesson07*-"$slug".txt ;;
    det)
        make -j"$J" lessons >/dev/null
        out=results/determinism-$slug.txt
        echo "# distinct results over 20 runs of one input: -n 2^24+7 -d uniform -s 3 --check ($gpu)" >"$out"
        for l in 02 12 13 15; do
            [ -x "./lesson$l" ] || continue
            for i in $(seq 20); do "./lesson$l" -n 2^24+7 -d uniform -s 3 --check --csv; done 2>/dev/null |
                awk -F, -v l="$l" '/^[0-9][0-9]_/ && $15 == "PASS" { runs[$2]++; if (!(($2, $12) in seen)) { seen[$2, $12] = 1; d[$2]++ } ; if (!($2 in o)) o[$2] = ++no; v[o[$2]] = $2 }
                    END { for (i = 1; i <= no; i++) printf "%s %-12s %d runs, %d distinct results\n", l, v[i], runs[v[i]], d[v[i]] }' >>"$out"
        done
        echo >>"$out"; cat "$out" ;;
    exercises)
        make -j"$J" solutions >/dev/null
        out=results/exercises-$slug.csv
        first=1
        for s in ./solution[0-9][0-9]; do
            if [ $first = 1 ]; then "$s" -n 2^26 --csv-header --csv; first=0; else "$s" -n 2^26 --csv; fi
        done 2>/dev/null | grep -E '^(lesson,|(ex)?[0-9][0-9]_)' >"$out"
        echo "$(($(wc -l <"$out") - 1)) rows in $out" ;;
    lessons)
        make -j"$J" lessons >/dev/null
        ./lesson15 -n 2^26 -d uniform >"results/lesson15-$slug.txt" 2>&1
        ./lesson15 -n 2^20+3,2^24,2^26 -d uniform -s 3 --check --csv --csv-header >"results/lesson15-bits-$slug.csv" 2>/dev/null
        ./lesson16 -n 2^26 >"results/lesson16-$slug.txt" 2>&1
        for f in dirty clean; do # every combine beside lesson 12's plain sum, one input size, the same flush
            ./lesson16 -n 2^28 --flush $f --csv; ./lesson12 -n 2^28 --flush $f --csv
        done 2>/dev/null | awk -F, 'NR == 1 { print "flush,lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status" }
            /^1[26]_/ { f = (++k[$1 "," $2] == 1) ? "dirty" : "clean"; print f "," $0 }' >"results/lesson16-2e28-$slug.csv"
        ./lesson17 --csv --csv-header >"results/rows-$slug.csv" 2>/dev/null
        if grep -q 'cudaOccupancyMaxActiveClusters' lessons/13_*/13_*.cu; then
            ./lesson13 -n 2^26 --check | grep '^clusters of' >"results/lesson13-clusters-$slug.txt"
        fi
        ls -la results/lesson1[3-6]-*"$slug"* "results/rows-$slug.csv" ;;
    procs)
        # Lesson 18 on 1, 2, 4, 8 GPUs (as many as there are), in both modes: one
        # process for all (ncclCommInitAll), then one process per GPU (--procs).
        make -j"$J" lesson18 >/dev/null
        g=$(nvidia-smi -L | grep -c '^GPU')
        sizes=${PROCS_SIZES:-2^20,2^22,2^24,2^26,2^28,2^30,2^32}
        for k in 1 2 4 8; do
            [ "$k" -le "$g" ] || continue
            vis=$(seq -s, 0 $((k - 1)))
            out=results/procs-${k}x-$slug.csv
            { CUDA_VISIBLE_DEVICES=$vis ./lesson18 -n "$sizes" --csv-header --csv
              [ "$k" -gt 1 ] && CUDA_VISIBLE_DEVICES=$vis ./lesson18 --procs -n "$sizes" --csv; } 2>/dev/null |
                grep -E '^(lesson,|18_)' >"$out"
            { CUDA_VISIBLE_DEVICES=$vis ./lesson18 --procs -n 2^26; CUDA_VISIBLE_DEVICES=0 ./lesson18 --procs -n 2^26; } \
                >"results/procs-${k}x-$slug.txt" 2>&1
            echo "$(($(wc -l <"$out") - 1)) rows in $out"
        done
        if [ "$g" -gt 1 ]; then # exercise 18's answer on several GPUs, beside the lesson (its notes' Exercise section)
            make -j"$J" solution18 >/dev/null
            { ./lesson18 -n 2^20,2^26 --csv-header --csv; ./solution18 -n 2^20,2^26 --csv; } 2>/dev/null |
                grep -E '^(lesson,|(ex)?18_)' >"results/solution18-${g}x-$slug.csv"
        fi ;;
    *) echo "reference.sh: unknown part '$part' (test run bench counters sass race det exercises lessons procs)" >&2; exit 2 ;;
    esac
done
