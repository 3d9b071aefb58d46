// TF_NO_FUZZ_COVERAGE: a function built without libFuzzer's coverage
// instrumentation (clang's -fsanitize=fuzzer builds, which compile the
// library's sources too; nothing elsewhere). For code whose branches give a
// fuzzer nothing to steer by (loops over every shard or slot, sums,
// writers of a state already checked, the packed slot reader and the key
// hash called on every operation), where the edge counters and
// comparison tracing cost a fuzz program most of its time
// (docs/reliability.md, "Fuzzing"). The sanitizers still check it.
// The instrumentation is added after inlining, so the attribute acts on
// the function's own out-of-line copy: a copy inlined into an
// instrumented caller is instrumented there.
#ifndef TF_LIB_COMMON_COVERAGE_HPP
#define TF_LIB_COMMON_COVERAGE_HPP

#if defined(__clang__)
#define TF_NO_FUZZ_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define TF_NO_FUZZ_COVERAGE
#endif

#endif
