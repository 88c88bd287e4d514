#!/bin/sh
# Runs every test binary in the folder given, prints each one's cmocka summary, and a total line
# "tests: N passed, N failed, N skipped". Exits non-zero if any test failed or any binary crashed.
dir=${1:-build/tests}
export RG_BUILD_DIR="${RG_BUILD_DIR:-$(dirname "$dir")}"
pass=0; fail=0; skip=0; bad=0
start=$(date +%s)
for t in "$dir"/*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    out=$("$t" 2>&1); rc=$?
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
    k=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + k))
    if [ $rc -ne 0 ] || [ "$f" -ne 0 ]; then
        bad=$((bad + 1))
        printf '%s\n' "$out"
        echo "FAILED: $name (exit $rc)"
        [ "$f" -eq 0 ] && fail=$((fail + 1))
    else
        if [ "$k" -gt 0 ]; then printf '%-28s %3d passed, %d skipped\n' "$name" "$p" "$k"
        else printf '%-28s %3d passed\n' "$name" "$p"; fi
    fi
done
echo "suite wall time: $(( $(date +%s) - start )) s"
echo "tests: $pass passed, $fail failed, $skip skipped"
[ $bad -eq 0 ] && [ $pass -gt 0 ]
