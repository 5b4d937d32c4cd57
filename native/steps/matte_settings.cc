#include "matte_settings.h"

#include "../errors.h"

#include <cmath>
#include <string>
#include <vector>

using vips::VImage;

namespace matte {

Box roi_box(const Step &step, int width, int height, int input_width, int input_height) {
  const int sides[4] = {width, height, width, height};
  // A region in the input's pixels follows the steps that scaled it since (a size before removeBackground).
  const double scales[4] = {double(width) / input_width, double(height) / input_height, double(width) / input_width,
                            double(height) / input_height};
  int edges[4];
  for (int i = 0; i < 4; i++) {
    const double v = step.roi_percent[i] ? step.roi[i] / 100 * sides[i] : step.roi[i] * (step.roi_of_input ? scales[i] : 1);
    edges[i] = int(std::lround(v));
  }
  const std::string path = "operations[" + std::to_string(step.index) + "].removeBackground.roi";
  const auto outside = [&](const std::string &what) {
    return Error("invalid_operations", path + " " + what + " (the image is " + std::to_string(width) + "x" +
                                           std::to_string(height) + " pixels at this step)",
                 path);
  };
  const int input_sides[4] = {input_width, input_height, input_width, input_height};
  for (int i = 0; i < 4; i++) {
    const double most = step.roi_percent[i] ? 100 : step.roi_of_input ? input_sides[i] : sides[i];
    if (!(step.roi[i] >= 0 && step.roi[i] <= most) || edges[i] > sides[i])
      throw outside(std::string(step.roi_of_input && !step.roi_percent[i] ? "lies outside the input image (" +
                                                                                std::to_string(input_width) + "x" +
                                                                                std::to_string(input_height) + ")"
                                                                          : "lies outside the image") +
                    ": x1, x2 at most its width, y1, y2 at most its height");
  }
  if (edges[2] <= edges[0] || edges[3] <= edges[1]) throw outside("is empty: x2 must be right of x1 and y2 below y1");
  return Box{edges[0], edges[1], edges[2] - edges[0], edges[3] - edges[1]};
}

// 0 or 255, and on the inside of the edge one pixel antialiased: the share of its 3x3
// neighbourhood that is inside (a straight edge 170, a corner 113).
static VImage hard(const VImage &alpha) {
  VImage inside = alpha >= 128;  // 0 or 255
  VImage box = VImage::new_matrix(3, 3).linear(0.0, 1.0);  // a 3x3 mask of ones
  box.set("scale", 9.0);
  VImage covered = inside.conv(box, VImage::option()->set("precision", VIPS_PRECISION_INTEGER)).cast(VIPS_FORMAT_UCHAR);
  return inside.ifthenelse(covered, 0.0);
}

MatteSettings matte_settings(const Step &step, const Frames &frames) {
  MatteSettings settings;
  settings.hard = !step.semitransparency;
  if (step.has_roi) {
    Box roi = roi_box(step, frames.width(), frames.height(), frames.input_width, frames.input_height);
    if (roi.left != 0 || roi.top != 0 || roi.width != frames.width() || roi.height != frames.height()) settings.roi = roi;
  }
  return settings;
}

VImage apply_matte_settings(const VImage &alpha, const MatteSettings &settings) {
  VImage out = alpha;
  if (settings.roi) {
    const Box &roi = *settings.roi;
    out = out.crop(roi.left, roi.top, roi.width, roi.height)
              .embed(roi.left, roi.top, alpha.width(), alpha.height(), VImage::option()->set("extend", VIPS_EXTEND_BLACK));
  }
  // After the region, so that its edges are antialiased too.
  if (settings.hard) out = hard(out);
  return out;
}

}  // namespace matte
