#include "src/exec/attempt_identity.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/time/rfc3339.h"

namespace chime::exec {
namespace {

// FNV-1a, 64 bits, seeded: stable across builds and processes (absl::Hash is
// not), which a trace id must be.
uint64_t Fnv1a(uint64_t seed, absl::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h == 0 ? 1 : h;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> IdentityFields(
    const AttemptContext& ctx) {
  std::string scheduled;
  time::AppendUtc(ctx.scheduled_time, &scheduled);
  return {{"JOB", ctx.fire.job.ToString()},
          {"FIRE_ID", ctx.fire_id()},
          {"SCHEDULED_TIME", std::move(scheduled)},
          {"ATTEMPT", absl::StrCat(ctx.attempt)},
          {"FENCING_TOKEN", absl::StrCat(ctx.fencing_token)},
          {"RUN_ID", absl::StrCat(ctx.run_id)}};
}

std::string HeaderName(const std::string& suffix) {
  std::string out;
  bool upper = true;
  for (char c : suffix) {
    if (c == '_') {
      out += '-';
      upper = true;
      continue;
    }
    out += upper ? c : static_cast<char>(c - 'A' + 'a');
    upper = false;
  }
  return out;
}

std::string Traceparent(const AttemptContext& ctx) {
  const std::string fire_id = ctx.fire_id();
  const uint64_t hi = Fnv1a(1, fire_id);
  const uint64_t lo = Fnv1a(2, fire_id);
  const uint64_t span = Fnv1a(3, absl::StrCat(fire_id, "#", ctx.attempt));
  return absl::StrFormat("00-%016x%016x-%016x-01", hi, lo, span);
}

}  // namespace chime::exec
