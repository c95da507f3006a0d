// Progress on stderr for long runs (generate, sweep).
//
// When stderr is a terminal: one line, rewritten in place with \r, showing what is
// running, the percentage, the elapsed time and an estimate of the time left. Otherwise
// (a log file, a pipe, CI): plain lines, a start line, at most one line every ~2 seconds, and a
// finish line. quiet = true prints nothing. On a terminal the line is also redrawn once a
// second by a small thread, so the elapsed time moves during a long step.
//
//   Progress p("generate", total_flops, quiet);
//   p.update(done, "conv2 N=128: reference (double)");
//   ...
//   p.finish();
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace cs {

class Progress {
public:
    // On stderr; a terminal is detected with isatty(2).
    Progress(std::string what, double total_units, bool quiet);
    // For tests: any stream, terminal behaviour chosen by the caller, and the line
    // interval for plain output.
    Progress(std::string what, double total_units, bool quiet, std::ostream& out, bool terminal,
             double plain_interval_s = 2.0);
    // Ends a terminal line that finish() did not (e.g. when an exception unwinds).
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // done_units of total_units are done; `current` says what is running now. A change of
    // `current` is always shown on a terminal; plain output is rate limited.
    void update(double done_units, std::string current);
    // Prints "<what>: done in 1m23s" (plus ", <summary>" when given). Idempotent.
    void finish(const std::string& summary = "");
    // Prints a line of its own (a note, a warning) without garbling the progress line;
    // shown even in plain mode, not rate limited; nothing when quiet.
    void message(const std::string& text);

    // Under ten seconds with one decimal, then whole seconds, then m..s and h..m, e.g. 3m07s, 1h02m.
    static std::string format_duration(double seconds);

private:
    using Clock = std::chrono::steady_clock;
    double elapsed() const;
    std::string status_text() const;
    void draw_terminal();  // with mutex_ held
    void stop_ticker();

    std::string what_;
    double total_;
    bool quiet_;
    std::ostream& out_;
    bool terminal_;
    double interval_;
    Clock::time_point start_;
    Clock::time_point last_print_;
    double done_ = 0;
    std::string current_;
    std::size_t last_len_ = 0;
    bool line_open_ = false;  // a terminal line is on screen without its newline
    bool finished_ = false;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread ticker_;
};

}  // namespace cs
