#!/usr/bin/env python3
"""A size sweep of the headless UI (issue 25): every step of each lesson given, the help
overlay and the sum pane, at sizes from 40x12 to 250x70. It fails on a stray character beside
a box (a corner or side of the help or the sum pane touching what the screen beneath drew) and
on an explanation line that lost its result ("= 0.7073" at its end), or at 80 columns and more
with two lines or more, its whole sum ("name = … = 0.70734"); and on a formula header or legend
cut inside a word or a clause, or reading "i −∞"; and, from 80x24 on, on a question whose
choice names a token without its column on screen.
Usage: check_sweep.py ATTNSTEP LESSON..."""
import re
import sys

import os
import tempfile

from headless import report, run

SIZES = [(40, 12), (50, 14), (60, 18), (72, 20), (80, 24), (90, 26), (100, 30), (120, 36),
         (150, 40), (180, 45), (200, 50), (250, 70)]
CORNERS = "┌┐└┘"
BORDER = set("─│┌┐└┘├┤┬┴┼")
# the explanation's result: " = " then a number as the one formatter writes it (fixed, short
# or exponent form, −∞ and the ASCII spellings), at the end of the explanation
RESULT = re.compile(r"= (?:[−-]?(?:\d+(?:\.\d+)?(?:e[+−-]?\d+)?|∞|inf)|[−-]inf)\)?(?: \([a-z][^()]*\))?$")
NAMED = re.compile(r"^ (?:\(answer the question|[^ [\]]+\[[^\]]*\])")
# "name = … = result": every term cut although the pane had room for some (issue 25)
SUM_LOST = re.compile(r"^[^=]*\S = (?:…|\.\.\.) = ")
RULE = re.compile(r"^──? (narration|about this stage|off the script|question) ")


def box_problems(lines):
    """Stray characters beside a box: a corner's outer neighbour on its row, the cell outside
    each side of the box on every row between its corners, or a border character above a top
    corner or below a bottom one."""
    problems = []
    for y, line in enumerate(lines):
        for x, ch in enumerate(line):
            if ch not in "┌└":
                continue
            right = line.find("┐" if ch == "┌" else "┘", x + 1)
            if right < 0:
                continue
            outside = [(x - 1, "left"), (right + 1, "right")]
            for ox, side in outside:
                if 0 <= ox < len(line) and line[ox] != " ":
                    problems.append(f"row {y + 1}: {line[ox]!r} beside the box's {side} corner")
            if ch == "┌":
                bottom = next((b for b in range(y + 1, len(lines))
                               if x < len(lines[b]) and lines[b][x] == "└"), None)
                for b in range(y + 1, bottom or y + 1):
                    row = lines[b]
                    for ox, side in outside:
                        if 0 <= ox < len(row) and row[ox] != " ":
                            problems.append(f"row {b + 1}: {row[ox]!r} beside the box's {side} side")
                if y > 0 and any(lines[y - 1][i:i + 1] in BORDER for i in (x, right)):
                    problems.append(f"row {y}: a border character above the box's corner")
    return problems


def explanation_problems(lines, cols):
    """The explanation sits just above the narration's rule, from the line where the cell is
    named ("weights[bank,river] (head 1) = …"); unless it stands in for a question's hidden
    numbers, it ends in its result."""
    for y, line in enumerate(lines):
        if RULE.match(line.lstrip()) and y > 0:
            start = y - 1
            while start > 1 and not NAMED.match(lines[start]) and lines[start - 1].strip():
                start -= 1
            text = " ".join(l.strip() for l in lines[start:y]).strip()
            if not NAMED.match(lines[start]) or text.startswith("(answer the question"):
                return []
            if not RESULT.search(text):
                return [f"the explanation lost its result: {text!r}"]
            if cols >= 80 and y - start >= 2 and SUM_LOST.search(text):
                return [f"the explanation lost its whole sum where two lines had room: {text!r}"]
            return []
    return []


# a word cut with an ellipsis, and a sliding window's −∞ read as "i − ∞" (issue 25)
MID_WORD = re.compile(r"[A-Za-z_](?:…|~)")
FALSE_INFINITY = re.compile(r"i [−-] ?∞|i [−-]inf")
LEGEND_NOTE = re.compile(r"0 = no attention(?!, 1 = all of it|, …)")


def pane_line(line):
    """A line of the matrix pane, without the step list beside it."""
    bar = line.find("│")
    return line[bar + 1:] if 0 <= bar < 20 else line


def header_problems(lines):
    """The matrix pane's header (formula, shape, selection) and legend are shortened by whole
    clauses: no word cut with "…", no parenthesis left open, no legend note cut after a word,
    and no "i −∞" (window's "j > i −∞" read as i minus infinity)."""
    problems = []
    for name, line in (("header", pane_line(lines[1])), ("legend", pane_line(lines[2]))):
        text = line.strip()
        if MID_WORD.search(text):
            problems.append(f"the {name} cuts a word: {text!r}")
        if text.count("(") != text.count(")"):
            problems.append(f"the {name} leaves a parenthesis open: {text!r}")
        if FALSE_INFINITY.search(text):
            problems.append(f"the {name} reads as i minus infinity: {text!r}")
        if name == "legend" and LEGEND_NOTE.search(text):
            problems.append(f"the legend's note is cut inside a clause: {text!r}")
    return problems


CHOICE = re.compile(r"^ [ ▸>] +\d+  (\S.*?)\s*$")


def question_problems(lines, cols, rows):
    """A question's choices that name a row of the matrix (a token) name a column shown with its
    whole label too, from 80x24 on: the class must see every column it is asked about."""
    rule = next((y for y, line in enumerate(lines) if RULE.match(line.lstrip())
                 and "question" in line), None)
    if rule is None or cols < 80 or rows < 24:
        return []
    choices = [m.group(1) for line in lines[rule + 1:] for m in [CHOICE.match(line)] if m]
    tokens = {pane_line(line).split()[0].lstrip("▸>") for line in lines[4:rule]
              if pane_line(line).split()}
    labels = set((pane_line(lines[3]) + " " + pane_line(lines[4])).replace("▾", " ").split())
    return [f"the choice {c!r} has no column on screen" for c in choices
            if c in tokens and c not in labels]


def script(steps):
    """At every size: the help and the sum pane over the first step, then every step (its focus
    cell and the cell one down and right of it), as it is and presenting (P)."""
    keys = []
    for cols, rows in SIZES:
        keys += [f"resize {cols}x{rows}", "g", "?", "dump", "x", "e", "dump", "x"]
        for present in (False, True):
            keys += ["g", "P"] if present else []
            keys += ["dump", "l", "j", "dump", "esc", "n"] * steps
            keys += ["P"] if present else []
    return "\n".join(keys) + "\n"


def dumps_of(program, lesson, keys, screen="80x24"):
    """(size, lines) of every screen the headless UI dumps running the key script text keys."""
    with tempfile.NamedTemporaryFile("w", suffix=".keys", delete=False) as f:
        f.write(keys)
    try:
        out = run(program, "--keys", f.name, "--screen", screen, lesson)
    finally:
        os.unlink(f.name)
    dumps = []
    for dump in out.split("--- screen ")[1:]:
        head, _, body = dump.partition("\n")
        dumps.append((head.split("(")[-1].rstrip(")"), body.split("\n")))
    return dumps


PRESENT_SIZES = ["80x24", "120x36", "200x50"]
PRESENTED = ["lessons/bank_loan.yaml", "lessons/animal_it.yaml", "lessons/four_heads.yaml"]
NUMBER = re.compile(r"[−-]?\d+\.(\d+)")


def presenting_problems(size, lines):
    """--present (issue 25): every column shows (no "cols 1–8 of 11" note), no column label
    is cut, no more than a quarter of the rows are empty, and at 200x50 more than 4 decimals
    where the numbers need them, none where every number's last one is 0."""
    problems = []
    text = "\n".join(lines)
    if re.search(r"cols \d+", text):
        problems.append("a column is scrolled off: " + re.search(r"cols .*", text).group(0))
    empty = sum(1 for line in lines if not line.strip())
    if empty > len(lines) // 4:
        problems.append(f"{empty} of {len(lines)} rows empty")
    if size == "200x50" and "numbers hidden" not in text:
        # more than 4 decimals where the numbers need them; but never a last decimal that is 0
        # in every number (the cap: "4.00000000"), except the run's own 4 ("1.0000")
        cells = [m.group(1) for line in lines[4:] for m in NUMBER.finditer(line)]
        most = max((len(c) for c in cells), default=0)
        round_numbers = cells and all(c.endswith("0") for c in cells if len(c) == most)
        if cells and most <= 4 and not round_numbers:
            problems.append("no more than 4 decimals at 200x50")
        if cells and most > 4 and round_numbers:
            problems.append(f"{most} decimals where every number ends in 0")
    return problems


def check_presenting(program):
    """Every step of the presented lessons at the golden sizes, as check_presenting says."""
    failed = 0
    for lesson in PRESENTED:
        keys = []
        for size in PRESENT_SIZES:
            keys += [f"resize {size}", "g"] + ["dump", "esc", "n"] * 12
        problems = []
        with tempfile.NamedTemporaryFile("w", suffix=".keys", delete=False) as f:
            f.write("\n".join(keys) + "\n")
        try:
            out = run(program, "--keys", f.name, "--present", "--screen", "80x24", lesson)
        finally:
            os.unlink(f.name)
        for dump in out.split("--- screen ")[1:]:
            head, _, body = dump.partition("\n")
            size, lines = head.split("(")[-1].rstrip(")"), body.split("\n")[:int(head.split("x")[-1].rstrip(")"))]
            for problem in presenting_problems(size, lines):
                problems.append(f"--present at {size}: {problem}\n    " + "\n    ".join(lines))
        failed += report(lesson + " --present", problems[:3], "every column, rows filled, "
                         "more than 4 decimals at 200x50 where the numbers need them")
    return failed


def check_questions(program, lessons):
    """Every question of each lesson while it is open, at 80x24 and 120x36 (the main sweep
    answers each question once, at its first size): every choice's column is on screen."""
    failed = 0
    for lesson in lessons:
        problems = []
        for size in ("80x24", "120x36"):
            keys = "\n".join(["dump", "esc", "n"] * 12) + "\n"
            for shown, lines in dumps_of(program, lesson, keys, size):
                cols, rows = (int(n) for n in shown.split("x"))
                for problem in question_problems(lines, cols, rows):
                    problems.append(f"at {shown}: {problem}\n    " + "\n    ".join(lines))
        failed += report(lesson + " questions", problems[:3], "every choice's column on screen")
    return failed


def main():
    program, lessons = sys.argv[1], sys.argv[2:]
    failed = check_presenting(program) + check_questions(program, lessons)
    for lesson in lessons:
        problems = []
        dumps = dumps_of(program, lesson, script(12))
        for size, lines in dumps:
            boxed = any("┌" in line for line in lines)   # a box covers the explanation
            cols, rows = (int(n) for n in size.split("x"))
            unboxed = [] if boxed else (explanation_problems(lines, cols) + header_problems(lines)
                                        + question_problems(lines, cols, rows))
            for problem in box_problems(lines) + unboxed:
                problems.append(f"at {size}: {problem}\n    " + "\n    ".join(lines))
        failed += report(lesson, problems[:3], f"{len(dumps)} screens, no stray character, "
                         "every explanation with its result and what of its sum fits, headers "
                         "and legends cut by whole clauses, every choice's column")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
