// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Tracks a run of consecutive segments that finish in any order: prefix() is
// how many leading segments are all done. Holds at most kMax unfinished
// segments past the prefix, which is why windows are capped at 64.
#ifndef ADAPT2_ENGINE_COMPLETION_WINDOW_H
#define ADAPT2_ENGINE_COMPLETION_WINDOW_H

#include <cstdint>

namespace adapt2 {

class CompletionWindow {
public:
    static constexpr int kMax = 64;

    explicit CompletionWindow(int first = 0) : prefix_(first) {}

    int prefix() const { return prefix_; }
    // `segment` must lie in [prefix(), prefix() + kMax).
    void mark_done(int segment) {
        done_ |= uint64_t{1} << (segment - prefix_);
        while (done_ & 1) {
            done_ >>= 1;
            ++prefix_;
        }
    }

private:
    int prefix_;
    uint64_t done_ = 0;  // bit i: segment prefix_ + i is done
};

}  // namespace adapt2

#endif
