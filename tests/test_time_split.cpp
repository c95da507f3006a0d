// TimeSplit: parts in the order first added, sums per part, the rest as "other", shares of the total.
#include "catch.hpp"

#include "time_split.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

TEST_CASE("time split: parts, sums, other and shares", "[time_split]") {
    cs::TimeSplit t;
    t.add("plan set-up", 30'000);
    t.add("checked runs", 10'000);
    t.add("plan set-up", 20'000);
    t.add("ignored", -5);
    t.add("ignored too", NAN);
    CHECK(t.ms("plan set-up") == 50'000);
    CHECK(t.ms("checked runs") == 10'000);
    CHECK(t.ms("never") == 0);
    CHECK(t.covered_ms() == 60'000);
    CHECK(t.text(100'000) == "1m40s: plan set-up 50s (50%), checked runs 10s (10%), other 40s (40%)");
    // The parts may exceed a total measured elsewhere: "other" never goes below zero.
    CHECK(t.text(50'000) == "50s: plan set-up 50s (100%), checked runs 10s (20%), other 0.0s (0%)");
    CHECK(cs::TimeSplit().text(0) == "0.0s: other 0.0s (0%)");
}

TEST_CASE("time split: a scope adds its lifetime, also when an exception unwinds", "[time_split]") {
    cs::TimeSplit t;
    {
        auto s = t.scope("sleep");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(t.ms("sleep") >= 20);
    try {
        auto s = t.scope("throws");
        throw std::runtime_error("x");
    } catch (const std::runtime_error&) {
    }
    CHECK(t.covered_ms() >= t.ms("sleep"));
    CHECK(t.text(1e9).find(", throws ") != std::string::npos);  // added while unwinding
    auto moved = [&] {
        auto s = t.scope("moved");
        return s;
    }();
    (void)moved;
    CHECK(t.ms("moved") == 0);  // not yet: the moved-to scope is still alive
}
