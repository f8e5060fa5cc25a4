// Registry: the daemon's metrics, rendered in the Prometheus text exposition
// format 0.0.4 for the `/metrics` endpoint.
//
// A metric is a family: a name, a help text, a type (counter, gauge,
// histogram) and zero or more label names. Each distinct tuple of label values
// is one series, created at zero on first use:
//
//   metrics::Registry registry;
//   ASSIGN_OR_RETURN(metrics::CounterFamily * fires,
//                    registry.AddCounter("chime_fires_total",
//                                        "Fires by outcome.", {"outcome"}));
//   metrics::Counter& ran = fires->With({"run"});  // look up once, keep
//   ran.Increment();                               // an atomic add
//
// renders as
//
//   # HELP chime_fires_total Fires by outcome.
//   # TYPE chime_fires_total counter
//   chime_fires_total{outcome="run"} 1
//
// Names follow the Prometheus conventions, and registration refuses those that
// break them: `[a-zA-Z_][a-zA-Z0-9_]*`, a counter's name ends in `_total`, no
// other name does, and no name ends in `_bucket`, `_sum` or `_count` (the
// histogram's own series). Use base units in the name (`_seconds`, `_bytes`)
// and the `chime_` prefix; these two are conventions the registry does not
// check.
//
// Output order is stable: families by name, series by label values (compared
// as strings, label by label); a histogram's buckets in increasing order.
//
// Thread-safety: every method may be called from any thread. Updating a series
// is lock-free; With() and Render() take short locks. Families and series
// live as long as the Registry; nothing is ever removed.
#ifndef CHIME_SRC_METRICS_REGISTRY_H_
#define CHIME_SRC_METRICS_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace chime::metrics {

// The Content-Type of Registry::Render()'s output.
inline constexpr absl::string_view kContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// A value that only goes up (until the process restarts).
class Counter {
 public:
  // Adds `by`. A negative or NaN `by` is ignored: a counter never decreases.
  void Increment(double by = 1.0);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// A value that goes up and down.
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  // Adds `delta`, which may be negative.
  void Add(double delta);
  void Increment() { Add(1.0); }
  void Decrement() { Add(-1.0); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Counts observations into fixed buckets, with their sum. Bucket i counts the
// observations v with bounds[i-1] < v <= bounds[i]; the implicit last bucket
// (`le="+Inf"`) takes the rest, NaN included. Rendering makes the buckets
// cumulative, as Prometheus expects.
class Histogram {
 public:
  // REQUIRES: `bounds` strictly increasing and finite (the Registry checks).
  explicit Histogram(std::vector<double> bounds);

  void Observe(double value);

  // A copy of the counts. Taken while other threads observe, the buckets and
  // the sum may disagree by the observations in flight; `count` is always the
  // total of the buckets.
  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf
    double sum = 0.0;
    uint64_t count = 0;
  };
  Snapshot Read() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  // Not cumulative: bucket_counts_[i] counts only bucket i.
  std::unique_ptr<std::atomic<uint64_t>[]> bucket_counts_;
  std::atomic<double> sum_{0.0};
};

// `count` bucket bounds: start, start*factor, start*factor^2, ...
// REQUIRES: start > 0, factor > 1, count >= 1.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

namespace internal {

// What every family shares: the name, help, type and label names, and the
// `# HELP` / `# TYPE` header.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, std::string type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Appends the family's exposition text to `out`.
  virtual void Render(std::string* out) const = 0;

 protected:
  void RenderHeader(std::string* out) const;

 private:
  const std::string name_;
  const std::string help_;
  const std::string type_;
  const std::vector<std::string> label_names_;
};

}  // namespace internal

// The series of one counter, gauge or histogram metric, by label values.
// T is Counter, Gauge or Histogram.
template <typename T>
class Family final : public internal::FamilyBase {
 public:
  // Returns the series for `label_values`, one per label name in registration
  // order, creating it at zero on first use. The reference stays valid for the
  // Registry's lifetime: look it up once and keep it. A family without labels
  // has one series, `With({})`, rendered from the start.
  // REQUIRES: label_values.size() == label_names().size() (aborts otherwise).
  T& With(const std::vector<std::string>& label_values);

  void Render(std::string* out) const override;

 private:
  friend class Registry;
  Family(std::string name, std::string help,
         std::vector<std::string> label_names, std::vector<double> bounds);

  const std::vector<double> bounds_;  // histograms only
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> series_
      ABSL_GUARDED_BY(mu_);
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// One series of a gauge or counter computed at scrape time.
struct Sample {
  std::vector<std::string> label_values;  // one per label name
  double value = 0.0;
};
using GaugeSample = Sample;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Each Add* registers a family and returns it (owned by the Registry).
  // InvalidArgument names what is wrong when the name, help, a label name or
  // the buckets break the rules above (an empty help text is refused too);
  // AlreadyExists when the name is taken.
  absl::StatusOr<CounterFamily*> AddCounter(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names = {});
  absl::StatusOr<GaugeFamily*> AddGauge(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names = {});
  // `bucket_bounds`: finite, strictly increasing, at least one; `+Inf` is
  // implied. A histogram may not have a label named `le`.
  absl::StatusOr<HistogramFamily*> AddHistogram(
      absl::string_view name, absl::string_view help,
      std::vector<double> bucket_bounds,
      std::vector<std::string> label_names = {});

  // A gauge whose series `collect` returns at every Render() (jobs by state,
  // runs in progress): called on the rendering thread, without the Registry's
  // lock held, so it may take the caller's own locks. Samples whose number of
  // label values is not the number of label names are dropped; the label
  // values of the samples must be distinct. Errors as for AddGauge.
  absl::Status AddGaugeCallback(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names,
      std::function<std::vector<GaugeSample>()> collect);
  // A counter read at every Render() from something that counts already
  // (the scheduler's own counts), as AddGaugeCallback. The values must never
  // go down (until the process restarts). Errors as for AddCounter.
  absl::Status AddCounterCallback(absl::string_view name,
                                  absl::string_view help,
                                  std::vector<std::string> label_names,
                                  std::function<std::vector<Sample>()> collect);

  // The exposition text of every family, in the stable order described above,
  // each line ending in '\n'. Serve it with Content-Type kContentType.
  std::string Render() const;

 private:
  // Adds `family` unless its name is taken (AlreadyExists).
  absl::Status Insert(std::unique_ptr<internal::FamilyBase> family);

  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<internal::FamilyBase>, std::less<>>
      families_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::metrics

#endif  // CHIME_SRC_METRICS_REGISTRY_H_
