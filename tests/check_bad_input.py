#!/usr/bin/env python3
"""Fails when an exported function of the library has no bad-input test.

usage: check_bad_input.py LIBRARY TESTS_DIR

LIBRARY is the core (libtemporalfilters.so) or a companion library
(libtemporalfilters-redis.so); each has its own list of exceptions below.
Every function the shared library exports (nm -D) must be called in a
bad-input test: a statement of a test source under TESTS_DIR that calls it
and expects an error status (its text, from the call to the end of the
statement, names a TF_ERR_* status: `BAD(tf_x(NULL, ...), TF_ERR_NULL)`,
`assert_int_equal(tf_x(...), TF_ERR_INVALID_ARGUMENT)`, ...). The rest:

  - a function returning nothing (tf_*_free) must be called with NULL;
  - a function the shared checks of tests/util/test_util.c reach through a
    tu_structure table (serialize, deserialize, memory, get_info, ...) is
    covered by those checks when a suite runs them (tu_check_refused_calls,
    tu_check_deserialize_nulls, tu_check_serialize_contract);
  - the few functions that take no input that can be wrong are listed in
    NO_BAD_INPUT_BY_LIBRARY below, under their library, each with its reason.

Prints every uncovered function and exits 1 if there is one.
"""
import os
import re
import subprocess
import sys

# Functions whose every input is valid, with the reason, by library (the
# name of its file up to ".so").
NO_BAD_INPUT_BY_LIBRARY = {
    "libtemporalfilters": {
        "tf_version_string": "no arguments",
        "tf_version_number": "no arguments",
        "tf_last_error_message": "no arguments",
        "tf_clear_last_error": "no arguments",
        "tf_clock_now_ms": "no arguments",
    },
    # The Redis limiter (temporalfilters/redis.h): every function takes a
    # handle, a key, a time or a struct that can be wrong; none is exempt.
    "libtemporalfilters-redis": {},
}


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] == "T" and f[2].startswith("tf_"):
            names.add(f[2].split("@")[0])
    return sorted(names)


def sources(tests_dir):
    for root, dirs, files in os.walk(tests_dir):
        dirs[:] = [d for d in dirs if d not in ("bench", "fuzz", "install", "packaging", "data")]
        for f in files:
            if f.endswith((".c", ".cpp", ".h")):
                path = os.path.join(root, f)
                with open(path, encoding="utf-8") as fh:
                    yield path, re.sub(r"/\*.*?\*/|//[^\n]*", " ", fh.read(), flags=re.S)


def statements_calling(text, name):
    """The text of each statement that calls `name` (from the call to the ';')."""
    for m in re.finditer(r"\b" + re.escape(name) + r"\s*\(", text):
        end = text.find(";", m.end())
        yield text[m.start() : end if end >= 0 else len(text)]


# The shared checks of tests/util/test_util.c and the tf_<noun>_* calls
# each one refuses bad input to, through the tu_<noun> tables of
# tests/util/structures.c (TU_STRUCTURE(noun)).
SHARED_CHECKS = {
    "tu_check_refused_calls": ("serialized_size", "serialize", "memory", "get_info"),
    "tu_check_serialize_contract": ("serialize",),
    "tu_check_deserialize_nulls": ("deserialize",),
}


def shared_check_coverage(srcs):
    """tf_* functions whose bad input a shared check refuses in some suite."""
    nouns = set()
    for p, t in srcs:
        if p.endswith(os.path.join("util", "structures.c")):
            nouns |= set(re.findall(r"^TU_STRUCTURE\((\w+)\);", t, flags=re.M))
    users = [(p, t) for p, t in srcs if os.path.basename(p) not in ("test_util.c", "test_util.h", "structures.c")]
    covered = set()
    for check, calls in SHARED_CHECKS.items():
        for noun in nouns:
            run = False
            for _, t in users:
                for stmt in statements_calling(t, check):
                    # the table named in the call, or passed through a
                    # variable (bloom_wire.c's w->filter->st) by a suite
                    # that names the table
                    if "tu_" + noun in stmt or ("&tu_" not in stmt and any("&tu_" + noun in u for _, u in users)):
                        run = True
            if run:
                covered |= {"tf_%s_%s" % (noun, c) for c in calls}
    return covered


def main():
    lib, tests_dir = sys.argv[1], sys.argv[2]
    name = os.path.basename(lib).split(".so")[0]
    if name not in NO_BAD_INPUT_BY_LIBRARY:
        print(f"{lib}: no list of exceptions for {name} in check_bad_input.py (one of: "
              + ", ".join(sorted(NO_BAD_INPUT_BY_LIBRARY)) + ")")
        return 1
    no_bad_input = NO_BAD_INPUT_BY_LIBRARY[name]
    srcs = list(sources(tests_dir))
    via_shared = shared_check_coverage(srcs)
    missing = []
    for fn in exported(lib):
        if fn in no_bad_input:
            continue
        covered = False
        for _, text in srcs:
            for stmt in statements_calling(text, fn):
                if "TF_ERR_" in stmt or re.match(re.escape(fn) + r"\s*\(\s*NULL\s*\)", stmt):
                    covered = True
                    break
            if covered:
                break
        if not covered and fn in via_shared:
            covered = True
        if not covered:
            missing.append(fn)
    names = exported(lib)
    total = len(names)
    stale = sorted(set(no_bad_input) - set(names))
    if stale:
        print(f"NO_BAD_INPUT_BY_LIBRARY[{name!r}] lists functions the library does not export: " + ", ".join(stale))
        return 1
    if missing:
        print(f"{len(missing)} of {total} exported functions have no bad-input test:")
        for n in missing:
            print("  " + n)
        return 1
    print(f"all {total} exported functions have a bad-input test ({len(no_bad_input)} take no input that can be wrong)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
