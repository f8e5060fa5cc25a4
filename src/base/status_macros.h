// Status propagation macros over absl::Status / absl::StatusOr.
//
//   RETURN_IF_ERROR(expr);          // returns the status of `expr` from the
//   enclosing function
//                                   // when it is not OK.
//   ASSIGN_OR_RETURN(lhs, expr);    // evaluates `expr` (a StatusOr<T>); on
//   error returns its
//                                   // status, otherwise assigns the value to
//                                   `lhs`, which may be a
//                                   // declaration (`auto x`) or an existing
//                                   lvalue.
//
// Both work in functions returning absl::Status or absl::StatusOr<U>. They
// evaluate `expr` once.
#ifndef CHIME_SRC_BASE_STATUS_MACROS_H_
#define CHIME_SRC_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define CHIME_STATUS_CONCAT_INNER_(a, b) a##b
#define CHIME_STATUS_CONCAT_(a, b) CHIME_STATUS_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::absl::Status chime_status_ = (expr);         \
    if (!chime_status_.ok()) return chime_status_; \
  } while (false)

#define CHIME_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)  \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  CHIME_ASSIGN_OR_RETURN_IMPL_(     \
      CHIME_STATUS_CONCAT_(chime_statusor_, __LINE__), lhs, expr)

#endif  // CHIME_SRC_BASE_STATUS_MACROS_H_
