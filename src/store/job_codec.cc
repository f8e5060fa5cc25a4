#include "src/store/job_codec.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/core/packed_spec.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

class Writer {
 public:
  void Byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void Int(int64_t v) {
    uint64_t u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(u >> (8 * i)));
  }
  void Str(absl::string_view s) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    for (int i = 0; i < 4; ++i) Byte(static_cast<uint8_t>(n >> (8 * i)));
    out_.append(s.data(), s.size());
  }
  void StrList(const std::vector<std::string>& list) {
    Int(static_cast<int64_t>(list.size()));
    for (const std::string& s : list) Str(s);
  }
  void StrMap(const std::map<std::string, std::string>& map) {
    Int(static_cast<int64_t>(map.size()));
    for (const auto& [k, v] : map) {
      Str(k);
      Str(v);
    }
  }
  void Time(absl::Time t) { Int(TimeToNanos(t)); }
  void Dur(absl::Duration d) { Int(DurationToNanos(d)); }
  void Double(double d) {
    int64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    Int(bits);
  }
  template <typename E>
  void Enum(E e) {
    Byte(static_cast<uint8_t>(e));
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads fields in order; the first failure sticks and later reads return
// zeros, so a decoder checks ok() once at the end.
class Reader {
 public:
  explicit Reader(absl::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool AtEnd() const { return in_.empty(); }
  uint8_t Byte() {
    if (!Need(1)) return 0;
    uint8_t b = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return b;
  }
  int64_t Int() {
    if (!Need(8)) return 0;
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) {
      u |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    }
    in_.remove_prefix(8);
    return static_cast<int64_t>(u);
  }
  std::string Str() {
    if (!Need(4)) return {};
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i) {
      n |= static_cast<uint32_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    }
    in_.remove_prefix(4);
    if (!Need(n)) return {};
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  std::vector<std::string> StrList() {
    std::vector<std::string> list;
    const int64_t n = Int();
    for (int64_t i = 0; ok_ && i < n; ++i) list.push_back(Str());
    return list;
  }
  std::map<std::string, std::string> StrMap() {
    std::map<std::string, std::string> map;
    const int64_t n = Int();
    for (int64_t i = 0; ok_ && i < n; ++i) {
      std::string k = Str();
      map[std::move(k)] = Str();
    }
    return map;
  }
  absl::Time Time() { return NanosToTime(Int()); }
  absl::Duration Dur() { return NanosToDuration(Int()); }
  double Double() {
    int64_t bits = Int();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  // Enums are range-checked against their last enumerator.
  template <typename E>
  E Enum(E last) {
    uint8_t b = Byte();
    if (b > static_cast<uint8_t>(last)) ok_ = false;
    return ok_ ? static_cast<E>(b) : E{};
  }

 private:
  bool Need(size_t n) {
    if (ok_ && in_.size() >= n) return true;
    ok_ = false;
    return false;
  }
  absl::string_view in_;
  bool ok_ = true;
};

}  // namespace

std::string EncodeJobSpec(const JobSpec& spec) {
  std::string out(1, kJobSpecFormat);
  const core::PackedSpec packed = core::PackedSpec::Pack(spec);
  out.append(packed.bytes().data(), packed.bytes().size());
  return out;
}

std::string EncodeJobSpecFormat2(const JobSpec& spec) {
  Writer w;
  w.Byte(2);
  w.Str(spec.key.name_space);
  w.Str(spec.key.id);
  const Trigger& t = spec.trigger;
  w.Enum(t.kind);
  w.Str(t.expression);
  w.Str(t.zone);
  w.Enum(t.dialect);
  w.Enum(t.day_match);
  w.Enum(t.dst.gap);
  w.Enum(t.dst.repeat);
  w.Time(t.at);
  w.Time(spec.start);
  w.Time(spec.end);
  w.Dur(spec.jitter);
  w.Enum(spec.misfire.action);
  w.Dur(spec.misfire.threshold);
  w.Int(spec.misfire.max_catchup);
  w.Dur(spec.misfire.catchup_window);
  w.Enum(spec.overlap.action);
  w.Int(spec.overlap.max_buffered);
  w.Int(spec.retry.max_attempts);
  w.Dur(spec.retry.initial_backoff);
  w.Double(spec.retry.multiplier);
  w.Dur(spec.retry.max_backoff);
  w.Dur(spec.retry.max_retry_duration);
  w.Byte(spec.retry.retry_on_failure);
  w.Byte(spec.retry.retry_on_timeout);
  w.Dur(spec.timeout.attempt_timeout);
  w.Dur(spec.timeout.grace);
  w.Enum(spec.delivery);
  w.Int(spec.priority);
  w.StrMap(spec.labels);
  w.Byte(spec.paused);
  // Format 2.
  const ExecutorSpec& e = spec.executor;
  w.Enum(e.kind);
  w.StrList(e.shell.argv);
  w.Str(e.shell.command);
  w.Str(e.shell.working_dir);
  w.StrMap(e.shell.env);
  w.Str(e.shell.user);
  w.Str(e.shell.group);
  w.Int(e.shell.output_limit);
  w.Str(e.http.method);
  w.Str(e.http.url);
  w.StrMap(e.http.headers);
  w.Str(e.http.body);
  w.Byte(e.http.verify_tls);
  w.Int(static_cast<int64_t>(e.http.success_statuses.size()));
  for (const auto& [lo, hi] : e.http.success_statuses) {
    w.Int(lo);
    w.Int(hi);
  }
  w.Dur(e.http.connect_timeout);
  w.Int(e.http.response_limit);
  return w.Take();
}

absl::StatusOr<JobSpec> DecodeJobSpec(absl::string_view bytes) {
  Reader r(bytes);
  const uint8_t format = r.Byte();
  if (r.ok() && (format < 1 || format > kJobSpecFormat)) {
    return absl::DataLossError(absl::StrCat(
        "job spec: format ", format, " is unknown (this binary reads formats ",
        "1 to ", static_cast<int>(kJobSpecFormat), ")"));
  }
  if (format == 3) {
    absl::StatusOr<JobSpec> spec = core::PackedSpec::Decode(bytes.substr(1));
    if (!spec.ok()) {
      return absl::DataLossError(
          absl::StrCat("job spec: ", spec.status().message()));
    }
    return spec;
  }
  JobSpec spec;
  spec.key.name_space = r.Str();
  spec.key.id = r.Str();
  Trigger& t = spec.trigger;
  t.kind = r.Enum(Trigger::Kind::kAt);
  t.expression = r.Str();
  t.zone = r.Str();
  t.dialect = static_cast<cron::Dialect>(r.Byte());
  t.day_match = static_cast<cron::DayMatch>(r.Byte());
  t.dst.gap = static_cast<cron::GapPolicy>(r.Byte());
  t.dst.repeat = static_cast<cron::RepeatPolicy>(r.Byte());
  t.at = r.Time();
  spec.start = r.Time();
  spec.end = r.Time();
  spec.jitter = r.Dur();
  spec.misfire.action = r.Enum(MisfireAction::kRunAll);
  spec.misfire.threshold = r.Dur();
  spec.misfire.max_catchup = static_cast<int>(r.Int());
  spec.misfire.catchup_window = r.Dur();
  spec.overlap.action = r.Enum(OverlapAction::kReplace);
  spec.overlap.max_buffered = static_cast<int>(r.Int());
  spec.retry.max_attempts = static_cast<int>(r.Int());
  spec.retry.initial_backoff = r.Dur();
  spec.retry.multiplier = r.Double();
  spec.retry.max_backoff = r.Dur();
  spec.retry.max_retry_duration = r.Dur();
  spec.retry.retry_on_failure = r.Byte() != 0;
  spec.retry.retry_on_timeout = r.Byte() != 0;
  spec.timeout.attempt_timeout = r.Dur();
  spec.timeout.grace = r.Dur();
  spec.delivery = r.Enum(Delivery::kAtLeastOnce);
  spec.priority = static_cast<int>(r.Int());
  spec.labels = r.StrMap();
  spec.paused = r.Byte() != 0;
  if (format >= 2) {
    ExecutorSpec& e = spec.executor;
    e.kind = r.Enum(ExecutorSpec::Kind::kHttp);
    e.shell.argv = r.StrList();
    e.shell.command = r.Str();
    e.shell.working_dir = r.Str();
    e.shell.env = r.StrMap();
    e.shell.user = r.Str();
    e.shell.group = r.Str();
    e.shell.output_limit = r.Int();
    e.http.method = r.Str();
    e.http.url = r.Str();
    e.http.headers = r.StrMap();
    e.http.body = r.Str();
    e.http.verify_tls = r.Byte() != 0;
    const int64_t ranges = r.Int();
    for (int64_t i = 0; r.ok() && i < ranges; ++i) {
      const int lo = static_cast<int>(r.Int());
      e.http.success_statuses.emplace_back(lo, static_cast<int>(r.Int()));
    }
    e.http.connect_timeout = r.Dur();
    e.http.response_limit = r.Int();
  }
  if (!r.ok() || !r.AtEnd()) {
    return absl::DataLossError(absl::StrCat(
        "job spec: ", bytes.size(), " bytes are not a valid encoding (",
        r.ok() ? "trailing bytes" : "truncated or out of range", ")"));
  }
  return spec;
}

}  // namespace chime::store
