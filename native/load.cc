#include "load.h"

#include "decoded_size.h"
#include "errors.h"
#include "huge_pages.h"
#include "libvips.h"
#include "sniff.h"
#include "turn.h"
#include "steps/operations.h"
#include "steps/steps.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

using vips::VError;
using vips::VImage;

namespace matte {

namespace {

// A blob over the caller's bytes, without a copy: the caller keeps them alive for the job.
struct Blob {
  VipsBlob *blob;
  Blob(const uint8_t *data, size_t size) : blob(vips_blob_new(nullptr, data, size)) {}
  ~Blob() { vips_area_unref(VIPS_AREA(blob)); }
};

VImage call_loader(ImageType type, VipsBlob *blob, vips::VOption *options) {
  switch (type) {
    case ImageType::Jpeg: return VImage::jpegload_buffer(blob, options);
    case ImageType::Png: return VImage::pngload_buffer(blob, options);
    case ImageType::Gif: return VImage::gifload_buffer(blob, options);
    case ImageType::Webp: return VImage::webpload_buffer(blob, options);
    case ImageType::Heif:
      load_libvips_module("vips-heif.so");  // on first use, not at start (native/encode/libheif.h)
      return VImage::heifload_buffer(blob, options);
    case ImageType::Tiff: return VImage::tiffload_buffer(blob, options);
  }
  throw unsupported_image("unknown image type");
}

bool is_animatable(ImageType type) { return type == ImageType::Gif || type == ImageType::Webp; }

// Frames in the file, read from its own structure (see sniff.h for why not from libvips).
int frames_in_file(ImageType type, const uint8_t *data, size_t size) {
  int frames = 1;
  if (type == ImageType::Gif) frames = gif_frame_count(data, size);
  if (type == ImageType::Webp) frames = webp_frame_count(data, size);
  if (frames < 1) throw unsupported_image(std::string("the ") + type_name(type) + " image is truncated or corrupt");
  return frames;
}

int exif_orientation(const VImage &image) {
  if (!image.get_typeof(VIPS_META_ORIENTATION)) return 1;
  int orientation = image.get_int(VIPS_META_ORIENTATION);
  return orientation >= 1 && orientation <= 8 ? orientation : 1;
}

// The shrink the decoder applies before the first resize. WebP scales freely. JPEG shrinks by 1, 2,
// 4 or 8 in the DCT, a coarse filter that aliases when lanczos3 is left almost nothing to do: a
// shrink is used only when it leaves lanczos3 at least kMinResidualReduction, else the next smaller.
constexpr double kMinResidualReduction = 1.25;

double shrink_on_load(ImageType type, int stored_width, int stored_height, int orientation, const Step &step,
                      const Operation &row) {
  if (type != ImageType::Jpeg && type != ImageType::Webp) return 1;
  bool swapped = orientation >= 5;
  int width = swapped ? stored_height : stored_width;
  int height = swapped ? stored_width : stored_height;
  ResizeGeometry g = row.downscale(width, height, step);
  double factor = std::min(double(width) / g.scaled_width, double(height) / g.scaled_height);
  if (factor < 2) return 1;
  if (type == ImageType::Webp) return factor;
  // The output's sides are whole pixels: a side rounded up by its last fraction of a pixel (a 2000x1333
  // image 400 wide is 400x267, a reduction of 4.99 on that side) does not cost a whole DCT step.
  double unrounded = std::min(double(width) / std::max(1.0, double(g.scaled_width) - 0.5),
                              double(height) / std::max(1.0, double(g.scaled_height) - 0.5));
  for (int shrink : {8, 4, 2})
    if (shrink * kMinResidualReduction <= unrounded) return shrink;
  return 1;
}

bool is_16bit(VipsInterpretation interpretation) {
  return interpretation == VIPS_INTERPRETATION_RGB16 || interpretation == VIPS_INTERPRETATION_GREY16;
}

// Perceptual, as sharp does: users compare us with it, and every LUT profile holds the perceptual
// table (ICC requires it) while some hold no colorimetric one, which libvips would ignore.
// A 16-bit image is transformed at 16 bits: libvips 8.14 returns a 16-bit grey + alpha image's
// colour at 8 bits but leaves its alpha on the 16-bit scale, so the cast below would clip it.
// CMYK goes through the float PCS: lcms' optimised direct CMYK -> sRGB table is several levels off
// the profile's own tables (lcms without precalculation); the two steps are not.
VImage icc_to_srgb(const VImage &image, vips::VOption *options) {
  options->set("intent", VIPS_INTENT_PERCEPTUAL);
  if (image.interpretation() == VIPS_INTERPRETATION_CMYK)
    return image.icc_import(options->set("pcs", VIPS_PCS_LAB))
        .icc_export(VImage::option()->set("output_profile", "srgb")->set("intent", VIPS_INTENT_PERCEPTUAL)->set("depth", 8));
  return image.icc_transform("srgb", options->set("depth", is_16bit(image.interpretation()) ? 16 : 8));
}

// 8-bit sRGB with 3 bands, or 4 with alpha. An unusable embedded profile is ignored; CMYK without
// a profile is read with libvips' built-in CMYK profile.
VImage to_srgb(VImage image) {
  if (image.get_typeof(VIPS_META_ICC_NAME)) {
    try {
      image = icc_to_srgb(image, VImage::option()->set("embedded", true));
    } catch (const VError &) {
      vips_error_clear();
      image = image.copy();
      image.remove(VIPS_META_ICC_NAME);
    }
  }
  if (image.interpretation() == VIPS_INTERPRETATION_CMYK && !image.get_typeof(VIPS_META_ICC_NAME))
    image = icc_to_srgb(image, VImage::option()->set("input_profile", "cmyk"));
  if (image.interpretation() != VIPS_INTERPRETATION_sRGB || image.format() != VIPS_FORMAT_UCHAR)
    image = image.colourspace(VIPS_INTERPRETATION_sRGB);
  if (image.format() != VIPS_FORMAT_UCHAR) image = image.cast(VIPS_FORMAT_UCHAR);
  if (image.bands() > 4) image = image.extract_band(0, VImage::option()->set("n", 4));
  if (image.bands() == 2) image = image.colourspace(VIPS_INTERPRETATION_sRGB);
  return image;
}

std::atomic<uint64_t> decoded_total{0};

// Whether a first step can take the image as stored and turn its result upright after
// (steps/resize.cc): a resize that makes no side larger (libvips' enlargement is not symmetric
// under a turn, and turning the smaller source is cheaper anyway) and chooses its window by
// arithmetic, not by looking at the upright image as subject and attention do.
// `width` x `height`: the image's upright size.
bool turns_after(const Step *first, int width, int height) {
  if (!first || first->op != Op::Resize || first->gravity == Gravity::Subject || first->gravity == Gravity::Attention) return false;
  const ResizeGeometry g = resize_geometry(width, height, *first);
  return g.scaled_width <= width && g.scaled_height <= height;
}

// EXIF orientation applied and every frame made 8-bit sRGB.
void finish_frames(Frames &frames, int orientation) {
  for (auto &frame : frames.images) {
    if (orientation != 1) frame = upright(frame, orientation);
    frame = to_srgb(frame);
  }
}

}  // namespace

uint64_t decoded_bytes() { return decoded_total.load(); }

Frames load(const uint8_t *data, size_t size, const LoadOptions &options) {
  const std::string role = options.role;
  if (size == 0) throw unsupported_image("the " + role + " is empty");
  std::optional<ImageType> sniffed = sniff(data, size);
  if (!sniffed)
    throw unsupported_image("the " + role + " is not a JPEG, PNG, WebP, GIF, AVIF/HEIF or TIFF image");
  ImageType type = *sniffed;
  if (type == ImageType::Tiff && !tiff_data_within_file(data, size))
    throw unsupported_image("the tiff image is truncated or corrupt: its data lies past the end of the file");

  int file_frames = frames_in_file(type, data, size);
  bool all_frames = options.all_frames && is_animatable(type) && file_frames > 1;
  int frames_used = all_frames ? file_frames : 1;

  Blob blob(data, size);
  VImage header;
  try {
    header = call_loader(type, blob.blob, VImage::option()->set("fail_on", VIPS_FAIL_ON_TRUNCATED));
  } catch (const VError &err) {
    vips_error_clear();
    throw unsupported_image(std::string("the ") + type_name(type) + " image cannot be decoded");
  }

  // Limits, from the header only: nothing has been decoded yet.
  uint64_t width = uint64_t(header.width());
  uint64_t frame_height = uint64_t(header.height());
  if (frames_used > options.limits.max_frames)
    throw image_too_large("the animation has " + std::to_string(frames_used) + " frames, more than the limit of " +
                          std::to_string(options.limits.max_frames));
  if (width * frame_height * uint64_t(frames_used) > options.limits.max_pixels)
    throw image_too_large("the image has " + std::to_string(width) + "x" + std::to_string(frame_height) +
                          (frames_used > 1 ? "x" + std::to_string(frames_used) + " frames" : "") +
                          " pixels, more than the limit of " + std::to_string(options.limits.max_pixels));
  // The pixel limit alone would admit wide layouts (16 float samples a pixel: 16x the memory and
  // several times the CPU of 8-bit RGBA); what is decoded is bounded by its bytes too (plan.h).
  double decoded = double(width) * double(frame_height) * double(frames_used) * double(header.bands()) *
                   double(vips_format_sizeof(header.format()));
  double budget = double(options.limits.max_pixels) * kDecodedBytesPerPixel;
  if (decoded > budget)
    throw image_too_large("the image decodes to " + std::to_string(uint64_t(decoded)) + " bytes (" +
                          std::to_string(header.bands()) + " samples of " +
                          std::to_string(vips_format_sizeof(header.format())) +
                          " bytes a pixel), more than the limit of " + std::to_string(uint64_t(budget)) +
                          " bytes (" + std::to_string(int(kDecodedBytesPerPixel)) + " bytes x the pixel limit)");
  // What the decoder will really allocate, from the file's structure (decoded_size.h).
  check_decoded_size(type, data, size,
                     {width, frame_height, uint64_t(frames_used),
                      uint64_t(header.bands()) * uint64_t(vips_format_sizeof(header.format()))},
                     options.limits);

  if (options.header_only) return Frames{};

  int orientation = exif_orientation(header);
  double shrink = 1;
  const Operation *first = options.first_step ? &operation(options.first_step->op) : nullptr;
  if (!all_frames && first && first->downscale)
    shrink = shrink_on_load(type, header.width(), header.height(), orientation, *options.first_step, *first);

  // The logical size is the stored size after orientation, before any shrink-on-load.
  const bool swapped = orientation >= 5;
  const int upright_width = swapped ? header.height() : header.width();
  const int upright_height = swapped ? header.width() : header.height();

  // A turn by EXIF orientation reads the rows out of order, unless a first resize turns its
  // smaller result instead: the decode then streams into it as for an upright image.
  const bool turn_after_resize = orientation != 1 && !all_frames && options.job_first_step == options.first_step &&
                                 turns_after(options.first_step, upright_width, upright_height);
  const bool random = !options.sequential || (orientation != 1 && !turn_after_resize);
  // Where libvips would decode a random-access image of these formats into memory itself, the
  // pipeline does it instead, into a buffer of ours (decode_in_memory): libvips' buffer is fresh
  // from malloc for every job and faults in 4 KiB at a time. Above libvips' threshold for a
  // temporary file, libvips keeps doing it its way.
  const bool later = random && options.decode_later && decoded < double(vips_get_disc_threshold()) &&
                     (type == ImageType::Jpeg || type == ImageType::Png || type == ImageType::Webp);
  vips::VOption *load_options =
      VImage::option()
          ->set("fail_on", options.strict ? VIPS_FAIL_ON_WARNING : VIPS_FAIL_ON_TRUNCATED)
          ->set("access", random && !later ? VIPS_ACCESS_RANDOM : VIPS_ACCESS_SEQUENTIAL);
  if (all_frames) load_options->set("n", -1);
  if (shrink > 1 && type == ImageType::Jpeg) load_options->set("shrink", int(shrink));
  if (shrink > 1 && type == ImageType::Webp) load_options->set("scale", 1.0 / shrink);

  Frames frames;
  VImage image;
  try {
    image = call_loader(type, blob.blob, load_options);
  } catch (const VError &err) {
    vips_error_clear();
    throw unsupported_image(std::string("the ") + type_name(type) + " image cannot be decoded");
  }

  // What the decoder produces (the tests' proof that a shrink-on-load decoded no more than needed).
  decoded_total += uint64_t(image.width()) * uint64_t(image.height()) * uint64_t(image.bands()) *
                   uint64_t(vips_format_sizeof(image.format()));

  int page_height = image.height();
  if (all_frames) {
    if (image.get_typeof(VIPS_META_PAGE_HEIGHT)) page_height = image.get_int(VIPS_META_PAGE_HEIGHT);
    if (image.get_typeof("delay")) frames.delays = image.get_array_int("delay");
    if (image.get_typeof("loop")) frames.loop = image.get_int("loop");
  }
  frames.logical_width = upright_width;
  frames.logical_height = upright_height;

  int count = page_height > 0 ? image.height() / page_height : 0;
  if (count < 1) throw unsupported_image("the image has no frames");
  if (count == 1) {
    frames.images.push_back(image);
  } else if (options.strip && orientation == 1 && image.height() == count * page_height) {
    frames.images.push_back(image);  // converted to sRGB below: per pixel, the same on the strip
    frames.strip_pages = count;
  } else {
    for (int i = 0; i < count; i++) frames.images.push_back(image.crop(0, i * page_height, image.width(), page_height));
  }
  // Without all frames there is one: the first resize turns it.
  if (turn_after_resize) frames.orientation_after_resize = orientation;
  const int turn_now = turn_after_resize ? 1 : orientation;
  if (later)
    frames.undecoded_orientation = turn_now;
  else
    finish_frames(frames, turn_now);
  frames.delays.resize(all_frames ? count : 0, 100);
  if (orientation == 1 && shrink == 1) {
    frames.logical_width = frames.width();
    frames.logical_height = frames.height();
  }
  frames.input_width = frames.logical_width;
  frames.input_height = frames.logical_height;
  return frames;
}

void decode_in_memory(Frames &frames) {
  if (!frames.undecoded_orientation) return;
  for (auto &frame : frames.images) frame = copy_to_memory(frame);
  finish_frames(frames, *frames.undecoded_orientation);
  frames.undecoded_orientation.reset();
}

}  // namespace matte
