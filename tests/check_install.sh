#!/usr/bin/env bash
# make install: after ONE build, installs to two prefixes (and a DESTDIR stage); each installed
# binary opens the lesson picker on its own installed lessons (headless, from another folder,
# ATTNSTEP_LESSONS unset), also after its tree is moved; the man page has its sections and names
# the installed folder; the data files lessons load (tea.npy) are installed beside them, and
# tea_full.yaml, which loads tea.npy, runs from the install (also moved, from another folder);
# make uninstall removes it all.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

make -s all >/dev/null || { echo "FAIL make"; exit 1; }
built=$(cksum <attnstep)
printf 'dump\nq\n' >"$tmp/picker.keys"

# picker_lists PREFIX: the installed binary, run from an empty folder, lists PREFIX's lessons
picker_lists() {
    local prefix=$1 out status
    mkdir -p "$tmp/elsewhere"
    out=$(cd "$tmp/elsewhere" && env -u ATTNSTEP_LESSONS LANG=C.UTF-8 \
          "$prefix/bin/attnstep" --keys "$tmp/picker.keys" --screen 300x24)
    status=$?
    [ $status -eq 0 ] || { echo "  exit status $status"; return 1; }
    # the installed ORDER puts cat_sat first, so the picker opens on it and shows its path
    [ -f "$prefix/share/attnstep/lessons/ORDER" ] || { echo "  ORDER was not installed"; return 1; }
    grep -q "The bank of the river: a query finds its key" <<<"$out" &&
        grep -qF "$prefix/share/attnstep/lessons/cat_sat.yaml" <<<"$out" ||
        { echo "  the picker showed:"; sed 's/^/  | /' <<<"$out"; return 1; }
}

# check_man MAN FOLDER: every section, nothing left unreplaced, FOLDER in FILES, groff is quiet
check_man() {
    local man=$1 folder=$2 section warnings
    for section in NAME SYNOPSIS DESCRIPTION OPTIONS KEYS "KEY SCRIPTS" "EXIT STATUS" \
                   ENVIRONMENT FILES "LESSON FORMAT"; do
        grep -q "^\.SH \"\?$section\"\?$" "$man" || { echo "  no section $section"; return 1; }
    done
    ! grep -qE '@[A-Z_]+@' "$man" || { echo "  an unreplaced @…@"; return 1; }
    grep -q 'next head' "$man" || { echo "  KEYS lacks the key table's entries"; return 1; }
    sed -n '/^\.SH FILES/,/^\.SH/p' "$man" | grep -qxF ".I $folder" ||
        { echo "  FILES does not name $folder"; return 1; }
    warnings=$(groff -man -ww -z "$man" 2>&1) || { echo "  groff cannot read it"; return 1; }
    [ -z "$warnings" ] || { echo "  groff warns: $warnings"; return 1; }
}

for name in first second; do
    prefix=$tmp/$name
    make -s install PREFIX="$prefix" >/dev/null || { fail "make install PREFIX=$prefix"; continue; }
    for lesson in lessons/*.yaml lessons/*.npy lessons/README.md; do
        [ -f "$prefix/share/attnstep/lessons/$(basename "$lesson")" ] || fail "$lesson not installed in $name"
    done
    picker_lists "$prefix" && ok "the picker of the $name prefix lists its lessons" ||
        fail "the picker of the $name prefix"
    check_man "$prefix/share/man/man1/attnstep.1" "$prefix/share/attnstep/lessons" &&
        ok "the man page of the $name prefix" || fail "the man page of the $name prefix"
done
[ "$(cksum <attnstep)" = "$built" ] && ok "one build served both prefixes" || fail "make install rebuilt attnstep"
[ -f lessons/tea.npy ] || fail "lessons/tea.npy is missing from the source tree"

# tea_reads PREFIX: the installed binary, from another folder, runs the installed tea_full.yaml,
# whose embeddings come from the installed tea.npy beside it
tea_reads() {
    local out status
    out=$(cd "$tmp/elsewhere" &&
          "$1/bin/attnstep" --plain "$1/share/attnstep/lessons/tea_full.yaml")
    status=$?
    [ $status -eq 0 ] && grep -q '^poured  *0.0000  *1.0000  *0.0000  *0.5000$' <<<"$out" ||
        { echo "  exit status $status; it showed:"; head -12 <<<"$out" | sed 's/^/  | /'
          return 1; }
}
tea_reads "$tmp/first" && ok "tea_full.yaml opens from the install, with tea.npy's numbers" ||
    fail "tea_full.yaml from the install"
mv "$tmp/first" "$tmp/moved"
picker_lists "$tmp/moved" && ok "a moved install still finds its lessons" || fail "a moved install"
tea_reads "$tmp/moved" && ok "a moved install's tea_full.yaml still reads its tea.npy" ||
    fail "tea_full.yaml from a moved install"
out=$("$tmp/second/bin/attnstep" --plain "$tmp/second/share/attnstep/lessons/cat_sat.yaml") &&
    grep -q '^cat  *0.6296  *0.3704$' <<<"$out" && ok "the installed binary runs an installed lesson" ||
    fail "the installed binary on an installed lesson"
make -s uninstall PREFIX="$tmp/second" >/dev/null || fail "make uninstall PREFIX"
left=$(find "$tmp/second" -type f)
[ -z "$left" ] && ok "make uninstall removes everything" || fail "make uninstall left: $left"

# A staged install (DESTDIR) for packagers: the same tree under the stage.
stage=$tmp/stage
make -s install DESTDIR="$stage" >/dev/null || fail "make install DESTDIR"
picker_lists "$stage/usr/local" && ok "a staged install finds its lessons" || fail "a staged install"
check_man "$stage/usr/local/share/man/man1/attnstep.1" /usr/local/share/attnstep/lessons &&
    ok "the staged man page names the final folder" || fail "the staged man page"
make -s uninstall DESTDIR="$stage" >/dev/null || fail "make uninstall DESTDIR"
left=$(find "$stage" -type f)
[ -z "$left" ] || fail "make uninstall DESTDIR left: $left"
echo "install: $failures failed"
[ "$failures" -eq 0 ]
