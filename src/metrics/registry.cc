#include "src/metrics/registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace chime::metrics {
namespace {

// Go's strconv.ParseFloat, which Prometheus uses, reads std::to_chars's
// shortest round-trip form ("0.25", "3", "1e+21") as well as these spellings.
std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

void AppendEscaped(absl::string_view text, bool quote, std::string* out) {
  for (char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '"' && quote) {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

// `{a="x",b="y"}`, with `le="<le>"` last when `le` is given; "" for no labels.
std::string LabelText(const std::vector<std::string>& names,
                      const std::vector<std::string>& values,
                      const std::string* le = nullptr) {
  if (names.empty() && le == nullptr) return "";
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out.push_back(',');
    absl::StrAppend(&out, names[i], "=\"");
    AppendEscaped(values[i], /*quote=*/true, &out);
    out.push_back('"');
  }
  if (le != nullptr) {
    absl::StrAppend(&out, names.empty() ? "" : ",", "le=\"", *le, "\"");
  }
  out.push_back('}');
  return out;
}

void RenderSeries(const std::string& name,
                  const std::vector<std::string>& names,
                  const std::vector<std::string>& values,
                  const Counter& counter, std::string* out) {
  absl::StrAppend(out, name, LabelText(names, values), " ",
                  FormatDouble(counter.Value()), "\n");
}

void RenderSeries(const std::string& name,
                  const std::vector<std::string>& names,
                  const std::vector<std::string>& values, const Gauge& gauge,
                  std::string* out) {
  absl::StrAppend(out, name, LabelText(names, values), " ",
                  FormatDouble(gauge.Value()), "\n");
}

void RenderSeries(const std::string& name,
                  const std::vector<std::string>& names,
                  const std::vector<std::string>& values,
                  const Histogram& histogram, std::string* out) {
  const Histogram::Snapshot snapshot = histogram.Read();
  const std::vector<double>& bounds = histogram.bounds();
  for (size_t i = 0; i <= bounds.size(); ++i) {
    const std::string le =
        i < bounds.size() ? FormatDouble(bounds[i]) : std::string("+Inf");
    absl::StrAppend(out, name, "_bucket", LabelText(names, values, &le), " ",
                    snapshot.cumulative[i], "\n");
  }
  const std::string labels = LabelText(names, values);
  absl::StrAppend(out, name, "_sum", labels, " ", FormatDouble(snapshot.sum),
                  "\n");
  absl::StrAppend(out, name, "_count", labels, " ", snapshot.count, "\n");
}

// A gauge family whose series come from a callback at every Render().
// A gauge or counter family whose series are computed at each Render.
class CallbackFamily final : public internal::FamilyBase {
 public:
  CallbackFamily(std::string name, std::string help, std::string type,
                 std::vector<std::string> label_names,
                 std::function<std::vector<Sample>()> collect)
      : FamilyBase(std::move(name), std::move(help), std::move(type),
                   std::move(label_names)),
        collect_(std::move(collect)) {}

  void Render(std::string* out) const override {
    std::vector<Sample> samples = collect_();
    std::erase_if(samples, [&](const Sample& s) {
      return s.label_values.size() != label_names().size();
    });
    std::sort(samples.begin(), samples.end(),
              [](const Sample& a, const Sample& b) {
                return a.label_values < b.label_values;
              });
    RenderHeader(out);
    for (const Sample& s : samples) {
      absl::StrAppend(out, name(), LabelText(label_names(), s.label_values),
                      " ", FormatDouble(s.value), "\n");
    }
  }

 private:
  const std::function<std::vector<Sample>()> collect_;
};

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

absl::Status Validate(absl::string_view name, absl::string_view help,
                      absl::string_view type,
                      const std::vector<std::string>& label_names) {
  if (!IsIdentifier(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric name \"", name,
                     "\": use letters, digits and '_', not starting with a "
                     "digit (e.g. chime_fires_total)"));
  }
  const bool counter = type == "counter";
  if (counter != absl::EndsWith(name, "_total")) {
    return absl::InvalidArgumentError(
        counter
            ? absl::StrCat("counter \"", name, "\": name must end in _total")
            : absl::StrCat(type, " \"", name,
                           "\": only a counter's name ends in _total"));
  }
  for (absl::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (absl::EndsWith(name, suffix)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metric name \"", name, "\": the suffix ", suffix,
                       " is reserved for a histogram's series"));
    }
  }
  if (help.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric \"", name, "\": help text is empty"));
  }
  for (size_t i = 0; i < label_names.size(); ++i) {
    const std::string& label = label_names[i];
    if (!IsIdentifier(label) || absl::StartsWith(label, "__")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric \"", name, "\": label name \"", label,
          "\": use letters, digits and '_', not starting with a digit or "
          "\"__\""));
    }
    if (type == "histogram" && label == "le") {
      return absl::InvalidArgumentError(absl::StrCat(
          "histogram \"", name, "\": the label name \"le\" is reserved"));
    }
    if (std::find(label_names.begin(), label_names.begin() + i, label) !=
        label_names.begin() + i) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metric \"", name, "\": label name \"", label, "\" repeated"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void Counter::Increment(double by) {
  if (!(by >= 0.0)) return;
  value_.fetch_add(by, std::memory_order_relaxed);
}

void Gauge::Add(double delta) {
  value_.fetch_add(delta, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      bucket_counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) bucket_counts_[i] = 0;
}

void Histogram::Observe(double value) {
  // The first bound >= value; NaN compares false with every bound and so
  // lands in +Inf.
  const size_t bucket =
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  bucket_counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot snapshot;
  snapshot.cumulative.reserve(bounds_.size() + 1);
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    snapshot.count += bucket_counts_[i].load(std::memory_order_relaxed);
    snapshot.cumulative.push_back(snapshot.count);
  }
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  for (double b = start; static_cast<int>(bounds.size()) < count; b *= factor) {
    bounds.push_back(b);
  }
  return bounds;
}

namespace internal {

FamilyBase::FamilyBase(std::string name, std::string help, std::string type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(std::move(type)),
      label_names_(std::move(label_names)) {}

void FamilyBase::RenderHeader(std::string* out) const {
  absl::StrAppend(out, "# HELP ", name_, " ");
  AppendEscaped(help_, /*quote=*/false, out);
  absl::StrAppend(out, "\n# TYPE ", name_, " ", type_, "\n");
}

}  // namespace internal

template <typename T>
Family<T>::Family(std::string name, std::string help,
                  std::vector<std::string> label_names,
                  std::vector<double> bounds)
    : FamilyBase(std::move(name), std::move(help),
                 std::is_same_v<T, Counter> ? "counter"
                 : std::is_same_v<T, Gauge> ? "gauge"
                                            : "histogram",
                 std::move(label_names)),
      bounds_(std::move(bounds)) {
  if (this->label_names().empty()) With({});
}

template <typename T>
T& Family<T>::With(const std::vector<std::string>& label_values) {
  if (label_values.size() != label_names().size()) {
    std::fprintf(stderr,
                 "chime::metrics: %s has %zu label names, With() got %zu "
                 "values\n",
                 name().c_str(), label_names().size(), label_values.size());
    std::abort();
  }
  absl::MutexLock lock(&mu_);
  std::unique_ptr<T>& series = series_[label_values];
  if (series == nullptr) {
    if constexpr (std::is_same_v<T, Histogram>) {
      series = std::make_unique<Histogram>(bounds_);
    } else {
      series = std::make_unique<T>();
    }
  }
  return *series;
}

template <typename T>
void Family<T>::Render(std::string* out) const {
  RenderHeader(out);
  absl::MutexLock lock(&mu_);
  for (const auto& [values, series] : series_) {
    RenderSeries(name(), label_names(), values, *series, out);
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

absl::StatusOr<CounterFamily*> Registry::AddCounter(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  if (absl::Status s = Validate(name, help, "counter", label_names); !s.ok()) {
    return s;
  }
  auto* family = new CounterFamily(std::string(name), std::string(help),
                                   std::move(label_names), {});
  if (absl::Status s = Insert(std::unique_ptr<internal::FamilyBase>(family));
      !s.ok()) {
    return s;
  }
  return family;
}

absl::StatusOr<GaugeFamily*> Registry::AddGauge(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  if (absl::Status s = Validate(name, help, "gauge", label_names); !s.ok()) {
    return s;
  }
  auto* family = new GaugeFamily(std::string(name), std::string(help),
                                 std::move(label_names), {});
  if (absl::Status s = Insert(std::unique_ptr<internal::FamilyBase>(family));
      !s.ok()) {
    return s;
  }
  return family;
}

absl::StatusOr<HistogramFamily*> Registry::AddHistogram(
    absl::string_view name, absl::string_view help,
    std::vector<double> bucket_bounds, std::vector<std::string> label_names) {
  if (absl::Status s = Validate(name, help, "histogram", label_names);
      !s.ok()) {
    return s;
  }
  if (bucket_bounds.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("histogram \"", name, "\": no bucket bounds"));
  }
  for (size_t i = 0; i < bucket_bounds.size(); ++i) {
    if (!std::isfinite(bucket_bounds[i]) ||
        (i > 0 && !(bucket_bounds[i - 1] < bucket_bounds[i]))) {
      return absl::InvalidArgumentError(
          absl::StrCat("histogram \"", name,
                       "\": bucket bounds must be finite and strictly "
                       "increasing (bound ",
                       i, " is ", FormatDouble(bucket_bounds[i]), ")"));
    }
  }
  auto* family =
      new HistogramFamily(std::string(name), std::string(help),
                          std::move(label_names), std::move(bucket_bounds));
  if (absl::Status s = Insert(std::unique_ptr<internal::FamilyBase>(family));
      !s.ok()) {
    return s;
  }
  return family;
}

absl::Status Registry::AddGaugeCallback(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names,
    std::function<std::vector<Sample>()> collect) {
  if (absl::Status s = Validate(name, help, "gauge", label_names); !s.ok()) {
    return s;
  }
  return Insert(std::make_unique<CallbackFamily>(
      std::string(name), std::string(help), "gauge", std::move(label_names),
      std::move(collect)));
}

absl::Status Registry::AddCounterCallback(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names,
    std::function<std::vector<Sample>()> collect) {
  if (absl::Status s = Validate(name, help, "counter", label_names); !s.ok()) {
    return s;
  }
  return Insert(std::make_unique<CallbackFamily>(
      std::string(name), std::string(help), "counter", std::move(label_names),
      std::move(collect)));
}

absl::Status Registry::Insert(std::unique_ptr<internal::FamilyBase> family) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = families_.try_emplace(family->name(), nullptr);
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("metric \"", family->name(), "\" is already registered"));
  }
  it->second = std::move(family);
  return absl::OkStatus();
}

std::string Registry::Render() const {
  // Families are never removed, so the pointers outlive the lock; rendering
  // without it lets a gauge callback take its own locks in any order.
  std::vector<const internal::FamilyBase*> families;
  {
    absl::MutexLock lock(&mu_);
    families.reserve(families_.size());
    for (const auto& [name, family] : families_)
      families.push_back(family.get());
  }
  std::string out;
  for (const internal::FamilyBase* family : families) family->Render(&out);
  return out;
}

}  // namespace chime::metrics
