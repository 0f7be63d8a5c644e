#!/usr/bin/env bash
# The key-script parser on hostile scripts: NUL bytes and binary are refused with the line,
# long lines are read whole (or refused with their number past 1023 bytes, never cut), its
# messages escape what they echo, and a script that is not a regular file is refused (66).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lesson=tests/reference/cat_sat.yaml
failures=0

# says STATUS MESSAGE: the script $tmp/keys makes attnstep exit STATUS saying exactly MESSAGE.
says() {
    stderr_is "$@" ./attnstep --keys "$tmp/keys" "$lesson"
}

printf 'j\n\0\0q\n' >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: a NUL byte: a key script is text"
head -c 1000000 /dev/zero >"$tmp/keys"
says 64 "attnstep: $tmp/keys:1: a NUL byte: a key script is text"
printf 'j\nk\n\xff\xfe\n' >"$tmp/keys"
says 64 "attnstep: $tmp/keys:3: byte \\xff is not UTF-8: a key script is text"
printf 'j\n\e[31m\n' >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: control character \\x1b: a key script is text"
printf 'j\n\xc2\x9b2J\n' >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: control character \\u009b: a key script is text"
# A 2000-byte comment is one line: the error on the line after it has the right number.
{ printf '# %02000d\n' 0; printf 'bogus\n'; } >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: unknown key 'bogus' (one key per line: a character, or space, enter, tab, btab, up, down, left, right, pgup, pgdn, home, end, backspace, esc, f1, ctrl-l; or dump, clears, resize COLSxROWS, click COL ROW, reload [FILE], wait MS, await WHAT)"
# shellcheck disable=SC2046
{ printf 'j\n'; printf 'j %01100d\n' 0; printf 'q\n'; } >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: the line is longer than 1023 bytes"
{ printf 'j\n'; printf 'reload /%0300d.yaml\n' 0; } >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: reload: the file name is longer than 255 bytes"
# What the parser echoes is escaped (an unknown word of printable text is echoed as it is).
printf 'j\nzz\xc3\xa9z\n' >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: unknown key 'zz"$'\xc3\xa9'"z' (one key per line: a character, or space, enter, tab, btab, up, down, left, right, pgup, pgdn, home, end, backspace, esc, f1, ctrl-l; or dump, clears, resize COLSxROWS, click COL ROW, reload [FILE], wait MS, await WHAT)"
# A zero-width space is a control since issue 26: refused like the others, escaped.
printf 'j\nzz\xe2\x80\x8bz\n' >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: control character \\u200b: a key script is text"
# A reload name may hold a tab (a file name can; found by fuzz_keys): the reload fails with the
# error in the status line and no raw tab on the screen.
printf 'reload %s/a\tb.yaml\ndump\nq\n' "$tmp" >"$tmp/keys"
screen=$(./attnstep --keys "$tmp/keys" --screen 100x16 "$lesson"); status=$?
if [ $status -eq 0 ] && ! grep -q $'\t' <<<"$screen" &&
    grep -q 'cat_sat.yaml: error: cannot be read: No such file or directory' <<<"$screen"; then
    echo "ok   a reload name with a tab"
else
    echo "FAIL a reload name with a tab (status $status)"; failures=$((failures + 1))
fi
# A CR inside the last line (no LF after it) is a control, not a line end (found by fuzz_keys).
printf 'j\nreloa\r#' >"$tmp/keys"
says 64 "attnstep: $tmp/keys:2: control character \\x0d: a key script is text"
# CRLF line ends and blanks around a key are fine.
printf 'j\r\n\t q \r\n' >"$tmp/keys"
says 0 ""
mkdir "$tmp/dir"
said=$(timeout 10 ./attnstep --keys "$tmp/dir" "$lesson" 2>&1 >/dev/null); status=$?
if [ $status -eq 66 ] && [ "$said" = "attnstep: $tmp/dir: cannot read the key script: it is a directory, not a regular file" ]; then
    echo "ok   --keys DIRECTORY exits 66"
else
    echo "FAIL --keys DIRECTORY exits 66 (status $status: $said)"; failures=$((failures + 1))
fi

# A key script is compact and capped (issue 26): a 10 M-line script whose first key is q used
# to take 2.7 GB (280 bytes an event) before the UI started; now its line 1,000,001 is refused,
# and a script of 1 M lines, the most it may have, runs in well under 100 MB.
yes q | head -n 10000000 >"$tmp/keys"
says 64 "attnstep: $tmp/keys:1000001: a key script holds at most 1000000 lines"
yes q | head -n 1000000 >"$tmp/keys"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$tmp/rss" ./attnstep --keys "$tmp/keys" "$lesson" >/dev/null 2>&1
    status=$? rss=$(tail -1 "$tmp/rss")
    if [ $status -eq 0 ] && [ "$rss" -lt 100000 ]; then
        echo "ok   a key script of 1 M lines runs in $rss KB"
    else
        echo "FAIL a key script of 1 M lines: status $status, $rss KB"; failures=$((failures + 1))
    fi
fi

echo "key scripts: $failures failed"
[ "$failures" -eq 0 ]
