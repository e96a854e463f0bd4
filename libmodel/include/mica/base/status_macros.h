// mica — status propagation macros.
//
// Debian 12's Abseil (20220623) has no ABSL_RETURN_IF_ERROR / ABSL_ASSIGN_OR_RETURN, so mica
// carries its own two, drop-in compatible so they can become aliases later.
//
//   absl::StatusOr<Graph> LoadTwice(const std::string& path) {
//     MICA_ASSIGN_OR_RETURN(Graph g, LoadModel(path));
//     MICA_RETURN_IF_ERROR(Validate(g));
//     return g;
//   }
#ifndef MICA_BASE_STATUS_MACROS_H_
#define MICA_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns `expr` from the enclosing function when it is not OK.
#define MICA_RETURN_IF_ERROR(expr)                  \
  do {                                              \
    ::absl::Status mica_status_ = (expr);           \
    if (!mica_status_.ok()) return mica_status_;    \
  } while (0)

#define MICA_STATUS_CONCAT_INNER_(a, b) a##b
#define MICA_STATUS_CONCAT_(a, b) MICA_STATUS_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (an absl::StatusOr<T>); returns its status on error, else moves the value
// into `lhs` (a declaration such as `Graph g` or an existing lvalue).
#define MICA_ASSIGN_OR_RETURN(lhs, rexpr) \
  MICA_ASSIGN_OR_RETURN_IMPL_(MICA_STATUS_CONCAT_(mica_statusor_, __LINE__), lhs, rexpr)

#define MICA_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // MICA_BASE_STATUS_MACROS_H_
