// Catch2 v2 only: the v3 build links Catch2::Catch2WithMain instead.
#define CATCH_CONFIG_MAIN
#include "catch.hpp"
