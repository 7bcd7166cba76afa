# Pieces shared by the lab scripts that build copies of one program, each
# differing from it in one place or two: lab/02_first_read.sh,
# lab/03_float2_slots.sh, lab/14_block_reduce.sh and lab/16_argmin_select.sh,
# which also list and time them; lab/14_cccl_gpu_to_gpu_int.sh. Sourced
# with B (the build folder) and ME (the script's name, for messages) set.

# lab_compile_line PROG SRC: cmd, make's compile line of PROG; nv, the nvcc it
# names; cod, the cuobjdump beside that nvcc, else the one on PATH (may be empty).
lab_compile_line() {
    lab_prog=$1 lab_src=$2
    cmd=$(make -s -n -B "$lab_prog" | grep nvcc) || { echo "$ME: no compile line for $lab_prog" >&2; exit 1; }
    nv=${cmd%% *}
    cod=$(dirname "$(command -v "$nv")")/cuobjdump; [ -x "$cod" ] || cod=$(command -v cuobjdump)
}

# lab_build_copy V: builds $B/V from $B/V.cu with PROG's compile line.
lab_build_copy() {
    lab_new=$(echo "$cmd" | sed "s|-o $lab_prog $lab_src|-o $B/$1 $B/$1.cu|")
    [ "$lab_new" != "$cmd" ] || { echo "$ME: cannot point the compile line at the copy (run it without BUILDDIR)" >&2; exit 1; }
    eval "$lab_new" || exit 1
}

# lab_sass OUT KEY LISTER: when this build has sm_90 code and a cuobjdump was
# found, writes results/OUT from LISTER (a function of the script, given the
# CUDA release as $1, that lists every copy of $copies), stamps it with KEY
# and prints it; else says why and leaves results/OUT as it is.
lab_sass() {
    if [ -n "$cod" ] && "$cod" -sass -arch sm_90 "$B/${copies%% *}" 2>/dev/null | grep -q 'sm_90'; then
        "$3" "$("$nv" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')" >"results/$1"
        sh scripts/stamp.sh "results/$1" "$2" # records the code it listed in results/code.txt
        cat "results/$1"
    else
        echo "$ME: no cuobjdump beside nvcc or on PATH, or no sm_90 code in this build: results/$1 is left as it is" >&2
    fi
}

# lab_sass_lines COPY KERNEL REGEX: the instructions of KERNEL in $B/COPY that
# match REGEX, one a line, without their encodings.
lab_sass_lines() {
    "$cod" -sass -arch sm_90 "$B/$1" |
        LAB_K=$2 LAB_R=$3 awk '$0 ~ "Function : .*" ENVIRON["LAB_K"] { p = 1; next } /Function :/ { p = 0 } p && $0 ~ ENVIRON["LAB_R"]' |
        sed 's|^ *||; s| *;.*|;|'
}

# lab_sass_count COPY KERNEL REGEX...: "COPY,N" with N the instructions of
# KERNEL in $B/COPY, then for each REGEX how many of them match it.
lab_sass_count() {
    lab_c=$1 lab_k=$2; shift 2
    lab_rs=$(printf '%s\t' "$@")
    "$cod" -sass -arch sm_90 "$B/$lab_c" | LAB_V=$lab_c LAB_K=$lab_k LAB_RS=$lab_rs awk '
        BEGIN { m = split(ENVIRON["LAB_RS"], r, "\t") - 1 }
        $0 ~ "Function : .*" ENVIRON["LAB_K"] { p = 1; next } /Function :/ { p = 0 }
        p && /^ *\/\*[0-9a-f]+\*\// { n++; for (i = 1; i <= m; i++) if ($0 ~ r[i]) c[i]++ }
        END { printf "%s,%d", ENVIRON["LAB_V"], n; for (i = 1; i <= m; i++) printf ",%d", c[i]; printf "\n" }'
}

# lab_check_and_time "COPIES" STEM KEY ROW: checks each copy at six sizes, then
# times each at n = 2^26 on both inputs, three rounds, the copies in turns within
# a round, keeping the harness's CSV line named ROW: results/STEM-<gpu>.csv
# (copy, input, round, then that line), stamped with KEY. Without a GPU it says
# so and exits 0.
lab_check_and_time() {
    lab_copies=$1 lab_stem=$2 lab_key=$3 lab_row=$4
    nvidia-smi -L >/dev/null 2>&1 || { echo "$ME: no GPU: built and listed only"; exit 0; }
    for v in $lab_copies; do
        "$B/$v" -n 0,1,33,4097,2^20+3,2^24 -d ints,uniform --check >"$B/$v.check" 2>&1 ||
            { echo "$ME: the $v copy fails its check:" >&2; grep FAIL "$B/$v.check" >&2; exit 1; }
    done
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    slug=$(echo "$gpu" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
    out=results/$lab_stem-$slug.csv
    echo "copy,input,round,$("$B/${lab_copies%% *}" -n 1 --csv-header --csv 2>/dev/null | head -n 1)" >"$out.new"
    lab_want=1
    for r in 1 2 3; do for d in ints uniform; do for v in $lab_copies; do
        "$B/$v" -n 2^26 -d $d --csv 2>/dev/null | grep ",$lab_row," | grep ',PASS$' | sed "s/^/$v,$d,$r,/" >>"$out.new"
        lab_want=$((lab_want + 1))
    done; done; done
    # every copy, input and round gave its one passing line, or the kept file stays as it was
    [ "$(wc -l <"$out.new")" -eq "$lab_want" ] || { echo "$ME: a timed run gave no passing $lab_row line (see $out.new); $out is left as it is" >&2; exit 1; }
    mv "$out.new" "$out"
    sh scripts/stamp.sh "$out" "$lab_key" # records the code it measured in results/code.txt
    echo "$(($(wc -l <"$out") - 1)) rows in $out"
}
