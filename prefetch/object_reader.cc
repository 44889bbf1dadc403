#include "prefetch/object_reader.h"

#include <future>
#include <utility>

#include "prefetch/reader_core.h"

namespace bucketfs::prefetch {

ObjectReader::ObjectReader(std::shared_ptr<internal::ReaderCore> core) : core_(std::move(core)) {}

ObjectReader::~ObjectReader() { Close(); }

void ObjectReader::ReadAsync(uint64_t offset, size_t size, ReadCallback done) {
  core_->ReadAsync(offset, size, std::move(done));
}

Result<size_t> ObjectReader::Read(uint64_t offset, std::span<std::byte> out) {
  std::promise<Result<size_t>> promise;
  auto future = promise.get_future();
  core_->ReadAsync(offset, out.size(), [&promise, out](Result<ReadData> r) {
    if (!r.ok()) {
      promise.set_value(r.error());
      return;
    }
    promise.set_value(r->CopyTo(out));
  });
  return future.get();
}

void ObjectReader::Close() { core_->Close(); }

const ObjectVersion& ObjectReader::object() const { return core_->object(); }

ReaderStats ObjectReader::stats() const { return core_->stats(); }

}  // namespace bucketfs::prefetch
