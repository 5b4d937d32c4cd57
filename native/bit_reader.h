// A bounded MSB-first bit reader over a byte buffer, for the codec headers read in sniff_*.cc:
// reading past the end sets `bad` and yields zeros, so every read is checked once, at the end.
#pragma once

#include <cstddef>
#include <cstdint>

namespace matte {

struct Bits {
  const uint8_t *data;
  size_t size, bit = 0;
  bool bad = false;
  /** n bits, n <= 64. */
  uint64_t read(int n) {
    uint64_t value = 0;
    for (int i = 0; i < n; i++) {
      if (bit / 8 >= size) {
        bad = true;
        return 0;
      }
      value = (value << 1) | ((data[bit / 8] >> (7 - bit % 8)) & 1);
      bit++;
    }
    return value;
  }
  /** AV1's uvlc(): 32 or more leading zeros read as 2^32 - 1. */
  uint64_t uvlc() {
    int zeros = 0;
    while (!bad && !read(1)) zeros++;
    return zeros >= 32 ? (uint64_t(1) << 32) - 1 : read(zeros) + (uint64_t(1) << zeros) - 1;
  }
  /** H.265's ue(v): at most 31 leading zeros (a value below 2^32 - 1), else bad. */
  uint64_t ue() {
    int zeros = 0;
    while (!bad && !read(1))
      if (++zeros > 31) bad = true;
    return bad ? 0 : read(zeros) + (uint64_t(1) << zeros) - 1;
  }
};

}  // namespace matte
