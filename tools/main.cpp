#include "tools/commands.h"

int main(int argc, char** argv) {
  return convcheck::cli::run(argc, argv);
}
