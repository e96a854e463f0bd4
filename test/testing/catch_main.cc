#define CATCH_CONFIG_MAIN
#include "testing/catch.h"
