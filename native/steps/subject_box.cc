#include "subject_box.h"

#include <algorithm>

using vips::VImage;

namespace matte {

// First and last index with a non-zero sum in a profile (a row of column sums or a column of row
// sums), first = -1 when all are zero.
static void span(const VImage &profile, int *first, int *last) {
  VImage flat = profile.cast(VIPS_FORMAT_DOUBLE).copy_memory();
  const double *values = static_cast<const double *>(flat.data());
  int length = flat.width() * flat.height();
  *first = -1;
  *last = -1;
  for (int i = 0; i < length; i++) {
    if (values[i] > 0) {
      if (*first < 0) *first = i;
      *last = i;
    }
  }
}

std::optional<Box> subject_box(const VImage &image) {
  if (!image.has_alpha()) return Box{0, 0, image.width(), image.height()};
  VImage mask = image.extract_band(image.bands() - 1) > 0;
  // Column and row sums of the mask: the box runs from the first to the last non-zero entry.
  VImage rows;
  VImage columns = mask.project(&rows);
  int x0, x1, y0, y1;
  span(columns, &x0, &x1);
  span(rows, &y0, &y1);
  if (x0 < 0 || y0 < 0) return std::nullopt;
  return Box{x0, y0, x1 - x0 + 1, y1 - y0 + 1};
}

Box united(const Box &a, const Box &b) {
  int left = std::min(a.left, b.left), top = std::min(a.top, b.top);
  return Box{left, top, std::max(a.right(), b.right()) - left, std::max(a.bottom(), b.bottom()) - top};
}

std::optional<Box> subject_box(const Frames &frames) {
  Frames split = frames;
  split.split();
  std::optional<Box> all;
  for (const VImage &image : split.images) {
    std::optional<Box> box = subject_box(image);
    if (box) all = all ? united(*all, *box) : *box;
  }
  return all;
}

}  // namespace matte
