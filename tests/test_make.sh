#!/bin/sh
# Host tests of the Makefile and scripts/ under a POSIX sh (dash where it is
# installed), no GPU and no ncu needed: make diff/profile/check argument
# handling, ARCH, the nvcc checks, make run's pre-flight and failure report,
# and that the charts are well-formed XML. Prints "ok ..." / "not ok ..." lines;
# exit 1 if any failed.
# Each make below is a learner's own top-level make, not a sub-make of `make test`.
unset MAKELEVEL MAKEFLAGS MFLAGS
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
T=$(mktemp -d "${TMPDIR:-/tmp}/reduce-test-make.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
FAILS=0
ok() { echo "ok $1"; }
notok() { FAILS=$((FAILS + 1)); echo "not ok $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | head -n 8 | sed 's/^/    /'; }

# expect NAME RC REGEX COMMAND...: runs COMMAND, wants exit code RC and REGEX
# (extended, may be empty) somewhere in its stdout + stderr.
expect() {
    name=$1 want=$2 re=$3
    shift 3
    "$@" >"$T/out" 2>&1
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        notok "$name (exit $rc, wanted $want)" "$(cat "$T/out")"
    elif [ -n "$re" ] && ! grep -Eq -e "$re" "$T/out"; then
        notok "$name (no /$re/ in the output)" "$(cat "$T/out")"
    else
        ok "$name"
    fi
}

SHELLS=/bin/sh
command -v dash >/dev/null 2>&1 && [ "$(readlink -f /bin/sh)" != "$(readlink -f "$(command -v dash)")" ] &&
    SHELLS="$SHELLS $(command -v dash)"
MK="make --no-print-directory"

# A PATH without ncu (the profile test must not find one).
NONCU=$(echo "$PATH" | tr ':' '\n' | while IFS= read -r d; do [ -n "$d" ] && [ ! -x "$d/ncu" ] && printf '%s:' "$d"; done)
NONCU=${NONCU%:}

# A stand-in nvcc: reports VERSION, and "compiles" by creating the -o file.
fake_nvcc() {
    cat >"$T/nvcc-$1" <<EOF
#!/bin/sh
case "\$*" in *--version*) echo "Cuda compilation tools, release $1, V$1.0"; exit 0 ;; esac
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && { printf '#!/bin/sh\nexit 0\n' >"\$2"; chmod +x "\$2"; }; shift; done
EOF
    chmod +x "$T/nvcc-$1"
}
fake_nvcc 12.8
fake_nvcc 12.2
# A stand-in ncu that may not read the counters (it exits 0, as ncu can).
printf '#!/bin/sh\necho "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters"\n' >"$T/ncu-noperm"
chmod +x "$T/ncu-noperm"
mkdir -p "$T/bin"
printf '#!/bin/sh\nexit 0\n' >"$T/bin/lesson05" && chmod +x "$T/bin/lesson05"

for SH in $SHELLS; do
    s=$(basename "$SH")
    # ---- make diff
    expect "[$s] make diff L=5" 0 '^\+\+\+ lessons/05_' $MK SHELL="$SH" diff L=5
    expect "[$s] make diff L=05" 0 '^--- lessons/04_' $MK SHELL="$SH" diff L=05
    expect "[$s] make diff L=01 says lesson 01 is the first" 2 'lesson 01 is the first lesson' $MK SHELL="$SH" diff L=01
    expect "[$s] make diff L=99 says there is no lesson 99" 2 'there is no lesson 99' $MK SHELL="$SH" diff L=99
    expect "[$s] make diff L=x4 says it is not a number" 2 'not a number' $MK SHELL="$SH" diff L=x4
    expect "[$s] make diff without L prints usage" 2 'usage: make diff L=NN' $MK SHELL="$SH" diff
    expect "[$s] sh scripts/diff.sh 5" 0 '^\+\+\+ lessons/05_' "$SH" scripts/diff.sh 5
    expect "[$s] sh scripts/diff.sh 01" 2 'first lesson' "$SH" scripts/diff.sh 01
    # ---- make profile, without ncu, and with an ncu that may not read the counters
    if env PATH="$NONCU" sh -c 'command -v make && command -v sed' >/dev/null 2>&1; then
        expect "[$s] make profile L=4 without ncu names Nsight Compute" 2 'Nsight Compute.*CUDA toolkit' \
            env PATH="$NONCU" $MK SHELL="$SH" profile L=4
        expect "[$s] sh scripts/profile.sh 04 without ncu" 2 'Nsight Compute' env PATH="$NONCU" "$SH" scripts/profile.sh 04
    else
        echo "ok [$s] make profile without ncu # skip: ncu shares a folder with make"
    fi
    expect "[$s] make profile: ERR_NVGPUCTRPERM says how to allow counters" 1 'NVreg_RestrictProfilingToAdminUsers=0' \
        env NCU="$T/ncu-noperm" MAKE=true BIN="$T/bin" "$SH" scripts/profile.sh 5
    expect "[$s] make profile L=99" 2 'there is no lesson 99' $MK SHELL="$SH" profile L=99
    expect "[$s] make profile without L prints usage" 2 'usage: make profile' $MK SHELL="$SH" profile
    # ---- make check
    expect "[$s] make check without E prints usage" 2 'usage: make check E=NN' $MK SHELL="$SH" check
    expect "[$s] make check E=99" 2 'no exercise 99' $MK SHELL="$SH" check E=99
done

# ---- make help lists what a learner needs
if $MK help >"$T/help" 2>&1; then
    miss=""
    for w in lessonNN exerciseNN solutionNN 'check E=NN' tables .ptx .sass TIERS GPU_PARTS BUILDDIR EXTRA CCCL_HOME RESULTS ARCH; do
        grep -q -- "$w" "$T/help" || miss="$miss $w"
    done
    if [ -z "$miss" ]; then ok "make help lists every target and variable"; else notok "make help lacks:$miss"; fi
else
    notok "make help fails" "$(cat "$T/help")"
fi

# ---- the compiler and ARCH (a stand-in nvcc: no CUDA needed)
for a in native sm_90 9.0 90 compute_90; do
    case $a in native) command -v nvidia-smi >/dev/null 2>&1 && continue ;; esac # native needs no GPU only to fail
    if [ $a = native ]; then
        expect "ARCH=native without a GPU: clear message" 2 'ARCH=native: no GPU' $MK -n NVCC="$T/nvcc-12.8" ARCH=native BUILDDIR="$T/b" lesson04
    else
        expect "ARCH=$a means sm_90" 0 'arch=compute_90,code=sm_90' $MK -n NVCC="$T/nvcc-12.8" ARCH=$a BUILDDIR="$T/b" lesson04
    fi
done
expect 'ARCH="75 9.0" is a list' 0 'arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90' \
    $MK -n NVCC="$T/nvcc-12.8" ARCH="75 9.0" BUILDDIR="$T/b" lesson04
expect "ARCH=turing is refused in one line" 2 'ARCH=turing is not a GPU architecture' $MK -n NVCC="$T/nvcc-12.8" ARCH=turing lesson04
expect "no nvcc: one line saying what is needed" 2 'nvcc not found.*12\.4' $MK -n NVCC="$T/no-such-nvcc" lesson04
expect "nvcc 12.2: found and needed" 2 'found CUDA 12\.2.*need CUDA 12\.4' $MK -n NVCC="$T/nvcc-12.2" lesson04
if ! command -v nvidia-smi >/dev/null 2>&1; then
    expect "no nvidia-smi: says it builds for sm_90 and how to choose" 0 'builds for sm_90.*ARCH=' \
        $MK -n NVCC="$T/nvcc-12.8" BUILDDIR="$T/b" lesson04
fi
expect "make lesson04.ptx" 0 '-ptx -o .*lesson04\.ptx' $MK -n NVCC="$T/nvcc-12.8" ARCH=90 BUILDDIR="$T/b" lesson04.ptx
expect "make lesson04.sass without cuobjdump says where it comes from" 2 'cuobjdump not found.*CUDA toolkit' \
    $MK NVCC="$T/nvcc-12.8" ARCH=90 BUILDDIR="$T/b" CUOBJDUMP= lesson04.sass
# CCCL_HOME: first on the include path of sources marked "// uses: cccl", nowhere else.
mkdir -p "$T/cccl/include/cub" && : >"$T/cccl/include/cub/cub.cuh"
marked=$(grep -l '^// uses: cccl' lessons/*/*.cu 2>/dev/null | head -n 1)
if [ -n "$marked" ]; then
    b=lesson$(basename "$marked" | cut -c1-2)
    expect "CCCL_HOME goes first for $b" 0 "nvcc-12.8 +-I$T/cccl/include -DREDUCE_HAVE_CCCL_HOME=1 .*-Icommon" \
        $MK -n -B NVCC="$T/nvcc-12.8" ARCH=90 BUILDDIR="$T/b" CCCL_HOME="$T/cccl" "$b"
else
    echo "ok CCCL_HOME # skip: no source is marked '// uses: cccl' yet"
fi
$MK -n -B NVCC="$T/nvcc-12.8" ARCH=90 BUILDDIR="$T/b" CCCL_HOME="$T/cccl" lesson04 >"$T/out" 2>&1
if grep -q REDUCE_HAVE_CCCL_HOME "$T/out"; then notok "CCCL_HOME reaches lesson04, which is not marked"; else ok "CCCL_HOME leaves unmarked sources alone"; fi

# ---- make run: pre-flight, FAIL rows, the closing line (stand-in lessons)
F=$T/bin
mkdir -p "$F"
cat >"$F/nogpu" <<'EOF'
#!/bin/sh
echo "lesson01: no usable CUDA device: no CUDA-capable device is detected" >&2
exit 1
EOF
# stand-in lesson: NAME VARIANT STATUS EXIT
stand_in() {
    cat >"$F/$1" <<EOF
#!/bin/sh
case "\$*" in *"-n 1 --check"*) exit 0 ;; esac
n=67108864; case "\$*" in *"-n "*) ;; *) n=1048576 ;; esac
echo "$2,$3,Stand-in GPU,\$n,4,100,\$((n / 1000)),1,2,3.0,4.0,1,1,0,$4"
exit $5
EOF
}
stand_in lesson01 01_serial serial PASS 0
stand_in lesson02 02_atomic atomic FAIL 0
stand_in lesson03 03_tree tree PASS 0
chmod +x "$F"/*
cp "$F/nogpu" "$T/nogpu-lesson01"
mkdir -p "$T/ng" && cp "$F/nogpu" "$T/ng/lesson01" && cp "$F/nogpu" "$T/ng/lesson02"
for SH in $SHELLS; do
    s=$(basename "$SH")
    expect "[$s] make run without a GPU: one message, exit 1" 1 'no usable GPU' env BIN="$T/ng" OUT="$T/out-ng" "$SH" scripts/run.sh 2^26 lesson01 lesson02
    if [ "$(grep -c 'no usable GPU' "$T/out")" -eq 1 ] && [ ! -e "$T/out-ng" ]; then ok "[$s] ... and nothing else run or written"; else notok "[$s] make run without a GPU said more" "$(cat "$T/out")"; fi
    expect "[$s] make run flags a FAIL row of a binary that exited 0" 1 '^1 lesson failed: lesson02' \
        env BIN="$F" OUT="$T/runs-$s" "$SH" scripts/run.sh 2^26 lesson01 lesson02 lesson03
    if grep -q '^03_tree .* - .*PASS' "$T/runs-$s/run-stand-in-gpu.txt" 2>/dev/null; then
        ok "[$s] no speedup computed against a failed row"
    else
        notok "[$s] speedup computed against a failed row" "$(cat "$T/runs-$s/run-stand-in-gpu.txt" 2>&1)"
    fi
done

# ---- make bench: both flush modes when the binaries take --flush
{
    echo '#!/bin/sh'
    echo 'case "$*" in *"-n 1 --check"*) exit 0 ;; -h) echo "  --flush dirty|clean"; exit 0 ;; esac'
    echo 'echo "12_single_pass,atomic,Stand-in GPU,1024,4096,100,5.0,1,1,0.8,0.0,1,1,0,PASS"'
} >"$F/lesson12"
chmod +x "$F/lesson12"
expect "make bench writes the dirty and the clean sweep" 0 'all lessons passed' env LO=10 HI=11 BIN="$F" OUT="$T/bench" sh scripts/bench.sh lesson12
if [ -s "$T/bench/bench-stand-in-gpu.csv" ] && [ -s "$T/bench/bench-stand-in-gpu-clean.csv" ]; then
    ok "... into bench-<gpu>.csv and bench-<gpu>-clean.csv"
else
    notok "bench files missing" "$(ls -la "$T/bench" 2>&1)"
fi

# ---- the charts: well-formed XML, text escaped
R=$T/plot
mkdir -p "$R/results" "$R/runs"
H="lesson,variant,gpu,n,bytes,reps,median_us,min_us,max_us,gbps,pct_peak,result,expected,abs_err,status"
{
    echo "$H"
    echo "01_serial,serial,A&B <GPU>,1048576,4194304,3,30000,1,1,0.1,0.0,1,1,0,PASS"
    echo "02_atomic,atomic,A&B <GPU>,67108864,268435456,9,100000,1,1,2.7,0.1,1,1,0,PASS"
    echo "12_single_pass,atomic,A&B <GPU>,67108864,268435456,100,75,1,1,3579.1,74.3,1,1,0,PASS"
    echo "12_single_pass,fixed,A&B <GPU>,67108864,268435456,100,76,1,1,3531.0,73.4,1,1,0,FAIL"
    echo "14_libraries,cub,A&B <GPU>,67108864,268435456,100,75,1,1,3579.1,74.3,1,1,0,PASS"
    echo "15_determinism_and_accuracy,repeat,A&B <GPU>,67108864,268435456,0,0,0,0,0,0,1,1,0,PASS"
    echo "18_multi_gpu_nccl,allreduce_busbw,A&B <GPU>,262144,0,100,7.2,5.7,16.7,0.0,0.0,0,0,0,PASS"
} >"$R/results/run-ab-gpu.csv"
sed 's/A&B <GPU>/Yours/' "$R/results/run-ab-gpu.csv" >"$R/runs/run-yours.csv"
{
    echo "$H"
    for e in 10 14 18 22 26; do
        n=$((1 << e))
        echo "12_single_pass,atomic,A&B <GPU>,$n,$((4 * n)),100,$((5 + n / 3000)),1,1,1,1,1,1,0,PASS"
        echo "14_libraries,cub,A&B <GPU>,$n,$((4 * n)),100,$((7 + n / 3000)),1,1,1,1,1,1,0,PASS"
    done
} >"$R/results/bench-ab-gpu-clean.csv"
if (cd "$R" && sh "$ROOT/scripts/plot.sh") >"$T/plot.out" 2>&1; then
    n=$(ls "$R"/results/*.svg "$R"/runs/*.svg 2>/dev/null | wc -l)
    [ "$n" -eq 3 ] && ok "make plot draws results/ and runs/ ($n charts)" || notok "make plot drew $n charts, not 3" "$(cat "$T/plot.out")"
else
    notok "make plot fails" "$(cat "$T/plot.out")"
fi
if grep -q 'A&B' "$R"/results/*.svg "$R"/runs/*.svg; then notok "chart text is not XML-escaped"; else ok "chart text is XML-escaped"; fi
if command -v python3 >/dev/null 2>&1; then
    for svg in "$R"/results/*.svg "$R"/runs/*.svg; do
        [ -f "$svg" ] || continue
        if python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$svg" >"$T/xml" 2>&1; then
            ok "$(basename "$svg") is well-formed XML"
        else
            notok "$(basename "$svg") is not well-formed XML" "$(tail -n 3 "$T/xml")"
        fi
    done
else
    echo "ok charts are well-formed XML # skip: no python3"
fi
# In a real browser, where one is installed: the chart renders to a non-empty image.
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$BROWSER" ] && [ -f "$R/results/run-ab-gpu.svg" ]; then
    timeout 60 "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,800 \
        --screenshot="$T/run.png" "file://$R/results/run-ab-gpu.svg" >"$T/browser" 2>&1
    if [ -s "$T/run.png" ]; then ok "the staircase renders in $(basename "$BROWSER")"; else notok "the staircase does not render in $BROWSER" "$(tail -n 3 "$T/browser")"; fi
else
    echo "ok charts render in a browser # skip: no chromium"
fi
if grep -q 'allreduce\|repeat' "$R"/results/run-ab-gpu.svg; then notok "the staircase draws check-only or non-sum rows"; else ok "the staircase leaves out check-only and non-sum rows"; fi

[ "$FAILS" -eq 0 ]
