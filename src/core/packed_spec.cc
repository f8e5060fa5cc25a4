#include "src/core/packed_spec.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "src/time/nanos.h"

namespace chime::core {

struct PackedSpec::Rep {
  std::atomic<uint32_t> refs{1};
  uint32_t size : 31 = 0;
  // Made by Interned::Acquire, so it was in the set (a buffer of
  // PackUnshared's never is): fixed when made.
  uint32_t shared : 1 = 0;
  char* data() { return reinterpret_cast<char*>(this + 1); }
};
static_assert(sizeof(PackedSpec::Rep) == 8, "a buffer's header is 8 bytes");

namespace {

const JobSpec& Defaults() {
  static const JobSpec* const kDefaults = new JobSpec();
  return *kDefaults;
}

// Calls v(number, field, default) for every field of JobSpec in number
// order; `S` is JobSpec or const JobSpec. The numbers are the format: never
// reuse or renumber one; a new field takes the next.
template <typename S, typename V>
void VisitFields(S& s, V& v) {
  const JobSpec& d = Defaults();
  v(1, s.key.name_space, d.key.name_space);
  v(2, s.key.id, d.key.id);
  v(3, s.trigger.kind, d.trigger.kind);
  v(4, s.trigger.expression, d.trigger.expression);
  v(5, s.trigger.zone, d.trigger.zone);
  v(6, s.trigger.dialect, d.trigger.dialect);
  v(7, s.trigger.day_match, d.trigger.day_match);
  v(8, s.trigger.dst.gap, d.trigger.dst.gap);
  v(9, s.trigger.dst.repeat, d.trigger.dst.repeat);
  v(10, s.trigger.at, d.trigger.at);
  v(11, s.start, d.start);
  v(12, s.end, d.end);
  v(13, s.jitter, d.jitter);
  v(14, s.misfire.action, d.misfire.action);
  v(15, s.misfire.threshold, d.misfire.threshold);
  v(16, s.misfire.max_catchup, d.misfire.max_catchup);
  v(17, s.misfire.catchup_window, d.misfire.catchup_window);
  v(18, s.overlap.action, d.overlap.action);
  v(19, s.overlap.max_buffered, d.overlap.max_buffered);
  v(20, s.retry.max_attempts, d.retry.max_attempts);
  v(21, s.retry.initial_backoff, d.retry.initial_backoff);
  v(22, s.retry.multiplier, d.retry.multiplier);
  v(23, s.retry.max_backoff, d.retry.max_backoff);
  v(24, s.retry.max_retry_duration, d.retry.max_retry_duration);
  v(25, s.retry.retry_on_failure, d.retry.retry_on_failure);
  v(26, s.retry.retry_on_timeout, d.retry.retry_on_timeout);
  v(27, s.timeout.attempt_timeout, d.timeout.attempt_timeout);
  v(28, s.timeout.grace, d.timeout.grace);
  v(29, s.delivery, d.delivery);
  v(30, s.priority, d.priority);
  v(31, s.labels, d.labels);
  v(32, s.paused, d.paused);
  const ExecutorSpec& de = d.executor;
  auto& e = s.executor;
  v(33, e.kind, de.kind);
  v(34, e.shell.argv, de.shell.argv);
  v(35, e.shell.command, de.shell.command);
  v(36, e.shell.working_dir, de.shell.working_dir);
  v(37, e.shell.env, de.shell.env);
  v(38, e.shell.user, de.shell.user);
  v(39, e.shell.group, de.shell.group);
  v(40, e.shell.output_limit, de.shell.output_limit);
  v(41, e.http.method, de.http.method);
  v(42, e.http.url, de.http.url);
  v(43, e.http.headers, de.http.headers);
  v(44, e.http.body, de.http.body);
  v(45, e.http.verify_tls, de.http.verify_tls);
  v(46, e.http.success_statuses, de.http.success_statuses);
  v(47, e.http.connect_timeout, de.http.connect_timeout);
  v(48, e.http.response_limit, de.http.response_limit);
  v(49, s.source_file, d.source_file);
}

// The last enumerator of each enum (a new one goes last).
constexpr auto Last(Trigger::Kind) { return Trigger::Kind::kAt; }
constexpr auto Last(cron::Dialect) { return cron::Dialect::kQuartz; }
constexpr auto Last(cron::DayMatch) { return cron::DayMatch::kAll; }
constexpr auto Last(cron::GapPolicy) { return cron::GapPolicy::kSkip; }
constexpr auto Last(cron::RepeatPolicy) { return cron::RepeatPolicy::kTwice; }
constexpr auto Last(MisfireAction) { return MisfireAction::kRunAll; }
constexpr auto Last(OverlapAction) { return OverlapAction::kReplace; }
constexpr auto Last(Delivery) { return Delivery::kAtLeastOnce; }
constexpr auto Last(ExecutorSpec::Kind) { return ExecutorSpec::Kind::kHttp; }

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t u) {
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

// Writes into a per-thread buffer that keeps its capacity from one packing
// to the next (a packing then allocates nothing but its Rep); out() is valid
// while the Packer lives. One Packer at a time per thread.
class Packer {
 public:
  Packer() : out_(Buffer()) { out_.clear(); }
  // A buffer a large job grew is not kept.
  ~Packer() {
    if (out_.capacity() > 4096) std::string().swap(out_);
  }
  Packer(const Packer&) = delete;
  Packer& operator=(const Packer&) = delete;

  template <typename T>
  void operator()(int number, const T& value, const T& default_value) {
    if (value == default_value) return;
    Varint(static_cast<uint64_t>(number));
    Put(value);
  }
  std::string& out() { return out_; }

 private:
  void Varint(uint64_t u) {
    while (u >= 0x80) {
      out_.push_back(static_cast<char>((u & 0x7f) | 0x80));
      u >>= 7;
    }
    out_.push_back(static_cast<char>(u));
  }
  void Put(int64_t v) { Varint(ZigZag(v)); }
  void Put(int v) { Put(int64_t{v}); }
  void Put(bool v) { Varint(v ? 1 : 0); }
  void Put(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; ++i)
      out_.push_back(static_cast<char>(bits >> (8 * i)));
  }
  void Put(absl::Duration d) { Put(time::DurationToNanos(d)); }
  void Put(absl::Time t) { Put(time::TimeToNanos(t)); }
  void Put(const std::string& s) {
    Varint(s.size());
    out_.append(s);
  }
  void Put(const std::vector<std::string>& list) {
    Varint(list.size());
    for (const std::string& s : list) Put(s);
  }
  void Put(const std::map<std::string, std::string>& map) {
    Varint(map.size());
    for (const auto& [k, v] : map) {
      Put(k);
      Put(v);
    }
  }
  void Put(const std::vector<std::pair<int, int>>& ranges) {
    Varint(ranges.size());
    for (const auto& [lo, hi] : ranges) {
      Put(lo);
      Put(hi);
    }
  }
  template <typename E>
  requires std::is_enum_v<E>
  void Put(E e) { Varint(static_cast<uint64_t>(e)); }

  static std::string& Buffer() {
    thread_local std::string buffer;
    return buffer;
  }

  std::string& out_;
};

// Reads the fields present, in number order, as VisitFields offers them.
// The first problem sticks; done() says whether everything was read.
class Unpacker {
 public:
  explicit Unpacker(absl::string_view in) : in_(in) { NextNumber(); }

  template <typename T>
  void operator()(int number, T& value, const T&) {
    if (!error_.empty() || next_ != number) return;
    Get(value);
    NextNumber();
  }
  // OK when every byte was read as a known field.
  absl::Status Done() {
    if (error_.empty() && next_ != 0) {
      Fail(absl::StrCat("field ", next_, " is unknown or out of order"));
    }
    if (error_.empty()) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat("packed job spec: ", error_));
  }

 private:
  void Fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
  }
  uint64_t Varint() {
    uint64_t u = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) {
        Fail(absl::StrCat("field ", current_, " is cut short"));
        return 0;
      }
      const uint8_t b = static_cast<uint8_t>(in_[0]);
      in_.remove_prefix(1);
      u |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return u;
    }
    Fail(absl::StrCat("field ", current_, ": a varint is too long"));
    return 0;
  }
  void NextNumber() {
    if (!error_.empty()) return;
    if (in_.empty()) {
      next_ = 0;
      return;
    }
    const uint64_t n = Varint();
    if (n <= static_cast<uint64_t>(current_) || n > 1000) {
      Fail(absl::StrCat("field ", n, " after field ", current_));
      return;
    }
    current_ = next_ = static_cast<int>(n);
  }
  void Get(int64_t& v) { v = UnZigZag(Varint()); }
  void Get(int& v) {
    const int64_t wide = UnZigZag(Varint());
    if (wide < std::numeric_limits<int>::min() ||
        wide > std::numeric_limits<int>::max()) {
      Fail(absl::StrCat("field ", current_, ": ", wide, " is out of range"));
    }
    v = static_cast<int>(wide);
  }
  void Get(bool& v) {
    const uint64_t u = Varint();
    if (u > 1) Fail(absl::StrCat("field ", current_, ": not a bool"));
    v = u == 1;
  }
  void Get(double& v) {
    if (in_.size() < 8) {
      Fail(absl::StrCat("field ", current_, " is cut short"));
      return;
    }
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i)
      bits |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    in_.remove_prefix(8);
    std::memcpy(&v, &bits, sizeof v);
  }
  void Get(absl::Duration& d) {
    int64_t ns = 0;
    Get(ns);
    d = time::NanosToDuration(ns);
  }
  void Get(absl::Time& t) {
    int64_t ns = 0;
    Get(ns);
    t = time::NanosToTime(ns);
  }
  void Get(std::string& s) {
    const uint64_t n = Varint();
    if (n > in_.size()) {
      Fail(absl::StrCat("field ", current_, " is cut short"));
      return;
    }
    s.assign(in_.data(), n);
    in_.remove_prefix(n);
  }
  // A list's count is bounded by the bytes left (each item takes one or more).
  uint64_t Count() {
    const uint64_t n = Varint();
    if (n > in_.size()) {
      Fail(absl::StrCat("field ", current_, " is cut short"));
      return 0;
    }
    return n;
  }
  void Get(std::vector<std::string>& list) {
    list.clear();
    for (uint64_t i = 0, n = Count(); i < n && error_.empty(); ++i)
      Get(list.emplace_back());
  }
  void Get(std::map<std::string, std::string>& map) {
    map.clear();
    for (uint64_t i = 0, n = Count(); i < n && error_.empty(); ++i) {
      std::string k;
      Get(k);
      Get(map[std::move(k)]);
    }
  }
  void Get(std::vector<std::pair<int, int>>& ranges) {
    ranges.clear();
    for (uint64_t i = 0, n = Count(); i < n && error_.empty(); ++i) {
      auto& [lo, hi] = ranges.emplace_back();
      Get(lo);
      Get(hi);
    }
  }
  template <typename E>
  requires std::is_enum_v<E>
  void Get(E& e) {
    const uint64_t u = Varint();
    if (u > static_cast<uint64_t>(Last(E{}))) {
      Fail(absl::StrCat("field ", current_, ": ", u, " is not a known value"));
      return;
    }
    e = static_cast<E>(u);
  }

  absl::string_view in_;
  int current_ = 0;  // the field being read
  int next_ = 0;     // the next field's number; 0 at the end
  std::string error_;
};

}  // namespace

PackedSpec::PackedSpec(const PackedSpec& other) : rep_(other.rep_) {
  if (rep_ != nullptr) rep_->refs.fetch_add(1, std::memory_order_relaxed);
}

PackedSpec::PackedSpec(PackedSpec&& other) noexcept
    : rep_(std::exchange(other.rep_, nullptr)) {}

PackedSpec& PackedSpec::operator=(PackedSpec other) noexcept {
  std::swap(rep_, other.rep_);
  return *this;
}

namespace {

// Equal specs share one buffer: every shared buffer alive is in this set
// (PackUnshared's are not, until Share), found by its bytes, and a PackedSpec
// made of bytes already there takes that buffer instead of a copy. A daemon's
// job is packed by the job files' reader and again by the scheduler; with the
// set both keep one buffer.
//
// A buffer whose count has dropped to 0 is dying: it is never taken again.
// The thread that dropped it removes it from the set (if a newer buffer of
// the same bytes has not replaced it there) before freeing it, under the
// set's lock, so a lookup never sees a freed buffer.
class Interned {
 public:
  using Rep = PackedSpec::Rep;

  static Interned& Get() {
    static Interned* const table = new Interned();
    return *table;
  }

  // A buffer of `bytes` with a reference taken: the live one, or a new one.
  Rep* Acquire(absl::string_view bytes) {
    const Probe probe(bytes);
    absl::MutexLock lock(&mu_);
    if (Rep* live = TakeLive(probe)) return live;
    Rep* rep = New(bytes);
    rep->shared = 1;
    set_.insert(Entry{rep, probe.hash});
    return rep;
  }

  // A new buffer of `bytes`, not in the set.
  static Rep* New(absl::string_view bytes) {
    if (bytes.size() >= (size_t{1} << 31)) std::abort();  // Rep::size
    void* memory = ::operator new(sizeof(Rep) + bytes.size());
    Rep* rep = new (memory) Rep();
    rep->size = static_cast<uint32_t>(bytes.size());
    if (!bytes.empty()) std::memcpy(rep->data(), bytes.data(), bytes.size());
    return rep;
  }

  // The buffer to hold instead of `rep` (on which the caller holds a
  // reference): the live one of its bytes with a reference taken, or `rep`
  // itself, left as it is (in the set or not). A live one taken, the caller
  // drops its reference on `rep`.
  Rep* TakeShared(Rep* rep) {
    const Probe probe(View(rep));
    absl::MutexLock lock(&mu_);
    if (Rep* live = TakeLive(probe, rep)) return live;
    return rep;
  }

  // Frees `rep`, whose count has dropped to 0. One never shared is in no
  // set: no lock, no hash.
  void Free(Rep* rep) {
    if (rep->shared) {
      const Probe probe(View(rep));
      absl::MutexLock lock(&mu_);
      auto it = set_.find(probe);
      if (it != set_.end() && it->rep == rep) set_.erase(it);
    }
    rep->~Rep();
    ::operator delete(rep);
  }

 private:
  // A set entry: a shared buffer and the hash of its bytes, kept so that
  // growing the set reads no buffer (a cache miss each, and a hash of its
  // bytes: most of what entering a million distinct specs cost).
  struct Entry {
    Rep* rep;
    size_t hash;
  };
  // Bytes looked for, hashed once for the lookup and the insert after it.
  struct Probe {
    explicit Probe(absl::string_view b) : bytes(b), hash(absl::HashOf(b)) {}
    absl::string_view bytes;
    size_t hash;
  };

  // The live buffer of `probe`'s bytes with a reference taken, or null; a
  // dying one found is taken out of the set. `self` found is returned as it
  // is, with no reference taken (its holder's is the one).
  Rep* TakeLive(const Probe& probe, const Rep* self = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = set_.find(probe);
    if (it == set_.end()) return nullptr;
    Rep* live = it->rep;
    if (live == self) return live;
    uint32_t n = live->refs.load(std::memory_order_relaxed);
    while (n != 0 && !live->refs.compare_exchange_weak(
                         n, n + 1, std::memory_order_relaxed)) {
    }
    if (n != 0) return live;
    set_.erase(it);  // dying: its owner will not find it
    return nullptr;
  }

  static absl::string_view View(const Rep* rep) {
    return absl::string_view(reinterpret_cast<const char*>(rep + 1), rep->size);
  }
  struct Hash {
    using is_transparent = void;
    size_t operator()(const Entry& e) const { return e.hash; }
    size_t operator()(const Probe& p) const { return p.hash; }
  };
  struct Eq {
    using is_transparent = void;
    static absl::string_view V(const Entry& e) { return View(e.rep); }
    static absl::string_view V(const Probe& p) { return p.bytes; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return V(a) == V(b);
    }
  };

  absl::Mutex mu_;
  absl::flat_hash_set<Entry, Hash, Eq> set_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

PackedSpec::~PackedSpec() {
  if (rep_ == nullptr ||
      rep_->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return;
  }
  Interned::Get().Free(rep_);
}

PackedSpec PackedSpec::FromTrustedBytes(absl::string_view bytes) {
  return PackedSpec(Interned::Get().Acquire(bytes));
}

PackedSpec PackedSpec::Pack(const JobSpec& spec) {
  Packer packer;
  VisitFields(spec, packer);
  return FromTrustedBytes(packer.out());
}

PackedSpec PackedSpec::PackUnshared(const JobSpec& spec) {
  Packer packer;
  VisitFields(spec, packer);
  return PackedSpec(Interned::New(packer.out()));
}

void PackedSpec::TakeShared() {
  if (rep_ == nullptr) return;
  Rep* shared = Interned::Get().TakeShared(rep_);
  if (shared == rep_) return;
  // A live equal buffer: drop this one (which was never in the set, or it
  // would have been the one found).
  *this = PackedSpec(shared);
}

absl::StatusOr<JobSpec> PackedSpec::Decode(absl::string_view bytes) {
  JobSpec spec;
  Unpacker unpacker(bytes);
  VisitFields(spec, unpacker);
  if (absl::Status s = unpacker.Done(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<PackedSpec> PackedSpec::FromBytes(absl::string_view bytes) {
  absl::StatusOr<JobSpec> spec = Decode(bytes);
  if (!spec.ok()) return spec.status();
  return FromTrustedBytes(bytes);
}

JobSpec PackedSpec::Unpack() const {
  absl::StatusOr<JobSpec> spec = Decode(bytes());
  // Pack or FromBytes made the bytes; a failure here is memory corruption.
  if (!spec.ok()) std::abort();
  return *std::move(spec);
}

JobKey PackedSpec::Key() const {
  JobKey key;
  const JobSpec& d = Defaults();
  Unpacker unpacker(bytes());
  unpacker(1, key.name_space, d.key.name_space);
  unpacker(2, key.id, d.key.id);
  return key;
}

absl::string_view PackedSpec::bytes() const {
  if (rep_ == nullptr) return {};
  return absl::string_view(rep_->data(), rep_->size);
}

}  // namespace chime::core
