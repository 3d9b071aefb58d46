#!/usr/bin/env python3
"""Fails unless the library's hot paths that prefetch still do.

    check_prefetch.py OBJDUMP LIBRARY

A prefetch changes no result, so no functional test can see that one was
lost; this one reads the machine code. GCC treats __builtin_prefetch as
having no effect: GCC 12 deleted a loop whose body only prefetched (the
classic Bloom filters' path, under C++'s forward-progress rule) and calls
to functions whose only statement was a prefetch (the rotating cuckoo
filter's and the recency window's batches, by its mod/ref analysis), with
no warning. lib/common/memory.hpp's prefetch_read and prefetch_write keep
them; this test keeps them kept.

It disassembles LIBRARY (OBJDUMP -d -C) and, for each hot path below,
requires a prefetch instruction in at least one function of the path's
first name that is there: the C++ function GCC leaves the prefetch in at
-O1 to -O3 on x86-64 (by a part of its demangled name), else the C entry
point it may have been inlined into (by its exact name); never a helper
that only prefetches, which would still hold its instruction when every
call to it was dropped. Exit status: 0 when
every path prefetches; 1 when a path's functions exist and none
prefetches; 77 (meson: skipped) when no path fails but some path's
functions are not there under these names (another compiler's inlining),
so that the check cannot be made. meson registers it for GCC, optimized,
x86-64 builds without LTO or coverage (tests/meson.build).
"""
import re
import subprocess
import sys

# (what, [substrings of the demangled names of the functions that prefetch])
HOT_PATHS = [
    ("classic age filter, contains", ["bloom::ClassicLayout::contains(", "tf_age_bloom_contains"]),
    ("classic age filter, add_if_absent", ["bloom::ClassicLayout::add_if_absent(", "tf_age_bloom_add_if_absent"]),
    ("classic age filter, batches",
     ["batch_groups<tf::bloom::ClassicLayout::contains_batch", "tf_age_bloom_contains_batch"]),
    ("time-limited filter, contains", ["bloom::TimeBloom::contains(", "tf_time_bloom_contains"]),
    ("time-limited filter, batches",
     ["batch_groups<tf::bloom::TimeBloom::contains_batch", "tf_time_bloom_contains_batch"]),
    ("blocked age filter, contains", ["bloom::BlockedLayout::contains(", "tf_age_bloom_contains"]),
    ("rotating cuckoo filter, contains_batch",
     ["cuckoo::RotatingCuckoo::contains_batch(", "tf_rotating_cuckoo_contains_batch"]),
    ("rotating cuckoo filter, add_if_absent_batch",
     ["cuckoo::RotatingCuckoo::add_if_absent_batch(", "tf_rotating_cuckoo_add_if_absent_batch"]),
    ("recency window, query_batch", ["tf_recency_window_query_batch"]),
    ("recency window, insert_batch", ["tf_recency_window_insert_batch"]),
    ("RecencySketch, batches", ["RecencySketch::for_each_located<", "tf_recency_sketch_query_batch"]),
    ("rate limiter, acquire_batch", ["rate::RateLimiter::acquire_batch(", "tf_rate_limiter_acquire_batch"]),
]

PREFETCH = re.compile(r"\s(prefetch\w*|prfm)\s")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.*)>:$")


def named(function, pattern):
    """A C entry point (tf_...) by its exact name, a C++ function by a part."""
    return function == pattern if pattern.startswith("tf_") else pattern in function


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    objdump, library = sys.argv[1], sys.argv[2]
    try:
        out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "-C", library], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_prefetch: {objdump} failed: {e}", file=sys.stderr)
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
    failures = unknown = 0
    for what, patterns in HOT_PATHS:
        matching = []
        for p in patterns:  # the first name that is there decides
            matching = [n for n in names if named(n, p)]
            if matching:
                break
        if not matching:
            print(f"SKIP {what}: no function named like {patterns} (another compiler's inlining?)")
            unknown += 1
        elif not any(n in prefetching for n in matching):
            print(f"FAIL {what}: no prefetch instruction in {matching} (a prefetch was compiled out)")
            failures += 1
        else:
            print(f"ok   {what}")
    print(f"{len(prefetching)} functions prefetch; {failures} hot paths without a prefetch, {unknown} not found")
    if failures:
        return 1
    return 77 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
