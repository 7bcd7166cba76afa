#!/bin/sh
# make profile L=NN [N=...]: the Nsight Compute counters the notes quote, for
# every kernel of one lesson's process, with the setup the notes use:
#   ncu --clock-control none --metrics ... ./lessonNN -n 2^24 --check
# usage: sh scripts/profile.sh NN [N]
# Environment: METRICS (comma-separated ncu metric names), NCU (default ncu),
# BIN (folder of the binaries, default .), MAKE (default make).
# Without ncu, or without a GPU it can profile, it says why and shows the
# counters results/ ships for the lesson (results/counters-<gpu>.csv: the
# same counters, measured with this command on the GPUs named there).
cd "$(dirname "$0")/.." || exit 1
. scripts/common.sh

[ $# -ge 1 ] && [ -n "$1" ] || { echo "usage: make profile L=NN [N=2^24] (e.g. make profile L=04)" >&2; exit 2; }
nn=$(lesson_num L "$1") || exit 2
[ -n "$(lesson_src "$nn")" ] || { echo "there is no lesson $nn: the lessons are $(lesson_range) (ls lessons/)" >&2; exit 2; }
n=${2:-2^24}
NCU=${NCU:-ncu}
BIN=${BIN:-.}
METRICS=${METRICS:-gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed_op_branch.sum,sm__sass_inst_executed_op_shared_ld.sum,sm__sass_inst_executed_op_shared_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,lts__t_requests_op_red.sum,lts__t_requests_op_atom.sum}

# shipped_counters NN: lesson NN's rows of each results/counters-<gpu>.csv (only
# this GPU's file when there is one for it) as a table: with few launches a
# row per counter and a column per launch, else a row per launch and the
# main counters.
shipped_counters() {
    files=""
    mine=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
    [ -n "$mine" ] && [ -f "results/counters-$(gpu_slug "$mine").csv" ] && files="results/counters-$(gpu_slug "$mine").csv"
    [ -n "$files" ] || files=$(ls results/counters-*.csv 2>/dev/null)
    shown=0
    now=$(sh scripts/code_hash.sh "${1%%-*}" | cut -f2)
    for f in $files; do
        grep -q "^$1," "$f" || continue
        shown=1
        gpu=$(basename "$f" .csv | sed 's/^counters-//')
        then=$(awk -F'\t' -v f="$(basename "$f")" -v k="${1%%-*}" '$1 == f && $2 == k { print $3 }' results/code.txt 2>/dev/null)
        echo
        echo "== $f: lesson $1 on $gpu (ncu --clock-control none, ./lesson$1 -n 2^24 --check; all rows: grep '^$1,' $f)"
        [ -n "$now" ] && [ "$then" = "$now" ] ||
            echo "   (measured with an earlier build of lesson ${1%%-*}: its code has changed since; the figures may differ)"
        awk -F, -v l="$1" '
            $1 != l { next }
            !(($2 " #" $3) in seen) { seen[$2 " #" $3] = 1; order[++nl] = $2 " #" $3 } # launches, in the order ncu saw them
            !($4 in mseen) { mseen[$4] = 1; metric[++nm] = $4 }
            { v[$2 " #" $3, $4] = $6 }
            function show(m, x) {
                if (x == "") return "-"
                if (m == "gpu__time_duration.sum") return sprintf("%.1f us", x / 1000)
                if (m == "dram__bytes_read.sum") return sprintf("%.1f MB", x / 1e6)
                return x
            }
            END {
                if (nl <= 4) {
                    printf "  %-72s", "counter"
                    for (i = 1; i <= nl; i++) printf " %16s", order[i]
                    printf "\n"
                    for (m = 1; m <= nm; m++) {
                        printf "  %-72s", metric[m]
                        for (i = 1; i <= nl; i++) printf " %16s", show(metric[m], v[order[i], metric[m]])
                        printf "\n"
                    }
                } else {
                    split("gpu__time_duration.sum launch__grid_size launch__registers_per_thread dram__bytes_read.sum dram__throughput.avg.pct_of_peak_sustained_elapsed sm__warps_active.avg.pct_of_peak_sustained_active smsp__inst_executed.sum", c, " ")
                    split("time|grid|regs|DRAM read|DRAM %peak|warps act.%|warp instr", h, "|")
                    printf "  %-36s", "kernel #launch (in order)"
                    for (k = 1; k <= 7; k++) printf " %11s", h[k]
                    printf "\n"
                    for (i = 1; i <= nl; i++) {
                        printf "  %-36s", order[i]
                        for (k = 1; k <= 7; k++) printf " %11s", show(c[k], v[order[i], c[k]])
                        printf "\n"
                    }
                }
            }' "$f"
    done
    [ "$shown" = 1 ] || echo "results/ ships no counters for lesson $1 (results/counters-<gpu>.csv)."
}

# The shipped rows to show: lesson 07 built with the classic volatile warp code has its own.
shipped=$nn
case "$nn ${EXTRA:-}" in "07 "*CLASSIC_VOLATILE*) shipped=07-volatile ;; esac

if ! command -v "$NCU" >/dev/null 2>&1; then
    echo "make profile needs ncu (Nsight Compute), which is not on PATH. It is part of the CUDA toolkit" >&2
    echo "(the nsight-compute package of NVIDIA's CUDA repositories, or developer.nvidia.com/nsight-compute);" >&2
    echo "once installed, put its folder on PATH (e.g. /usr/local/cuda/bin, or /opt/nvidia/nsight-compute/<version>)." >&2
    echo "Below instead: lesson $nn's counters as results/ ships them${2:+ (at n = 2^24, not N=$2)}." >&2
    shipped_counters "$shipped"
    exit 2
fi

${MAKE:-make} --no-print-directory "lesson$nn" || exit $?
bin=$BIN/lesson$nn
[ -x "$bin" ] || { echo "lesson$nn was not built (see the lines above)" >&2; exit 1; }
# ncu needs a GPU it can run the lesson on: without one the lesson says why, in two lines.
if ! why=$("$bin" -n 1 --check 2>&1 >/dev/null) && printf '%s\n' "$why" | grep -q 'no usable GPU'; then
    printf '%s\n' "$why" | head -n 2 >&2
    echo "so ncu has nothing to profile here. Below instead: lesson $nn's counters as results/ ships them${2:+ (at n = 2^24, not N=$2)}." >&2
    shipped_counters "$shipped"
    exit 1
fi

log=$(mktemp "${TMPDIR:-/tmp}/reduce-profile.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 130' INT TERM
echo "$NCU --clock-control none --metrics <the notes' counters> $bin -n $n --check" >&2
"$NCU" --clock-control none --metrics "$METRICS" "$bin" -n "$n" --check >"$log" 2>&1
rc=$?
cat "$log"
if grep -q 'ERR_NVGPUCTRPERM' "$log"; then
    {
        echo
        echo "ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): the driver lets only"
        echo "administrators use them. Either run the profile as root (sudo env PATH=\"\$PATH\" make profile L=$nn),"
        echo "or allow every user and reboot (or reload the nvidia module):"
        echo "  echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf"
        echo "On Windows and WSL2 the switch is in the NVIDIA Control Panel (Developer > Manage GPU Performance"
        echo "Counters). In a container, the host must allow it. NVIDIA's page: developer.nvidia.com/ERR_NVGPUCTRPERM"
    } >&2
    exit 1
fi
[ $rc -eq 0 ] || { echo "ncu exited with $rc (its output is above)" >&2; exit $rc; }
exit 0
