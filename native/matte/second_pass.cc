#include "second_pass.h"

#include "../budget.h"
#include "../huge_pages.h"
#include "refine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace matte {

std::optional<SubjectBox> second_pass_box(const std::vector<uint8_t> &matte, int mw, int mh, int W, int H,
                                   const SecondPassParams &p) {
  int x0 = mw, y0 = mh, x1 = -1, y1 = -1;
  for (int y = 0; y < mh; y++)
    for (int x = 0; x < mw; x++)
      if (matte[size_t(y) * mw + x] >= p.threshold) {
        x0 = std::min(x0, x), x1 = std::max(x1, x);
        y0 = std::min(y0, y), y1 = std::max(y1, y);
      }
  if (x1 < 0) return std::nullopt;
  if (p.max_unsure > 0) {
    size_t subject = 0, unsure = 0;
    for (uint8_t v : matte) subject += v >= 128, unsure += v > 25 && v < 230;
    if (double(unsure) > p.max_unsure * double(subject)) return std::nullopt;
  }
  // Model pixel x covers full-resolution columns [x * W / mw, (x + 1) * W / mw).
  const double sx = double(W) / mw, sy = double(H) / mh;
  double left = x0 * sx, right = (x1 + 1) * sx, top = y0 * sy, bottom = (y1 + 1) * sy;
  const double gx = (right - left) * p.grow, gy = (bottom - top) * p.grow;
  SubjectBox box;
  box.left = std::max(0, int(std::floor(left - gx)));
  box.top = std::max(0, int(std::floor(top - gy)));
  box.width = std::min(W, int(std::ceil(right + gx))) - box.left;
  box.height = std::min(H, int(std::ceil(bottom + gy))) - box.top;
  if (box.width < 1 || box.height < 1) return std::nullopt;
  const double share = double(box.width) * box.height / (double(W) * H);
  if (share * mw * mh >= p.max_model_pixels) return std::nullopt;
  return box;
}

void paste_matte(vips::VImage &alpha, const vips::VImage &part_in, const SubjectBox &box) {
  const vips::VImage part = part_in.copy_memory();  // a reference when it already is
  const uint8_t *from = static_cast<const uint8_t *>(part.data());
  for (int y = 0; y < box.height; y++)
    std::memcpy(VIPS_IMAGE_ADDR(alpha.get_image(), box.left, box.top + y), from + size_t(y) * box.width,
                size_t(box.width));
}

double matte_agreement(const vips::VImage &alpha, const std::vector<uint8_t> &part, int pw, int ph,
                       const SubjectBox &box) {
  size_t both = 0, either = 0;
  for (int j = 0; j < ph; j++) {
    const int y = box.top + std::min(box.height - 1, int((j + 0.5) * box.height / ph));
    for (int i = 0; i < pw; i++) {
      const int x = box.left + std::min(box.width - 1, int((i + 0.5) * box.width / pw));
      const bool a = *VIPS_IMAGE_ADDR(alpha.get_image(), x, y) >= 128, b = part[size_t(j) * pw + i] >= 128;
      both += a && b;
      either += a || b;
    }
  }
  return either ? double(both) / double(either) : 1.0;
}

SecondPassOutcome second_pass(const vips::VImage &image, const std::vector<uint8_t> &matte, int mw, int mh,
                              const std::function<vips::VImage(const vips::VImage &)> &model_sized,
                              const std::function<std::vector<uint8_t>(const vips::VImage &)> &infer,
                              const SecondPassParams &params, const RefineParams &refine, Budget *budget,
                              vips::VImage &alpha) {
  const std::optional<SubjectBox> box = second_pass_box(matte, mw, mh, image.width(), image.height(), params);
  if (!box) return SecondPassOutcome::NotRun;
  const vips::VImage crop = copy_to_memory(image.crop(box->left, box->top, box->width, box->height));
  const vips::VImage small = model_sized(crop);
  if (budget) budget->check();
  const std::vector<uint8_t> crop_matte = infer(small);
  if (matte_agreement(alpha, crop_matte, mw, mh, *box) < params.min_agreement) return SecondPassOutcome::Rejected;
  if (budget) budget->check();
  const vips::VImage refined =
      refine_matte(crop, static_cast<const uint8_t *>(small.data()), crop_matte, mw, mh, refine, budget);
  paste_matte(alpha, refined, *box);
  return SecondPassOutcome::Pasted;
}

}  // namespace matte
