#pragma once
// Four floats at once (GCC's vector extensions: SSE on x86-64, NEON on arm64), for the refinement's
// loops that -O2 leaves scalar. Every operation is the scalar one element by element (IEEE
// arithmetic, no reassociation), so a loop written with these gives the same floats as written
// one value at a time: the matte stays byte-identical (guided_filter.cc, refine.cc).

#include <cstdint>
#include <cstring>

namespace matte {

typedef float Floats4 __attribute__((vector_size(16)));
typedef int32_t Ints4 __attribute__((vector_size(16)));

inline Floats4 load4(const float *p) {
  Floats4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float *p, Floats4 v) { std::memcpy(p, &v, sizeof v); }
inline Floats4 splat4(float v) { return Floats4{v, v, v, v}; }

/** std::lround of values in [0, 255] (std::clamp(v, 0, 1) * 255), without the library call. */
inline uint8_t round_byte(float v) {
  const int t = int(v);                       // truncated; v - t is exact below 2^23
  return uint8_t(t + (v - float(t) >= 0.5f));  // halves away from zero, as lround
}
inline Ints4 round_bytes4(Floats4 v) {
  Ints4 t = __builtin_convertvector(v, Ints4);
  return t - (v - __builtin_convertvector(t, Floats4) >= splat4(0.5f));  // a true lane is -1
}

}  // namespace matte
