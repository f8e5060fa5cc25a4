// Command-line arguments and summary statistics shared by the chime-bench
// workloads.
#ifndef CHIME_BENCH_BENCH_ARGS_H_
#define CHIME_BENCH_BENCH_ARGS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace chime::bench {

// `--name value` or `--name=value` pairs, each name one of the defaults'.
// Unknown names and missing values are errors.
class Args {
 public:
  static bool Parse(const std::string& workload,
                    const std::vector<std::string>& args,
                    std::map<std::string, std::string> defaults, Args* out) {
    out->values_ = std::move(defaults);
    for (size_t i = 0; i < args.size(); ++i) {
      std::string name = args[i];
      std::string value;
      bool ok = name.rfind("--", 0) == 0;
      if (const size_t eq = name.find('='); ok && eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
      } else if (ok && i + 1 < args.size()) {
        value = args[++i];
      } else {
        ok = false;
      }
      if (!ok || !out->values_.contains(name.substr(2))) {
        std::cerr << "chime-bench " << workload << ": bad argument " << name
                  << " (accepted:";
        for (const auto& [k, v] : out->values_)
          std::cerr << " --" << k << " [" << v << "]";
        std::cerr << ")\n";
        return false;
      }
      out->values_[name.substr(2)] = std::move(value);
    }
    return true;
  }
  const std::string& String(const std::string& name) const {
    return values_.at(name);
  }
  int64_t Int(const std::string& name) const {
    return std::stoll(values_.at(name));
  }
  double Double(const std::string& name) const {
    return std::stod(values_.at(name));
  }

 private:
  std::map<std::string, std::string> values_;
};

// Percentile (0..1) of `v` by nearest rank; reorders `v`.
inline double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t rank = std::max<size_t>(
      static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))), 1);
  std::nth_element(v.begin(), v.begin() + (rank - 1), v.end());
  return v[rank - 1];
}

}  // namespace chime::bench

#endif  // CHIME_BENCH_BENCH_ARGS_H_
