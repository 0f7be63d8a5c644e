#!/usr/bin/env python3
"""Does a rerun of `make bench` reproduce? Pairs every timing of the new tests/BENCH.md with the
same figure of the previous one (the same line once its numbers are blanked, the same place on
it) and prints, per section, how many moved by at most 20 % and which did not.
Usage: reproduce.py PREVIOUS.md NEW.md"""
import re
import sys

TIME = re.compile(r"(\d+(?:\.\d+)?) (ms|µs|s)\b")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
SCALE = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}
# lines whose times are not figures to reproduce: dates, load averages, the last run's comparison
SKIP = re.compile(r"^(Written by|- `uptime`|- load average|Compared with|core, kernels, 1 thread .* then|numpy, 2 threads .* then)")


def timings(path):
    """{(section, blanked line, occurrence): [seconds, …]} and the sections in order."""
    figures, seen, sections, section = {}, {}, [], "(top)"
    in_reproduce = False
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("## "):
            section = line[3:]
            in_reproduce = section.startswith("Does it reproduce")
            if not in_reproduce:
                sections.append(section)
            continue
        times = TIME.findall(line)
        if in_reproduce or not times or SKIP.match(line):
            continue
        key = NUMBER.sub("#", line.split("▮")[0])
        n = seen.get((section, key), 0)
        seen[(section, key)] = n + 1
        figures[(section, key, n)] = ([float(v) * SCALE[u] for v, u in times], line.strip())
    return figures, sections


def main():
    before, _ = timings(sys.argv[1])
    after, sections = timings(sys.argv[2])
    for section in sections:
        within = total = 0
        moved = []
        for key, (now, line) in after.items():
            if key[0] != section or key not in before:
                continue
            then = before[key][0]
            for a, b in zip(then, now):
                if a <= 0:
                    continue
                total += 1
                change = b / a - 1
                if abs(change) <= 0.2:
                    within += 1
                else:
                    moved.append(f"{change * 100:+.0f} % in `{line[:70]}`")
        if total:
            print(f"- {section}: {within} of {total} timings within 20 %"
                  + ("" if not moved else "; moved more: " + "; ".join(moved[:6])
                     + (f"; and {len(moved) - 6} more" if len(moved) > 6 else "")))


if __name__ == "__main__":
    main()
