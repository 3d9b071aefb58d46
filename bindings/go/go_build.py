#!/usr/bin/env python3
"""Builds the Go binding for Meson: stages the Go modules and runs the go tool.

The module temporalfilters.org/go/temporalfilters (bindings/go) and the
examples' module (examples/go, which requires it with a replace to
../../bindings/go) are copied into a directory of the build tree in the
layout of the source tree, with the SWIG input the build generated from
the current .i files (gen_swig.py --output) in place of the committed one:

    <stage>/bindings/go/go.mod, *.go          the idiomatic package
    <stage>/bindings/go/internal/native/      native.swig and cgo.go
    <stage>/examples/go/go.mod, <name>/main.go   the examples, if any
    <stage>/pkgconfig/temporalfilters.pc      this build's library

then, with the go tool confined to the build tree (GOCACHE and GOPATH
inside it, GOPROXY=off, no network, no user configuration), it builds
either the test binary (go test -c, optionally -race) or an example
(go build), or, with --lint (the test go_lint of the suite 'go'), checks
every hand-written source, the package, its tests and the examples: gofmt
must list nothing and go vet must pass.

The go tool runs SWIG on native.swig itself and takes the C flags from
`#cgo pkg-config: temporalfilters` (internal/native/cgo.go), as in a
user's build; here pkg-config reads only <stage>/pkgconfig, whose
temporalfilters.pc points at this build's headers and library, so an
installed copy of the library is never picked up. CGO_CFLAGS adds the
project's warnings, CGO_LDFLAGS an rpath to the build's library. In a
sanitized build everything is built with go -asan and CC set to the
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
        # Nothing from the caller's Go, cgo or pkg-config configuration
        # leaks in.
        if var.startswith(('GO', 'CGO_', 'PKG_CONFIG')):
            del env[var]
    # Warnings on, as for the library, less two that only generated code
    # trips: cgo's export stub of the panic function has an unused parameter,
    # and the shared interface's benchmark loop a write-only volatile sink.
    cflags = ['-O2', '-g', '-Wall', '-Wextra', '-Wno-unused-parameter', '-Wno-unused-but-set-variable']
    if args.werror:
        cflags.append('-Werror')
    ldflags = ['-L' + args.libdir, '-Wl,-rpath,' + args.libdir]
    if args.redis_libdir:
        ldflags.append('-Wl,-rpath,' + args.redis_libdir)
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
        # pkg-config finds this build's temporalfilters.pc only (stage()).
        'PKG_CONFIG_LIBDIR': os.path.join(args.stage, 'pkgconfig'),
    })
    return env


def stage(args):
    if os.path.isdir(args.stage):
        shutil.rmtree(args.stage)
    module = module_dir(args)
    native = os.path.join(module, 'internal', 'native')
    os.makedirs(native)
    for f in args.package:
        shutil.copy(f, module)
    for f in args.native:
        shutil.copy(f, native)
    # internal/bridge: the root package's errors for the sub-packages
    # (always: the root package sets them).
    src = os.path.dirname(os.path.abspath([f for f in args.package if f.endswith('go.mod')][0]))
    shutil.copytree(os.path.join(src, 'internal', 'bridge'), os.path.join(module, 'internal', 'bridge'))
    if args.redis_libdir:
        # the Redis limiter's sub-package (its committed redisnative.swig,
        # which go_redis_swig_fresh checks) and its library's .pc
        shutil.copytree(os.path.join(src, 'redis'), os.path.join(module, 'redis'))
    found = mains(args)
    if found:
        examples = examples_dir(args)
        os.makedirs(examples)
        shutil.copy(args.examples_mod, examples)
        for name, path in found:
            os.makedirs(os.path.join(examples, name))
            shutil.copy(path, os.path.join(examples, name, 'main.go'))
    pc_dir = os.path.join(args.stage, 'pkgconfig')
    os.makedirs(pc_dir)
    with open(os.path.join(pc_dir, 'temporalfilters.pc'), 'w') as f:
        f.write('Name: temporalfilters\n'
                'Description: libtemporalfilters of this build tree (go_build.py)\n'
                'Version: %s\n'
                'Cflags: %s\n'
                'Libs: -L%s -ltemporalfilters\n' % (args.version, ' '.join('-I' + d for d in args.include),
                                                   args.libdir))
    if args.redis_libdir:
        with open(os.path.join(pc_dir, 'temporalfilters-redis.pc'), 'w') as f:
            f.write('Name: temporalfilters-redis\n'
                    'Description: libtemporalfilters-redis of this build tree (go_build.py)\n'
                    'Version: %s\n'
                    'Requires: temporalfilters\n'
                    'Libs: -L%s -ltemporalfilters-redis\n' % (args.version, args.redis_libdir))


def module_dir(args):
    """The staged module temporalfilters.org/go/temporalfilters."""
    return os.path.join(args.stage, 'bindings', 'go')


def examples_dir(args):
    """The staged examples' module (its go.mod replaces the module with ../../bindings/go)."""
    return os.path.join(args.stage, 'examples', 'go')


def mains(args):
    """The main packages to stage: (name, main.go) pairs."""
    found = [tuple(args.main)] if args.main else []
    for path in args.examples:
        found.append((os.path.basename(os.path.dirname(path)), path))
    if found and not args.examples_mod:
        sys.exit('go_build.py: --examples-mod (examples/go/go.mod) is needed with --main or --examples')
    return found


def run(cmd, env, cwd, exit_on_failure=True):
    r = subprocess.run(cmd, env=env, cwd=cwd)
    if r.returncode != 0 and exit_on_failure:
        log('failed (exit status %d): %s\n  in %s with\n  %s' % (
            r.returncode, ' '.join(cmd), cwd,
            '\n  '.join('%s=%s' % (k, env[k]) for k in sorted(env) if k.startswith(('GO', 'CGO_', 'CC', 'PKG_CONFIG')))))
        sys.exit(1)
    return r.returncode == 0


def stage_consumer(args, env, module):
    """Copies the consumer module (tests/install/go: go.mod, main.go) into
    <stage>/consumer with its replace pointed at module; returns its
    directory."""
    d = os.path.join(args.stage, 'consumer')
    os.makedirs(d)
    for f in ('go.mod', 'main.go'):
        shutil.copy(os.path.join(args.consumer, f), d)
    run([args.go, 'mod', 'edit', '-replace', 'temporalfilters.org/go/temporalfilters=' + module], env, d)
    return d


def export_check(args, env, flags):
    """The test go_export: the module as a user gets it. Exports it
    (scripts/export_go_module.sh, the committed native.swig), builds the
    consumer module of tests/install/go against the export and runs it,
    then the same from a `go mod vendor` copy (here against this build's
    library; tests/install/go/run.sh does it against the installed one)."""
    export = os.path.join(args.stage, 'export')
    run(['bash', args.export_script, export], env, args.stage)
    d = stage_consumer(args, env, export)
    print('go build of the consumer (replace => the exported module)', flush=True)
    run([args.go, 'build'] + flags + ['-o', 'installcheck', '.'], env, d)
    run([os.path.join(d, 'installcheck'), args.version], env, d)
    print('go mod vendor, go build -mod=vendor', flush=True)
    run([args.go, 'mod', 'vendor'], env, d)
    swig = os.path.join(d, 'vendor', 'temporalfilters.org', 'go', 'temporalfilters', 'internal', 'native',
                        'native.swig')
    if not os.path.isfile(swig):
        sys.exit('go_build.py: go mod vendor did not copy internal/native/native.swig')
    run([args.go, 'build', '-mod=vendor'] + flags + ['-o', 'installcheck-vendored', '.'], env, d)
    run([os.path.join(d, 'installcheck-vendored'), args.version], env, d)
    print('the exported and the vendored module build and run')


def lint(args, env):
    """gofmt -l and go vet over the package, its tests and the examples;
    exits 1 after reporting every finding."""
    sources = [f for f in args.package if f.endswith('.go')] + [path for _, path in mains(args)]
    if args.consumer:
        sources.append(os.path.join(args.consumer, 'main.go'))
    ok = True
    r = subprocess.run([args.gofmt or 'gofmt', '-l'] + sources, env=env, stdout=subprocess.PIPE,
                       universal_newlines=True)
    print('gofmt -l: %d files checked' % len(sources))
    if r.returncode != 0 or r.stdout.strip():
        log('not gofmt-formatted (run gofmt -w on them):\n' + r.stdout)
        ok = False
    # the hand-written package with its tests (not the SWIG output of
    # internal/native), and every example in the examples' own module
    print('go vet . (the module)')
    ok = run([args.go, 'vet', '.'], env, module_dir(args), exit_on_failure=False) and ok
    names = ['./' + name for name, _ in mains(args)]
    if names:
        print('go vet ' + ' '.join(names) + ' (the examples)')
        ok = run([args.go, 'vet'] + names, env, examples_dir(args), exit_on_failure=False) and ok
    if args.consumer:
        print('go vet (the installed-copy consumer, tests/install/go)')
        d = stage_consumer(args, env, module_dir(args))
        ok = run([args.go, 'vet', '.'], env, d, exit_on_failure=False) and ok
    if not ok:
        sys.exit(1)
    print('gofmt and go vet: clean')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--go', required=True, help='the go tool')
    ap.add_argument('--gofmt', help='gofmt, for --lint (default: the one on PATH)')
    ap.add_argument('--stage-base', default='.', help='directory that holds the stage directories')
    ap.add_argument('--stage', required=True, help='directory to assemble the module in (wiped)')
    ap.add_argument('--cache', required=True, help='directory for GOCACHE and GOPATH')
    ap.add_argument('--include', action='append', default=[], help='C include directory (repeatable)')
    ap.add_argument('--libdir', required=True, help='directory of libtemporalfilters.so')
    ap.add_argument('--native', nargs='+', required=True,
                    help='the files of internal/native: native.swig (generated) and cgo.go')
    ap.add_argument('--version', default='0', help="the library's version (for the staged .pc)")
    ap.add_argument('--package', nargs='+', required=True, help='go.mod and the idiomatic package sources')
    ap.add_argument('--main', nargs=2, metavar=('NAME', 'FILE'), help='a main package to build')
    ap.add_argument('--examples', nargs='*', default=[], help='main.go of every example (for --lint)')
    ap.add_argument('--examples-mod', help="the examples' go.mod (examples/go/go.mod)")
    ap.add_argument('--consumer', help='the consumer module of the installed-copy proof (tests/install/go)')
    ap.add_argument('--lint', action='store_true', help='check with gofmt and go vet instead of building')
    ap.add_argument('--export-check', metavar='EXPORT_SCRIPT', dest='export_script',
                    help='build the consumer against the module exported by EXPORT_SCRIPT, and vendored')
    ap.add_argument('--sanitize', default='none', help="Meson's b_sanitize")
    ap.add_argument('--cc', default='gcc', choices=['gcc', 'clang'], help="the C compiler (Meson's compiler id)")
    ap.add_argument('--werror', action='store_true', help='C warnings are errors')
    ap.add_argument('--race', action='store_true', help='build with the race detector')
    ap.add_argument('--output', help='the binary to write (required unless --lint)')
    ap.add_argument('--redis-libdir', help='directory of libtemporalfilters-redis.so: stage the sub-package redis')
    ap.add_argument('--test-package', default='.', help="the package whose test binary to build (e.g. ./redis)")
    args = ap.parse_args()
    args.stage = os.path.join(args.stage_base, args.stage)

    stage(args)
    env = go_env(args)
    if args.lint:
        lint(args, env)
        return
    flags = ['-asan'] if 'address' in args.sanitize else []
    if args.export_script:
        if not args.consumer:
            ap.error('--export-check needs --consumer')
        export_check(args, env, flags)
        return
    if not args.output:
        ap.error('--output is required')
    if args.race:
        flags.append('-race')
    output = os.path.abspath(args.output)
    if args.main:
        run([args.go, 'build'] + flags + ['-o', output, './' + args.main[0]], env, examples_dir(args))
    else:
        run([args.go, 'test', '-c'] + flags + ['-o', output, args.test_package], env, module_dir(args))


if __name__ == '__main__':
    main()
