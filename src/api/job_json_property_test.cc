// A job as the API shows it is written straight as text (JobJsonText, for
// the answers to creations and changes) and as a tree (JobJson, for answers
// that add to it): for every record, the text is byte for byte what
// JsonResponse prints of the tree.
#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "chime/store.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "src/api/http_util.h"
#include "src/api/routes.h"
#include "testing/any_job_spec.h"

namespace chime::api {
namespace {

bool Coin() { return *rc::gen::arbitrary<bool>(); }

absl::Time AnyTimeOrInfinite() {
  switch (*rc::gen::inRange(0, 4)) {
    case 0:
      return absl::InfinitePast();
    case 1:
      return absl::InfiniteFuture();
    default:
      return absl::FromUnixNanos(*rc::gen::inRange<int64_t>(
          -62'135'596'800'000'000'000, 253'402'300'799'000'000'000));
  }
}

RC_GTEST_PROP(JobJsonProperty, TheTextIsWhatJsonResponsePrintsOfTheTree, ()) {
  JobRecord record;
  record.spec = testing::AnyJobSpec(/*json_safe=*/false);
  // Strings the API holds need not be valid UTF-8 (JsonResponse replaces
  // what is not).
  if (Coin()) record.spec.labels["bad"] = "caf\xc3";
  if (Coin()) record.spec.source_file = "/etc/chime/jobs/a \"b\".yaml";
  if (Coin()) record.spec.executor.kind = ExecutorSpec::Kind::kFunction;
  record.generation = *rc::gen::arbitrary<int64_t>();
  record.revision = *rc::gen::arbitrary<int64_t>();
  record.watermark = AnyTimeOrInfinite();
  std::optional<absl::Time> next_fire;
  if (Coin()) next_fire = AnyTimeOrInfinite();

  const std::string text = internal::JobJsonText(record, next_fire);
  RC_LOG() << text;
  RC_ASSERT(text + "\n" ==
            JsonResponse(internal::JobJson(record, next_fire)).body);
}

}  // namespace
}  // namespace chime::api
