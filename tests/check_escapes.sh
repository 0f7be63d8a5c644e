#!/usr/bin/env bash
# The one escaping rule as a property: whatever mode runs over a lesson whose title, tokens,
# narration, choices and path carry ESC, CSI, OSC, C1 controls, U+202E and zero-width and
# format characters (U+200B, U+2028, U+FEFF: issue 26), no raw control character reaches
# stdout or stderr, and every run ends with the status it should.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# The lesson's folder and file names carry the controls too: paths are echoed in messages.
evil=$'ev\e[31mil\xc2\x9b\xe2\x80\xae'
dir="$tmp/$evil"
mkdir -p "$dir"
lesson="$dir/$evil.yaml"
cat >"$lesson" <<'EOF'
title: "T\e]0;PWNED\a \e]52;c;SGVsbG8=\a \e[31mred \u009b2J \u202Eevil"
about: "about \e[2J \u009d \u202E"
tokens: ["\e[31ma", "b\u009bc", "\u202Ed", "=1+1", "@x", "-2", "ana\u2028\u2028bob", "z\u200Bw\uFEFF"]
d_model: 2
embeddings: {random: normal, seed: 1}
steps:
  - stage: scores
    focus: [0, 1]
    ask: "q\e]52;c;SGVsbG8=\a?"
    choices: ["x\e[1m", "y\u202E"]
    answer: "x\e[1m"
    say: "say \e[2J \u009b \u202E"
  - stage: weights
    say: "line one \e[31m\nline two \u0085 \u2066"
EOF
invalid="$dir/invalid$evil.yaml"
printf 'title: "\\e[31mt"\ntokens: ["\\e[2J", "\\u202Eq"]\nembeddings:\n  ok: [1]\n' >"$invalid"
overflow="$dir/overflow$evil.yaml"
cat >"$overflow" <<'EOF'
title: "overflow \e[31m"
tokens: ["\e[31ma", "\u202Eb"]
embeddings:
  "\e[31ma": [1e200, 1.0]
  "\u202Eb": [0.0, 1.0]
EOF
keys="$tmp/keys"
printf 'n\nn\nn\nn\nn\ndump\nenter\ndump\nn\ndump\nq\n' >"$keys"
picker_keys="$tmp/picker_keys"
printf 'dump\nj\ndump\nq\n' >"$picker_keys"

# raw_controls FILE: exits 0 (and names them) when FILE holds a C0 control other than a line
# break (CR only before LF, as CSV ends its lines), DEL, a C1 control, a bidi control, or bytes
# that are not UTF-8.
raw_controls() {
    python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8", errors="surrogateescape")
bad = re.compile("[\x00-\x09\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                 "\u2066-\u2069\udc80-\udcff\u200b\u2028\u2029\ufeff\u2060-\u2064]|\r(?!\n)")
found = sorted({repr(m.group()) for m in bad.finditer(text)})
if found:
    print("raw:", ", ".join(found))
sys.exit(0 if found else 1)
EOF
}

# run WANT DESCRIPTION COMMAND...: COMMAND must exit WANT with no raw control on either stream.
run() {
    local want=$1 what=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$? ok=1
    if [ "$got" -ne "$want" ]; then echo "     exit status $got, expected $want"; ok=0; fi
    if raw_controls "$tmp/out"; then echo "     (on stdout)"; ok=0; fi
    if raw_controls "$tmp/err"; then echo "     (on stderr)"; ok=0; fi
    if [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] && [ "$want" -ne 0 ]; then
        echo "     no message at all"; ok=0
    fi
    if [ $ok -eq 1 ]; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}

for mode in --plain --json --markdown; do
    run 0 "$mode" ./attnstep $mode "$lesson"
done
run 0 "--csv with token labels" ./attnstep --csv scores "$lesson"
run 0 "--csv --precision" ./attnstep --csv weights --precision 3 "$lesson"
run 0 "--explain names the cell by its tokens" ./attnstep --explain 'weights[0,1]' "$lesson"
run 0 "--explain of a cell in the output" ./attnstep --explain 'output[2,1]' "$lesson"
run 0 "--stats with the title" ./attnstep --stats "$lesson"
run 0 "--check of a valid lesson" ./attnstep --check "$lesson"
run 65 "--check of an invalid lesson" ./attnstep --check "$invalid"
run 65 "load error" ./attnstep --plain "$invalid"
run 66 "unreadable lesson" ./attnstep --plain "$dir/missing$evil.yaml"
run 65 "overflow error (tokens and path)" ./attnstep --plain "$overflow"
run 0 "headless UI" ./attnstep --keys "$keys" "$lesson"
run 0 "headless UI, 40x12" ./attnstep --keys "$keys" --screen 40x12 "$lesson"
run 0 "headless picker over the folder" env ATTNSTEP_LESSONS="$dir" ./attnstep --keys "$picker_keys"
run 65 "headless UI on an invalid lesson" ./attnstep --keys "$keys" "$invalid"
run 64 "--at echoing a bad cell" ./attnstep --keys "$keys" --at $'\e[31m\xc2\x9b' "$lesson"
run 64 "--explain echoing a bad cell" ./attnstep --explain $'w\e]0;x\a[0,0]' "$lesson"
run 64 "--csv echoing a bad stage" ./attnstep --csv $'\e[2J' "$lesson"
run 64 "--precision echoing its argument" ./attnstep --precision $'\e[2J' --plain "$lesson"
run 66 "key script path echoed" ./attnstep --keys "$dir/missing$evil" "$lesson"
# A .npy whose dtype text carries an OSC sequence: refused, the dtype echoed escaped (issue 26).
python3 - "$tmp/npy" <<'EOF'
import os, sys
os.makedirs(sys.argv[1])
header = "{'descr': '\x1b]0;x\x07', 'fortran_order': False, 'shape': (2, 2), }"
header += " " * (63 - len(header) % 64) + "\n"
with open(sys.argv[1] + "/w.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(32))
with open(sys.argv[1] + "/l.yaml", "w") as f:
    f.write("title: t\ntokens: [a, b]\nembeddings: {file: w.npy}\n")
EOF
for mode in --plain --json --check "--explain input[0,0]"; do
    run 65 "$mode with a .npy dtype of controls" ./attnstep $mode "$tmp/npy/l.yaml"
done
run 0 "--reset naming the state folder (XDG_STATE_HOME)" env XDG_STATE_HOME="$tmp/$evil-state" ./attnstep --reset
printf 'j\n\e[31m\xe2\x80\xae\n' >"$tmp/bad_keys"
run 64 "key script line echoed" ./attnstep --keys "$tmp/bad_keys" "$lesson"

# CSV: labels a spreadsheet would run as formulas get a leading ' (OWASP); numbers do not.
check_csv() {
    local csv; csv=$(./attnstep --csv scores "$lesson") || return 1
    grep -q "^'=1+1," <<<"$csv" && grep -q "^'@x," <<<"$csv" && grep -q '^-2,' <<<"$csv" &&
        head -1 <<<"$csv" | grep -q ",'=1+1,'@x,-2,"
}
if check_csv; then echo "ok   --csv prefixes formula-like labels with '"; else
    echo "FAIL --csv prefixes formula-like labels with '"; failures=$((failures + 1)); fi

# JSON writes the C1 control and the bidi override as \u escapes, and still reads back.
check_json() {
    ./attnstep --json "$lesson" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["title"].endswith("\u009b2J \u202eevil"), doc["title"]
assert doc["tokens"][1] == "b\u009bc" and doc["tokens"][2] == "\u202ed", doc["tokens"]' &&
        ./attnstep --json "$lesson" | grep -qF 'b\u009bc'
}
if check_json; then echo "ok   --json escapes C1 and bidi controls as \\uXXXX"; else
    echo "FAIL --json escapes C1 and bidi controls as \\uXXXX"; failures=$((failures + 1)); fi

# Above U+FFFF: emoji, a CJK Extension B character and a tag character. JSON's \u escapes hold
# 16 bits, so the invisible tag character is written as its surrogate pair (\udb40\udc41);
# the emoji (with its joiner) and U+20000 go out as UTF-8; python's json reads every one back.
printf 'title: "\U0001F680 \U0001F469\u200d\U0001F4BB \U00020000 a\U000E0041b"\ntokens: ["\U00020000", "\U0001F3F3"]\nembeddings: {"\U00020000": [1.0], "\U0001F3F3": [0.0]}\n' >"$tmp/astral.yaml"
check_astral() {
    ./attnstep --json "$tmp/astral.yaml" | python3 -c '
import json, sys
text = sys.stdin.read()
doc = json.loads(text)
assert doc["title"] == "\U0001F680 \U0001F469\u200d\U0001F4BB \U00020000 a\U000E0041b", ascii(doc["title"])
assert doc["tokens"][:2] == ["\U00020000", "\U0001F3F3"], ascii(doc["tokens"])
assert "a\\udb40\\udc41b" in text, "the tag character is not a surrogate pair"
assert "\U0001F680" in text and "\U00020000" in text, "emoji and CJK Extension B are not UTF-8"'
}
if check_astral; then echo "ok   --json writes characters above U+FFFF as surrogate pairs"; else
    echo "FAIL --json writes characters above U+FFFF as surrogate pairs"; failures=$((failures + 1)); fi
# JSON's own syntax in lesson text: a double quote and a backslash in the title and a token
# must be escaped, or the document does not parse (the controls above hold neither).
cat >"$tmp/quotes.yaml" <<'EOF'
title: 'say "hi" \ bye'
tokens: ['a"b', 'c\d']
d_model: 2
embeddings: {random: normal, seed: 1}
EOF
check_json_syntax() {
    ./attnstep --json "$tmp/quotes.yaml" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["title"] == "say \"hi\" \\ bye", doc["title"]
assert doc["tokens"] == ["a\"b", "c\\d"], doc["tokens"]'
}
if check_json_syntax; then echo "ok   --json escapes a double quote and a backslash"; else
    echo "FAIL --json escapes a double quote and a backslash"; failures=$((failures + 1)); fi

echo "escapes: $failures failed"
[ "$failures" -eq 0 ]
