// The items of a list or set of strings, joined by a separator: join(v, ", ") is "a, b, c",
// join(v, ",") one command-line argument "a,b,c". The one joiner of the command line's
// messages, plan command lines and compare's headers.
#pragma once

#include <string>
#include <string_view>

namespace cs {

template <class Strings>
std::string join(const Strings& items, std::string_view sep) {
    std::string s;
    bool first = true;
    for (const auto& x : items) {
        if (!first) s += sep;
        s += x;
        first = false;
    }
    return s;
}

}  // namespace cs
