// Internal to src/api: the job count behind GET /v1/namespaces
// (status_routes.cc), apart so that tests can set a small cap.
//
// Thread-safety: as the Store's methods.
#ifndef CHIME_SRC_API_STATUS_ROUTES_H_
#define CHIME_SRC_API_STATUS_ROUTES_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "chime/store.h"

namespace chime::api::internal {

struct NamespaceJobs {
  int64_t jobs = 0;
  int64_t paused = 0;
};

struct JobCount {
  std::map<std::string, NamespaceJobs> by_namespace;
  int64_t counted = 0;  // jobs read
  bool capped = false;  // there are more than max_jobs: counted == max_jobs
};

// The stored jobs by namespace, read in pages of `page_size` (each page one
// store read, with a deadline of its own), in the order they were first
// stored, at most `max_jobs` of them. A store error is returned as it is.
absl::StatusOr<JobCount> CountJobsByNamespace(Store& store, int64_t max_jobs,
                                              int page_size);

}  // namespace chime::api::internal

#endif  // CHIME_SRC_API_STATUS_ROUTES_H_
