/*
 * temporalfilters.h - umbrella header of libtemporalfilters, an embeddable
 * library of time-aware probabilistic data structures.
 *
 * Include this header, or only the per-structure headers you need:
 *   temporalfilters/common.h          status codes, errors, version, clock
 *   temporalfilters/recency_sketch.h  RecencySketch: last-seen time, pacing, TTL prefilter
 */
#ifndef TEMPORALFILTERS_H
#define TEMPORALFILTERS_H

#include "temporalfilters/common.h"
#include "temporalfilters/recency_sketch.h"

#endif /* TEMPORALFILTERS_H */
