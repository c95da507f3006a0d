// convstudy: entry point (the commands live in cli/).
#include "commands.hpp"

int main(int argc, char** argv) { return cs::cli::main(argc, argv); }
