// `bucketfs s3 get s3://b/k FILE|-` and `bucketfs s3 put FILE s3://b/k`.
//
// get: HeadObject for the size and ETag, then --part-size ranged GETs with
// --connections in flight, each pinned to that ETag with If-Match so a
// concurrent overwrite fails the copy instead of mixing two versions. A
// regular file is written through a shared mapping of a temporary file beside
// it (GetObjectAsync streams straight into the page cache, no second copy)
// and renamed into place on success; stdout and other non-seekable
// destinations get a ring of part buffers written out in order.
// put: a mapping of the source file is uploaded with PutObject below
// --part-size, else with parallel UploadPartAsync (part size grown to stay
// within 10,000 parts); a failed multipart upload is aborted.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "mount-tools/byte_size.h"
#include "mount-tools/progress_bar.h"
#include "mount-tools/s3_cli.h"
#include "mount-tools/s3_url.h"
#include "mount-tools/transfer_plan.h"
#include "mount-tools/windowed_runner.h"

namespace bucketfs::tools {
namespace {

Error ErrnoError(const std::string& what) {
  int e = errno;
  return MakeError(e, "LocalIO", what + ": " + std::strerror(e));
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status WriteAll(int fd, const std::byte* data, size_t len) {
  while (len > 0) {
    ssize_t n = ::write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write");
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

// A HEAD error has no body, so a 404 cannot tell NoSuchKey from
// NoSuchBucket; ask again with a one-byte GET, whose error body can.
Error ExplainHeadError(s3::ObjectClient& client, const s3::HeadObjectParams& hp, Error error) {
  if (error.http_status != 404) return error;
  std::byte one[1];
  s3::GetObjectParams p;
  p.bucket = hp.bucket;
  p.key = hp.key;
  p.offset = 0;
  p.length = 1;
  auto r = client.GetObject(p, one);
  if (!r.ok() && r.error().http_status == 404) return r.error();
  return error;
}

struct GetOptions {
  std::string url, dest;
  std::string part_size = "8M";
};

// Starts the ranged GET of part i into `dest`.
void StartPartGet(s3::ObjectClient& client, const S3Url& url, const std::string& etag,
                  const Part& part, std::span<std::byte> dest, ProgressBar& bar, Completion done) {
  s3::GetObjectParams p;
  p.bucket = url.bucket;
  p.key = url.key;
  p.offset = part.offset;
  p.length = part.length;
  p.if_match = etag;
  client.GetObjectAsync(
      p, dest,
      [&bar, length = part.length, done = std::move(done)](const Result<s3::GetObjectResult>& r) {
        if (r.ok()) bar.Add(length);  // a ranged GET succeeds only with every byte asked for
        done(r.status());
      });
}

// Non-seekable destination: a ring of `window` buffers, written in order.
Status GetStreamed(s3::ObjectClient& client, const S3Url& url, const std::string& etag,
                   const std::vector<Part>& parts, int window, int fd, ProgressBar& bar) {
  uint64_t part_size = parts.empty() ? 0 : parts[0].length;
  size_t slots = std::min<size_t>(static_cast<size_t>(window), parts.size());
  std::vector<std::vector<std::byte>> buffers(slots, std::vector<std::byte>(part_size));
  std::vector<bool> done(parts.size(), false);
  size_t written = 0;
  WindowedJobs jobs;
  jobs.count = parts.size();
  jobs.window = window;
  jobs.can_start = [&](size_t i) { return i < written + slots; };
  jobs.start = [&](size_t i, Completion c) {
    std::span<std::byte> dest(buffers[i % slots].data(), parts[i].length);
    StartPartGet(client, url, etag, parts[i], dest, bar, std::move(c));
  };
  jobs.on_complete = [&](size_t i) -> Status {
    done[i] = true;
    while (written < parts.size() && done[written]) {
      Status s = WriteAll(fd, buffers[written % slots].data(), parts[written].length);
      if (!s.ok()) return s;
      ++written;
    }
    return Status::Ok();
  };
  return RunWindowed(jobs);
}

// Regular file: parts land directly in a shared mapping of `fd`.
Status GetMapped(s3::ObjectClient& client, const S3Url& url, const std::string& etag,
                 const std::vector<Part>& parts, uint64_t size, int window, int fd,
                 ProgressBar& bar) {
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return ErrnoError("ftruncate");
  if (size == 0) return Status::Ok();
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return ErrnoError("mmap");
  auto* base = static_cast<std::byte*>(map);
  WindowedJobs jobs;
  jobs.count = parts.size();
  jobs.window = window;
  jobs.start = [&](size_t i, Completion c) {
    std::span<std::byte> dest(base + parts[i].offset, parts[i].length);
    StartPartGet(client, url, etag, parts[i], dest, bar, std::move(c));
  };
  Status s = RunWindowed(jobs);
  ::munmap(map, size);
  return s;
}

int RunGet(const GetOptions& o, S3Context& ctx) {
  auto url = ParseS3Url(o.url);
  if (!url.ok()) return ReportError("get", "", url.error());
  if (url->key.empty()) {
    return ReportError("get", o.url, MakeError(EINVAL, "InvalidArgument", "missing object key"));
  }
  auto part_size = ParseByteSize(o.part_size);
  if (!part_size.ok() || *part_size == 0) {
    return ReportError(
        "get", "--part-size",
        part_size.ok() ? MakeError(EINVAL, "InvalidArgument", "must be > 0") : part_size.error());
  }
  auto client = ctx.Client();
  if (!client.ok()) return ReportError("get", o.url, client.error());
  s3::HeadObjectParams hp;
  hp.bucket = url->bucket;
  hp.key = url->key;
  auto head = (**client).HeadObject(hp);
  if (!head.ok())
    return ReportError("get", url->ToString(), ExplainHeadError(**client, hp, head.error()));
  std::vector<Part> parts = SplitIntoParts(head->size, *part_size);
  int window = ctx.options().connections;

  ProgressBar bar("get " + url->ToString(), head->size,
                  ProgressBar::ShouldShow(ctx.options().no_progress));
  if (o.dest == "-") {
    Status s = GetStreamed(**client, *url, head->etag, parts, window, STDOUT_FILENO, bar);
    bar.Finish();
    return s.ok() ? 0 : ReportError("get", url->ToString(), s.error());
  }

  std::string dest = o.dest;
  struct stat st {};
  bool exists = ::stat(dest.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    dest += "/" + BaseName(url->key);
    exists = ::stat(dest.c_str(), &st) == 0;
  }
  if (exists && !S_ISREG(st.st_mode)) {  // /dev/null, a FIFO, a terminal
    int fd = ::open(dest.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return ReportError("get", dest, ErrnoError("open"));
    Status s = GetStreamed(**client, *url, head->etag, parts, window, fd, bar);
    bar.Finish();
    ::close(fd);
    return s.ok() ? 0 : ReportError("get", url->ToString(), s.error());
  }

  // A temporary file beside the destination, renamed over it on success.
  std::string tmp = dest + ".bucketfs-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return ReportError("get", dest, ErrnoError("create temporary file"));
  Status s = GetMapped(**client, *url, head->etag, parts, head->size, window, fd, bar);
  bar.Finish();
  if (s.ok()) {
    mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd, 0666 & ~mask) != 0) s = ErrnoError("chmod");
  }
  if (::close(fd) != 0 && s.ok()) s = ErrnoError("close");
  if (s.ok() && ::rename(tmp.c_str(), dest.c_str()) != 0) s = ErrnoError("rename");
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return ReportError("get", url->ToString(), s.error());
  }
  return 0;
}

struct PutOptions {
  std::string src, url;
  std::string part_size = "16M";
  std::string content_type;
};

// A read-only mapping of a whole file; unmapped on destruction.
class MappedFile {
 public:
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return ErrnoError("open");
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return ErrnoError("stat");
    if (!S_ISREG(st.st_mode)) {
      return MakeError(EINVAL, "InvalidArgument", "not a regular file (pipes are not supported)");
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ == 0) return Status::Ok();
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (map == MAP_FAILED) return ErrnoError("mmap");
    data_ = static_cast<std::byte*>(map);
    ::madvise(data_, size_, MADV_SEQUENTIAL);
    return Status::Ok();
  }
  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  int fd_ = -1;
  std::byte* data_ = nullptr;
  uint64_t size_ = 0;
};

int RunPut(const PutOptions& o, S3Context& ctx) {
  auto url = ParseS3Url(o.url);
  if (!url.ok()) return ReportError("put", "", url.error());
  if (url->key.empty() || url->key.back() == '/') url->key += BaseName(o.src);
  auto part_size = ParseByteSize(o.part_size);
  if (!part_size.ok() || *part_size == 0) {
    return ReportError(
        "put", "--part-size",
        part_size.ok() ? MakeError(EINVAL, "InvalidArgument", "must be > 0") : part_size.error());
  }
  MappedFile file;
  Status opened = file.Open(o.src);
  if (!opened.ok()) return ReportError("put", o.src, opened.error());
  auto client = ctx.Client();
  if (!client.ok()) return ReportError("put", url->ToString(), client.error());
  ProgressBar bar("put " + url->ToString(), file.bytes().size(),
                  ProgressBar::ShouldShow(ctx.options().no_progress));
  UploadSpec spec;
  spec.bucket = url->bucket;
  spec.key = url->key;
  spec.content_type = o.content_type;
  spec.part_size = *part_size;
  spec.window = ctx.options().connections;
  Status s = UploadBuffer(
      **client, spec,
      [&](const Part& part) { return file.bytes().subspan(part.offset, part.length); },
      file.bytes().size(), &bar);
  bar.Finish();
  if (!s.ok()) return ReportError("put", url->ToString(), s.error());
  return 0;
}

}  // namespace

std::vector<S3Subcommand> AddTransferCommands(CLI::App& s3) {
  auto get_opts = std::make_shared<GetOptions>();
  CLI::App* get = s3.add_subcommand("get", "download an object to FILE, a directory or - (stdout)");
  get->add_option("url", get_opts->url, "s3://BUCKET/KEY")->required();
  get->add_option("dest", get_opts->dest, "FILE, DIRECTORY or - for stdout")->required();
  get->add_option("--part-size", get_opts->part_size, "bytes per ranged GET (8M, 16M, ...)")
      ->capture_default_str();

  auto put_opts = std::make_shared<PutOptions>();
  CLI::App* put = s3.add_subcommand("put", "upload FILE to s3://BUCKET/KEY (or KEY-prefix/)");
  put->add_option("src", put_opts->src, "a regular file")->required();
  put->add_option("url", put_opts->url, "s3://BUCKET/KEY")->required();
  put->add_option("--part-size", put_opts->part_size,
                  "multipart part size; smaller files go in one PutObject")
      ->capture_default_str();
  put->add_option("--content-type", put_opts->content_type, "Content-Type of the object");

  return {{get, [get_opts](S3Context& ctx) { return RunGet(*get_opts, ctx); }},
          {put, [put_opts](S3Context& ctx) { return RunPut(*put_opts, ctx); }}};
}

}  // namespace bucketfs::tools
