#!/usr/bin/env python3
"""Runs a program built by go_build.py: go_run.py BINARY [ARGS...].

Meson 1.0's test() and benchmark() take only executables they know, not the
output of a custom target, so the Go binaries are started through this.
"""
import os
import sys

if len(sys.argv) < 2:
    sys.exit('usage: go_run.py BINARY [ARGS...]')
binary = os.path.abspath(sys.argv[1])
sys.stdout.flush()
os.execv(binary, [binary] + sys.argv[2:])
