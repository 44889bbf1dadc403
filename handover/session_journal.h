// SessionJournal: what the kernel knows about this mount's FUSE session
// (the INIT it sent, the inode numbers it was given, the handles it holds),
// written as it changes into a memory file (memfd) that outlives the daemon.
//
// Why: the kernel's FUSE connection survives the daemon when another process
// (systemd's file descriptor store, or the next daemon) holds /dev/fuse open,
// but the kernel keeps addressing the daemon by inode number and file handle.
// A new daemon that reads this journal maps those numbers back to names and
// reopens the handles, so processes using the mount go on working.
//
// The file is a header page, then records (session_records.h) appended one
// pwrite each, so a crash loses at most the record being written, which its
// checksum exposes. When dead records (forgotten inodes, closed handles)
// outweigh live ones, the live set is written after the tail, the header
// moves to it and the old region's pages are returned (punched out): memory
// stays proportional to what the kernel holds, not to the mount's age.
//
// Thread-safe: one mutex orders the appends; no call blocks on anything but
// the memfd.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "handover/session_records.h"
#include "s3/result.h"

namespace bucketfs::handover {

// What a journal holds: the live inodes and handles, by number.
struct SessionState {
  std::vector<std::byte> init_request;  // empty: the kernel's INIT was never seen
  std::map<uint64_t, NodeRecord> nodes;
  std::map<uint64_t, HandleRecord> handles;
};

class SessionJournal {
 public:
  // A new, empty journal in a new memfd.
  static Result<std::unique_ptr<SessionJournal>> Create();
  // Reads the journal in `fd` (a descriptor a previous daemon left) and goes
  // on appending to it. Takes ownership of `fd`.
  static Result<std::unique_ptr<SessionJournal>> Adopt(int fd, SessionState* state);
  // Reads a journal without taking it over.
  static Result<SessionState> Read(int fd);

  ~SessionJournal();
  SessionJournal(const SessionJournal&) = delete;
  SessionJournal& operator=(const SessionJournal&) = delete;

  // The memfd, to hand to whoever keeps it across a restart.
  int fd() const { return fd_; }

  void RecordInit(std::span<const std::byte> request);
  void NodeChanged(const NodeRecord& node);
  void NodeDropped(uint64_t ino);
  void HandleOpened(const HandleRecord& handle);
  void HandleClosed(uint64_t fh);

  // Bytes of the current region (live and dead records), for tests and logs.
  uint64_t region_bytes() const;
  // False once an append failed (the memfd could not grow): a restart would
  // then not find everything, and the caller should say so.
  bool healthy() const;

 private:
  SessionJournal(int fd, uint64_t region_start, uint64_t tail, SessionState state);
  void Append(std::vector<std::byte> record) REQUIRES(mu_);
  void CompactIfWorthIt() REQUIRES(mu_);

  const int fd_;
  mutable Mutex mu_;
  uint64_t region_start_ GUARDED_BY(mu_);
  uint64_t tail_ GUARDED_BY(mu_);
  bool healthy_ GUARDED_BY(mu_) = true;
  // The live records, encoded, for compaction.
  std::vector<std::byte> init_ GUARDED_BY(mu_);
  std::map<uint64_t, std::vector<std::byte>> nodes_ GUARDED_BY(mu_);
  std::map<uint64_t, std::vector<std::byte>> handles_ GUARDED_BY(mu_);
  uint64_t live_bytes_ GUARDED_BY(mu_) = 0;
};

}  // namespace bucketfs::handover
