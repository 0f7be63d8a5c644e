#!/usr/bin/env bash
# The lesson picker's teaching order: lessons/ORDER names every shipped lesson once, and
# names nothing else (src/ui/ui_picker.c describes the file; tests/screens/picker.keys shows
# the picker following it).
set -u
cd "$(dirname "$0")/.."
failed=0
named=$(sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' lessons/ORDER | grep -v '^$')
for name in $named; do
    [ -f "lessons/$name" ] || { echo "FAIL lessons/ORDER names $name, which is not a lesson"; failed=1; }
done
dupes=$(printf '%s\n' $named | sort | uniq -d)
[ -z "$dupes" ] || { echo "FAIL lessons/ORDER names twice: $dupes"; failed=1; }
for lesson in lessons/*.yaml; do
    printf '%s\n' $named | grep -qxF "$(basename "$lesson")" ||
        { echo "FAIL $lesson is not in lessons/ORDER"; failed=1; }
done
[ "$failed" -eq 0 ] && echo "order: lessons/ORDER names the $(printf '%s\n' $named | wc -l) lessons"
exit $failed
