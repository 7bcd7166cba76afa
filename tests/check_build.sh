#!/bin/sh
# Build checks beyond the build tier's sm_75 + sm_90 build; no GPU needed.
#   flags   the build follows the flags: lesson 04 built for real into a scratch
#           BUILDDIR, then `make ARCH=86 lesson04` must build it again (for sm_86),
#           `make lesson4` is `make lesson04`, and an ARCH the compiler cannot
#           build for is refused in one line before nvcc runs
#   archs   every architecture the README names (sm_75, 80, 86, 89, 90, 100, 120)
#           that this nvcc builds for, beyond the build tier's 75 and 90: every
#           lesson, warnings as errors, one multi-architecture nvcc call per file
#   old     the oldest supported toolkit, CUDA 12.4: every lesson, exercise,
#           solution and lab probe for sm_75 and sm_90, warnings as errors, with
#           OLD_NVCC (default .cuda-12.4/bin/nvcc, which scripts/old_toolkit.sh
#           assembles); skipped, and said so, when there is none
# Prints "ok ..." / "not ok ..." (details indented below) / "ok ... # skip: why"
# lines; exit 1 if any failed. Environment: NVCC (default nvcc), OLD_NVCC, JOBS
# (default: the number of cores), CHECKS="flags archs old" (a subset).
unset MAKELEVEL MAKEFLAGS MFLAGS
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
B=build/check
mkdir -p "$B"
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
CHECKS=${CHECKS:-"flags archs old"}
NVCC=${NVCC:-nvcc}
MK="make --no-print-directory"
FAILS=0
ok() { echo "ok $1"; }
notok() { FAILS=$((FAILS + 1)); echo "not ok $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | head -n 12 | sed 's/^/    /'; }
skip() { echo "ok $1 # skip: $2"; }
want() { case " $CHECKS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
release() { "$1" --version 2>/dev/null | grep -m1 'release'; }
archs_of() { "$1" --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p'; }
src_of() {
    case $1 in
    lesson*) ls lessons/"${1#lesson}"_*/"${1#lesson}"_*.cu ;;
    exercise*) ls exercises/"${1#exercise}"_*.cu ;;
    solution*) ls solutions/"${1#solution}"_*.cu ;;
    lab_*) echo "lab/${1#lab_}.cu" ;;
    esac
}
# report DIR LOG WHAT BINARY...: one line per binary that `make -k` was asked to
# build in DIR: built when it is there and make reported no error for it.
report() {
    dir=$1 log=$2 what=$3
    shift 3
    for b in "$@"; do
        src=$(src_of "$b")
        if grep -q "^$b: skipped:" "$log"; then
            skip "$b $what" "$(grep -m1 "^$b: skipped:" "$log" | sed "s/^$b: skipped: //")"
        elif [ -x "$dir/$b" ] && ! grep -qF "$dir/$b] Error" "$log"; then
            ok "$b $what"
        else
            notok "$b $what" "$(grep -A4 -F "$src" "$log" | grep -v "^[^ ]*nvcc " | head -n 12)"
        fi
    done
}

command -v "$NVCC" >/dev/null 2>&1 || { notok "nvcc not found (NVCC=$NVCC): these checks need the CUDA toolkit"; exit 1; }
LESSONS=$(for s in lessons/[0-9][0-9]_*/[0-9][0-9]_*.cu; do echo "lesson$(basename "$s" | cut -c1-2)"; done)
ALL=$(for s in lessons/[0-9][0-9]_*/[0-9][0-9]_*.cu exercises/[0-9][0-9]_*.cu solutions/[0-9][0-9]_*.cu lab/[0-9][0-9]_*.cu; do
    [ -f "$s" ] || continue
    case $s in
    lessons/*) echo "lesson$(basename "$s" | cut -c1-2)" ;;
    exercises/*) echo "exercise$(basename "$s" | cut -c1-2)" ;;
    solutions/*) echo "solution$(basename "$s" | cut -c1-2)" ;;
    lab/*) echo "lab_$(basename "$s" .cu)" ;;
    esac
done)

# ---- flags: the build follows them (a real build of one small lesson)
if want flags; then
    F=$B/flags
    rm -rf "$F"
    MF="$MK NVCC=$NVCC BUILDDIR=$F"
    if $MF ARCH=90 lesson04 >"$B/flags.log" 2>&1 && [ -x "$F/lesson04" ]; then
        ok "make ARCH=90 lesson04 into a scratch BUILDDIR"
        if $MF -q ARCH=90 lesson04; then ok "... then make -q counts it up to date"; else notok "make -q counts lesson04 out of date right after its build"; fi
        if $MF -q ARCH=86 lesson04; then notok "make -q ARCH=86 counts lesson04, built for sm_90, up to date"; else ok "... and out of date for ARCH=86"; fi
        $MF ARCH=86 lesson04 >"$B/flags.log" 2>&1
        if grep -q 'code=sm_86' "$B/flags.log" && [ -x "$F/lesson04" ]; then
            ok "make ARCH=86 lesson04 after a build for sm_90 builds it again"
        else
            notok "make ARCH=86 lesson04 after a build for sm_90 did not build it" "$(cat "$B/flags.log")"
        fi
        CUOBJ=$(dirname "$(command -v "$NVCC")")/cuobjdump
        [ -x "$CUOBJ" ] || CUOBJ=$(command -v cuobjdump || true)
        if [ -n "$CUOBJ" ]; then
            elfs=$("$CUOBJ" --list-elf "$F/lesson04" 2>&1)
            if echo "$elfs" | grep -q 'sm_86' && ! echo "$elfs" | grep -q 'sm_90'; then
                ok "... and the binary holds sm_86 code, no sm_90"
            else
                notok "lesson04 built with ARCH=86 holds other code" "$elfs"
            fi
        else
            skip "the binary holds sm_86 code" "no cuobjdump to list it"
        fi
        $MF ARCH=86 lesson4 >"$B/flags.log" 2>&1
        if grep -q '(lesson4 is lesson04' "$B/flags.log" && ! grep -q 'gencode' "$B/flags.log"; then
            ok "make ARCH=86 lesson4 is make lesson04 (up to date: nothing built)"
        else
            notok "make ARCH=86 lesson4" "$(cat "$B/flags.log")"
        fi
    else
        notok "make ARCH=90 lesson04 into a scratch BUILDDIR" "$(cat "$B/flags.log")"
    fi
    # An architecture the compiler cannot build for: one line, exit 2, no nvcc run.
    bad=""
    for a in 50 52 60 70 72; do archs_of "$NVCC" | grep -qx "$a" || { bad=$a; break; }; done
    if [ -n "$bad" ]; then
        $MF ARCH=sm_$bad lesson04 >"$B/flags.log" 2>&1
        rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$B/flags.log")" -eq 1 ] && grep -q "ARCH=$bad: CUDA .* it builds for .*75.*90" "$B/flags.log" &&
            ! grep -q gencode "$B/flags.log"; then
            ok "make ARCH=sm_$bad lesson04: one line naming what $(release "$NVCC" | sed 's/.*release \([0-9.]*\).*/CUDA \1/') builds for, exit 2"
        else
            notok "make ARCH=sm_$bad lesson04 (exit $rc)" "$(cat "$B/flags.log")"
        fi
    else
        skip "ARCH the compiler cannot build for" "this nvcc builds for every architecture tried (50 52 60 70 72)"
    fi
fi

# ---- archs: every architecture the README names, lessons only, one nvcc call per file
README_ARCHS="75 80 86 89 90 100 120"
TIER_ARCHS="75 90" # the build tier's
if want archs; then
    have=$(archs_of "$NVCC")
    extra="" missing=""
    for a in $README_ARCHS; do
        case " $TIER_ARCHS " in *" $a "*) continue ;; esac
        if echo "$have" | grep -qx "$a"; then extra="$extra $a"; else missing="$missing sm_$a"; fi
    done
    extra=${extra# }
    rel=$(release "$NVCC" | sed 's/.*release \([0-9.]*\).*/CUDA \1/')
    [ -z "$missing" ] || skip "lessons for${missing}" "$rel does not build for them (Blackwell, sm_100 and sm_120, needs CUDA 12.8 or newer)"
    if [ -n "$extra" ]; then
        A=$B/archs
        start=$(date +%s)
        $MK -k -j"$JOBS" NVCC="$NVCC" BUILDDIR="$A" ARCH="$extra" WERROR=1 lessons >"$B/archs.log" 2>&1
        secs=$(($(date +%s) - start))
        # shellcheck disable=SC2086
        report "$A" "$B/archs.log" "builds for sm_$(echo "$extra" | sed 's/ /, /g') ($rel)" $LESSONS
        echo "# archs: $(echo "$LESSONS" | wc -w) lessons for sm_$extra in ${secs}s ($JOBS jobs)"
    fi
fi

# ---- old: the oldest supported toolkit, CUDA 12.4
if want old; then
    OLD=${OLD_NVCC:-}
    [ -n "$OLD" ] || { [ -x .cuda-12.4/bin/nvcc ] && OLD=$ROOT/.cuda-12.4/bin/nvcc; }
    if [ -z "$OLD" ]; then
        skip "every lesson, exercise and solution with CUDA 12.4" "SKIPPED: no CUDA 12.4 here (sh scripts/old_toolkit.sh assembles one in .cuda-12.4/, or give OLD_NVCC=)"
    elif ! [ -x "$OLD" ]; then
        notok "OLD_NVCC=$OLD: not an executable nvcc"
    else
        rel=$(release "$OLD")
        ver=$(echo "$rel" | sed 's/.*release \([0-9.]*\).*/\1/')
        # its own CUB's version, from cub/version.cuh (CUB_VERSION = major x 100000 + minor x 100 + patch)
        cubv=$(cat "$(dirname "$OLD")"/../include/cub/version.cuh "$(dirname "$OLD")"/../include/cccl/cub/version.cuh 2>/dev/null |
               awk '$1 == "#define" && $2 == "CUB_VERSION" { v = $3; printf "CUB %d.%d.%d", v / 100000, (v / 100) % 1000, v % 100; exit }')
        ok "the oldest toolkit is here: $(echo "$OLD" | sed "s|^$ROOT/||"): $rel${cubv:+, $cubv}"
        O=$B/cuda-$ver
        start=$(date +%s)
        $MK -k -j"$JOBS" NVCC="$OLD" BUILDDIR="$O" ARCH="75 90" WERROR=1 all >"$B/old.log" 2>&1
        secs=$(($(date +%s) - start))
        # shellcheck disable=SC2086
        report "$O" "$B/old.log" "builds with CUDA $ver (sm_75, sm_90)" $ALL
        echo "# old toolkit: $(echo "$ALL" | wc -w) binaries in ${secs}s ($JOBS jobs)"
        # Blackwell is past it: the Makefile says so before nvcc runs.
        if ! archs_of "$OLD" | grep -qx 120; then
            $MK -n NVCC="$OLD" BUILDDIR="$O" ARCH=120 lesson04 >"$B/old-arch.log" 2>&1
            rc=$?
            if [ $rc -eq 2 ] && grep -q "ARCH=120: CUDA $ver .*12\.8 or newer" "$B/old-arch.log"; then
                ok "ARCH=120 with CUDA $ver: refused in one line that names CUDA 12.8"
            else
                notok "ARCH=120 with CUDA $ver (exit $rc)" "$(cat "$B/old-arch.log")"
            fi
        fi
    fi
fi

[ "$FAILS" -eq 0 ]
