// A string as one shell word, for the command lines the tool prints (`generate` hints), writes
// (`plan steps`, read back by scripts/device.sh through eval) and its tests run.
#pragma once

#include <string>

namespace cs {

// s unchanged when it is non-empty and has only characters no shell treats specially, else in
// single quotes (a quote inside as '\''): the shell reads it back as s.
std::string shell_quote(const std::string& s);

}  // namespace cs
