// ReadOrder: the order in which a loader said it will open files (the
// mount's `order` control command), and which of them to fetch ahead of
// the reader. An open of an announced file moves the cursor past it; the
// files to fetch are the `window` after the furthest one opened, plus
// those up to `window` behind it not yet opened (readers in parallel open
// slightly out of order). Files passed by more than `window` are given up.
// A file not announced changes nothing, so an unused order costs nothing.
// Each position is resolved (its ETag and size learned) once, by the
// caller, between TakeUnresolved and Resolved. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "s3/object_version.h"

namespace bucketfs::fs {

using s3::ObjectVersion;

class ReadOrder {
 public:
  struct Target {
    std::string bucket, key;
  };
  struct Stats {
    uint64_t announced = 0;  // files in the current order
    uint64_t opened = 0;     // opens of announced files
    uint64_t cursor = 0;     // one past the furthest announced file opened
    uint64_t resolved = 0;   // positions whose version was learned
  };
  // An order holds at most this many files; later ones are refused.
  static constexpr size_t kMaxFiles = 1 << 22;

  explicit ReadOrder(size_t window) : window_(window) {}

  void Reset();
  // Appends `targets`; returns how many were taken (kMaxFiles bounds it).
  size_t Add(std::vector<Target> targets);

  // An open of bucket/key: true when it is in the order at or after the
  // window behind the cursor (the cursor then moves past it).
  bool Opened(const std::string& bucket, const std::string& key);

  // Positions of the window not yet handed out for resolution (now marked),
  // with the generation of the order they belong to (Reset starts a new one).
  struct Unresolved {
    uint64_t generation = 0;
    std::vector<std::pair<size_t, Target>> positions;
  };
  Unresolved TakeUnresolved();
  // What resolving `position` found; nullopt: nothing to fetch (a directory,
  // gone, a link). Ignored when the order was reset since.
  void Resolved(size_t position, uint64_t generation, std::optional<ObjectVersion> version);

  // The resolved, unopened files to hold fetched: those behind the cursor
  // first (already fetched, kept alive), then those ahead, nearest first.
  std::vector<ObjectVersion> Wanted() const;

  Stats stats() const;

 private:
  enum class State : uint8_t { kUnresolved, kResolving, kResolved, kNothing };
  struct Slot {
    Target target;
    State state = State::kUnresolved;
    bool opened = false;
    ObjectVersion version;
  };
  static std::string KeyOf(const std::string& bucket, const std::string& key);
  size_t Behind() const REQUIRES(mu_);  // first position of the window behind the cursor

  const size_t window_;
  mutable Mutex mu_;
  std::vector<Slot> slots_ GUARDED_BY(mu_);
  // bucket + key -> positions in order (a file may be announced more than once).
  std::unordered_map<std::string, std::vector<size_t>> index_ GUARDED_BY(mu_);
  size_t cursor_ GUARDED_BY(mu_) = 0;
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  uint64_t opened_ GUARDED_BY(mu_) = 0;
  uint64_t resolved_ GUARDED_BY(mu_) = 0;
};

}  // namespace bucketfs::fs
