#!/usr/bin/env bash
# Golden text outputs: `--plain` and `--markdown` of every lesson in lessons/, and `--csv` of every
# stage and head of the multi-head and cross-attention lessons. Any change to a number, a row, a
# label or the narration shows up as a diff against tests/golden/{plain,markdown,csv}/NAME.*.
set -u -o pipefail
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0 count=0

# golden MODE LESSON GOLDEN COMMAND...: runs COMMAND (exit status 0 expected) into a file and
# compares it with GOLDEN.
golden() {
    local what=$1 lesson=$2 file=$3; shift 3
    local out=$tmp/out
    if ! "$@" >"$out" 2>"$tmp/err"; then
        echo "FAIL $lesson: attnstep $what exited $? :"; cat "$tmp/err"; failed=1; return
    fi
    golden_compare "$file" "$out" || { echo "FAIL $what $lesson"; failed=1; }
    count=$((count + 1))
}

# Every stage and head of a lesson as CSV, one block per matrix under a "# --csv …" line.
all_csv() {
    local lesson=$1 name head
    ./attnstep --json "$lesson" | /usr/bin/python3 -c '
import json, sys
for s in json.load(sys.stdin)["stages"]:
    print(s["name"], s["head"] or "")' | while read -r name head; do
        echo "# --csv $name${head:+ --head $head}"
        ./attnstep --csv "$name" ${head:+--head "$head"} "$lesson" || return 1
    done
}

for lesson in lessons/*.yaml; do
    [ -e "$lesson" ] || continue
    name=$(basename "$lesson" .yaml)
    golden --plain "$lesson" "tests/golden/plain/$name.txt" ./attnstep --plain "$lesson"
    golden --markdown "$lesson" "tests/golden/markdown/$name.md" ./attnstep --markdown "$lesson"
done
for lesson in lessons/four_heads.yaml lessons/bank_loan.yaml lessons/cross.yaml; do
    golden --csv "$lesson" "tests/golden/csv/$(basename "$lesson" .yaml).csv" all_csv "$lesson"
done
[ "$count" -gt 0 ] || { echo "no lessons found in lessons/"; exit 1; }
echo "golden text outputs: $count files checked"
exit $failed
