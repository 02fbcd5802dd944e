// Small valid case files (RAW v33, DYR, MATPOWER) for the bad-input tests, and a scratch
// directory to write variants of them into.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace hstest {

// Line numbers in comments: the bad-input table refers to them.
inline const std::string minimalRaw =
    "0, 100.0, 33, 0, 0, 60.0 / minimal two-bus case\n"                        // 1
    "TITLE ONE\n"                                                              // 2
    "TITLE TWO\n"                                                              // 3
    "1,'A',230.0,3,1,1,1,1.0,0.0,1.1,0.9,1.1,0.9\n"                            // 4
    "2,'B',230.0,1,1,1,1,0.98,-2.0,1.1,0.9,1.1,0.9\n"                          // 5
    "0 / END OF BUS DATA, BEGIN LOAD DATA\n"                                   // 6
    "2,'1',1,1,1,50.0,10.0,0,0,0,0,1,1,0\n"                                    // 7
    "0 / END OF LOAD DATA\n"                                                   // 8
    "0 / END OF FIXED SHUNT DATA\n"                                            // 9
    "1,'1',50.0,10.0,100,-100,1.0,0,100,0,1,0,0,1,1,100,200,0\n"               // 10
    "0 / END OF GENERATOR DATA\n"                                              // 11
    "1,2,'1',0.01,0.1,0.02,0,0,0,0,0,0,0,1,1,0,1,1\n"                          // 12
    "0 / END OF BRANCH DATA\n"                                                 // 13
    "0 / END OF TRANSFORMER DATA\n"                                            // 14
    "0 / END OF AREA DATA\n"                                                   // 15
    "0 / END OF TWO-TERMINAL DC DATA\n"                                        // 16
    "0 / END OF VSC DC DATA\n"                                                 // 17
    "0 / END OF IMPEDANCE CORRECTION DATA\n"                                   // 18
    "0 / END OF MULTI-TERMINAL DC DATA\n"                                      // 19
    "0 / END OF MULTI-SECTION LINE DATA\n"                                     // 20
    "0 / END OF ZONE DATA\n"                                                   // 21
    "0 / END OF INTER-AREA TRANSFER DATA\n"                                    // 22
    "0 / END OF OWNER DATA\n"                                                  // 23
    "0 / END OF FACTS DATA\n"                                                  // 24
    "0 / END OF SWITCHED SHUNT DATA\n"                                         // 25
    "0 / END OF GNE DATA\n"                                                    // 26
    "0 / END OF INDUCTION MACHINE DATA\n"                                      // 27
    "Q\n";                                                                     // 28

inline const std::string minimalDyr =
    "1 'GENROU' 1 6.5 0.06 0.2 0.05 4.0 0.0 1.8 1.75 0.6\n"   // 1
    "  0.8 0.23 0.15 0.09 0.38 /\n"                           // 2
    "1 'TGOV1' 1 0.05 0.5 1.05 0.3 1.0 2.1 0.0 / governor\n"; // 3

inline const std::string minimalMatpower =
    "function mpc = two_bus\n"                               // 1
    "% a comment\n"                                          // 2
    "mpc.version = '2';\n"                                   // 3
    "mpc.baseMVA = 100;\n"                                   // 4
    "mpc.bus = [\n"                                          // 5
    "\t1\t3\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t1.1\t0.9;\n"     // 6
    "\t2\t1\t50\t10\t0\t0\t1\t0.98\t-2\t230\t1\t1.1\t0.9;\n" // 7
    "];\n"                                                   // 8
    "mpc.gen = [\n"                                          // 9
    "\t1\t50\t10\t100\t-100\t1.0\t100\t1\t200\t0;\n"         // 10
    "];\n"                                                   // 11
    "mpc.branch = [\n"                                       // 12
    "\t1\t2\t0.01\t0.1\t0.02\t0\t0\t0\t0\t0\t1\t-360\t360;\n" // 13
    "];\n"                                                   // 14
    "mpc.gencost = [ 2 0 0 3 0.01 40 0 ];\n";                // 15

// Replaces line `line` (1-based) of text by `replacement` (which may hold several lines or none).
inline std::string replaceLine(const std::string &text, int line, const std::string &replacement) {
  std::size_t begin = 0;
  for (int k = 1; k < line; ++k) begin = text.find('\n', begin) + 1;
  const std::size_t end = text.find('\n', begin) + 1;
  return text.substr(0, begin) + replacement + text.substr(end);
}
// The first n lines of text.
inline std::string firstLines(const std::string &text, int n) {
  std::size_t end = 0;
  for (int k = 0; k < n; ++k) end = text.find('\n', end) + 1;
  return text.substr(0, end);
}

class ScratchDir {
public:
  ScratchDir() {
    char tmpl[] = "/tmp/hs_power_XXXXXX";
    const char *d = mkdtemp(tmpl);
    path_ = d ? d : "/tmp";
  }
  ~ScratchDir() {
    const std::string cmd = "rm -rf '" + path_ + "'";
    if (path_ != "/tmp" && std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path_.c_str());
  }
  std::string write(const std::string &name, const std::string &content) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

private:
  std::string path_;
};

} // namespace hstest
