#!/usr/bin/env python3
"""One walk, one numbering: for every shipped lesson, step k shows the same stage formula, head,
token being decoded (a decoding lesson's time axis) and shape in the UI (headless), in --plain
("[k/N]") and in --markdown ("## k."), and all three count the same N steps.
Usage: check_steps.py ATTNSTEP LESSON..."""
import re
import sys

from headless import report, run, screens

TOKEN = r"token (\d+) of \d+ \(.*?\)"
PLAIN = re.compile(r"^\[(\d+)/(\d+)\] (.*?)(?:   head (\d+) of \d+)?(?:   " + TOKEN + r")?   (\d+×\d+)$")
MARKDOWN = re.compile(r"^## (\d+)\. (.*?)(?: \(head (\d+)\))?(?: · " + TOKEN + r")? — (\d+×\d+)$")
UI_TITLE = re.compile(r"(?:" + TOKEN + r" · )?(?:off the script.*?)?step (\d+) of (\d+)\s*$")
# after the step list's separator, or at the line's start where the list hid itself so that
# every column fits (a 16-token matrix at 200 columns)
UI_FORMULA = re.compile(r"(?:│|^)([^\s│][^│]*?)  (\d+×\d+)(?:  head (\d+) of \d+)?")


def text_steps(program, lesson, flag, pattern):
    """(number, count, formula, head, token, shape) of every step header an output writes (token
    0 for a step that shows a whole matrix)."""
    steps = []
    for line in run(program, flag, lesson).splitlines():
        match = pattern.match(line)
        if match:
            groups = match.groups()
            if flag == "--plain":
                number, count, formula, head, token, shape = groups
                count = int(count)
            else:
                (number, formula, head, token, shape), count = groups, None
            steps.append((int(number), count, formula, int(head or 1), int(token or 0), shape))
    return steps


def ui_steps(program, lesson, count):
    """The same read from the headless UI's screens, stepping with n (Esc skips a question)."""
    steps = []
    for lines in screens(program, lesson, "dump\nesc\nn\n" * count, "200x50")[:count]:
        title = UI_TITLE.search(lines[0])
        formula = next((UI_FORMULA.search(l) for l in lines[1:] if UI_FORMULA.search(l)), None)
        if not title or not formula:
            sys.exit(f"FAIL {lesson}: cannot read the step or formula from the UI screen:\n"
                     + "\n".join(lines))
        steps.append((int(title.group(2)), int(title.group(3)), formula.group(1).rstrip(),
                      int(formula.group(3) or 1), int(title.group(1) or 0), formula.group(2)))
    return steps


def main():
    program, lessons = sys.argv[1], sys.argv[2:]
    failed = 0
    for lesson in lessons:
        plain = text_steps(program, lesson, "--plain", PLAIN)
        markdown = text_steps(program, lesson, "--markdown", MARKDOWN)
        count = len(plain)
        ui = ui_steps(program, lesson, count)
        problems = []
        if count == 0:
            problems.append("--plain shows no step")
        if [s[0] for s in plain] != list(range(1, count + 1)) or any(s[1] != count for s in plain):
            problems.append(f"--plain numbers its steps {[s[:2] for s in plain]}")
        for name, other in (("--markdown", markdown), ("the UI", ui)):
            if len(other) != count:
                problems.append(f"{name} has {len(other)} steps, --plain {count}")
            for p, o in zip(plain, other):
                if (p[0],) + p[2:] != (o[0],) + o[2:] or (o[1] is not None and o[1] != count):
                    problems.append(f"step {p[0]}: --plain shows {p[2]!r} head {p[3]} token {p[4]} {p[5]}, "
                                    f"{name} step {o[0]}{'/' + str(o[1]) if o[1] else ''} shows "
                                    f"{o[2]!r} head {o[3]} token {o[4]} {o[5]}")
                    break
        failed += report(lesson, problems, f"{count} steps, numbered alike in the UI, --plain and --markdown")
    print(f"steps: {len(lessons)} lessons, {failed} failed")
    return 1 if failed or not lessons else 0


if __name__ == "__main__":
    sys.exit(main())
