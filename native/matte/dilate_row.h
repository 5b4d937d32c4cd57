#pragma once
// One row of a mask dilated along the row: the first half of the separable square dilations of
// closed_form.cc's trimap (edge_colour.cc keeps its pixels near a change of side as runs instead).

#include <cstdint>

namespace matte {

/** Sets marked[x] = 1 wherever a set[] pixel lies within r along the row (marked[] is only set, never cleared). */
inline void dilate_row(const uint8_t *set, uint8_t *marked, int w, int r) {
  int last = -(1 << 20);
  for (int x = 0; x < w; x++) {
    if (set[x]) last = x;
    if (x - last <= r) marked[x] = 1;
  }
  last = 1 << 20;
  for (int x = w - 1; x >= 0; x--) {
    if (set[x]) last = x;
    if (last - x <= r) marked[x] = 1;
  }
}

}  // namespace matte
