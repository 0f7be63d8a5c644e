#!/usr/bin/env python3
"""Checks a worksheet (attnstep --markdown --worksheet, rendered to plain text by pandoc) for
answers given away, for tests/check_markdown.sh: usage worksheet_answers.py NAME FILE.

The worksheet must have as many questions as its key has answers and no "Answer:" before the
key. At or before each question (up to the next step) there must be none of these, taken from
its part of the key: its cell's worked arithmetic ("weights[it,animal] = …"), the row of that
cell in its stage's table (the table that shows the answer), and for a numeric question the
answer as written (when it has two digits or more: a lone "1.0" is everywhere); nor, after the
question at its own step (its narration), the cell's value. And nowhere in the body (anything
before the key) may each question's value be, at any rounding from 1 to 4 decimals or as a
percentage. Exits 1, naming each problem."""
import re
import sys

name, text = sys.argv[1], open(sys.argv[2], encoding="utf-8").read().split("\n")
problems = []
if "Answer key" not in text:
    print(f"{name}: no answer key")
    sys.exit(1)
key_at = text.index("Answer key")
body, key = text[:key_at], text[key_at:]
asked = [i for i, line in enumerate(body) if re.match(r"Question \d+: ", line)]
parts = [i for i, line in enumerate(key) if re.match(r"Question \d+, at step \d+\.", line)]
if not asked or len(asked) != len(parts):
    problems.append(f"{len(asked)} questions asked, {len(parts)} in the key")
if any("Answer:" in line for line in body):
    problems.append("an answer before the key")


def absent(question, before, needle, what, number):
    """Records a problem when needle (a number: not inside a longer one) is in before."""
    pattern = re.compile(r"(?<![0-9.])" + re.escape(needle) + r"(?![0-9])")
    for line in before:
        if pattern.search(line) if number else needle in line:
            problems.append(f"question {question}: {what} '{needle}' is shown before it: "
                            f"{line.strip()[:120]}")
            return


for q, (at, start) in enumerate(zip(asked, parts)):
    end = parts[q + 1] if q + 1 < len(parts) else len(key)
    # at and before the question: up to the next step's heading ("9. weights = … — 11×11")
    step_end = next((i for i in range(at + 1, len(body))
                     if re.match(r"^\d+\. .* — \d+×\d+$", body[i])), len(body))
    part, before = key[start:end], body[:at] + body[at + 1:step_end]
    cell_line = re.compile(r"^\s+(\w+\[(.+?),.*?\])( \(head \d+\))? = ")
    worked = [m for line in part for m in [cell_line.match(line)] if m]
    if not worked:
        problems.append(f"question {q + 1}: its worked arithmetic is not in the key")
        continue
    cell, row_label = worked[-1].group(1) + (worked[-1].group(3) or ""), worked[-1].group(2)
    absent(q + 1, before, cell + " = ", "the arithmetic of", False)
    # the cell's value, in whatever follows the question at its own step (its narration)
    value = re.search(r"= (-?\d+\.\d+)$", worked[-1].string)
    if value:
        absent(q + 1, body[at + 1:step_end], value.group(1), "the value", True)
    # a repeated token is named by position in a cell's name ("dog@6"), by itself in a table
    row_line = re.compile(r"^  " + re.escape(re.sub(r"@\d+$", "", row_label)) + r"\s+-?\d+\.\d{4}\b")
    rows = [line.strip() for line in part if row_line.match(line)]
    if not rows:
        problems.append(f"question {q + 1}: the row {row_label} of its table is not in the key")
    for row in rows:
        absent(q + 1, before, row, "the table row", False)
    for line in part:
        m = re.match(r"Answer: (-?[0-9.]+) \(", line)
        if m and len(m.group(1).replace("-", "").replace(".", "").strip("0")) >= 2:
            absent(q + 1, before, m.group(1), "the answer", True)


def roundings(value):
    """value as a worksheet could write it: 1 to 4 decimals, and as a percentage with 0 to 2.
    The key gives 4 decimals, so the true value is anywhere within half a unit of them: the
    roundings of both ends are taken too (0.6295 may be 0.62951, which is 0.630 at three)."""
    written = []
    for near in (value - 0.0000499, value, value + 0.0000499):
        written += [f"{near:.{d}f}" for d in range(1, 5)]
        written += [f"{near * 100:.{d}f}%" for d in range(0, 3)]
    return sorted(set(written) - {f"{value - 0.0000499:.4f}", f"{value + 0.0000499:.4f}"}
                  | {f"{value:.4f}"})


# every answer, at every rounding, anywhere in the body: a numeric question's value, and a
# choice question's focus value ("cat fits itself (1.25)"); whole numbers tell nothing (1.0 is in
# every table)
for q, start in enumerate(parts):
    end = parts[q + 1] if q + 1 < len(parts) else len(key)
    worked = [m for line in key[start:end]
              for m in [re.match(r"^\s+\w+\[.+?\].* = (-?\d+\.\d+)$", line)] if m]
    if not worked:
        continue
    value = float(worked[-1].group(1))
    if value == round(value):
        continue
    for written in roundings(value):
        sign = r"[-−]" if written.startswith("-") else r"(?<![-−])"
        digits = written.lstrip("-")
        pattern = re.compile(r"(?<![0-9.])" + sign + re.escape(digits) + r"(?![0-9])")
        for line in body:
            if pattern.search(line):
                problems.append(f"question {q + 1}: its answer {value} is in the body as "
                                f"'{written}': {line.strip()[:120]}")
                break
for problem in problems:
    print(f"{name}: {problem}")
sys.exit(1 if problems else 0)
