#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace cs {

namespace {

std::size_t terminal_width() {
    winsize ws{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) return ws.ws_col;
    return 100;
}

}  // namespace

Progress::Progress(std::string what, double total_units, bool quiet)
    : Progress(std::move(what), total_units, quiet, std::cerr, ::isatty(STDERR_FILENO) == 1) {}

Progress::Progress(std::string what, double total_units, bool quiet, std::ostream& out, bool terminal,
                   double plain_interval_s)
    : what_(std::move(what)),
      total_(total_units),
      quiet_(quiet),
      out_(out),
      terminal_(terminal),
      interval_(plain_interval_s),
      start_(Clock::now()),
      last_print_(start_) {
    if (quiet_) return;
    if (terminal_) {
        draw_terminal();
        ticker_ = std::thread([this] {
            std::unique_lock lock(mutex_);
            while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; }))
                if (!finished_) draw_terminal();
        });
    } else {
        out_ << what_ << ": started" << std::endl;
    }
}

Progress::~Progress() {
    stop_ticker();
    if (!quiet_ && terminal_ && line_open_) {
        out_ << '\n';
        out_.flush();
    }
}

void Progress::stop_ticker() {
    if (!ticker_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    ticker_.join();
}

double Progress::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

std::string Progress::format_duration(double s) {
    if (!(s >= 0) || !std::isfinite(s)) return "?";
    char buf[32];
    if (s < 10) {
        std::snprintf(buf, sizeof buf, "%.1fs", s);
    } else if (s < 60) {
        std::snprintf(buf, sizeof buf, "%.0fs", s);
    } else if (s < 3600) {
        const long t = std::lround(s);
        std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
    } else {
        const long t = std::lround(s / 60);
        std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 60, t % 60);
    }
    return buf;
}

std::string Progress::status_text() const {
    const double frac = total_ > 0 ? std::clamp(done_ / total_, 0.0, 1.0) : 0.0;
    char pct[16];
    std::snprintf(pct, sizeof pct, "%3.0f%%", 100.0 * frac);
    const double t = elapsed();
    std::string s = what_ + " [" + pct + "]";
    if (!current_.empty()) s += " " + current_;
    s += " (" + format_duration(t) + " elapsed";
    // An estimate only once some work is done and a little time has passed.
    if (frac > 0.005 && t > 1.0) s += ", ~" + format_duration(t * (1.0 - frac) / frac) + " left";
    return s + ")";
}

void Progress::draw_terminal() {
    std::string line = status_text();
    const std::size_t width = terminal_width() - 1;
    if (line.size() > width) line = line.substr(0, width - 3) + "...";
    out_ << '\r' << line;
    if (line.size() < last_len_) out_ << std::string(last_len_ - line.size(), ' ');
    last_len_ = line.size();
    out_.flush();
    line_open_ = true;
    last_print_ = Clock::now();
}

void Progress::update(double done_units, std::string current) {
    if (quiet_) return;
    std::lock_guard lock(mutex_);
    if (finished_) return;
    const bool changed = current != current_;
    done_ = done_units;
    current_ = std::move(current);
    const double since = std::chrono::duration<double>(Clock::now() - last_print_).count();
    if (terminal_) {
        if (changed || since >= 0.2) draw_terminal();
    } else if (since >= interval_) {
        out_ << status_text() << std::endl;
        last_print_ = Clock::now();
    }
}

void Progress::message(const std::string& text) {
    if (quiet_) return;
    std::lock_guard lock(mutex_);
    if (terminal_ && line_open_) {
        out_ << '\r' << std::string(last_len_, ' ') << '\r' << text << '\n';
        last_len_ = 0;
        line_open_ = false;
        if (!finished_) draw_terminal();
    } else {
        out_ << text << '\n';
        out_.flush();
    }
}

void Progress::finish(const std::string& summary) {
    if (quiet_) return;
    stop_ticker();
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    std::string line = what_ + ": done in " + format_duration(elapsed());
    if (!summary.empty()) line += ", " + summary;
    if (terminal_) {
        out_ << '\r' << line;
        if (line.size() < last_len_) out_ << std::string(last_len_ - line.size(), ' ');
        out_ << '\n';
        line_open_ = false;
    } else {
        out_ << line << '\n';
    }
    out_.flush();
}

}  // namespace cs
