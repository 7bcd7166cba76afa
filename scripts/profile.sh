#!/bin/sh
# make profile L=NN [N=...]: the Nsight Compute counters the notes quote, for
# every kernel of one lesson's process, with the setup the notes use:
#   ncu --clock-control none --metrics ... ./lessonNN -n 2^24 --check
# usage: sh scripts/profile.sh NN [N]
# Environment: METRICS (comma-separated ncu metric names), NCU (default ncu),
# BIN (folder of the binaries, default .), MAKE (default make).
cd "$(dirname "$0")/.." || exit 1
. scripts/common.sh

[ $# -ge 1 ] && [ -n "$1" ] || { echo "usage: make profile L=NN [N=2^24] (e.g. make profile L=04)" >&2; exit 2; }
nn=$(lesson_num L "$1") || exit 2
[ -n "$(lesson_src "$nn")" ] || { echo "there is no lesson $nn: the lessons are $(lesson_range) (ls lessons/)" >&2; exit 2; }
n=${2:-2^24}
NCU=${NCU:-ncu}
BIN=${BIN:-.}
METRICS=${METRICS:-gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed_op_branch.sum,sm__sass_inst_executed_op_shared_ld.sum,sm__sass_inst_executed_op_shared_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,lts__t_requests_op_red.sum,lts__t_requests_op_atom.sum}

if ! command -v "$NCU" >/dev/null 2>&1; then
    echo "make profile needs ncu (Nsight Compute), which is not on PATH. It is part of the CUDA toolkit" >&2
    echo "(the nsight-compute package of NVIDIA's CUDA repositories, or developer.nvidia.com/nsight-compute);" >&2
    echo "once installed, put its folder on PATH (e.g. /usr/local/cuda/bin, or /opt/nvidia/nsight-compute/<version>)." >&2
    exit 2
fi

${MAKE:-make} --no-print-directory "lesson$nn" || exit $?
bin=$BIN/lesson$nn
[ -x "$bin" ] || { echo "lesson$nn was not built (see the lines above)" >&2; exit 1; }

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
