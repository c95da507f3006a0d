// convstudy: entry point (the commands live in src/cli/).
#include "cli/commands.hpp"

int main(int argc, char** argv) { return cs::cli::main(argc, argv); }
