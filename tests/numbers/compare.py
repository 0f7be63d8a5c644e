"""Every view of a lesson against --json (run by tests/check_numbers.sh).

For each lesson given, the numbers that --plain and --markdown (at several precisions), --csv,
--explain and the headless UI show for every cell are compared with the cell's value in
--json: equal within the precision shown (absolute for decimals, relative for the exponent
form), −∞ exactly where JSON has null, CSV bit-exact. A cut number ("1.000e+"), a number run
into its neighbour, or an integer part of more than 9 digits (numbers ≥ 1e9 switch to the
exponent form) fails. Prints one line per failure and exits 1 if there was any.
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

ATTNSTEP = os.environ.get("ATTNSTEP", "./attnstep")  # another build to test, e.g. an old one
NUMBER = re.compile(r"^-?(\d+)(?:\.(\d*))?(?:e([+-]\d+))?$")
failures = []


def run(*args):
    result = subprocess.run([ATTNSTEP, *args], capture_output=True, text=True,
                            env=dict(os.environ, LANG="C.UTF-8"))
    if result.returncode != 0:
        failures.append(f"attnstep {' '.join(args)}: exit status {result.returncode}: "
                        f"{result.stderr.strip()}")
    return result.stdout


def check(where, shown, value):
    """Whether the text `shown` stands for `value` (None: −∞) within the precision shown."""
    text = shown.replace("\u2212", "-")
    if value is None or text in ("-\u221e", "-inf"):
        if not (value is None and text in ("-\u221e", "-inf")):
            failures.append(f"{where}: shows {shown!r}, --json has {value!r}")
        return
    match = NUMBER.match(text)
    if not match:
        failures.append(f"{where}: {shown!r} is not a whole number (--json: {value!r})")
        return
    whole, decimals, exponent = match.group(1), match.group(2) or "", match.group(3)
    if exponent is None and len(whole) > 9:
        failures.append(f"{where}: {shown!r} has a {len(whole)}-digit integer part")
        return
    scale = 10.0 ** int(exponent) if exponent is not None else 1.0
    allowed = 0.5 * 10.0 ** -len(decimals) * scale
    # the decimal text of a double, and the double itself, may each be off by an ulp or so
    allowed += 4 * math.ulp(abs(value)) + 1e-15 * abs(value)
    if not abs(float(text) - value) <= allowed:
        failures.append(f"{where}: shows {shown!r}, --json has {value!r}")


def stage_label(stage):
    head = f" head {stage['head']}" if stage["head"] is not None else ""
    return f"{stage['name']}{head}"


def compare_table(view, stage, rows):
    """rows: the cells of one matrix as text, row by row."""
    values = stage["values"]
    if len(rows) != len(values) or any(len(r) != len(v) for r, v in zip(rows, values)):
        failures.append(f"{view} {stage_label(stage)}: table of shape "
                        f"{[len(r) for r in rows]}, --json has {[len(v) for v in values]}")
        return
    for i, (row, expected) in enumerate(zip(rows, values)):
        for j, (shown, value) in enumerate(zip(row, expected)):
            check(f"{view} {stage_label(stage)}[{i},{j}]", shown, value)


def plain_tables(text):
    """The tables of --plain in order as (stage, head, rows), a step that repeats the matrix
    before left out. A lesson's script may show any stages in any order."""
    lines = text.split("\n")
    tables = []
    for k, line in enumerate(lines):
        header = re.match(r"^\[\d+/\d+\] (\S+) .*?(?:   head (\d+) of \d+)?   (\d+)×(\d+)$", line)
        if not header or lines[k + 1].startswith("  ("):
            continue
        count = int(header.group(3))
        head = int(header.group(2)) if header.group(2) else None
        tables.append((header.group(1), head,
                       [row.split()[1:] for row in lines[k + 2:k + 2 + count]]))
    return tables


def markdown_tables(text):
    lines = text.split("\n")
    tables = []
    for k, line in enumerate(lines):
        header = re.match(r"^## \d+\. (\S+) .*?(?: \(head (\d+)\))? — (\d+)×(\d+)$", line)
        if not header or not lines[k + 2].startswith("|"):
            continue
        count = int(header.group(3))
        head = int(header.group(2)) if header.group(2) else None
        rows = lines[k + 4:k + 4 + count]
        tables.append((header.group(1), head,
                       [[cell.strip() for cell in row.strip("|").split("|")][1:] for row in rows]))
    return tables


def csv_table(text):
    return [row.split(",")[1:] for row in text.splitlines()[1:]]


def explained(text):
    """The result of an explanation: what follows its last ' = '."""
    return text.strip().rsplit(" = ", 1)[-1].split(" ")[0]


def ui_table(screen, rows):
    """The matrix of a headless UI screen: the lines after the column header (marked ▾)."""
    lines = screen.split("\n")
    start = next((k for k, line in enumerate(lines) if "\u25be" in line), None)
    if start is None:
        return []
    table = []
    for line in lines[start + 1:start + 1 + rows]:
        cells = line.split("\u2502", 1)[-1].replace("\u25b8", " ")
        table.append(cells.replace("[", " ").replace("]", " ").split()[1:])
    return table


def compare_lesson(lesson):
    document = json.loads(run("--json", lesson))
    stages = document["stages"]
    by_name = {(stage["name"], stage["head"]): stage for stage in stages}
    for precision in ("0", "2", "4", "17"):
        for view, parse in (("--plain", plain_tables), ("--markdown", markdown_tables)):
            tables = parse(run(view, "--precision", precision, lesson))
            if not tables:
                failures.append(f"{view} --precision {precision}: no table")
            for name, head, table in tables:   # each against the stage it names
                # one head: the text views name none, --json says head 1
                stage = by_name.get((name, head)) or by_name.get((name, 1 if head is None else head))
                if stage is None:
                    failures.append(f"{view} --precision {precision}: a table of {name} "
                                    f"head {head}, which --json does not have")
                else:
                    compare_table(f"{view} --precision {precision}", stage, table)
    with tempfile.NamedTemporaryFile("w", suffix=".keys") as keys:
        # the screen as the lesson opens at the stage; --at opens a question there, not
        # answered: Esc skips it, so that the numbers are shown
        keys.write("# the screen at the stage, its question skipped\nesc\n")
        keys.flush()
        for stage in stages:
            head = ["--head", str(stage["head"])] if stage["head"] is not None else []
            name, values = stage["name"], stage["values"]
            compare_table("--csv", stage, csv_table(run("--csv", name, *head, lesson)))
            for (i, row) in enumerate(values):
                for (j, value) in enumerate(row):
                    cell = f"{name}[{i},{j}]"
                    check(f"--explain {cell}", explained(run("--explain", cell, *head, lesson)),
                          value)
            screen = run("--keys", keys.name, "--screen", "200x50", "--at", f"{name}[0,0]",
                         *head, lesson)
            compare_table("UI", stage, ui_table(screen, len(values)))
    for stage in stages:  # CSV is bit-exact: its numbers read back to --json's doubles
        head = ["--head", str(stage["head"])] if stage["head"] is not None else []
        for row, expected in zip(csv_table(run("--csv", stage["name"], *head, lesson)),
                                 stage["values"]):
            for shown, value in zip(row, expected):
                if (value is None) != (shown == "-inf") or (
                        value is not None and float(shown) != value):
                    failures.append(f"--csv {stage_label(stage)}: {shown!r} is not {value!r}")


def main():
    for lesson in sys.argv[1:]:
        compare_lesson(lesson)
    for failure in failures[:40]:
        print(failure)
    if len(failures) > 40:
        print(f"… and {len(failures) - 40} more")
    print(f"numbers: {len(sys.argv) - 1} lesson(s), {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
