// The one place tests include Catch2 from (Debian 12 ships v2.13; a move to v3 touches only
// this file and catch_main.cc).
#ifndef MICA_TESTING_CATCH_H_
#define MICA_TESTING_CATCH_H_

#include <catch2/catch.hpp>

#endif  // MICA_TESTING_CATCH_H_
