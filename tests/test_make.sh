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

# A stand-in nvcc: reports VERSION and the architectures it builds for (as
# --list-gpu-arch does), and "compiles" by creating the -o file, after SLOW
# seconds (it notes its start and end in $T/nvcc.log).
fake_nvcc() {
    cat >"$T/nvcc-$1" <<EOF
#!/bin/sh
case "\$*" in *--version*) echo "Cuda compilation tools, release $1, V$1.0"; exit 0 ;; esac
case "\$*" in *--list-gpu-arch*) for a in $2; do echo "compute_\$a"; done; exit 0 ;; esac
echo "start \$\$" >>"$T/nvcc.log"
sleep \${SLOW:-0}
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && { printf '#!/bin/sh\nexit 0\n' >"\$2"; chmod +x "\$2"; }; shift; done
echo "end \$\$" >>"$T/nvcc.log"
EOF
    chmod +x "$T/nvcc-$1"
}
fake_nvcc 12.8 "50 52 53 60 61 62 70 72 75 80 86 87 89 90 100 101 120"
fake_nvcc 12.2 "50 52 53 60 61 62 70 72 75 80 86 87 89 90"
fake_nvcc 12.4 "50 52 53 60 61 62 70 72 75 80 86 87 89 90"
fake_nvcc 13.0 "75 80 86 87 88 89 90 100 110 103 120 121"
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
    for w in lessonNN exerciseNN solutionNN lesson4 'check E=NN' tables .ptx .sass TIERS GPU_PARTS BUILDDIR EXTRA CCCL_HOME NCCL_HOME RESULTS ARCH -j1 list-gpu-arch; do
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
expect "CCCL_HOME with no CUB in it is refused in one line" 2 'CCCL_HOME=.*holds neither include/cub/cub.cuh nor' \
    $MK -n NVCC="$T/nvcc-12.8" ARCH=90 BUILDDIR="$T/b" CCCL_HOME="$T/nothing-here" lesson14
if grep -q REDUCE_HAVE_CCCL_HOME "$T/out"; then notok "CCCL_HOME reaches lesson04, which is not marked"; else ok "CCCL_HOME leaves unmarked sources alone"; fi

# ARCH must be one the compiler builds for (nvcc --list-gpu-arch), said in one line before nvcc runs.
expect "ARCH=sm_50 with CUDA 13.0: refused, naming what it builds for" 2 \
    '^Makefile:[0-9]+: \*\*\* ARCH=50: CUDA 13\.0 .*cannot build for this architecture; it builds for 75 80 86 87 88 89 90 100 103 110 120 121\.' \
    $MK -n NVCC="$T/nvcc-13.0" ARCH=sm_50 BUILDDIR="$T/b" lesson04
if [ "$(wc -l <"$T/out")" -eq 1 ] && ! grep -q 'gencode' "$T/out"; then ok "... in one line, with no nvcc run"; else notok "ARCH=sm_50: more than one line" "$(cat "$T/out")"; fi
expect "ARCH=\"90 120\" with CUDA 12.4: Blackwell needs CUDA 12.8" 2 'ARCH=120: CUDA 12\.4 .*builds for 50 .* 90 \(Blackwell.*12\.8 or newer\)' \
    $MK -n NVCC="$T/nvcc-12.4" ARCH="90 120" BUILDDIR="$T/b" lesson04
expect "ARCH=90a passes that check as 90" 0 'arch=compute_90a,code=sm_90a' $MK -n NVCC="$T/nvcc-12.4" ARCH=90a BUILDDIR="$T/b" lesson04
expect "ARCH=100f, a family target, passes it as 100" 0 'arch=compute_100f,code=sm_100f' $MK -n NVCC="$T/nvcc-13.0" ARCH=100f BUILDDIR="$T/b" lesson04
# Names and values that do not exist: one line that says what does.
expect "make lesson99 names the lessons there are" 2 'there is no lesson99: the lessons are 01 to 18' $MK NVCC="$T/nvcc-13.0" ARCH=90 BUILDDIR="$T/b" lesson99
expect "make exercise01 names the exercises there are" 2 'there is no exercise01: the exercises are 02 to 18' $MK NVCC="$T/nvcc-13.0" ARCH=90 BUILDDIR="$T/b" exercise01
expect "DEBUG=yes is refused, saying DEBUG=1" 2 'DEBUG=yes: give DEBUG=1' $MK -n NVCC="$T/nvcc-13.0" ARCH=90 BUILDDIR="$T/b" DEBUG=yes lesson04
expect "a NCCL_HOME without nccl.h is refused" 2 'NCCL_HOME=/nonexistent holds no include/nccl.h' $MK -n NVCC="$T/nvcc-13.0" ARCH=90 BUILDDIR="$T/b" NCCL_HOME=/nonexistent lesson04
expect "ARCH=\"75 100 120\" with CUDA 12.8" 0 'code=sm_75 .*code=sm_100 .*code=sm_120' $MK -n NVCC="$T/nvcc-12.8" ARCH="75 100 120" BUILDDIR="$T/b" lesson04

# One-digit aliases: make lesson4 is make lesson04.
for k in lesson exercise solution; do
    expect "make ${k}4 builds ${k}04" 0 "-o $T/b/${k}04 " $MK -n -B NVCC="$T/nvcc-12.8" ARCH=90 BUILDDIR="$T/b" ${k}4
done
expect "make lesson4.ptx is make lesson04.ptx" 0 "-ptx -o $T/b/lesson04\.ptx" $MK -n -B NVCC="$T/nvcc-12.8" ARCH=90 BUILDDIR="$T/b" lesson4.ptx

# NVCC names the toolkit: an inherited CUDA_HOME that names another one is not
# used, and NCCL is found beside the compiler.
mkdir -p "$T/tk/bin" "$T/tk/include" "$T/tk/lib64" "$T/other/include" "$T/other/lib64"
cp "$T/nvcc-12.8" "$T/tk/bin/nvcc"
: >"$T/tk/include/nccl.h"
: >"$T/tk/lib64/libnccl.so"
: >"$T/other/include/nccl.h"
: >"$T/other/lib64/libnccl.so"
expect "NVCC wins over an inherited CUDA_HOME (NCCL beside the compiler)" 0 "tk/bin/nvcc .*-lnccl" \
    env CUDA_HOME="$T/other" $MK -n -B NVCC="$T/tk/bin/nvcc" ARCH=90 BUILDDIR="$T/b" lesson18
if grep -q "$T/other" "$T/out"; then notok "... but CUDA_HOME's folder reached the command" "$(cat "$T/out")"; else ok "... and CUDA_HOME's folder is nowhere in the command"; fi

# The build follows the flags (stand-in compiler, a scratch BUILDDIR).
F0="NVCC=$T/nvcc-12.8 BUILDDIR=$T/s"
# shellcheck disable=SC2086
q() { $MK -q $F0 "$@" >/dev/null 2>&1; echo $?; }
# shellcheck disable=SC2086
$MK $F0 ARCH=90 lesson04 lesson14 >"$T/out" 2>&1 && [ -x "$T/s/lesson04" ] || notok "stand-in build of lesson04 and lesson14" "$(cat "$T/out")"
# shellcheck disable=SC2086
$MK $F0 ARCH=90 NCCL_HOME="$T/tk" lesson18 >/dev/null 2>&1
stamp=$(cat "$T/s/.build-flags-nvcc" 2>/dev/null)
if [ "$(q ARCH=90 lesson04)" = 0 ]; then ok "make -q: lesson04 is up to date after its build"; else notok "make -q: lesson04 out of date right after its build"; fi
for v in ARCH=86 EXTRA=-DX=1 DEBUG=1 WERROR=1 NVCC="$T/nvcc-13.0"; do
    w=$(echo "$v" | sed "s|$T/||")
    if [ "$(q ARCH=90 "$v" lesson04)" = 1 ]; then ok "$w: lesson04 is out of date"; else notok "$w: lesson04 counted up to date"; fi
done
if [ "$(cat "$T/s/.build-flags-nvcc" 2>/dev/null)" = "$stamp" ]; then ok "make -q writes no stamp"; else notok "make -q rewrote the flags stamp"; fi
if [ "$(q ARCH=90 CCCL_HOME="$T/cccl" lesson14)" = 1 ]; then ok "CCCL_HOME: lesson14 is out of date"; else notok "CCCL_HOME: lesson14 counted up to date"; fi
if [ "$(q ARCH=90 CCCL_HOME="$T/cccl" lesson04)" = 0 ]; then ok "CCCL_HOME: lesson04 (not marked) is up to date"; else notok "CCCL_HOME: lesson04 out of date"; fi
if [ "$(q ARCH=90 NCCL_HOME="$T/other" lesson18)" = 1 ]; then ok "NCCL_HOME: lesson18 is out of date"; else notok "NCCL_HOME: lesson18 counted up to date"; fi
if [ "$(q ARCH=90 NCCL_HOME="$T/other" lesson04)" = 0 ]; then ok "NCCL_HOME: lesson04 is up to date"; else notok "NCCL_HOME: lesson04 out of date"; fi
# shellcheck disable=SC2086
expect "make ARCH=86 lesson04 after a build for sm_90 builds it again" 0 'arch=compute_86,code=sm_86' $MK $F0 ARCH=86 lesson04
# shellcheck disable=SC2086
expect "... and once only" 0 '' $MK $F0 ARCH=86 lesson04
if grep -q gencode "$T/out"; then notok "make ARCH=86 lesson04 built it twice" "$(cat "$T/out")"; fi

# make builds in parallel by default, one job per core; -j1 is one at a time.
overlap() { awk '$1 == "start" { n++; if (n > m) m = n } $1 == "end" { n-- } END { print m + 0 }' "$T/nvcc.log"; }
if [ "$(nproc 2>/dev/null || echo 1)" -ge 2 ]; then
    rm -f "$T/nvcc.log"
    # shellcheck disable=SC2086
    SLOW=1 $MK $F0 ARCH=75 lesson02 lesson03 >/dev/null 2>&1
    if [ "$(overlap)" -ge 2 ]; then ok "make builds in parallel by default"; else notok "make built one file at a time without -j" "$(cat "$T/nvcc.log")"; fi
    rm -f "$T/nvcc.log"
    # shellcheck disable=SC2086
    SLOW=1 $MK -j1 $F0 ARCH=80 lesson02 lesson03 >/dev/null 2>&1
    if [ "$(overlap)" -eq 1 ]; then ok "make -j1 builds one at a time"; else notok "make -j1 ran nvcc in parallel" "$(cat "$T/nvcc.log")"; fi
else
    echo "ok make builds in parallel by default # skip: one core"
fi

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
case "\$*" in *"-n 1 --check"*) exit 0 ;; *"-n foo"*) echo "\$0: not a count of elements: -n foo" >&2; exit 2 ;; esac
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
    expect "[$s] make run N=foo: refused in one line before anything runs" 2 '^make run: N=foo is not a size: not a count' \
        env BIN="$F" OUT="$T/runs-foo-$s" "$SH" scripts/run.sh foo lesson01 lesson02 lesson03
    if [ "$(wc -l <"$T/out")" -eq 1 ] && [ ! -e "$T/runs-foo-$s" ]; then ok "[$s] ... and nothing written"; else notok "[$s] make run N=foo said more or wrote" "$(cat "$T/out")"; fi
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
