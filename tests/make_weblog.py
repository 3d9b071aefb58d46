#!/usr/bin/env python3
"""Writes a web server's access log, as tf-demo reads it, to stdout:

    tests/make_weblog.py > tests/data/weblog.csv
    tests/make_weblog.py --check tests/data/weblog.csv   (exit 1 if it differs)

One `timestamp,client` line per request (Unix seconds, the client's IPv4
address, documentation ranges only), about three hours of a small site:
regular visitors with Zipf-like popularity arriving as a Poisson stream, a
crawler that hammers for two minutes, an address scan of one request per
new client, a quiet gap longer than every window the demo picks, and lines
a few seconds out of order (several workers writing one log). Deterministic:
the same seed writes the same file (the test example_demo_weblog_generated
checks that the committed file is this program's output).
"""
import random
import sys


def weblog(seed: int) -> str:
    rng = random.Random(seed)
    start = 1700000000  # 2023-11-14 22:13:20 UTC
    end = start + 3 * 3600

    visitors = [f"198.51.100.{i}" for i in range(1, 201)] + [f"203.0.113.{i}" for i in range(1, 101)]
    weights = [1.0 / (rank + 1) for rank in range(len(visitors))]
    crawler = "192.0.2.77"
    quiet = (start + 5400, start + 5400 + 1500)  # 25 minutes without a request
    crawl = (start + 2400, start + 2520)          # two minutes at ~3 requests/s
    scan = (start + 8000, start + 8060)           # a /24 swept in a minute

    events = []
    t = float(start)
    while True:
        t += rng.expovariate(0.3)  # ~0.3 requests per second on average
        if t >= end:
            break
        if quiet[0] <= t < quiet[1]:
            continue
        events.append((int(t), rng.choices(visitors, weights)[0]))
    t = float(crawl[0])
    while t < crawl[1]:
        events.append((int(t), crawler))
        t += rng.uniform(0.1, 0.6)
    for i in range(1, 255):
        events.append((scan[0] + (i * (scan[1] - scan[0])) // 255, f"192.0.2.{i}" if i != 77 else "192.0.2.254"))
    events.sort()
    # Workers flush their lines a little late: swap some neighbours.
    for i in range(len(events) - 1):
        if rng.random() < 0.02:
            events[i], events[i + 1] = events[i + 1], events[i]

    return "timestamp,client\n" + "".join(f"{ts},{client}\n" for ts, client in events)


def main() -> int:
    args = sys.argv[1:]
    check = None
    if len(args) >= 2 and args[0] == "--check":
        check = args[1]
        args = args[2:]
    text = weblog(int(args[0]) if args else 17)
    if check is None:
        sys.stdout.write(text)
        return 0
    with open(check, encoding="ascii") as f:
        if f.read() != text:
            print(f"make_weblog: {check} is not this program's output; regenerate it", file=sys.stderr)
            return 1
    print(f"make_weblog: {check} is this program's output ({text.count(chr(10)) - 1} requests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
