#!/usr/bin/env python3
"""Writes the C program a Markdown page shows to a .c file.

    extract_example.py PAGE.md OUT.c

The program is the page's one fenced C block (```c) that defines main();
tests/docs/meson.build compiles it against the library and runs it, so that
an example a reader copies from the documentation builds and works. Exits 1
when the page holds no such block or more than one (a page with several
would need a way to name them; none has one today).
"""
import re
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    page, out = sys.argv[1], sys.argv[2]
    with open(page, encoding="utf-8") as f:
        text = f.read()
    blocks = [b for b in re.findall(r"^```c\n(.*?)^```", text, re.S | re.M) if re.search(r"\bint main\s*\(", b)]
    if len(blocks) != 1:
        print(f"{page}: {len(blocks)} C blocks define main(), expected exactly 1", file=sys.stderr)
        return 1
    with open(out, "w", encoding="utf-8") as f:
        f.write(f"/* Extracted from {page} by tests/docs/extract_example.py: edit the page, not this file. */\n")
        f.write(blocks[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
