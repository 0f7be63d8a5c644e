#!/usr/bin/env bash
# Questions never leak.
# 1. `attnstep --check --strict` passes on every shipped lesson: no question's answer is written
#    before it is asked (in the title, the about text, an earlier step's narration, question,
#    choices or worked sum, the question itself, or the lesson before it in lessons/ORDER), and
#    no other warning.
# 2. Each kind of leak, planted in a scratch lesson, is warned of with the line it is on, and
#    --strict turns the warning into exit status 65: in the about text, the title, a worked sum,
#    an earlier question's choices or text, an earlier narration (the number at its precision,
#    within its tolerance, as a percentage, as a live number; the choice in a sentence naming
#    the focus row), the question itself, and the lesson before in ORDER (narration, title).
# 3. In every shipped lesson (and the screen tests' question lesson), no open question's screen
#    marks, names or shows its answer (tests/check_questions.py says what is looked for).
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failed=0

if ! out=$(./attnstep --check --strict lessons/*.yaml 2>&1); then
    echo "FAIL --check --strict lessons/*.yaml:"; echo "$out"; failed=1
else
    echo "ok   --check --strict passes on every shipped lesson"
fi

# lesson NAME: writes $tmp/NAME.yaml from stdin after a shared head (two words, V the identity:
# cat gives 0.6296 of its attention to itself, and that is cat's output[0] too).
lesson() {
    { printf 'title: a planted leak\n'; cat; } >"$tmp/$1.yaml"
}
head_lines='tokens: [cat, sat]
embeddings:
  cat: [1.0, 0.5]
  sat: [0.0, 1.0]'
numeric_question='  - stage: weights
    focus: [cat, cat]
    ask: What share of its attention will cat give to itself? (two decimals)
    answer: 0.63
    tolerance: 0.01'

# planted NAME WHAT WHERE: --check warns of $tmp/NAME.yaml's question with WHERE (the text and
# the line the answer is on), exits 0, and --strict exits 65.
planted() {
    local name=$1 what=$2 where=$3 ok=1
    ./attnstep --check "$tmp/$name.yaml" >/dev/null 2>"$tmp/err" || ok=0
    grep -qF -- "$where" "$tmp/err" || ok=0
    ./attnstep --check --strict "$tmp/$name.yaml" >/dev/null 2>&1
    [ $? -eq 65 ] || ok=0
    if [ $ok -eq 1 ]; then
        echo "ok   a leak $what is warned of: $where"
    else
        echo "FAIL a leak $what: expected a warning with \"$where\" and --strict exit 65, got:"
        cat "$tmp/err"; failed=1
    fi
}

lesson about <<EOF
about: Follow cat to its output [0.6296, 0.6852].
$head_lines
steps:
$numeric_question
EOF
planted about "in the about text (the picker's summary)" "the about text (line 2) says '0.6296'"

cat >"$tmp/title.yaml" <<EOF
title: cat keeps 0.63 of its attention
$head_lines
steps:
$numeric_question
EOF
planted title "in the title (on every screen and in the picker)" "the title (line 1) says '0.63'"

# context's sum writes each weight it takes: cat's output[0] is 0.6296 × 1.0 + 0.3704 × 0.0
lesson sum <<EOF
$head_lines
steps:
  - stage: context
    focus: [cat, "0"]
    say: The context, before the weights.
$numeric_question
EOF
planted sum "in the worked sum of an earlier step's focus" \
    "the worked sum of step 1's focus (line 7) says '0.6296'"
lesson sum_input <<EOF
$head_lines
steps:
  - stage: input
    focus: [cat, "0"]
  - stage: weights
    focus: [cat, sat]
    ask: What share of its attention will cat give to sat? (one decimal)
    answer: 0.4
    tolerance: 0.05
EOF
# input[cat,0]'s sum says 1.0 and 0.5; the answer 0.37 is near neither: no warning, and a sum
# that reads no weight is never read for one
if ./attnstep --check --strict "$tmp/sum_input.yaml" 2>"$tmp/err"; then
    echo "ok   a worked sum of a stage that reads no weight is no leak"
else
    echo "FAIL a worked sum of the input was taken for a leak:"; cat "$tmp/err"; failed=1
fi

lesson choices <<EOF
$head_lines
steps:
  - stage: scaled
    focus: [sat, sat]
    ask: What is sat's scaled score with itself? (two decimals)
    choices: [0.35, 0.63, 0.71]
    answer: 0.71
$numeric_question
EOF
planted choices "in the choices of an earlier question" \
    "the choices of step 1 (line 10) says '0.63'"

# an earlier question's own text (not its choices) may tell a later one's answer too
lesson earlier_question <<EOF
$head_lines
steps:
  - stage: weights
    focus: [cat, sat]
    ask: If cat keeps 0.63 for itself, what does it give sat? (two decimals)
    answer: 0.37
    tolerance: 0.01
$numeric_question
EOF
planted earlier_question "in the text of an earlier question" \
    "the question of step 1 (line 9) says '0.63'"

lesson percent <<EOF
$head_lines
steps:
  - stage: scores
    say: >-
      Keep an eye on cat:
      it will keep 63% for itself.
$numeric_question
EOF
planted percent "as a percentage in an earlier step" "the narration of step 1 (line 10) says '63%'"

# 0.62 is not 0.6296 at two decimals, but it is within the question's ± 0.01: it tells
lesson tolerance <<EOF
$head_lines
steps:
  - stage: scores
    say: >-
      Keep an eye on cat: it will
      keep about 0.62 for itself.
$numeric_question
EOF
planted tolerance "within the tolerance in an earlier step's narration" \
    "the narration of step 1 (line 10) says '0.62'"

# a live number of the focus cell, written when the lesson is shown
lesson live <<EOF
$head_lines
steps:
  - stage: scores
    say: "Cat will keep {weights[cat,cat]:2} for itself."
$numeric_question
EOF
planted live "as a live number in an earlier step's narration" \
    "the narration of step 1 (line 8) writes weights[cat,cat]"

lesson earlier_question <<EOF
$head_lines
steps:
  - stage: scores
    focus: [cat, sat]
    ask: Cat will keep 0.63 of its attention. What is its score against sat? (one decimal)
    answer: auto
    tolerance: 0.05
$numeric_question
EOF
planted earlier_question "in an earlier step's question" "the question of step 1 (line 9) says '0.63'"

lesson question <<EOF
$head_lines
steps:
  - stage: weights
    focus: [cat, cat]
    ask: Last time cat kept 0.63 for itself. How much now?
    answer: auto
    tolerance: 0.01
EOF
planted question "in the question itself" "the question itself (line 9) says '0.63'"

lesson choice <<EOF
$head_lines
steps:
  - stage: input
    say: >-
      Two words. The word cat will look mostly at
      cat, as we shall see; sat is elsewhere.
  - stage: scores
    say: In the scores, sat looks at cat.
  - stage: weights
    focus: [sat, sat]
    ask: Which word will sat look at most?
    choices: [cat, sat]
    answer: auto
EOF
# "sat looks at cat" names another choice, not sat's answer (sat); and a row that is its own
# answer is named in every sentence about it, so no sentence is read as telling it
if ./attnstep --check --strict "$tmp/choice.yaml" 2>"$tmp/err"; then
    echo "ok   a sentence naming the row and another choice is no leak"
else
    echo "FAIL a sentence naming the row and another choice was taken for a leak:"
    cat "$tmp/err"; failed=1
fi

cat >"$tmp/choice_told.yaml" <<EOF
title: a planted leak
$head_lines
steps:
  - stage: input
    say: >-
      Two words. Whatever you guess, the
      word sat gets most of what cat looks at.
  - stage: scores
    focus: [cat, sat]
    ask: Which word will cat score highest against?
    choices: [cat, sat]
    answer: auto
EOF
planted choice_told "as the choice in a sentence naming the focus row" \
    "the narration of step 1 (line 10) says 'sat'"

mkdir -p "$tmp/order"
printf '# two lessons\nfirst.yaml\nsecond.yaml\n' >"$tmp/order/ORDER"
cat >"$tmp/order/first.yaml" <<EOF
title: the first lesson
$head_lines
steps:
  - stage: weights
    say: >-
      Remember this one:
      cat keeps 0.63 of its attention.
EOF
cat >"$tmp/order/second.yaml" <<EOF
title: the second lesson
$head_lines
steps:
$numeric_question
EOF
planted order/second "in the lesson before it in ORDER" \
    "the narration of step 1 of first.yaml, the lesson before (line 10) says '0.63'"
sed -i 's/^title: the first lesson/title: where cat keeps 0.63/' "$tmp/order/first.yaml"
planted order/second "in the title of the lesson before it in ORDER" \
    "the title of first.yaml, the lesson before (line 1) says '0.63'"
sed -i 's/^title: where cat keeps 0.63/title: the first lesson/' "$tmp/order/first.yaml"
sed -i 's/0.63 of/most/' "$tmp/order/first.yaml"
if ./attnstep --check --strict "$tmp/order/second.yaml" 2>"$tmp/err"; then
    echo "ok   the lesson before that does not say it is no leak"
else
    echo "FAIL the lesson before was taken for a leak:"; cat "$tmp/err"; failed=1
fi

/usr/bin/python3 tests/check_questions.py ./attnstep lessons/*.yaml \
    tests/screens/extra/questions.yaml || failed=1
exit $failed
