// Progress output: a rewritten line on a terminal, rate-limited plain lines otherwise,
// nothing when quiet.
#include "catch.hpp"

#include "progress.hpp"

#include <sstream>
#include <string>

TEST_CASE("progress: terminal, plain and quiet output", "[progress]") {
    SECTION("quiet prints nothing") {
        std::ostringstream os;
        {
            cs::Progress p("generate", 10, true, os, true);
            p.update(5, "conv1 N=1: reference (double)");
            p.message("a note");
            p.finish();
        }
        CHECK(os.str().empty());
    }
    SECTION("terminal: one line rewritten with \\r") {
        std::ostringstream os;
        cs::Progress p("generate", 10, false, os, true);
        p.update(5, "conv2 N=128: reference (double)");
        p.finish("15 files");
        const std::string s = os.str();
        INFO(s);
        CHECK(s.find("\rgenerate [ 50%] conv2 N=128: reference (double) (") != std::string::npos);
        CHECK(s.find("generate: done in ") != std::string::npos);
        CHECK(s.find(", 15 files") != std::string::npos);
        CHECK(s.find('\n') == s.size() - 1);  // a single line on screen until the end
    }
    SECTION("plain: start, at most one line per interval, finish") {
        std::ostringstream os;
        cs::Progress p("sweep", 100, false, os, false, 3600.0);
        for (int i = 0; i < 100; ++i) p.update(i, "step " + std::to_string(i));
        p.message("note: something");
        p.finish();
        p.finish();  // idempotent
        const std::string s = os.str();
        INFO(s);
        CHECK(s.find('\r') == std::string::npos);
        CHECK(s.rfind("sweep: started\n", 0) == 0);
        CHECK(s.find("step") == std::string::npos);  // rate limited away
        CHECK(s.find("note: something\n") != std::string::npos);
        CHECK(s.find("sweep: done in ") != std::string::npos);
    }
    SECTION("durations") {
        CHECK(cs::Progress::format_duration(0.42) == "0.4s");
        CHECK(cs::Progress::format_duration(42) == "42s");
        CHECK(cs::Progress::format_duration(187) == "3m07s");
        CHECK(cs::Progress::format_duration(3720) == "1h02m");
    }
}
