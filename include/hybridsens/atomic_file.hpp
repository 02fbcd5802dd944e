// AtomicFile: an output file that is either written completely or not at all.
//
// Opening a file with fopen(path, "w") truncates it at once: a run that is killed, fails or
// fills the disk leaves a truncated file where the previous good one was, and an unchecked
// fprintf/fclose lets a full disk pass as success. AtomicFile writes into a temporary file in
// the target's directory, checks every write, the flush and the close, and only then renames
// the temporary file over the target (rename() is atomic within one file system). Any failure
// removes the temporary file, leaves the previous file as it was, and is a PETSc error naming
// the option (or role) and the path, e.g. "-hs_summary /dev/full: write failed: No space left
// on device".
//
// A target that exists and is not a regular file (a device such as /dev/null or /dev/full, a
// FIFO, a terminal) cannot be replaced by renaming — that would swap the device node for a
// regular file — so it is written in place, still with every write and the close checked. A
// symbolic link is followed: the temporary file goes next to the file it points to.
//
// Parallel: open() and commit() are collective on the given communicator; only rank 0 touches
// the file (file() is nullptr elsewhere) and its outcome is broadcast, so every rank returns
// the same error.
#pragma once

#include <petscsys.h>

#include <cstdio>
#include <string>

namespace hybridsens {

class AtomicFile {
public:
  AtomicFile() = default;
  ~AtomicFile() { discard(); }
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  // Collective. `what` names the file for error messages (an option such as "-hs_summary").
  PetscErrorCode open(MPI_Comm comm, const std::string &what, const std::string &path);
  // Rank 0: the stream to write to (nullptr on other ranks and before open()).
  FILE *file() const { return file_; }
  // Rank 0: write `text` (the failure is remembered and reported by commit()).
  void write(const std::string &text);
  // Collective: flush, check, close and move into place. An error if any write failed.
  PetscErrorCode commit();
  // Drop what was written (the previous file stays); also done by the destructor.
  void discard();

private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string what_, path_, target_, temp_;  // temp_ empty: written in place
  FILE *file_ = nullptr;
  int writeErrno_ = 0;  // first failed write's errno
};

} // namespace hybridsens
