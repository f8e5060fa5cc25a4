// Idempotency-Key on POST (as in the IETF httpapi draft "The Idempotency-Key
// HTTP Header Field"): a client that sends a POST again with the same key --
// because the answer was lost -- gets the first answer again, and the
// operation is not done twice.
//
//   IdempotencyGate gate(store);
//   return gate.Run(request, who, [&] { return Create(request); });
//
// Keys are the client's (1-255 printable ASCII characters), scoped by the
// caller's token name, and kept in the store's idempotency keys for 24 hours
// (retention drops them after). A key sent again with a different request
// (method, path or body) is 422; while the first request with a key is still
// being handled, a second one is 409. Answers of 5xx are not kept: the
// operation may not have happened, and a re-send tries again.
//
// What is not covered: a crash between carrying out the operation and storing
// its answer leaves the key unrecorded, and a re-send does it again. The
// store's CheckIdempotencyKey stores a record only with its answer; closing
// that window takes a reserve-then-complete store operation (for the cluster
// stores, issue 8). Within one daemon, keys being handled are held in memory.
//
// Thread-safety: Run may be called concurrently.
#ifndef CHIME_SRC_API_IDEMPOTENCY_H_
#define CHIME_SRC_API_IDEMPOTENCY_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "chime/store.h"
#include "src/http/router.h"

namespace chime::api {

class IdempotencyGate {
 public:
  static constexpr absl::Duration kWindow = absl::Hours(24);

  // Keys are kept in `store`, which must outlive the gate (nullptr: none are
  // kept, and Run just calls the handler).
  explicit IdempotencyGate(Store* store) : store_(store) {}

  // handler() -- or, for a key seen before, its first answer (with the header
  // `Idempotent-Replayed: true`). Without an Idempotency-Key header, just
  // handler(). With one, an answer the handler defers is waited for here.
  http::Response Run(const http::Request& request, const std::string& who,
                     absl::FunctionRef<http::Response()> handler);

 private:
  Store* const store_;
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::api

#endif  // CHIME_SRC_API_IDEMPOTENCY_H_
