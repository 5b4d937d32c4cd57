// The full-resolution passes of the refinement (refine.cc, edge_colour.cc), split into bands of
// rows run on the job's threads: as many as libvips gives the job (vips_concurrency_get(), which
// lib/job.ts sets as jobs start and end; a job running alone gets every core). The refinement
// runs outside libvips' own pipelines, so without this its full-resolution pass would use one core
// while the plain path's lazy upscale uses them all.
#pragma once

#include <functional>

namespace matte {

class Budget;

/**
 * Runs body(first_row, end_row) over [0, rows) in bands of a fixed number of rows, on up to
 * vips_concurrency_get() threads (the calling one included). The bands do not depend on the
 * thread count and each band must write only its own rows, so the output is the same for any
 * number of threads. Between bands, `budget` (if any) is polled: a job stopped (deadline or
 * cancel) takes no more bands and, once every thread has joined, throws the job's Error. An
 * exception thrown by `body` is rethrown on the calling thread after the join.
 */
void for_row_bands(int rows, const std::function<void(int first_row, int end_row)> &body, Budget *budget);

/** The same over [0, count) in bands of `per_band` items (the guided fit's planes, one a band). */
void for_bands(int count, int per_band, const std::function<void(int first, int end)> &body, Budget *budget);

}  // namespace matte
