// Includes whichever Catch2 is installed: v3 (Ubuntu 24.04) or v2 (Debian 12), and makes
// `Approx` mean the same in both.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define CS_CATCH_V3 1
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
