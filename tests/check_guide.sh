#!/usr/bin/env bash
# The authoring guide's examples are real: each ```yaml block of lessons/README.md that follows
# a line "<!-- example: FILE -->" must appear, line for line, in FILE, and FILE must pass
# `attnstep --check` with no output at all (no error, no warning) and exit status 0.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
guide=lessons/README.md
failed=0 count=0

# Writes each tagged block to $tmp/block.N and its file's name to $tmp/file.N.
awk -v dir="$tmp" '
    /^<!-- example: .* -->$/ { file = $3; next }
    file != "" && /^```yaml$/ { n++; print file > (dir "/file." n); inside = 1; next }
    inside && /^```$/ { inside = 0; file = ""; next }
    inside { print > (dir "/block." n) }
    file != "" && !inside && !/^$/ { file = "" }
' "$guide"

for name in "$tmp"/file.*; do
    [ -e "$name" ] || continue
    n=${name##*.}
    count=$((count + 1))
    file=$(cat "$name")
    if [ ! -f "$file" ]; then
        echo "FAIL example $n: $file does not exist"; failed=1; continue
    fi
    if ! python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
            "$tmp/block.$n" "$file"; then
        echo "FAIL example $n of $guide is not in $file:"; cat "$tmp/block.$n"; failed=1
    fi
done
for file in $(cat "$tmp"/file.* 2>/dev/null | sort -u); do
    out=$(./attnstep --check "$file" 2>&1); status=$?
    if [ "$status" -ne 0 ] || [ -n "$out" ]; then
        echo "FAIL $file: attnstep --check exited $status and said:"; echo "$out"; failed=1
    fi
done
if [ "$count" -lt 5 ]; then
    echo "FAIL: only $count tagged examples in $guide (expected at least 5)"; failed=1
fi
echo "guide examples: $count checked"
exit $failed
