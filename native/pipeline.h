// One job: load -> the steps, in the user's order -> save. libvips stays lazy across the steps,
// so the input is decoded once and the output encoded once.
#pragma once

#include "plan.h"
#include "save.h"

#include <cstddef>
#include <cstdint>

namespace matte {

class Budget;
class Model;

/**
 * Runs the plan on the encoded image `data`. `model` may be null when no step needs it. The job
 * stops (matte::Error job_timeout or aborted) when `budget` says so (budget.h).
 */
Encoded run(const uint8_t *data, size_t size, const Plan &plan, const Model *model, Budget &budget);

}  // namespace matte
