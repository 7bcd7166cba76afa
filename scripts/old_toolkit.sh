#!/bin/sh
# Assembles NVIDIA's CUDA 12.4, the oldest toolkit the lessons support, from
# Debian's packages into a folder (default .cuda-12.4/, git-ignored) on a Debian
# or Ubuntu machine, installing nothing system-wide: a private apt list (the
# machine's apt setup is left as it is), `apt-get download`, then the packages
# are unpacked into the folder and arranged as NVIDIA lays out a toolkit.
#
#   sh scripts/old_toolkit.sh [DIR]
#   make NVCC=.cuda-12.4/bin/nvcc ARCH="75 90" lesson04   # build with it
#   sh tests/check_build.sh                               # builds everything with it
#
# What comes: nvcc, ptxas, fatbinary, nvlink, cicc and the tools beside them;
# the CUDA headers and runtime; CUB, Thrust and libcu++ 2.3.2 (the ones CUDA
# 12.4 ships); cuBLAS (lesson 14) and NCCL (lesson 18). The downloads are about
# 1.5 GB; the folder keeps about 1 GB (NO_NCCL=1: 0.25 GB less), and takes
# a minute or two to make.
# nvcc 12.4 accepts gcc 6 to 13 as its host compiler: the newest of g++-13,
# g++-12, g++-11, ... found here, or the plain g++ when it is 13 or older
# (HOSTCXX=g++-12 chooses). The folder's bin/ holds that choice, so a plain
# `make NVCC=DIR/bin/nvcc` needs nothing more.
# Environment: SUITE (the Debian release that has 12.4: trixie), MIRROR
# (http://deb.debian.org/debian), KEYRING (Debian's archive key; on Ubuntu:
# apt-get install debian-archive-keyring), HOSTCXX, NO_NCCL=1, KEEP_DEBS=1.
set -eu

DIR=${1:-.cuda-12.4}
SUITE=${SUITE:-trixie}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
KEYRING=${KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
WANT=12.4    # the toolkit's version, as nvidia-cuda-toolkit's version begins

die() { echo "old_toolkit.sh: $*" >&2; exit "${RC:-1}"; }

command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 ||
    RC=2 die "needs apt-get and dpkg-deb: run it on Debian or Ubuntu"
[ -r "$KEYRING" ] ||
    RC=2 die "Debian's archive key is not at $KEYRING (on Ubuntu: apt-get install debian-archive-keyring; or give KEYRING=)"

# ---- the host compiler nvcc 12.4 accepts (gcc 13 at most)
gcc_major() { "$1" -dumpversion 2>/dev/null | cut -d. -f1; }
if [ -z "${HOSTCXX:-}" ]; then
    for c in g++-13 g++-12 g++-11 g++-10 g++-9; do
        command -v "$c" >/dev/null 2>&1 && { HOSTCXX=$c; break; }
    done
fi
if [ -z "${HOSTCXX:-}" ] && command -v g++ >/dev/null 2>&1; then
    m=$(gcc_major g++)
    [ -n "$m" ] && [ "$m" -le 13 ] && HOSTCXX=g++
fi
[ -n "${HOSTCXX:-}" ] || RC=2 die "nvcc 12.4 needs g++ 13 or older as its host compiler, and none was found (apt-get install g++-12, or give HOSTCXX=)"
HOSTCXX_PATH=$(command -v "$HOSTCXX") || RC=2 die "HOSTCXX=$HOSTCXX: not found"
m=$(gcc_major "$HOSTCXX_PATH")
[ -n "$m" ] && [ "$m" -le 13 ] || RC=2 die "HOSTCXX=$HOSTCXX is gcc ${m:-?}; nvcc 12.4 accepts 13 at most"
HOSTCC_PATH=$(command -v "$(echo "$HOSTCXX" | sed 's/g++/gcc/')" 2>/dev/null || true)
[ -n "$HOSTCC_PATH" ] || HOSTCC_PATH=$HOSTCXX_PATH

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
A=$DIR/.apt      # apt's private state: sources, lists, cache, the .deb files
rm -rf "$A" "$DIR/.stage"
mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/debs" "$A/none" "$DIR/.stage"
echo "deb [signed-by=$KEYRING] $MIRROR $SUITE main contrib non-free" >"$A/sources.list"
: >"$A/preferences"
APT="-o Dir::Etc::SourceList=$A/sources.list -o Dir::Etc::SourceParts=$A/none
     -o Dir::Etc::Preferences=$A/preferences -o Dir::Etc::PreferencesParts=$A/none
     -o Dir::State::Lists=$A/lists -o Dir::Cache=$A/cache -o Debug::NoLocking=1"

echo "== the package lists of Debian $SUITE (private to $A)"
# shellcheck disable=SC2086
apt-get $APT -q update >"$A/update.log" 2>&1 || { cat "$A/update.log" >&2; die "apt-get update failed"; }
# shellcheck disable=SC2086
VER=$(apt-cache $APT show nvidia-cuda-toolkit 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
case $VER in
"$WANT".*) ;;
*)
    # shellcheck disable=SC2086
    apt-cache $APT policy nvidia-cuda-toolkit >&2
    die "Debian $SUITE has nvidia-cuda-toolkit ${VER:-(none)}, not $WANT (versions above; SUITE= picks another release)"
    ;;
esac
echo "   nvidia-cuda-toolkit $VER"

# The toolkit and, at the versions it names, what nvcc needs to build and link
# the lessons. nvidia-cuda-dev is large (0.9 GB): only its headers and the
# runtime, cuBLAS (shared) and stub libraries are unpacked.
PKGS="nvidia-cuda-toolkit nvidia-cuda-dev libcudart12 libcublas12 libcublaslt12 libcub-dev libthrust-dev libcu++-dev"
[ "${NO_NCCL:-0}" = 1 ] || PKGS="$PKGS libnccl2 libnccl-dev"
echo "== downloading $PKGS"
# shellcheck disable=SC2086
(cd "$A/debs" && for p in $PKGS; do echo "$p/$SUITE"; done | xargs apt-get $APT -q download) >"$A/download.log" 2>&1 ||
    { tail -n 20 "$A/download.log" >&2; die "apt-get download failed"; }

echo "== unpacking into $DIR"
S=$DIR/.stage
for deb in "$A"/debs/*.deb; do
    case $(basename "$deb") in
    nvidia-cuda-dev_*)
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$S" --wildcards \
            './usr/include/*' './usr/lib/x86_64-linux-gnu/stubs/*' \
            './usr/lib/x86_64-linux-gnu/libcudart*' './usr/lib/x86_64-linux-gnu/libcudadevrt.a' \
            './usr/lib/x86_64-linux-gnu/libculibos.a' './usr/lib/x86_64-linux-gnu/libcublas*.so*'
        ;;
    *) dpkg -x "$deb" "$S" ;;
    esac
done

rm -rf "${DIR:?}/bin" "${DIR:?}/nvvm" "${DIR:?}/include" "${DIR:?}/lib64" "${DIR:?}/hostcc"
mkdir -p "$DIR/bin/crt" "$DIR/nvvm/bin" "$DIR/nvvm/libdevice" "$DIR/lib64" "$DIR/hostcc"
T=$S/usr/lib/nvidia-cuda-toolkit
# Debian's /usr/bin/nvcc is a wrapper: the compiler driver itself is in $T/bin.
cp "$T/bin/nvcc" "$DIR/bin/nvcc"
cp "$T/bin/crt/link.stub" "$T/bin/crt/prelink.stub" "$DIR/bin/crt/"
for t in ptxas fatbinary nvlink cudafe++ bin2c cuobjdump nvdisasm nvprune cu++filt; do
    [ -f "$S/usr/bin/$t" ] && cp "$S/usr/bin/$t" "$DIR/bin/"
done
cp "$T/bin/cicc" "$DIR/nvvm/bin/"
cp "$T/libdevice/"*.bc "$DIR/nvvm/libdevice/"
mv "$S/usr/include" "$DIR/include"
mv "$S"/usr/lib/x86_64-linux-gnu/* "$DIR/lib64/"
rm -f "$DIR"/lib64/libnccl_static.a   # the lessons link NCCL's shared library
ln -s "$HOSTCXX_PATH" "$DIR/hostcc/g++"
ln -s "$HOSTCC_PATH" "$DIR/hostcc/gcc"
# The profile nvcc reads beside itself: NVIDIA's own, plus hostcc/ first on the
# PATH that nvcc searches for gcc and g++ (an explicit -ccbin still wins).
cat >"$DIR/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/hostcc:$(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
rm -rf "$S"
[ "${KEEP_DEBS:-0}" = 1 ] || rm -rf "$A/debs"

echo "== checking it"
printf '__global__ void k(float *p) { p[threadIdx.x] = 1.0f; }\nint main(void) { return 0; }\n' >"$DIR/smoke.cu"
if ! "$DIR/bin/nvcc" -arch=sm_75 -o "$DIR/smoke" "$DIR/smoke.cu" >"$DIR/smoke.log" 2>&1 || ! "$DIR/smoke"; then
    cat "$DIR/smoke.log" >&2
    die "the assembled nvcc cannot build a small program"
fi
rm -f "$DIR/smoke" "$DIR/smoke.cu" "$DIR/smoke.log"
# NCCL: Debian's is built for the glibc of its own release, which may be newer
# than this machine's. Where it does not link here, NVIDIA's NCCL 2.21.5 for
# CUDA 12 (the PyPI wheel nvidia-nccl-cu12, built for old glibc) takes its
# place; without pip, lesson 18 is left to an NCCL installed on the machine.
nccl_links() {
    printf '#include <nccl.h>\nint main(void) { int v; return ncclGetVersion(&v) != ncclSuccess; }\n' >"$DIR/nccl.cu"
    "$DIR/bin/nvcc" -arch=sm_75 -o "$DIR/nccl" "$DIR/nccl.cu" -lnccl >"$DIR/nccl.log" 2>&1
    rc=$?
    rm -f "$DIR/nccl" "$DIR/nccl.cu"
    return $rc
}
drop_nccl() { rm -f "$DIR"/include/nccl.h "$DIR"/include/nccl_net.h "$DIR"/lib64/libnccl* "$DIR"/lib64/pkgconfig/nccl.pc; }
NCCL_NOTE=""
if [ "${NO_NCCL:-0}" != 1 ] && ! nccl_links; then
    drop_nccl
    NCCL_NOTE="Debian's NCCL does not link here ($(grep -m1 -o 'GLIBC_[0-9.]*' "$DIR/nccl.log" | sed 's/GLIBC_/it needs glibc /'))"
    if command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1 &&
        python3 -m pip download -q --no-deps -d "$A/wheel" 'nvidia-nccl-cu12==2.21.5' >"$A/pip.log" 2>&1; then
        python3 - "$A"/wheel/nvidia_nccl_cu12-*.whl "$DIR" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for name, to in (("nvidia/nccl/include/nccl.h", "include/nccl.h"), ("nvidia/nccl/include/nccl_net.h", "include/nccl_net.h"),
                 ("nvidia/nccl/lib/libnccl.so.2", "lib64/libnccl.so.2")):
    with open(sys.argv[2] + "/" + to, "wb") as f:
        f.write(z.read(name))
PY
        ln -s libnccl.so.2 "$DIR/lib64/libnccl.so"
        rm -rf "$A/wheel"
        if nccl_links; then NCCL_NOTE="$NCCL_NOTE: NVIDIA's NCCL 2.21.5 (PyPI nvidia-nccl-cu12) instead"; else drop_nccl; fi
    fi
    nccl_links 2>/dev/null || NCCL_NOTE="$NCCL_NOTE: no NCCL beside this nvcc (lesson 18 uses the machine's, if any)"
fi
rm -f "$DIR/nccl.log"
"$DIR/bin/nvcc" --version | tail -n 2 | head -n 1
echo "host compiler: $HOSTCXX_PATH (gcc $m)"
[ -z "$NCCL_NOTE" ] || echo "NCCL: $NCCL_NOTE"
echo "done: make NVCC=$DIR/bin/nvcc ...   (OLD_NVCC=$DIR/bin/nvcc sh tests/check_build.sh)"
