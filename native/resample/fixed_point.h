// What reduce.cc and enlarge.cc share: libvips 8.14's fixed-point conventions for 8-bit RGB
// (coefficient tables every 1/64 of a pixel, 12-bit coefficients), the table entry a sample
// position takes, taps packed in pairs for madd, a row copied with its edge pixels repeated, and
// which vector paths this CPU has.
#pragma once

#include <vips/vips.h>

#include <cstdint>
#include <cstring>

namespace matte::resample {

constexpr int kBands = 3;
constexpr int kTableSteps = VIPS_TRANSFORM_SCALE;  // coefficient tables every 1/64 of a pixel
constexpr int kShift = VIPS_INTERPOLATE_SHIFT;     // 12-bit coefficients

/** The table entry of a sample at `position`: rounded to the nearest 1/64, as libvips rounds it. */
inline int table_step(double position) {
  return ((int(position * kTableSteps * 2) & (kTableSteps * 2 - 1)) + 1) >> 1;
}

/** Two taps as one 32-bit lane of int16 pairs, for madd: `low` in the low 16 bits. */
inline int32_t tap_pair(int low, int high) {
  return int32_t(uint32_t(uint16_t(int16_t(low))) | uint32_t(uint16_t(int16_t(high))) << 16);
}

/**
 * Pixels [start, end) of a row into `out`, those outside [lo, hi] (what the region holds) the
 * nearest of lo and hi repeated; `row` is the address of the row's pixel 0.
 */
inline void pad_row(const uint8_t *row, int lo, int hi, int start, int end, uint8_t *out) {
  const int inside_from = start > lo ? start : lo, inside_to = end < hi + 1 ? end : hi + 1;
  for (int p = start; p < inside_from; p++) std::memcpy(out + size_t(p - start) * kBands, row + size_t(lo) * kBands, kBands);
  std::memcpy(out + size_t(inside_from - start) * kBands, row + size_t(inside_from) * kBands,
              size_t(inside_to - inside_from) * kBands);
  for (int p = inside_to; p < end; p++) std::memcpy(out + size_t(p - start) * kBands, row + size_t(hi) * kBands, kBands);
}

#if defined(__x86_64__)
inline const bool has_ssse3 = (__builtin_cpu_init(), __builtin_cpu_supports("ssse3"));
inline const bool has_avx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
#endif

}  // namespace matte::resample
