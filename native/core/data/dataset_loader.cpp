#include "core/data/dataset_loader.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "core/errors.h"
#include "core/runtime/runtime_info.h"

namespace firebrand {
namespace {

// splitmix64: decorrelates the generator seeds of neighbouring batches.
uint64_t mix(uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

}  // namespace

DatasetLoader::DatasetLoader(std::shared_ptr<const TensorDataset> dataset, BatchTransforms transforms,
                             const SamplerOptions& sampler, int64_t epoch, int64_t startBatch,
                             const LoaderOptions& options)
    : dataset_(std::move(dataset)),
      transforms_(std::move(transforms)),
      sampler_(dataset_->size(), sampler, epoch),
      seed_(sampler.seed),
      epoch_(epoch),
      startBatch_(startBatch),
      options_(options),
      nextToClaim_(startBatch),
      nextToTake_(startBatch) {
  if (startBatch < 0 || startBatch >= sampler_.batchCount()) {
    throw InvalidArgument("startBatch " + std::to_string(startBatch) + " must be in [0, " +
                          std::to_string(sampler_.batchCount()) + "), the batches of this epoch");
  }
  // numWorkers and prefetchFactor are bounded by their TypeScript owner (data/loader-options.ts).
  // Decoding images is work for the workers whatever the transforms.
  const int64_t workers = options_.workerCount(!transforms_.empty() || dataset_->images() != nullptr);
  queueDepth_ = workers * options_.prefetchFactor;
  // Beyond the queue: one being cut per worker, the batch being trained, the next one, and one free again.
  recycler_ = std::make_unique<BatchRecycler>(static_cast<size_t>(queueDepth_ + workers + 3));
  for (int64_t i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
}

DatasetLoader::~DatasetLoader() { close(); }

std::string DatasetLoader::inputOrigin() const {
  if (dataset_->images() == nullptr) return {};
  return "images decoded as " + imageReadModeName(dataset_->images()->options().mode) +
         " (the image dataset's mode sets their channels: 'RGB' 3, 'GRAY' 1; imageTransforms.rgb() makes 1 channel 3)";
}

void DatasetLoader::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  room_.notify_all();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

Batch DatasetLoader::makeBatch(int64_t index) {
  const std::optional<Batch> spare = recycler_->takeUnused();
  // Only random draws need the generator; plain rows are cut in microseconds, which seeding one would double.
  std::optional<at::Generator> generator;
  if (!transforms_.empty() || dataset_->images() != nullptr) {
    generator =
        at::detail::createCPUGenerator(mix(mix(seed_) ^ static_cast<uint64_t>(epoch_)) ^ static_cast<uint64_t>(index));
  }
  Batch batch = dataset_->batch(sampler_.indices(index), spare ? &*spare : nullptr, generator ? &*generator : nullptr);
  // A batch that left out a broken image no longer lines up with its indices.
  if (batch.size() == static_cast<int64_t>(sampler_.indices(index).size()))
    batch.sampleIndices = sampler_.indices(index);
  recycler_->keep(batch);
  if (!transforms_.empty()) applyTransforms(transforms_, batch, *generator);
  if (options_.pinMemory) {
    for (auto& entry : batch.fields) entry.second = entry.second.pin_memory();
  }
  return batch;
}

void DatasetLoader::work() {
  // Batch assembly is light; kernel threads of its own would fight the training thread's.
  limitKernelThreadsOfThisThread();
  for (;;) {
    int64_t index = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      room_.wait(lock, [&] {
        return closing_ || nextToClaim_ >= sampler_.batchCount() || nextToClaim_ < nextToTake_ + queueDepth_;
      });
      if (closing_ || nextToClaim_ >= sampler_.batchCount()) return;
      index = nextToClaim_++;
    }
    std::variant<Batch, std::exception_ptr> made;
    try {
      made = makeBatch(index);
    } catch (...) {
      made = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      made_.emplace(index, std::move(made));
    }
    ready_.notify_all();
  }
}

std::optional<Batch> DatasetLoader::next() {
  if (nextToTake_ >= sampler_.batchCount()) return std::nullopt;
  if (workers_.empty()) return makeBatch(nextToTake_++);
  std::variant<Batch, std::exception_ptr> made;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return made_.count(nextToTake_) > 0; });
    auto node = made_.extract(nextToTake_++);
    made = std::move(node.mapped());
  }
  room_.notify_all();
  if (auto* error = std::get_if<std::exception_ptr>(&made)) std::rethrow_exception(*error);
  return std::get<Batch>(std::move(made));
}

}  // namespace firebrand
