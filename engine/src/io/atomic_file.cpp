#include "weft/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <random>
#include <system_error>

#include "weft/error.h"

namespace weft::io {

namespace {

std::string errno_text(int err) {
  return std::generic_category().message(err);
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int err) {
  throw Error(path.string() + ": " + what + ": " + errno_text(err));
}

// A name no other writer (thread, process, or an earlier crashed run) is using right now:
// the pid separates processes, the counter separates threads, the random part separates runs
// that reuse a pid. O_EXCL catches whatever is left.
std::string temp_name(const std::filesystem::path& target) {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string base = target.filename().string();
  if (base.size() > 100) base.resize(100);  // keep within NAME_MAX after the suffix
  return "." + base + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1)) + "." + std::to_string(rng() % 1000000007);
}

// Closes a descriptor exactly once, whichever way the scope is left.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Returns close()'s result; the descriptor is released even when it fails.
  int close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

void write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "cannot write", errno);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path dir =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::filesystem::path temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = dir / temp_name(path);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt >= 16)) {
      fail(path, "cannot create temporary file " + temp.string(), errno);
    }
  }
  Fd file(fd);
  try {
    write_all(file.get(), bytes, path);
    if (::fsync(file.get()) != 0) fail(path, "cannot fsync", errno);
    if (file.close() != 0) fail(path, "cannot close", errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      fail(path, "cannot rename " + temp.string() + " into place", errno);
    }
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  // Make the rename itself durable. Best effort: the new file is already in place, and some
  // file systems refuse fsync on directories.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
}

std::string read_file(const std::filesystem::path& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail(path, "cannot open", errno);
  Fd file(fd);
  // Read to end of file rather than trusting st_size (the file may be growing, or be a pipe),
  // but size the buffer from it so a large checkpoint is read without copies.
  std::string result;
  struct stat st {};
  std::size_t capacity = 1 << 16;
  if (::fstat(file.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    capacity = static_cast<std::size_t>(st.st_size) + 1;  // + 1: room to see end of file
  }
  result.resize(capacity);
  std::size_t used = 0;
  for (;;) {
    if (used == result.size()) result.resize(result.size() * 2);
    const ssize_t n = ::read(file.get(), result.data() + used, result.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "cannot read", errno);
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  result.resize(used);
  return result;
}

}  // namespace weft::io
