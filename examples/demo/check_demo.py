#!/usr/bin/env python3
"""Checks tf-demo's options, standard input, plots and bad-option handling.

    check_demo.py MODE TF_DEMO STREAM [WORKDIR]

MODE:
  options  every parameter option takes effect: each value given is printed
           on a "chose ... from --option" line and shows in the report
  stdin    `tf-demo -` reads the stream from standard input, as the file
  plots    --out DIR writes one error and one memory SVG per structure
           (well-formed, root element svg, non-empty), their data and an
           index.html showing each plot beside its promise; every hard
           promise holds at every checkpoint of the plotted data
  bad      each kind of bad option exits non-zero with a clear message
  selftest the data check of `plots` fails on data that breaks a promise
STREAM: a CSV file, or "synthetic:N" for the synthetic stream of N events.
tf-demo must exit 0 (every hard promise held) wherever it should succeed.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

STRUCTURES = ["recency_sketch", "age_bloom", "time_bloom", "rate_limiter", "rotating_cuckoo", "recency_window"]


def fail(msg):
    print("check_demo: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def stream_args(stream):
    if stream.startswith("synthetic:"):
        return ["--events", stream.split(":", 1)[1]]
    return [stream]


def run(demo, args, stdin=None, expect=0):
    p = subprocess.run([demo] + args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=600)
    if expect is not None and p.returncode != expect:
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        fail(f"tf-demo {' '.join(args)}: exit status {p.returncode}, expected {expect}")
    return p


def chosen(out, pattern):
    """The "chose" lines matching a regular expression."""
    return [l for l in out.splitlines() if l.strip().startswith("chose") and re.search(pattern, l)]


def check_options(demo, stream):
    given = ["--horizon", "600", "--interval", "20", "--ttl", "300", "--target", "0.02", "--capacity", "777",
             "--limit", "7", "--window", "30", "--buckets", "6", "--global-limit", "55", "--max-memory", "300000",
             "--count-window", "2000", "--eps", "1/16", "--delta", "0.002", "--no-progress"]
    out = run(demo, given + stream_args(stream)).stdout
    expected = {
        r"horizon 600\b.*: from --horizon": 1,
        r"pacing interval 20\b.*: from --interval": 1,
        r"TTL 300\b.*: from --ttl": 1,
        r"target error 0\.02: from --target": 1,
        r"capacity 777 keys: from --capacity": 3,       # the sketch's three uses (a) x2 layouts + (b) + (c)
        r"count window N = 777 events: from --capacity": 1,
        r"initial capacity 777 keys: from --capacity": 1,
        r"first table 1,024 slots: from --capacity": 1,  # the power of two at or above 777
        r"limit 7 per key per window: from --limit": 1,
        r"window 30\b.*: from --window": 1,
        r"6 buckets of 5\b.*: from --buckets": 1,
        r"cap 55 per window over all keys: from --global-limit": 1,
        r"memory cap of \(a\) 293\.0 KiB: from --max-memory": 1,
        r"W = 2,000 events: from --count-window": 1,
        r"eps = 1/16: from --eps": 1,
        r"delta = 0\.002 for \(b\): from --delta": 1,
    }
    for pattern, least in expected.items():
        if len(chosen(out, pattern)) < least:
            fail(f"no (or too few) 'chose' line matching /{pattern}/ in the report")
    if chosen(out, "was not given"):
        fail("a parameter was given but reported as chosen: " + chosen(out, "was not given")[0])
    # ... and the report's own figures use them.
    for pattern in [r"7 requests per key per 30\b.*, 6 buckets of 5\b", r"cap 55 per 30\b",
                    r"W = 2,000 events, eps = 1/16, exact signatures", r"approximate signatures, delta = 0\.002",
                    r"memory cap 293\.0 KiB", r"new_for\(777 keys per 600\b", r"target p 0\.02"]:
        if not re.search(pattern, out):
            fail(f"the report does not show /{pattern}/")
    # Defaults say why.
    out = run(demo, ["--no-progress"] + stream_args(stream)).stdout
    for option in ["--horizon", "--interval", "--ttl", "--target", "--capacity", "--limit", "--window", "--buckets",
                   "--global-limit", "--max-memory", "--count-window", "--eps", "--delta"]:
        if not chosen(out, re.escape(f"since {option} was not given")):
            fail(f"no 'chose' line says why a default was taken for {option}")
    # Progress goes to stderr only when asked (stderr is a pipe here).
    p = run(demo, stream_args(stream))
    if "%" in p.stderr:
        fail("progress shown on a stderr that is not a terminal without --progress")
    p = run(demo, ["--progress"] + stream_args(stream))
    if not re.search(r"tf-demo: \S.* \d+%", p.stderr):
        fail("--progress showed no progress on stderr")
    if re.search(r"\d+%\r", p.stdout) or "tf-demo: rate limiter (a)" in p.stdout:
        fail("progress went to stdout")


def check_stdin(demo, stream):
    from_file = run(demo, ["--no-progress", stream]).stdout
    with open(stream, "rb") as f:
        from_stdin = run(demo, ["--no-progress", "-"], stdin=f).stdout
    if "CSV from standard input" not in from_stdin:
        fail("`tf-demo -` does not say it read standard input")

    def events(text):
        m = re.search(r"([\d,]+) events, ([\d,]+) distinct keys", text)
        return m and m.groups()

    if not events(from_stdin) or events(from_stdin) != events(from_file):
        fail(f"standard input gave {events(from_stdin)} events/keys, the file {events(from_file)}")
    if chosen(from_stdin, "") != chosen(from_file, ""):
        fail("standard input and the file led to different choices")
    # Malformed input on stdin is refused as from a file.
    p = subprocess.run([demo, "-"], input="timestamp,key\n12,a\nnot a line\n", stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    if p.returncode != 2 or "<stdin>:3" not in p.stderr:
        fail(f"malformed standard input: exit {p.returncode}, stderr {p.stderr!r}")


def svg_ok(path):
    if os.path.getsize(path) == 0:
        fail(f"{path} is empty")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(f"{path} is not well-formed XML: {e}")
    if root.tag not in ("svg", "{http://www.w3.org/2000/svg}svg"):
        fail(f"{path}: root element {root.tag}, not svg")
    if len(list(root.iter())) < 10:
        fail(f"{path} draws almost nothing")


def data_ok(path, hard):
    """The plotted points: numeric, and a hard promise's measured error within its bound at every point."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) != 5:
                return f"{path}: {line!r} has {len(cols)} columns, not 5"
            try:
                rows.append([float(c) for c in cols])
            except ValueError:
                return f"{path}: {line!r} is not numeric"
    if len(rows) < 2:
        return f"{path}: {len(rows)} points, too few to plot"
    for x, measured, bound, memory, exact in rows:
        if hard and measured > bound:
            return f"{path}: promise broken at {x:g} events: measured {measured:g} > {bound:g}"
        if memory <= 0:
            return f"{path}: no memory figure at {x:g} events"
    return None


def check_plots(demo, stream, workdir):
    out_dir = os.path.join(workdir, "plots-" + re.sub(r"\W", "_", os.path.basename(stream)))
    shutil.rmtree(out_dir, ignore_errors=True)
    out = run(demo, ["--no-progress", "--out", out_dir] + stream_args(stream)).stdout
    if "index.html" not in out:
        fail("the report does not name the index.html it wrote")
    index = os.path.join(out_dir, "index.html")
    if not os.path.isfile(index) or os.path.getsize(index) == 0:
        fail(f"{index} missing or empty")
    html = open(index, encoding="utf-8").read()
    try:
        root = ET.fromstring(html.split("\n", 1)[1])  # past <!DOCTYPE html>
    except ET.ParseError as e:
        fail(f"{index} is not well-formed: {e}")
    if root.tag != "html":
        fail(f"{index}: root element {root.tag}")
    if shutil.which("xmllint"):
        files = [index] + [os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith(".svg")]
        p = subprocess.run(["xmllint", "--noout"] + files, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            fail("xmllint: " + p.stderr)
    promises = html.count("<p>Promise: ")
    if promises != len(STRUCTURES):
        fail(f"{index} states {promises} promises, not {len(STRUCTURES)}")
    hard_text = {}
    for name in STRUCTURES:
        for kind in ("error", "memory"):
            svg = os.path.join(out_dir, f"{name}-{kind}.svg")
            if not os.path.isfile(svg):
                fail(f"{svg} not written")
            svg_ok(svg)
            if f'src="{name}-{kind}.svg"' not in html:
                fail(f"{index} does not show {name}-{kind}.svg")
        # index.html says which series are hard promises; their data must hold.
        section = html.split(f'src="{name}-error.svg"')[0].rsplit("<h2>", 1)[1]
        hard_text[name] = "Held at every checkpoint." in section or "BROKEN" in section
        if "BROKEN" in section:
            fail(f"{index}: {name}'s promise is marked broken")
        problem = data_ok(os.path.join(out_dir, f"{name}.dat"), hard_text[name])
        if problem:
            fail(problem)
    if sum(hard_text.values()) < 3:
        fail("fewer than three structures plot a hard promise")


def check_bad(demo, stream, workdir):
    blocker = os.path.join(workdir, "not-a-directory")
    with open(blocker, "w") as f:
        f.write("x")
    cases = [
        (["--bogus"], "unknown option --bogus"),
        (["--limit"], "--limit needs a value"),
        (["--limit", "0"], "--limit needs a positive integer"),
        (["--limit", "many"], "--limit needs a positive integer"),
        (["--window", "-5"], "--window needs a positive integer"),
        (["--capacity", "99999999999999999999999"], "--capacity needs a positive integer"),
        (["--target", "0.7"], "--target needs a probability in (0, 0.5]"),
        (["--target", "x"], "--target needs a probability"),
        (["--delta", "1"], "--delta needs a probability in (0, 1)"),
        (["--eps", "0.3"], "--eps needs 1/n for an integer n"),
        (["--eps", "1/0"], "--eps needs 1/n"),
        (["--buckets", "7", "--window", "30"], "--buckets 7 must divide the rate limiter's window (30)"),
        (["--buckets", "5000", "--window", "5000"], "at most 4096"),
        (["--out", blocker], "is not a writable directory"),
        (["--out", os.path.join(blocker, "sub")], "cannot create"),
        (["--out="], "--out needs a directory"),
        (["--progress=yes"], "--progress takes no value"),
        (["--max-memory", "10"], "--max-memory 10 is below"),
        ([stream, stream], "one CSV file at most"),
        ([os.path.join(workdir, "no-such.csv")], "cannot open"),
    ]
    for args, message in cases:
        full = args if stream in args or args[0].endswith(".csv") else stream_args(stream) + args
        p = run(demo, full, expect=None)
        if p.returncode == 0:
            fail(f"tf-demo {' '.join(full)} succeeded")
        if p.returncode == 1:
            fail(f"tf-demo {' '.join(full)}: exit 1 means a broken promise, not a bad option")
        if message not in p.stderr:
            fail(f"tf-demo {' '.join(full)}: stderr {p.stderr[:300]!r} lacks {message!r}")
    # --help lists every option.
    usage = run(demo, ["--help"]).stdout
    for option in ["--events", "--seed", "--horizon", "--interval", "--ttl", "--target", "--capacity", "--limit",
                   "--window", "--buckets", "--global-limit", "--max-memory", "--count-window", "--eps", "--delta",
                   "--out", "--progress", "--no-progress"]:
        if option not in usage:
            fail(f"--help does not document {option}")


def selftest(workdir):
    path = os.path.join(workdir, "broken.dat")
    with open(path, "w") as f:
        f.write("# a broken promise\n100\t0\t0\t10\t20\n200\t1\t0\t10\t20\n")
    if data_ok(path, True) is None:
        fail("the data check passed a series whose measured error exceeds its promise")
    if data_ok(path, False) is not None:
        fail("the data check failed a statistical series for exceeding its target")
    with open(path, "w") as f:
        f.write("100\t0\t0\t10\t20\n200\t0\t0\t10\t20\n")
    if data_ok(path, True) is not None:
        fail("the data check failed a series that holds its promise")


def main():
    if len(sys.argv) < 2:
        fail(__doc__)
    mode = sys.argv[1]
    workdir = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix="check_demo.")
    os.makedirs(workdir, exist_ok=True)
    if mode == "selftest":
        selftest(workdir)
    else:
        demo, stream = sys.argv[2], sys.argv[3]
        {"options": check_options, "stdin": check_stdin, "plots": lambda d, s: check_plots(d, s, workdir),
         "bad": lambda d, s: check_bad(d, s, workdir)}[mode](demo, stream)
    print(f"check_demo {mode}: ok")


if __name__ == "__main__":
    main()
