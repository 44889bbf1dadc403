#include "prefetch/prefetcher.h"

#include <cassert>
#include <utility>

#include "prefetch/fetch_context.h"
#include "prefetch/held_object.h"
#include "prefetch/hint_cache.h"

namespace bucketfs::prefetch {

namespace {

std::shared_ptr<memory::MemoryBudget> BudgetFor(const PrefetchConfig& config) {
  return std::make_shared<memory::MemoryBudget>(
      config.budget_bytes > 0 ? config.budget_bytes : memory::MemoryBudget::DefaultBudgetBytes());
}

}  // namespace

Prefetcher::Prefetcher(PrefetchConfig config, std::shared_ptr<RangeSource> source)
    : Prefetcher(config, std::move(source), BudgetFor(config)) {}

Prefetcher::Prefetcher(PrefetchConfig config, std::shared_ptr<RangeSource> source,
                       std::shared_ptr<memory::MemoryBudget> budget,
                       std::shared_ptr<memory::SpareMemory> spare_memory) {
  assert(source != nullptr && budget != nullptr);
  auto ctx = std::make_shared<internal::FetchContext>();
  ctx->config = config;
  ctx->budget = std::move(budget);
  ctx->source = std::move(source);
  ctx->tracker = std::make_shared<internal::FetchTracker>();
  ctx->held = std::make_shared<internal::HeldObjects>();
  ctx->pool = std::make_shared<memory::BufferPool>(
      config.part_size,
      static_cast<size_t>(config.part_size > 0 ? config.buffer_pool_bytes / config.part_size : 0),
      std::move(spare_memory));
  ctx_ = std::move(ctx);
  hints_ = std::make_shared<internal::HintCache>(ctx_);
}

Prefetcher::~Prefetcher() {
  hints_->Clear();
  // Fetches in flight hold the source; waiting here means the source (and the
  // S3 client behind it) is never released last on one of its own threads.
  ctx_->tracker->WaitIdle();
}

std::shared_ptr<ObjectReader> Prefetcher::Open(const ObjectVersion& object) {
  PartPtr adopted;
  if (object.size > 0 && object.size < ctx_->config.small_object_threshold) {
    adopted = hints_->Take(object);
  }
  return std::make_shared<ObjectReader>(ctx_, object, std::move(adopted));
}

void Prefetcher::HintNextFiles(const std::vector<ObjectVersion>& next) { hints_->Hint(next); }

const PrefetchConfig& Prefetcher::config() const { return ctx_->config; }

const memory::MemoryBudget& Prefetcher::budget() const { return *ctx_->budget; }

PrefetcherStats Prefetcher::stats() const {
  PrefetcherStats s;
  s.fetches = ctx_->tracker->total_fetches();
  s.bytes_fetched = ctx_->tracker->total_bytes();
  s.in_flight = ctx_->tracker->in_flight();
  s.hinted = hints_->hinted();
  s.hint_hits = hints_->hits();
  s.budget_used = ctx_->budget->used();
  s.budget_peak = ctx_->budget->peak();
  s.buffer_reuses = ctx_->pool->reuses();
  s.read_hits = ctx_->read_hits.load(std::memory_order_relaxed);
  s.read_misses = ctx_->read_misses.load(std::memory_order_relaxed);
  s.wasted_bytes = ctx_->wasted_bytes->load(std::memory_order_relaxed);
  return s;
}

void Prefetcher::WaitIdle() { ctx_->tracker->WaitIdle(); }

}  // namespace bucketfs::prefetch
