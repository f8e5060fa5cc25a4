// An AttemptContext as a scheduler would hand it to an executor, for tests of
// executors: job "ops/<id>", generation 3, scheduled 2026-11-18T11:06:40Z,
// fencing token 17, run 42.
#ifndef CHIME_TESTING_ATTEMPT_CONTEXT_H_
#define CHIME_TESTING_ATTEMPT_CONTEXT_H_

#include <string>

#include "chime/scheduler.h"

namespace chime::testing {

inline AttemptContext TestAttemptContext(std::string id = "backup",
                                         int attempt = 2) {
  AttemptContext ctx;
  ctx.fire.job = {.name_space = "ops", .id = std::move(id)};
  ctx.fire.generation = 3;
  ctx.fire.scheduled_time = absl::FromUnixSeconds(1795000000);
  ctx.scheduled_time = ctx.fire.scheduled_time;
  ctx.attempt = attempt;
  ctx.fencing_token = 17;
  ctx.run_id = 42;
  return ctx;
}

}  // namespace chime::testing

#endif  // CHIME_TESTING_ATTEMPT_CONTEXT_H_
