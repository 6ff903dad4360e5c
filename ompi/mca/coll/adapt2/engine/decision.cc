#include "decision.h"

namespace adapt2 {

TreeSpec tree_for_algorithm(int algorithm, const adapt2_bcast_settings_t &s) {
    switch (algorithm) {
    case ADAPT2_ALG_IN_ORDER_BINOMIAL: return {TreeShape::in_order_binomial, 0};
    case ADAPT2_ALG_BINARY: return {TreeShape::binary, 0};
    case ADAPT2_ALG_KARY: return {TreeShape::kary, s.fanout};
    case ADAPT2_ALG_KNOMIAL: return {TreeShape::knomial, s.radix};
    case ADAPT2_ALG_CHAIN: return {TreeShape::chain, s.chains};
    case ADAPT2_ALG_PIPELINE: return {TreeShape::pipeline, 0};
    case ADAPT2_ALG_FLAT: return {TreeShape::flat, 0};
    case ADAPT2_ALG_BINOMIAL:
    default: return {TreeShape::binomial, 0};
    }
}

// Default rules, measured with perf/compare.py on one host (README, "Choosing
// the defaults"): latency-bound messages take the shallow binomial tree in one
// segment; larger ones a segmented binomial tree (the segment size comes from
// coll_adapt2_bcast_segment_size), which keeps the root's outgoing volume at
// log2(p) copies while segments overlap down the levels.
BcastPlan plan_bcast(const adapt2_bcast_settings_t &s, size_t bytes, int comm_size) {
    (void)comm_size;
    if (s.algorithm != ADAPT2_ALG_AUTO) return {tree_for_algorithm(s.algorithm, s), s.segment_size};
    const size_t small = 8192;
    if (bytes <= small) return {{TreeShape::binomial, 0}, 0};
    return {{TreeShape::binomial, 0}, s.segment_size};
}

}  // namespace adapt2
