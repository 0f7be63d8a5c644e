#!/usr/bin/env python3
"""Questions never leak: walks each lesson's script in the headless UI and, at every step whose
question is open, asserts that the screen neither shows nor names its answer. The answer is
read from the same step once Esc has skipped the question ("Answer: it gives 0.8485 of its
attention to animal"); on the open question's screen there must be
  - no marker on a cell, row or column of the matrix (no ▾, no ▸ row marker, no [·]),
  - no number of the answer (the matrix shows dots, the legend no range),
  - no line naming a cell ("weights[it,animal] = ?"), and
  - no mention of the answer's label outside the matrix's labels, the title and the choices.
A number question's bar must state its precision and what counts, and its answer, once shown,
the true value and the tolerance.
Usage: check_questions.py ATTNSTEP LESSON..."""
import re
import sys

from headless import report, run, screens

PLAIN_STEP = re.compile(r"^\[(\d+)/(\d+)\] ")
CELL_NAME = re.compile(r"\w+\[[^\]\s]+,[^\]\s]+\]")
NUMBER = re.compile(r"-?\d+\.\d+")
ANSWER = re.compile(r"^ (?:Answer|Right|Not quite): (.*)$")


def step_count(program, lesson):
    return sum(1 for line in run(program, "--plain", lesson).splitlines() if PLAIN_STEP.match(line))


def step_screens(program, lesson, count):
    """Two screens a step: as it opens, and after Esc (which skips an open question)."""
    keys = "# each step as it opens, then with its question skipped\n" + "dump\nesc\ndump\nn\n" * count
    # wide enough that the step list stays beside every shipped lesson's matrix (where the matrix
    # needs its room, the list hides itself)
    dumps = screens(program, lesson, keys, "200x40")
    return [(dumps[2 * k], dumps[2 * k + 1]) for k in range(count)]


def question_open(screen):
    return any(re.match(r"^─+ question ─", line) for line in screen)


def answer_of(screen):
    """The verdict's text and the label it names last ("… to animal", "… = 1.25")."""
    for line in screen:
        match = ANSWER.match(line)
        if match:   # without the tolerance the verdict states, which the question states too
            return re.sub(r" \(within ± \S+ counts|exact only\)$", "", match.group(1))
    return None


def leaks(screen, answer, choices_from):
    """What the open question's screen gives away (empty when nothing)."""
    found = []
    body = [line.split("│", 1)[1] for line in screen if "│" in line]
    if not body:   # the step list tells the matrix apart: without it nothing here could fail
        found.append("no step list on screen, so the matrix cannot be told apart")
    if any("▾" in part or "▸" in part or "[" in part for part in body):
        found.append("a marker on the matrix (▾, ▸ or [ ])")
    for line in screen:
        if CELL_NAME.search(line):
            found.append(f"a line names a cell: {line.strip()!r}")
    text = "\n".join(screen)
    for number in NUMBER.findall(answer):
        if re.search(r"(?<![\d.])" + re.escape(number) + r"(?![\d])", text):
            found.append(f"the answer's number {number} is on screen")
    label = re.search(r"(?:to|=) (\S+)$", answer)
    outside = [line for k, line in enumerate(screen)
               if k > 0 and "│" not in line and k < choices_from]
    if label and not NUMBER.fullmatch(label.group(1)) and \
            any(re.search(r"\b" + re.escape(label.group(1)) + r"\b", line) for line in outside):
        found.append(f"the answer's label {label.group(1)} is named outside the matrix")
    return found


PRECISION = re.compile(r"Your answer \((?:a whole number|(?:one|two|three|four|five|\d+) "
                       r"decimals?)(?:, within ± \S+ counts)?\)|Your answer \(exactly\)")


def unstated(opened, skipped):
    """What a number question leaves unsaid (issue 24): its bar states the precision asked and
    what counts ("Your answer (two decimals, within ± 0.01 counts)"), and the answer, once
    shown, the true value and the tolerance ("Answer: … 0.6296 … (within ± 0.01 counts)")."""
    if not any("Your answer (" in line for line in opened):
        return []   # a choice question: its choices say what may be answered
    found = []
    if not any(PRECISION.search(line) for line in opened):
        found.append("the number question's bar states no precision")
    shown = [line for line in skipped if ANSWER.match(line)]
    if not shown or not re.search(r"\d\.\d.*\((?:within ± \S+ counts|exact only)\)$", shown[0]):
        found.append(f"the answer shown gives no true value and tolerance: {shown[:1]}")
    return found


def main():
    program, lessons = sys.argv[1], sys.argv[2:]
    failed = asked = 0
    for lesson in lessons:
        problems = []
        count = step_count(program, lesson)
        for k, (opened, skipped) in enumerate(step_screens(program, lesson, count)):
            if not question_open(opened):
                continue
            asked += 1
            answer = answer_of(skipped)
            if answer is None or question_open(skipped):
                problems.append(f"step {k + 1}: Esc does not reveal the answer")
                continue
            rule = next(i for i, line in enumerate(opened) if re.match(r"^─+ question ─", line))
            for leak in leaks(opened, answer, rule + 1):
                problems.append(f"step {k + 1} (answer: {answer}): {leak}")
            problems += [f"step {k + 1}: {p}" for p in unstated(opened, skipped)]
        if count == 0:
            problems.append("no steps")
        failed += report(lesson, problems, f"{count} steps, no open question shows its answer")
    print(f"questions: {asked} asked in {len(lessons)} lessons, {failed} lessons failed")
    return 1 if failed or asked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
