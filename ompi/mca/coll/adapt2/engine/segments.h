// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Cuts a message of `total` packed bytes into segments of `segment` bytes
// (the last one shorter). Segment sizes are rounded to whole `unit`s (the
// element size) so reductions never split an element.
#ifndef ADAPT2_ENGINE_SEGMENTS_H
#define ADAPT2_ENGINE_SEGMENTS_H

#include <climits>
#include <cstddef>

namespace adapt2 {

class Segments {
public:
    // A `segment` of 0 means "do not segment". Segments never exceed INT_MAX
    // bytes, the largest count a PML call takes.
    Segments(size_t total, size_t segment, size_t unit = 1) : total_(total) {
        if (unit == 0) unit = 1;
        size_t cap = static_cast<size_t>(INT_MAX) / unit * unit;
        if (segment == 0 || segment > cap) segment = cap;
        segment = segment / unit * unit;
        size_ = segment ? segment : unit;
        // Keep the segment count within an int by growing tiny segments.
        size_t min_size = total / INT_MAX + 1;
        if (size_ < min_size) size_ = (min_size + unit - 1) / unit * unit;
        count_ = total == 0 ? 0 : static_cast<int>((total + size_ - 1) / size_);
    }

    int count() const { return count_; }
    size_t total() const { return total_; }
    size_t max_bytes() const { return count_ > 1 ? size_ : total_; }
    size_t offset(int s) const { return static_cast<size_t>(s) * size_; }
    size_t bytes(int s) const { return s + 1 < count_ ? size_ : total_ - offset(s); }
    // Bytes of segments [first, end).
    size_t span_bytes(int first, int end) const { return (end >= count_ ? total_ : offset(end)) - offset(first); }

private:
    size_t total_;
    size_t size_;
    int count_;
};

}  // namespace adapt2

#endif
