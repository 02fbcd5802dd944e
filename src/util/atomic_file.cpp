#include "hybridsens/atomic_file.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hybridsens {

// Rank 0's message (empty: success) on every rank, so that all of them fail alike.
static PetscErrorCode shareOutcome(MPI_Comm comm, std::string &message) {
  int len = (int)message.size();
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
  message.resize((size_t)len);
  if (len) PetscCallMPI(MPI_Bcast(&message[0], len, MPI_CHAR, 0, comm));
  PetscFunctionReturn(0);
}

static std::string describe(const std::string &what, const std::string &path, const std::string &problem, int err) {
  return what + " " + path + ": " + problem + ": " + std::strerror(err);
}

static mode_t defaultMode() {
  const mode_t mask = umask(0);  // the only way to read the umask; restored at once
  umask(mask);
  return 0666 & ~mask;
}

PetscErrorCode AtomicFile::open(MPI_Comm comm, const std::string &what, const std::string &path) {
  PetscMPIInt rank;
  std::string message;
  PetscFunctionBeginUser;
  discard();
  comm_ = comm, what_ = what, path_ = path, target_ = path, writeErrno_ = 0;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      char real[PATH_MAX];
      if (realpath(path.c_str(), real)) target_ = real;  // (a dangling link: created through the link)
    }
    const bool exists = stat(target_.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
      // A device, FIFO or terminal: renaming over it would replace the node itself.
      file_ = std::fopen(target_.c_str(), "w");
      if (!file_) message = describe(what, path, "cannot open for writing", errno);
    } else if (exists && access(target_.c_str(), W_OK) != 0) {
      message = describe(what, path, "cannot write", errno);  // as fopen(path, "w") would refuse
    } else {
      const size_t slash = target_.rfind('/');
      const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target_.substr(0, slash);
      const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
      std::string tmpl = dir + "/." + base + ".tmp-XXXXXX";
      const int fd = mkstemp(&tmpl[0]);
      if (fd < 0) message = describe(what, path, "cannot create a temporary file in " + dir, errno);
      else {
        temp_ = tmpl;
        (void)fchmod(fd, exists ? (st.st_mode & 07777) : defaultMode());  // mkstemp makes it 0600
        file_ = fdopen(fd, "w");
        if (!file_) {
          message = describe(what, path, "cannot open " + temp_, errno);
          close(fd);
          std::remove(temp_.c_str());
          temp_.clear();
        }
      }
    }
  }
  PetscCall(shareOutcome(comm, message));
  PetscCheck(message.empty(), comm, PETSC_ERR_FILE_OPEN, "%s", message.c_str());
  PetscFunctionReturn(0);
}

void AtomicFile::write(const std::string &text) {
  if (!file_ || text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() && !writeErrno_) writeErrno_ = errno ? errno : EIO;
}

PetscErrorCode AtomicFile::commit() {
  std::string message;
  PetscFunctionBeginUser;
  if (file_) {
    int err = writeErrno_;
    errno = 0;
    if (std::fflush(file_) != 0 && !err) err = errno;
    if (std::ferror(file_) && !err) {
      // A write through file() (fprintf) failed earlier and its errno is gone: write one more
      // byte to learn the cause (the file is discarded anyway).
      std::clearerr(file_);
      errno = 0;
      err = (std::fputc('\n', file_) == EOF || std::fflush(file_) != 0) && errno ? errno : EIO;
    }
    // On disk before it replaces the previous file: a crash right after the rename must not
    // leave an empty file in its place.
    if (!temp_.empty() && !err && fsync(fileno(file_)) != 0) err = errno;
    if (std::fclose(file_) != 0 && !err) err = errno;
    file_ = nullptr;
    if (err) message = describe(what_, path_, "write failed", err);
    else if (!temp_.empty() && std::rename(temp_.c_str(), target_.c_str()) != 0)
      message = describe(what_, path_, "cannot replace the file with " + temp_, errno);
    if (!message.empty() && !temp_.empty()) std::remove(temp_.c_str());
    temp_.clear();
  }
  if (comm_ != MPI_COMM_NULL) PetscCall(shareOutcome(comm_, message));
  PetscCheck(message.empty(), comm_, PETSC_ERR_FILE_WRITE, "%s", message.c_str());
  comm_ = MPI_COMM_NULL;
  PetscFunctionReturn(0);
}

void AtomicFile::discard() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  if (!temp_.empty()) std::remove(temp_.c_str());
  temp_.clear();
}

} // namespace hybridsens
