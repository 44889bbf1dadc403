// IndexedCounters: counters of one family told apart by a small integer
// label (an HTTP status, an errno) whose values are not known in advance.
// The first event of an index registers its series (the registry's lock,
// once); every later one is an atomic load and an atomic add.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "metrics/registry.h"

namespace bucketfs::metrics {

class IndexedCounters {
 public:
  using ValueName = std::function<std::string(size_t index)>;
  // Series `name{base..., label_name="<value>"}` for indexes [0, size), the
  // value being value_name(index) (the number when empty); larger indexes
  // count under the value "other".
  IndexedCounters(Registry& registry, std::string name, std::string help, Labels base,
                  std::string label_name, size_t size, ValueName value_name = nullptr)
      : registry_(registry),
        name_(std::move(name)),
        help_(std::move(help)),
        base_(std::move(base)),
        label_name_(std::move(label_name)),
        size_(size),
        value_name_(std::move(value_name)),
        slots_(std::make_unique<std::atomic<Counter*>[]>(size + 1)) {}

  void Add(size_t index, uint64_t n = 1) {
    const size_t i = index < size_ ? index : size_;
    Counter* c = slots_[i].load(std::memory_order_acquire);
    if (c == nullptr) {
      Labels labels = base_;
      labels.push_back({label_name_, i == size_    ? std::string("other")
                                     : value_name_ ? value_name_(i)
                                                   : std::to_string(i)});
      c = &registry_.GetCounter(name_, help_, labels);  // same series if two threads race
      slots_[i].store(c, std::memory_order_release);
    }
    c->Add(n);
  }

 private:
  Registry& registry_;
  const std::string name_;
  const std::string help_;
  const Labels base_;
  const std::string label_name_;
  const size_t size_;
  const ValueName value_name_;
  std::unique_ptr<std::atomic<Counter*>[]> slots_;
};

}  // namespace bucketfs::metrics
