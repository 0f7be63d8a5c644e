#!/usr/bin/env bash
# make install into a temporary DESTDIR: the installed binary runs an installed lesson, the man
# page has its sections (KEYS generated from the key table), and make uninstall removes it all.
set -u
cd "$(dirname "$0")/.."
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

make -s install DESTDIR="$stage" >/dev/null || fail "make install"
prefix=$stage/usr/local
[ -x "$prefix/bin/attnstep" ] || fail "no installed binary"
for lesson in lessons/*.yaml; do
    [ -f "$prefix/share/attnstep/lessons/$(basename "$lesson")" ] || fail "lesson $lesson not installed"
done
out=$("$prefix/bin/attnstep" --plain "$prefix/share/attnstep/lessons/cat_sat.yaml") \
    || fail "installed binary on an installed lesson"
grep -q '^cat  *0.6296  *0.3704$' <<<"$out" || fail "installed run lacks cat's weights"
man=$prefix/share/man/man1/attnstep.1
for section in NAME SYNOPSIS DESCRIPTION OPTIONS KEYS "EXIT STATUS" ENVIRONMENT FILES "LESSON FORMAT"; do
    grep -q "^\.SH \"\?$section\"\?$" "$man" || fail "man page lacks $section"
done
grep -q '@' "$man" && fail "man page has an unreplaced @…@"
grep -q 'next head' "$man" || fail "man page KEYS lacks the key table's entries"
warnings=$(groff -man -ww -z "$man" 2>&1) || fail "groff cannot read the man page"
[ -z "$warnings" ] || fail "groff warns: $warnings"
make -s uninstall DESTDIR="$stage" >/dev/null || fail "make uninstall"
left=$(find "$stage" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "install: $failures failed"
[ "$failures" -eq 0 ]
