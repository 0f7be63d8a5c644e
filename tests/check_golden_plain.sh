#!/usr/bin/env bash
# Golden `--plain` output of every lesson in lessons/: any change to a number, a label or the
# narration shows up as a diff against tests/golden/plain/NAME.txt.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0 count=0
for lesson in lessons/*.yaml; do
    [ -e "$lesson" ] || continue
    name=$(basename "$lesson" .yaml)
    count=$((count + 1))
    if ! ./attnstep --plain "$lesson" >"$tmp/$name.txt" 2>"$tmp/$name.err"; then
        echo "FAIL $lesson: attnstep --plain failed:"; cat "$tmp/$name.err"; failed=1; continue
    fi
    golden_compare "tests/golden/plain/$name.txt" "$tmp/$name.txt" || { echo "FAIL $lesson"; failed=1; }
done
[ "$count" -gt 0 ] || { echo "no lessons found in lessons/"; exit 1; }
echo "golden plain: $count lessons checked"
exit $failed
