#!/usr/bin/env bash
# One gpu-tier job: run_job.sh OUT "id<TAB>expect<TAB>command" appends
# "id<TAB>good|bad|skip<TAB>exit code<TAB>command<TAB>seconds<TAB>PASS lines[<TAB>last output]"
# to OUT. expect: pass (exit 0, no FAIL printed), pass:K (the same, and at least
# K lines say PASS: a list of K checks really ran), fail (exit 1 with FAIL
# printed: an exercise stub), or a number (that exit code). Whatever was
# expected, a run that exits 0 after a line starting with SKIP (a lesson for
# sm_90 on an older GPU) is "skip": it checked nothing, and failed nothing.
IFS=$'\t' read -r id expect cmd <<<"$2"
t0=$(date +%s.%N)
res=$(timeout "${GPU_JOB_TIMEOUT:-300}" bash -c "$cmd" 2>&1)
rc=$?
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
npass=$(grep -c "PASS" <<<"$res")
verdict=bad
case $expect in
pass) [ $rc -eq 0 ] && ! grep -q "FAIL" <<<"$res" && verdict=good ;;
pass:*) [ $rc -eq 0 ] && ! grep -q "FAIL" <<<"$res" && [ "$npass" -ge "${expect#pass:}" ] && verdict=good ;;
fail) [ $rc -eq 1 ] && grep -q "FAIL" <<<"$res" && verdict=good ;;
*) [ $rc -eq "$expect" ] && verdict=good ;;
esac
[ $rc -eq 0 ] && grep -q "^SKIP" <<<"$res" && verdict=skip
line=$(printf '%s\t%s\t%s\t%s\t%s\t%s' "$id" "$verdict" "$rc" "$cmd" "$secs" "$npass")
# bad: the end of the output says why; skip: the SKIP line says why
[ $verdict = bad ] && line="$line"$'\t'"$(tail -n 3 <<<"$res" | tr '\n\t' '  ' | cut -c1-300)"
[ $verdict = skip ] && line="$line"$'\t'"$(grep -m1 "^SKIP" <<<"$res" | tr '\t' ' ' | cut -c1-300)"
printf '%s\n' "$line" >>"$1" # one short write with O_APPEND: lines do not interleave
