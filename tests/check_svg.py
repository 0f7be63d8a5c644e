"""The SVG figures' checks (tests/check_svg.sh runs this with the program's path)."""
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

PROGRAM = sys.argv[1]
SVG = "{http://www.w3.org/2000/svg}"
failures = []


def run(*args, code=0):
    p = subprocess.run([PROGRAM, *args], capture_output=True,
                       env=dict(os.environ, LC_ALL="C.UTF-8"))
    if p.returncode != code:
        failures.append(f"{args}: exit {p.returncode}, wanted {code}: {p.stderr!r}")
    return p


def parse(data, what):
    try:
        return ET.fromstring(data)
    except ET.ParseError as e:
        failures.append(f"{what}: not XML: {e}")
        return None


# The UI's 256-colour ramps (src/core/heat.c) as xterm colour numbers, written out here so the
# figures are checked against the rule rather than against themselves.
VIRIDIS = [53, 54, 61, 24, 30, 36, 71, 113, 148, 220]
INFERNO = [16, 53, 89, 125, 161, 167, 202, 208, 220, 229]
MASK = 238


def xterm_rgb(c):
    if c >= 232:
        g = 8 + 10 * (c - 232)
        return (g, g, g)
    levels = [0, 95, 135, 175, 215, 255]
    c -= 16
    return (levels[c // 36], levels[c // 6 % 6], levels[c % 6])


def bucket(x, n):
    return min(max(int(x * n // 1), 0), n - 1)


def read_png(path):
    """(width, height, rows of RGBA tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, width = 8, b"", 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            bpp = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw, rows, prev = zlib.decompress(idat), [], bytearray(width * bpp)
    stride = width * bpp
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def cells(root):
    """{(row, col): (x, y, classes, text)} of a figure's cells."""
    found = {}
    for g in root.iter(SVG + "g"):
        if "cell" not in g.get("class", "").split():
            continue
        rect, text = g.find(SVG + "rect"), g.find(SVG + "text")
        found[(int(g.get("data-row")), int(g.get("data-col")))] = (
            int(rect.get("x")), int(rect.get("y")), g.get("class").split(), text.text)
    return found


# 1. Every stage and head of every shipped lesson, and every walk as a folder. The lessons at
# d_model 512 have their walk's figures only: every stage and head of them is 46 figures of up
# to 16,384 cells, drawn by the code the others run (7 s of processor time for the two).
lessons = sorted(glob.glob("lessons/*.yaml"))
LARGE = ("lessons/real_size.yaml", "lessons/attention_cost.yaml")
figures = 0
with tempfile.TemporaryDirectory() as tmp:
    for lesson in lessons:
        trace = json.loads(run("--json", lesson).stdout) if lesson not in LARGE else {"stages": []}
        for stage in trace["stages"]:
            args = ["--svg", stage["name"], lesson]
            if stage["head"]:
                args[2:2] = ["--head", str(stage["head"])]
            root = parse(run(*args).stdout, args)
            figures += 1
            if root is not None and len(cells(root)) != len(stage["rows"]) * len(stage["cols"]):
                failures.append(f"{args}: {len(cells(root))} cells")
        folder = os.path.join(tmp, os.path.basename(lesson))
        run("--svg-dir", folder, lesson)
        for name in sorted(os.listdir(folder)):
            parse(open(os.path.join(folder, name), "rb").read(), f"{folder}/{name}")
            figures += 1
        if not os.listdir(folder) or "index.html" not in os.listdir(folder):
            failures.append(f"{folder}: no index.html")
    print(f"{figures} figures parsed from {len(lessons)} lessons")

    # 2. Pixels: the largest and smallest weight and a masked cell, three lessons, both ramps.
    for lesson, head, ramp, table in [("lessons/causal.yaml", 1, "viridis", VIRIDIS),
                                      ("lessons/tea_causal.yaml", 1, "inferno", INFERNO),
                                      ("lessons/window.yaml", 1, "viridis", VIRIDIS)]:
        svg, png = os.path.join(tmp, "w.svg"), os.path.join(tmp, "w.png")
        with open(svg, "wb") as f:
            f.write(run("--svg", "weights", "--head", str(head), "--ramp", ramp, lesson).stdout)
        subprocess.run(["rsvg-convert", svg, "-o", png], check=True)
        _, _, pixels = read_png(png)
        found = cells(ET.parse(svg).getroot())
        weights = [s for s in json.loads(run("--json", lesson).stdout)["stages"]
                   if s["name"] == "weights" and s["head"] in (None, head)][0]["values"]
        masked_csv = [line.split(",")[1:] for line in
                      run("--csv", "masked", "--head", str(head), lesson).stdout.decode().split("\r\n")[1:] if line]
        shown = [(weights[r][c], (r, c)) for (r, c), cell in found.items() if "masked" not in cell[2]]
        hidden = [rc for rc, cell in found.items() if "masked" in cell[2]]
        checks = [("largest", max(shown)[1], xterm_rgb(table[bucket(max(shown)[0], len(table))])),
                  ("smallest", min(shown)[1], xterm_rgb(table[bucket(min(shown)[0], len(table))]))]
        if not hidden:
            failures.append(f"{lesson}: no masked cell in the figure")
        else:
            checks.append(("masked", hidden[0], xterm_rgb(MASK)))
            r, c = hidden[0]
            if masked_csv[r][c] != "-inf" or weights[r][c] != 0:
                failures.append(f"{lesson}: cell {hidden[0]} marked masked but masked is {masked_csv[r][c]}")
        for what, (r, c), want in checks:
            x, y, _, _ = found[(r, c)]
            got = pixels[y + 3][x + 3]
            if got != want:
                failures.append(f"{lesson} {ramp}: the {what} cell [{r},{c}] is {got}, wanted {want}")
    print("pixels checked at the largest, smallest and masked cells of 3 lessons")

    # 3. Lesson text escaped: markup, quotes, RTL, CJK, controls, a long token cut by rule.
    evil = os.path.join(tmp, "evil.yaml")
    with open(evil, "w") as f:
        f.write('title: "<b>T</b> & \\"q\\" \'s \\e[31m \\u202Eevil"\n'
                'tokens: ["<s>", "a&b", "\\"q\'", "שלום", "猫が", "x\\u202Ey\\e[1m",'
                ' "abcdefghijklmnopqrstuvwxyz"]\nd_model: 2\n'
                'embeddings: {random: normal, seed: 1}\n'
                'steps:\n  - stage: weights\n    say: "<script>alert(1)</script> & \\u202E"\n')
    out = run("--svg", "weights", evil).stdout
    root = parse(out, "evil")
    if any(b < 0x20 and b != 0x0a for b in out) or b"\xe2\x80\xae" in out or b"<script" in out:
        failures.append("evil: a raw control, override or tag reached the SVG")
    if root is not None:
        texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
        for want in ["<s>", "a&b", "\"q'", "שלום", "猫が", "x\\u202ey\\x1b[1m"]:
            if not any(t.endswith(want) for t in texts):
                failures.append(f"evil: no label {want!r} in {texts}")
        cut = [t for t in texts if t.endswith("…")]
        if not cut or not cut[0].endswith("abcdefghijklmno…"):
            failures.append(f"evil: the long token was not cut to 16 columns: {cut}")
        if not root.find(SVG + "title").text.startswith("<b>T</b> & \"q\" 's \\x1b[31m \\u202eevil"):
            failures.append(f"evil: title {root.find(SVG + 'title').text!r}")
    folder = os.path.join(tmp, "evil")
    run("--svg-dir", folder, evil)
    html = open(os.path.join(folder, "index.html"), "rb").read()
    page = parse(html, "evil index.html")
    if b"<script" in html or b"\xe2\x80\xae" in html:
        failures.append("evil: index.html carries the narration's markup or override raw")
    if page is not None and "<script>alert(1)</script> & \\u202e" not in "".join(page.itertext()):
        failures.append("evil: index.html lost the narration")

    # 4. --markdown --svg-dir: every step's heading is followed by its figure, which exists.
    import re
    folder = os.path.join(tmp, "hand out")
    handout = run("--markdown", "--svg-dir", folder, "lessons/bank_loan.yaml").stdout.decode()
    headings = re.findall(r"^## (\d+)\. ", handout, re.M)
    links = re.findall(r"^## (\d+)\. .*\n\n!\[step (\d+): [^]]+\]\(<([^>]+)>\)$", handout, re.M)
    if not headings or len(links) != len(headings):
        failures.append(f"handout: {len(links)} figures linked for {len(headings)} steps")
    for number, again, target in links:
        if number != again or not os.path.isfile(target) or not os.path.basename(target).startswith(number.zfill(2) + "-"):
            failures.append(f"handout: step {number} links {target}")
    print(f"handout links {len(links)} figures")

    # 4b. --svg N is step N of the walk as --svg-dir draws it: at a decoding step only the
    # token's rows, which --svg STAGE (the whole matrix) does not give.
    steps_dir = os.path.join(tmp, "decode-steps")
    run("--svg-dir", steps_dir, "lessons/decode.yaml")
    names = sorted(n for n in os.listdir(steps_dir) if n.endswith(".svg"))
    for number, name in enumerate(names, 1):
        one = run("--svg", str(number), "lessons/decode.yaml").stdout
        with open(os.path.join(steps_dir, name), "rb") as f:
            if one != f.read():
                failures.append(f"--svg {number} is not {name} of --svg-dir")
    stage = names[2].split("-", 1)[1].rsplit(".", 1)[0] if len(names) > 2 else "scores"
    if len(names) > 2 and run("--svg", "3", "lessons/decode.yaml").stdout == \
            run("--svg", stage, "lessons/decode.yaml").stdout:
        failures.append(f"--svg 3 (a decoding step) draws the whole {stage} matrix")
    print(f"--svg N: {len(names)} steps of decode.yaml as --svg-dir draws them")

    # 5. Bad arguments: each refused with its message.
    for args, code, message in [
            (["--svg", "nosuch", "lessons/cat_sat.yaml"], 64, b"--svg: unknown stage 'nosuch' (stages: input Q K V"),
            (["--svg", "weigths", "lessons/cat_sat.yaml"], 64, b"--svg: unknown stage 'weigths'; did you mean 'weights'?"),
            (["--svg", "biased", "lessons/cat_sat.yaml"], 64, b"--svg: stage 'biased' exists only with"),
            (["--svg", "99", "lessons/decode.yaml"], 64, b"--svg: step 99 does not exist: this lesson has steps 1 to 5"),
            (["--svg", "0", "lessons/decode.yaml"], 64, b"--svg: step 0 does not exist"),
            (["--svg", "weights", "--head", "3", "lessons/bank_loan.yaml"], 64, b"head 3 does not exist: this lesson has 2 heads"),
            (["--svg", "weights", "--ramp", "rainbow", "lessons/cat_sat.yaml"], 64, b"--ramp takes viridis or inferno: rainbow"),
            (["--svg", "weights", "--svg-dir", tmp, "lessons/cat_sat.yaml"], 64, b"--svg writes one figure to standard output"),
            (["--svg-dir", "/proc/no/such", "lessons/cat_sat.yaml"], 74, b"--svg-dir: cannot write /proc/no/such"),
            (["--ramp", "inferno", "--plain", "lessons/cat_sat.yaml"], 64, b"--ramp does nothing with --plain"),
            (["--markdown", "--worksheet", "--svg-dir", tmp, "lessons/cat_sat.yaml"], 64, b"--svg-dir would give a worksheet's answers away"),
            (["--plain", "--svg-dir", tmp, "lessons/cat_sat.yaml"], 64, b"--svg-dir does nothing with --plain")]:
        p = run(*args, code=code)
        if message not in p.stderr:
            failures.append(f"{args}: message {p.stderr!r}, wanted {message!r}")
    print("bad arguments refused")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
