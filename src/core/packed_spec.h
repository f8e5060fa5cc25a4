// PackedSpec: a JobSpec as a compact, canonical byte string, shared and
// immutable -- how the scheduler keeps a job's definition in memory, and
// (behind a format byte) how stores keep it (src/store/job_codec.h).
//
// A JobSpec value is ~850 bytes before its strings, most of it fields left at
// their defaults (an HTTP executor's for a shell job, infinite durations).
// Packed, only the fields that differ from a default-constructed JobSpec are
// written, each as a field number and its value, in field-number order:
//
//   field   := varint(number) value
//   value   := varint (enums, bools)            | zigzag varint (ints;
//              durations and times as nanoseconds, src/time/nanos.h)
//            | 8 bytes little-endian (doubles)  | varint(length) bytes
//              (strings) | varint(count) items  (lists, maps as key, value)
//
// so a typical job ("nightly", a cron expression, a zone, a shell command,
// a retry policy) packs into 60-100 bytes. The encoding is canonical: equal
// specs pack into equal bytes and different specs into different bytes, so
// comparing two PackedSpecs compares the specs. A new field takes the next
// number; older binaries refuse bytes with numbers they do not know.
//
//   PackedSpec p = PackedSpec::Pack(spec);
//   JobSpec again = p.Unpack();              // == spec
//   PackedSpec q = p;                        // shares the bytes
//
// Equal specs share one buffer: a spec packed (or read from bytes) while an
// equal one is alive takes its buffer, found in a process-wide set of the
// shared buffers (about 20 bytes each), so the job files' copy of a job and
// the scheduler's are one. PackUnshared makes a buffer outside the set, which
// TakeShared() later trades for the equal one there, if there is one -- and
// otherwise leaves outside: the scheduler's copy of a job nobody else holds
// (a library's job, an API job) costs no entry, nor the set's growth.
//
// Thread-safety: a PackedSpec's bytes are immutable; copies share one buffer
// with an atomic count, so copies may be used and destroyed on any threads.
// Pack, FromBytes, TakeShared and dropping a buffer's last copy take the set's
// lock. TakeShared() changes the object it is called on (which buffer it
// holds): it must not race with other uses of that one object.
#ifndef CHIME_SRC_CORE_PACKED_SPEC_H_
#define CHIME_SRC_CORE_PACKED_SPEC_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chime/job.h"

namespace chime::core {

class PackedSpec {
 public:
  // Empty: holds no spec (bytes() is "", Unpack() is a default JobSpec).
  PackedSpec() = default;
  PackedSpec(const PackedSpec& other);
  PackedSpec(PackedSpec&& other) noexcept;
  PackedSpec& operator=(PackedSpec other) noexcept;
  ~PackedSpec();

  static PackedSpec Pack(const JobSpec& spec);
  // Pack without looking for an equal live buffer: a buffer of its own,
  // which Pack and FromBytes never find (nor share). Cheaper than Pack where
  // that search may wait for a thread that is not in a hurry
  // (Scheduler::AddJob packs on its caller's thread, and the scheduler thread
  // calls TakeShared).
  static PackedSpec PackUnshared(const JobSpec& spec);
  // Takes the live shared buffer of equal bytes, if there is one (dropping
  // this one); otherwise keeps this buffer as it is (an unshared one stays
  // outside the set). Other copies of the buffer dropped keep theirs; they
  // stay valid.
  void TakeShared();
  // Checks that `bytes` are a packing this binary reads (what bytes() gave);
  // DataLoss saying where otherwise.
  static absl::StatusOr<PackedSpec> FromBytes(absl::string_view bytes);
  // Decodes bytes that FromBytes would accept; DataLoss otherwise.
  static absl::StatusOr<JobSpec> Decode(absl::string_view bytes);

  // The spec. Never fails: the bytes were made by Pack or checked.
  JobSpec Unpack() const;
  // Just the key (the first fields), cheaper than Unpack().key.
  JobKey Key() const;

  absl::string_view bytes() const;
  bool empty() const { return rep_ == nullptr; }

  friend bool operator==(const PackedSpec& a, const PackedSpec& b) {
    return a.rep_ == b.rep_ || a.bytes() == b.bytes();
  }

  // The shared buffer (opaque; packed_spec.cc).
  struct Rep;

 private:
  explicit PackedSpec(Rep* rep) : rep_(rep) {}
  static PackedSpec FromTrustedBytes(absl::string_view bytes);

  Rep* rep_ = nullptr;
};

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_PACKED_SPEC_H_
