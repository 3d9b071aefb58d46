// The allocation hook of test_alloc_failure.c, reached from C. It makes the
// library's one test counter (tf::testing::allocations_left in
// lib/common/memory.hpp) see every allocation: the library asks it itself
// before each table (ZeroedBlock) and each of the rate limiter's rings and
// key tables, and this file replaces the global operator new (every form)
// so that the standard containers, the handles and every other object the
// library makes ask it too (tests/util/replace_new.hpp, shared with the
// Redis tests' byte counter).
// A hidden symbol: this program links the library's internal archive.
#include <cstdint>
#include <new>

#include "common/memory.hpp"
#include "replace_new.hpp"

void *tu_new_allocate(std::size_t size) { return tf::allocation_refused(size) ? nullptr : tu_replace_new::plain(size); }

void *tu_new_allocate_aligned(std::size_t size, std::align_val_t align) {
    return tf::allocation_refused(size) ? nullptr : tu_replace_new::aligned(size, align);
}

// While n >= 0, n more allocations succeed and every later one fails; -1
// turns the hook off. Arming it (n >= 0) clears the counts below.
extern "C" void ah_refuse_after(long n) {
    if (n >= 0) {
        tf::testing::refused.store(0);
        tf::testing::bytes.store(0);
    }
    tf::testing::allocations_left.store(n);
}

// How many more allocations succeed now (-1: off).
extern "C" long ah_left(void) { return tf::testing::allocations_left.load(); }

// Allocations refused since the hook was armed.
extern "C" long ah_refused(void) { return tf::testing::refused.load(); }

// Bytes asked for since the hook was armed (refused ones included).
extern "C" uint64_t ah_bytes(void) { return tf::testing::bytes.load(); }

// Turns the hook off for a moment (the test's own work between calls) and
// returns what ah_resume() gives back; the counts are kept.
extern "C" long ah_pause(void) { return tf::testing::allocations_left.exchange(-1); }
extern "C" void ah_resume(long left) { tf::testing::allocations_left.store(left); }
