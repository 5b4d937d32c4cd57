// Loading: sniff the type, check the limits from the header (and from the file's own structure)
// before any pixel is decoded, decode with shrink-on-load when the first step is a downscale,
// apply EXIF orientation, convert to 8-bit sRGB, and split an animation into frames.
#pragma once

#include "frames.h"
#include "plan.h"

#include <cstddef>
#include <cstdint>

namespace matte {

struct LoadOptions {
  bool all_frames = false;  // anim requested and the output format can animate
  bool sequential = false;  // the steps read the image once, top to bottom
  Limits limits;
  const Step *first_step = nullptr;  // a resize here allows shrink-on-load
  bool strict = false;  // fail on the decoder's warnings too (corrupt data it would otherwise skip)
  bool strip = false;   // keep an animation as one strip of frames (frames.h), not split
  const char *role = "input";  // what the messages call the image ("background image")
  bool header_only = false;    // only the checks from the header and the file's structure: no frames
  // The job's own load: an image its steps read out of order may be left undecoded, for
  // decode_in_memory() after the job's cost checks and under its budget.
  bool decode_later = false;
  // The job's own load, whose steps run on the frames: its first step (first_step), which, a
  // resize, may take an EXIF-turned image as stored and turn its result (steps/resize.cc,
  // Frames::orientation_after_resize). Loads for other readers (the model's smaller input, a
  // background image), which read the frames themselves, turn at once.
  const Step *job_first_step = nullptr;
};

/** The bytes every decode of this process produced so far (width x height x bands x sample size): probes and tests. */
uint64_t decoded_bytes();

/** `data` must stay alive until the pipeline's output has been encoded. With `header_only`, the frames are empty. */
Frames load(const uint8_t *data, size_t size, const LoadOptions &options);

/**
 * Frames that load() left undecoded (LoadOptions::decode_later) decoded into memory, then turned by
 * their EXIF orientation and made sRGB as load() does; other frames are left as they are.
 */
void decode_in_memory(Frames &frames);

}  // namespace matte
