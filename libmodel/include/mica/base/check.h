// mica — invariant checks for host code.
//
// MICA_CHECK(cond) aborts with file:line and the condition when a broken invariant is found.
// It is for programming errors only; bad input (files, flags, shapes) returns absl::Status.
#ifndef MICA_BASE_CHECK_H_
#define MICA_BASE_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define MICA_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "%s:%d: MICA_CHECK failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                       \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

#ifdef NDEBUG
#define MICA_DCHECK(cond) \
  do {                    \
  } while (0)
#else
#define MICA_DCHECK(cond) MICA_CHECK(cond)
#endif

#endif  // MICA_BASE_CHECK_H_
