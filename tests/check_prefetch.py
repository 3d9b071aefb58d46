#!/usr/bin/env python3
"""Fails unless the library's hot paths that prefetch still do.

    check_prefetch.py LIBRARY

A prefetch changes no result, so no functional test can see that one was
lost; this one reads the machine code. GCC treats __builtin_prefetch as
having no effect, and under C++'s forward-progress rule it deleted every
loop whose body only prefetched once that loop was inlined (the classic
Bloom filters' path, the rotating cuckoo filter's and the recency window's
batches), with no warning. lib/common/memory.hpp's prefetch_read and
prefetch_write keep them; this test keeps them kept.

It disassembles LIBRARY (objdump -d -C) and, for each hot path below,
requires a prefetch instruction in at least one function whose demangled
name contains one of the path's names. The names are those GCC gives the
functions that hold the prefetches at -O1 and above on x86-64 (after its
inlining), so meson registers this test only for GCC, an optimized build
and x86-64 (tests/meson.build); elsewhere the functions are named and
inlined differently.
"""
import re
import subprocess
import sys

# (what, [substrings of the demangled names of the functions that prefetch])
HOT_PATHS = [
    ("classic age filter, contains", ["bloom::ClassicLayout::contains("]),
    ("classic age filter, add_if_absent", ["bloom::ClassicLayout::add_if_absent("]),
    ("classic age filter, batches", ["batch_groups<tf::bloom::ClassicLayout::contains_batch"]),
    ("time-limited filter, contains", ["bloom::TimeBloom::contains("]),
    ("time-limited filter, batches", ["batch_groups<tf::bloom::TimeBloom::contains_batch"]),
    ("blocked age filter, contains", ["bloom::BlockedLayout::contains("]),
    ("rotating cuckoo filter, contains_batch", ["cuckoo::RotatingCuckoo::contains_batch("]),
    ("rotating cuckoo filter, add_if_absent_batch", ["cuckoo::RotatingCuckoo::add_if_absent_batch("]),
    ("recency window, query_batch", ["tf_recency_window_query_batch"]),
    ("recency window, insert_batch", ["tf_recency_window_insert_batch"]),
    ("RecencySketch, batches", ["RecencySketch::for_each_located<"]),
    ("rate limiter, acquire_batch", ["rate::RateLimiter::acquire_batch("]),
]

PREFETCH = re.compile(r"\s(prefetch\w*|prfm)\s")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.*)>:$")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", sys.argv[1]], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_prefetch: objdump failed: {e}", file=sys.stderr)
        return 1
    prefetching = set()
    names = []
    current = None
    for line in out.splitlines():
        m = FUNCTION.match(line)
        if m:
            current = m.group(1)
            names.append(current)
        elif current is not None and PREFETCH.search(line):
            prefetching.add(current)
    failures = 0
    for what, patterns in HOT_PATHS:
        matching = [n for n in names if any(p in n for p in patterns)]
        if not matching:
            print(f"FAIL {what}: no function named like {patterns} (renamed or inlined elsewhere? update this test)")
            failures += 1
        elif not any(n in prefetching for n in matching):
            print(f"FAIL {what}: no prefetch instruction in {matching} (a prefetch was compiled out)")
            failures += 1
        else:
            print(f"ok   {what}")
    print(f"{len(prefetching)} functions prefetch; {failures} hot paths without a prefetch")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
