// The operations of a plan, one row each in one table (operations.cc) that the addon and the
// pipeline read: how a step is read from the plan, how it runs on the job's frames, and what the
// pipeline must know of it before any pixel is computed. Adding an operation is its schema
// (lib/schema.ts), its file in this directory (steps.h declares its functions) and its row, with
// its Op in plan.h.
#pragma once

#include "../frames.h"
#include "../plan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace matte {

class Budget;
class Model;

/**
 * A step's fields in the plan, each checked as it is read: a field of the wrong type or out of
 * range is an `internal` error (lib/ validated the plan; the native side checks what it relies on).
 * addon.cc reads them from the N-API object.
 */
class PlanFields {
 public:
  virtual ~PlanFields() = default;
  /** Whether the field is given. */
  virtual bool has(const char *key) const = 0;
  virtual std::string text(const char *key) const = 0;
  /** The number, `fallback` when not given. */
  virtual double number(const char *key, double fallback) const = 0;
  /** The same, within min..max. */
  virtual double number(const char *key, double min, double max, double fallback) const = 0;
  /** The field's truth value (JavaScript's), `fallback` when not given. */
  virtual bool flag(const char *key, bool fallback) const = 0;
  /** An array of exactly `count` numbers. */
  virtual std::vector<double> numbers(const char *key, size_t count) const = 0;
};

/** What a step runs with besides its frames. */
struct StepContext {
  const Plan &plan;
  const Model *model;           // the job's model, if it has one
  Budget &budget;
  const vips::VImage *reduced;  // removeBackground first: its image decoded smaller (matte/model_input.h)
};

/** An image's size before any pixel is computed (the cost checks). */
struct Size {
  int64_t width;
  int64_t height;
  int frames;
  bool exact = true;  // false once a step whose size depends on the pixels came before (trim: an upper bound)
  int64_t input_width = 0;  // the input's, as loaded
  int64_t input_height = 0;
};

/**
 * Scale to scaled_width x scaled_height, then take the width x height window at left, top of it
 * (cover, crop: inside it; pad: a box around it, so left and top are negative or 0). 64-bit: a thin
 * image scaled to a given width can ask for a side far beyond int (1 x 4194305 to width 1024:
 * 4.3e9); run_resize checks the sizes against the limits before narrowing them.
 */
struct ResizeGeometry {
  int64_t scaled_width;
  int64_t scaled_height;
  int64_t width;
  int64_t height;
  int64_t left = 0;
  int64_t top = 0;
};

struct Operation {
  Op op;
  const char *name;  // its `op` in the plan (lib/schema.ts Step)
  /** Reads and checks the step's fields; null: it has none. */
  void (*read)(const PlanFields &fields, Step &step);
  /** Runs the step on every frame (an animation's strip is split first unless `on_strip`). */
  void (*run)(Frames &frames, const Step &step, const StepContext &context);
  /** Reads its input once, top to bottom: when every step does, the decoder streams. */
  bool streams;
  /** Gives the same pixels on an animation's strip (one libvips pipeline) as frame by frame. */
  bool (*on_strip)(const Step &step);
  /** Reads its input region by region with overlaps: a lazy blur before it is computed first (Frames). */
  bool reads_regions;
  /** Its output size from its input's, for the cost check before pixels; null: the same size. */
  void (*shape)(Size &size, const Step &step);
  /** Adds what it will cost to the job's `work` and refuses the job past its bound; null: nothing to bound. */
  void (*cost)(const Size &size, const Step &step, double &work);
  /** As the first step, the downscale it starts with (the decoder's shrink-on-load, load.cc); null: none. */
  ResizeGeometry (*downscale)(int width, int height, const Step &step);
  /** Works on a layer under the frames (a shadow) apart; every other step gets them flattened first (Frames::under). */
  bool keeps_layers;
};

/** The operation's row. */
const Operation &operation(Op op);

/** The row of the operation named `name` in the plan, or nullptr. */
const Operation *operation_named(const std::string &name);

/** Computes the frames into memory and watches them again: a materialised frame no longer signals progress. */
void materialise(Frames &frames, Budget &budget);

/** "WxH", for messages. */
std::string size_text(int64_t width, int64_t height);

}  // namespace matte
