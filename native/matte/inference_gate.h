// How many inferences run at once in ONNX Runtime's process-wide intra-op pool (model.cc).
//
// The pool is sized for a job that runs alone (every core). Two inferences in it at the same time
// oversubscribe the cores (each caller's own thread works too, so the threads block on each
// other's work), which costs more CPU per image than one run at a time. So at most cores / pool
// threads inferences run at once (one, with the default pool of every core); the others wait here,
// before their run, while the rest of their jobs (decode, resize, refine, encode) runs beside it. A
// job that waits is still stopped by its budget (deadline, cancel).
#pragma once

namespace matte {

class Budget;

/** Sets the limit from the pool's size: max(1, cores / pool_threads). */
void size_inference_gate(int pool_threads);

/** Holds one of the inference places for its lifetime; waits for one, checking `budget` (may be null). */
class InferencePlace {
 public:
  explicit InferencePlace(Budget *budget);
  ~InferencePlace();
  InferencePlace(const InferencePlace &) = delete;
  InferencePlace &operator=(const InferencePlace &) = delete;
};

}  // namespace matte
