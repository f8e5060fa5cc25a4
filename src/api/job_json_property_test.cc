// A job as the API shows it is written straight as text (JobJsonText, for
// the answers to creations and changes) and as a tree (JobJson, for answers
// that add to it): for every record, the text is byte for byte what
// JsonResponse prints of the tree.
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "chime/store.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "src/api/http_util.h"
#include "src/api/job_body.h"
#include "src/api/routes.h"
#include "src/config/job_writer.h"
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
      // Years 0001 to 9999, to the nanosecond (which int64 nanoseconds
      // since 1970 cannot hold: the seconds and the fraction apart).
      return absl::FromUnixSeconds(
                 *rc::gen::inRange<int64_t>(-62'135'596'800, 253'402'300'800)) +
             absl::Nanoseconds(*rc::gen::inRange<int64_t>(0, 1'000'000'000));
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

// A creation's body is read from its text without building its JSON value
// (ReadJobText): the same job, or the same error, as through the value --
// also for keys given twice and for texts cut short.
RC_GTEST_PROP(JobBodyProperty, ReadingTheTextIsReadingTheValue, ()) {
  nlohmann::ordered_json json =
      config::JobToJson(testing::AnyJobSpec(/*json_safe=*/true));
  std::string text = json.dump(Coin() ? -1 : 2);
  if (Coin() && !json.empty()) {
    // One of its keys again, at the end, with another value.
    const auto it =
        std::next(json.begin(), *rc::gen::inRange<ptrdiff_t>(0, json.size()));
    text.pop_back();  // the closing brace
    text += ", " + nlohmann::ordered_json(it.key()).dump() + ": " +
            (it.value().is_string() ? "5" : "\"x\"") + "}";
  }
  if (Coin()) text.resize(*rc::gen::inRange<size_t>(0, text.size()));
  RC_LOG() << text;
  const absl::StatusOr<JobSpec> direct = ReadJobText(text);
  absl::StatusOr<nlohmann::ordered_json> body = ParseJsonObject(text);
  const absl::StatusOr<JobSpec> through =
      body.ok() ? ReadJobJson(*std::move(body), nullptr)
                : absl::StatusOr<JobSpec>(body.status());
  RC_ASSERT(direct.status() == through.status());
  if (direct.ok()) RC_ASSERT(*direct == *through);
}

}  // namespace
}  // namespace chime::api
