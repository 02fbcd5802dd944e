// Malformed case files, one row each: the reader returns a PETSc error whose message names the
// file and the line at fault ("path:line: ...") and says what is wrong.
#include "power/case_files.hpp"
#include "power/error_capture.hpp"

#include <hybridsens/power/readers.hpp>

#include <gtest/gtest.h>

using namespace hybridsens::power;
using hstest::firstLines;
using hstest::minimalDyr;
using hstest::minimalMatpower;
using hstest::minimalRaw;
using hstest::replaceLine;

namespace {

enum class Reader { Raw, Dyr, DyrChecked, Matpower };

struct BadFile {
  const char *name;
  Reader reader;
  std::string content;
  int line;              // the line the message must name
  const char *fragment;  // and a piece of what it must say
};

PetscErrorCode readAs(Reader r, const std::string &path, const hstest::ScratchDir &dir) {
  NetworkCase net;
  DynamicData dyn;
  switch (r) {
  case Reader::Raw: return readRaw(path, &net);
  case Reader::Matpower: return readMatpower(path, &net);
  case Reader::Dyr: return readDyr(path, DyrOptions(), &dyn);
  case Reader::DyrChecked: {
    PetscErrorCode ierr = readRaw(dir.write("network.raw", minimalRaw), &net);
    if (ierr) return ierr;
    DyrOptions opt;
    opt.network = &net;
    return readDyr(path, opt, &dyn);
  }
  }
  return 0;
}

const char *extension(Reader r) { return r == Reader::Matpower ? ".m" : r == Reader::Raw ? ".raw" : ".dyr"; }

std::vector<BadFile> badFiles() {
  const std::string raw = minimalRaw, dyr = minimalDyr, m = minimalMatpower;
  return {
      // ---- PSS/E RAW ----
      {"raw_truncated_in_load_section", Reader::Raw, firstLines(raw, 7), 7, "file ends inside the LOAD section"},
      {"raw_truncated_header", Reader::Raw, firstLines(raw, 2), 2, "file ends inside the 3-line case header"},
      {"raw_unknown_revision", Reader::Raw, replaceLine(raw, 1, "0, 100.0, 35, 0, 0, 60.0\n"), 1, "RAW revision 35 is not supported (supported: 32, 33)"},
      {"raw_change_case", Reader::Raw, replaceLine(raw, 1, "1, 100.0, 33, 0, 0, 60.0\n"), 1, "only a base case (IC = 0)"},
      {"raw_bus_field_count", Reader::Raw, replaceLine(raw, 5, "2,'B',230.0,1,1,1,1,0.98\n"), 5, "bus record: 8 fields, expected 9 to 13"},
      {"raw_bad_number", Reader::Raw, replaceLine(raw, 4, "1,'A',230.0,3,1,1,1,1.0x,0.0,1.1,0.9,1.1,0.9\n"), 4, "VM: '1.0x' is not a number"},
      {"raw_empty_number", Reader::Raw, replaceLine(raw, 4, "1,'A',230.0,3,1,1,1,,0.0,1.1,0.9,1.1,0.9\n"), 4, "VM: empty field"},
      {"raw_infinite_number", Reader::Raw, replaceLine(raw, 4, "1,'A',230.0,3,1,1,1,1e999,0.0,1.1,0.9,1.1,0.9\n"), 4, "not a finite number"},
      {"raw_duplicate_bus", Reader::Raw, replaceLine(raw, 5, "1,'B',230.0,1,1,1,1,0.98,-2.0,1.1,0.9,1.1,0.9\n"), 5, "duplicate bus 1 (already defined at"},
      {"raw_load_at_missing_bus", Reader::Raw, replaceLine(raw, 7, "7,'1',1,1,1,50.0,10.0,0,0,0,0,1,1,0\n"), 7, "load refers to bus 7, which does not exist"},
      {"raw_branch_to_missing_bus", Reader::Raw, replaceLine(raw, 12, "1,9,'1',0.01,0.1,0.02,0,0,0,0,0,0,0,1,1,0,1,1\n"), 12, "refers to bus 9, which does not exist"},
      {"raw_generator_at_missing_bus", Reader::Raw, replaceLine(raw, 10, "3,'1',50.0,10.0,100,-100,1.0,0,100,0,1,0,0,1,1,100,200,0\n"), 10, "generator refers to bus 3"},
      {"raw_bus_type", Reader::Raw, replaceLine(raw, 5, "2,'B',230.0,5,1,1,1,0.98,-2.0,1.1,0.9,1.1,0.9\n"), 5, "bus type IDE = 5"},
      {"raw_status", Reader::Raw, replaceLine(raw, 7, "2,'1',2,1,1,50.0,10.0,0,0,0,0,1,1,0\n"), 7, "load STATUS = 2"},
      {"raw_unterminated_quote", Reader::Raw, replaceLine(raw, 5, "2,'B,230.0,1,1,1,1,0.98,-2.0\n"), 5, "unterminated quoted string"},
      {"raw_empty_line_in_section", Reader::Raw, replaceLine(raw, 7, "\n"), 7, "empty line inside the LOAD section"},
      {"raw_three_winding_transformer", Reader::Raw,
       replaceLine(raw, 14, "1,2,3,'1',1,1,1,0,0,2,'T',1,1,1\n0.0,0.1,100,0,0.1,100,0,0.1,100,1.0,0\n1.0,0,0\n1.0,0,0\n1.0,0,0\n0 /\n"), 14,
       "three-winding transformer (K = 3): not supported"},
      {"raw_transformer_truncated", Reader::Raw, firstLines(replaceLine(raw, 14, "1,2,0,'1',1,1,1,0,0,2,'T',1,1,1\n0.0,0.1,100\n"), 15), 14,
       "file ends inside a TRANSFORMER record that starts here"},
      {"raw_transformer_line2_count", Reader::Raw, replaceLine(raw, 14, "1,2,0,'1',1,1,1,0,0,2,'T',1,1,1\n0.0\n1.0,0,0\n1.0,0\n0 /\n"), 15,
       "transformer record line 2 (R1-2, X1-2, SBASE1-2): 1 fields"},
      {"raw_winding2_off_nominal", Reader::Raw, replaceLine(raw, 14, "1,2,0,'1',1,1,1,0,0,2,'T',1,1,1\n0.0,0.1,100\n1.0,0,0\n1.02,0\n0 /\n"), 17,
       "WINDV2 = 1.02: an off-nominal winding-2 ratio is not supported"},
      {"raw_two_terminal_dc_present", Reader::Raw, replaceLine(raw, 16, "'DC1',1,10,100,500,0,0,0,'I',0,20,1\n0 /\n"), 16,
       "the TWO-TERMINAL DC section is not empty"},
      {"raw_data_after_last_section", Reader::Raw, firstLines(raw, 27) + "1,2,3\n", 28, "unexpected data after the last section"},
      {"raw_no_separator", Reader::Raw, replaceLine(raw, 5, "2,'B'230.0,1,1,1,1,0.98,-2.0\n"), 5, "without a separator"},
      // ---- PSS/E DYR ----
      {"dyr_unknown_model", Reader::Dyr, replaceLine(dyr, 3, "1 'FOO' 1 0.05 /\n"), 3, "model 'FOO' at bus 1 is not supported"},
      {"dyr_wrong_parameter_count", Reader::Dyr, replaceLine(dyr, 3, "1 'TGOV1' 1 0.05 0.5 1.05 0.3 1.0 2.1 /\n"), 3, "model TGOV1 at bus 1: 6 parameters, expected 7"},
      {"dyr_bad_number", Reader::Dyr, replaceLine(dyr, 2, "  0.8 0.23 0.15 O.09 0.38 /\n"), 2, "GENROU parameter S1: 'O.09' is not a number"},
      {"dyr_missing_terminator", Reader::Dyr, firstLines(dyr, 1), 1, "file ends inside the record that starts here"},
      {"dyr_record_too_short", Reader::Dyr, replaceLine(dyr, 3, "1 'TGOV1' /\n"), 3, "record too short"},
      {"dyr_bad_bus", Reader::Dyr, replaceLine(dyr, 3, "x 'TGOV1' 1 0.05 0.5 1.05 0.3 1.0 2.1 0.0 /\n"), 3, "bus number: 'x' is not an integer"},
      {"dyr_slash_alone", Reader::Dyr, dyr + "/\n", 4, "'/' without a record before it"},
      {"dyr_missing_bus", Reader::DyrChecked, replaceLine(dyr, 3, "5 'TGOV1' 1 0.05 0.5 1.05 0.3 1.0 2.1 0.0 /\n"), 3, "refers to bus 5, which does not exist"},
      {"dyr_not_a_generator", Reader::DyrChecked, replaceLine(dyr, 3, "2 'TGOV1' 1 0.05 0.5 1.05 0.3 1.0 2.1 0.0 /\n"), 3, "machine '1' at bus 2, which is not a generator"},
      {"dyr_two_governors", Reader::Dyr, dyr + "1 'IEEEG1' 1 0 0 20 0.1 0 0.2 1 -1 0.95 0 0.1 0 0 0 0 0 0 0.3 0 8.72 0.7 0 /\n", 4,
       "already has a governor model"},
      // ---- MATPOWER ----
      {"m_truncated_in_bus_matrix", Reader::Matpower, firstLines(m, 6), 5, "file ends inside mpc.bus (opened here): missing ']'"},
      {"m_version_1", Reader::Matpower, replaceLine(m, 3, "mpc.version = '1';\n"), 3, "case format version '1' is not supported"},
      {"m_missing_gen", Reader::Matpower, replaceLine(replaceLine(replaceLine(m, 11, ""), 10, ""), 9, ""), 12, "mpc.gen is missing"},
      {"m_bus_columns", Reader::Matpower, replaceLine(m, 7, "\t2\t1\t50\t10\t0\t0\t1\t0.98\t-2\t230\t1\t1.1;\n"), 7, "mpc.bus row has 12 columns, expected 13 to 17"},
      {"m_bad_number", Reader::Matpower, replaceLine(m, 7, "\t2\t1\t50\t10\t0\t0\t1\t0.9.8\t-2\t230\t1\t1.1\t0.9;\n"), 7, "Vm: '0.9.8' is not a number"},
      {"m_gen_at_missing_bus", Reader::Matpower, replaceLine(m, 10, "\t4\t50\t10\t100\t-100\t1.0\t100\t1\t200\t0;\n"), 10, "generator refers to bus 4"},
      {"m_duplicate_bus", Reader::Matpower, replaceLine(m, 7, "\t1\t1\t50\t10\t0\t0\t1\t0.98\t-2\t230\t1\t1.1\t0.9;\n"), 7, "duplicate bus 1"},
      {"m_unexpected_statement", Reader::Matpower, replaceLine(m, 4, "x = 100;\n"), 4, "unexpected statement 'x'"},
      {"m_unterminated_string", Reader::Matpower, replaceLine(m, 3, "mpc.version = '2;\n"), 3, "unterminated string"},
      {"m_assigned_twice", Reader::Matpower, m + "mpc.baseMVA = 10;\n", 16, "mpc.baseMVA is assigned twice"},
      {"m_branch_to_itself", Reader::Matpower, replaceLine(m, 13, "\t1\t1\t0.01\t0.1\t0.02\t0\t0\t0\t0\t0\t1\t-360\t360;\n"), 13, "connects bus 1 to itself"},
  };
}

} // namespace

TEST(PowerBadFiles, EveryRowNamesFileAndLine) {
  hstest::ScratchDir dir;
  hstest::ErrorCapture errors;
  // The unmodified files are valid: each row's error comes from its one change.
  EXPECT_EQ(readAs(Reader::Raw, dir.write("ok.raw", minimalRaw), dir), 0) << errors.take();
  EXPECT_EQ(readAs(Reader::DyrChecked, dir.write("ok.dyr", minimalDyr), dir), 0) << errors.take();
  EXPECT_EQ(readAs(Reader::Matpower, dir.write("ok.m", minimalMatpower), dir), 0) << errors.take();
  int rows = 0;
  for (const BadFile &b : badFiles()) {
    const std::string path = dir.write(std::string(b.name) + extension(b.reader), b.content);
    const PetscErrorCode ierr = readAs(b.reader, path, dir);
    const std::string msg = errors.take();
    EXPECT_NE(ierr, 0) << b.name << ": accepted";
    const std::string where = path + ":" + std::to_string(b.line) + ": ";
    EXPECT_EQ(msg.compare(0, where.size(), where), 0) << b.name << ": message does not start with " << where << "\n  " << msg;
    EXPECT_NE(msg.find(b.fragment), std::string::npos) << b.name << ": message does not say '" << b.fragment << "'\n  " << msg;
    ++rows;
  }
  std::printf("%d malformed files, each refused with file:line\n", rows);
}

TEST(PowerBadFiles, MissingFileNamesThePath) {
  hstest::ErrorCapture errors;
  NetworkCase net;
  EXPECT_EQ(readRaw("/nonexistent/case.raw", &net), PETSC_ERR_FILE_OPEN);
  EXPECT_NE(errors.take().find("/nonexistent/case.raw: cannot open"), std::string::npos);
}

// Skipping unsupported models is the caller's choice, and lists what was skipped.
TEST(PowerBadFiles, UnknownModelSkippedOnRequest) {
  hstest::ScratchDir dir;
  hstest::ErrorCapture errors;
  const std::string path = dir.write("skip.dyr", minimalDyr + "1 'ESST4B' 1 0 1 2 /\n");
  DynamicData d;
  EXPECT_NE(readDyr(path, DyrOptions(), &d), 0);
  EXPECT_TRUE(d.records.empty());
  DyrOptions opt;
  opt.skipUnknownModels = true;
  ASSERT_EQ(readDyr(path, opt, &d), 0) << errors.take();
  EXPECT_EQ(d.records.size(), 2u);
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_EQ(d.skipped[0], path + ":4: model 'ESST4B' at bus 1 skipped (unsupported)");
}
