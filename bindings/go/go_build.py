#!/usr/bin/env python3
"""Builds the Go binding for Meson: stages a Go module and runs the go tool.

The module (module path "temporalfilters") is assembled in a directory of the
build tree, since the SWIG output is generated there:

    <stage>/go.mod, *.go            the idiomatic package (bindings/go)
    <stage>/internal/native/        the SWIG-generated package (Go + C wrapper)
    <stage>/cmd/<name>/main.go      a main package (an example), if any

then, with the go tool confined to the build tree (GOCACHE and GOPATH
inside it, GOPROXY=off, no network, no user configuration), it checks the
hand-written sources (gofmt, go vet) and builds either the test binary
(go test -c, optionally -race) or a program (go build). cgo compiles the
SWIG wrapper with the project's include directories and warnings, and links
the package against the libtemporalfilters of this build, with an rpath to
it. In a sanitized build everything is built with go -asan and CC set to the
library's compiler by name (cgo code gets -fsanitize=address from the go
tool, plus -fsanitize=undefined and --param=asan-stack=0 from here, see
go_env), so that the binary and the library share one ASan runtime.
"""
import argparse
import os
import shutil
import subprocess
import sys


def log(msg):
    print('go_build.py: ' + msg, file=sys.stderr)


def go_env(args):
    env = dict(os.environ)
    for var in list(env):
        # Nothing from the caller's Go or cgo configuration leaks in.
        if var.startswith(('GO', 'CGO_')):
            del env[var]
    # Warnings on, as for the library, less two that only generated code
    # trips: cgo's export stub of the panic function has an unused parameter,
    # and the shared interface's benchmark loop a write-only volatile sink.
    cflags = ['-O2', '-g', '-Wall', '-Wextra', '-Wno-unused-parameter', '-Wno-unused-but-set-variable']
    if args.werror:
        cflags.append('-Werror')
    cflags += ['-I' + d for d in args.include]
    ldflags = ['-L' + args.libdir, '-Wl,-rpath,' + args.libdir]
    if 'address' in args.sanitize:
        # go -asan adds -fsanitize=address itself; UBSan as in the library.
        # A failed call panics from C (temporalfilters_go.i): Go then drops
        # the C frames of the call without their epilogues, which would
        # leave their stack redzones poisoned; so no stack instrumentation
        # in the cgo-compiled code (heap and globals stay checked, and the
        # library keeps its full instrumentation).
        no_stack = ['-mllvm', '-asan-stack=0'] if args.cc == 'clang' else ['--param=asan-stack=0']
        cflags += ['-fsanitize=undefined', '-fno-omit-frame-pointer'] + no_stack
        ldflags += ['-fsanitize=undefined']
        if args.cc == 'clang':
            # clang links the sanitizer runtimes into the executable; the
            # library is C++ (vptr checks), so the C++ parts too.
            ldflags += ['-fsanitize-link-c++-runtime', '-lstdc++']
    env.update({
        'GO111MODULE': 'on',
        'GOENV': 'off',
        'GOFLAGS': '-mod=mod -buildvcs=false',
        'GOPROXY': 'off',
        'GOSUMDB': 'off',
        'GOTOOLCHAIN': 'local',
        'GOCACHE': os.path.join(args.cache, 'build'),
        'GOPATH': os.path.join(args.cache, 'path'),
        'CGO_ENABLED': '1',
        # The compiler of the library, by the name go -asan recognizes (it
        # refuses "cc"): then the Go binary and the library share one ASan
        # runtime (gcc: libasan.so, first in the binary's needed list).
        'CC': args.cc,
        'CGO_CFLAGS': ' '.join(cflags),
        'CGO_LDFLAGS': ' '.join(ldflags),
    })
    return env


def stage(args):
    if os.path.isdir(args.stage):
        shutil.rmtree(args.stage)
    native = os.path.join(args.stage, 'internal', 'native')
    os.makedirs(native)
    for f in args.package:
        shutil.copy(f, args.stage)
    for f in args.native:
        shutil.copy(f, native)
    if args.main:
        name, path = args.main
        d = os.path.join(args.stage, 'cmd', name)
        os.makedirs(d)
        shutil.copy(path, os.path.join(d, 'main.go'))


def run(cmd, env, cwd):
    r = subprocess.run(cmd, env=env, cwd=cwd)
    if r.returncode != 0:
        log('failed (exit status %d): %s\n  in %s with\n  %s' % (
            r.returncode, ' '.join(cmd), cwd,
            '\n  '.join('%s=%s' % (k, env[k]) for k in sorted(env) if k.startswith(('GO', 'CGO_', 'CC')))))
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--go', required=True, help='the go tool')
    ap.add_argument('--gofmt', help='gofmt, to check the hand-written sources')
    ap.add_argument('--stage-base', default='.', help='directory that holds the stage directories')
    ap.add_argument('--stage', required=True, help='directory to assemble the module in (wiped)')
    ap.add_argument('--cache', required=True, help='directory for GOCACHE and GOPATH')
    ap.add_argument('--include', action='append', default=[], help='C include directory (repeatable)')
    ap.add_argument('--libdir', required=True, help='directory of libtemporalfilters.so')
    ap.add_argument('--native', nargs='+', required=True, help='the SWIG output (.go and _wrap.c)')
    ap.add_argument('--package', nargs='+', required=True, help='go.mod and the idiomatic package sources')
    ap.add_argument('--main', nargs=2, metavar=('NAME', 'FILE'), help='a main package to build')
    ap.add_argument('--sanitize', default='none', help="Meson's b_sanitize")
    ap.add_argument('--cc', default='gcc', choices=['gcc', 'clang'], help="the C compiler (Meson's compiler id)")
    ap.add_argument('--werror', action='store_true', help='C warnings and unformatted Go sources are errors')
    ap.add_argument('--race', action='store_true', help='build with the race detector')
    ap.add_argument('--output', required=True, help='the binary to write')
    args = ap.parse_args()
    args.stage = os.path.join(args.stage_base, args.stage)

    stage(args)
    env = go_env(args)
    flags = ['-asan'] if 'address' in args.sanitize else []
    if args.race:
        flags.append('-race')
    output = os.path.abspath(args.output)

    mine = [f for f in args.package if f.endswith('.go')] + ([args.main[1]] if args.main else [])
    if args.gofmt:
        r = subprocess.run([args.gofmt, '-l'] + mine, env=env, stdout=subprocess.PIPE, universal_newlines=True)
        if r.returncode != 0 or r.stdout.strip():
            log('not gofmt-formatted (run gofmt -w on them):\n' + r.stdout)
            if args.werror or r.returncode != 0:
                sys.exit(1)

    if args.main:
        pkg = './cmd/' + args.main[0]
        run([args.go, 'vet', pkg], env, args.stage)
        run([args.go, 'build'] + flags + ['-o', output, pkg], env, args.stage)
    else:
        # vet the hand-written package and its tests (not the SWIG output).
        if not args.race:
            run([args.go, 'vet', '.'], env, args.stage)
        run([args.go, 'test', '-c'] + flags + ['-o', output, '.'], env, args.stage)


if __name__ == '__main__':
    main()
