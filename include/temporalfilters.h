/**
 * @file temporalfilters.h
 * @brief Umbrella header of libtemporalfilters, an embeddable library of
 * time-aware probabilistic data structures.
 *
 * Include this header, or only the per-structure headers you need:
 *  - temporalfilters/common.h          status codes, errors, options, version, clock
 *  - temporalfilters/recency_sketch.h  RecencySketch: last-seen time, pacing, TTL prefilter
 *  - temporalfilters/age_bloom.h       age-partitioned Bloom filter: among the last N inserts?
 *  - temporalfilters/time_bloom.h      time-limited Bloom filter: inserted within the last T?
 *  - temporalfilters/rate_limiter.h    sliding-window rate limiter: may this key act now?
 *  - temporalfilters/rotating_cuckoo.h rotating cuckoo filter: seen recently (no false positives)?
 *  - temporalfilters/recency_window.h  recency window: how many inserts ago, within (1 + eps)?
 *
 * Build against the installed library with
 * `cc app.c $(pkg-config --cflags --libs temporalfilters)`.
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_H
#define TEMPORALFILTERS_H

#include "temporalfilters/common.h"
#include "temporalfilters/recency_sketch.h"
#include "temporalfilters/age_bloom.h"
#include "temporalfilters/time_bloom.h"
#include "temporalfilters/rate_limiter.h"
#include "temporalfilters/rotating_cuckoo.h"
#include "temporalfilters/recency_window.h"

#endif /* TEMPORALFILTERS_H */
