// Cuts a dataset's batches in sampler order, applies the batch transforms and,
// with workers (loader_options.h), assembles batches on background threads into
// a bounded queue (workers * prefetchFactor batches ahead) so the training
// thread never waits for data. Batch i's random transforms use a generator seeded from
// (seed, epoch, i): the batches are the same for any number of workers.
#pragma once
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "core/data/batch_recycler.h"
#include "core/data/batch_sampler.h"
#include "core/data/batch_stream.h"
#include "core/data/batch_transforms.h"
#include "core/data/loader_options.h"
#include "core/data/tensor_dataset.h"

namespace firebrand {

class DatasetLoader : public BatchStream {
 public:
  // Batches `startBatch`.. of epoch `epoch`; the first `startBatch` are skipped
  // (a resumed run continues mid-epoch with exactly the batches it would have seen).
  DatasetLoader(std::shared_ptr<const TensorDataset> dataset, BatchTransforms transforms, const SamplerOptions& sampler,
                int64_t epoch, int64_t startBatch, const LoaderOptions& options);
  ~DatasetLoader() override;

  std::optional<Batch> next() override;
  std::optional<int64_t> batchCount() const override { return sampler_.batchCount(); }
  int64_t firstBatch() const override { return startBatch_; }
  std::string inputOrigin() const override;
  void close() override;

 private:
  Batch makeBatch(int64_t index);
  void work();

  std::shared_ptr<const TensorDataset> dataset_;
  BatchTransforms transforms_;
  BatchSampler sampler_;
  uint64_t seed_;
  int64_t epoch_;
  int64_t startBatch_;
  LoaderOptions options_;
  int64_t queueDepth_ = 0;  // batches made ahead of the consumer; set before any worker starts
  std::unique_ptr<BatchRecycler> recycler_;

  std::mutex mutex_;
  std::condition_variable ready_;  // a batch was made
  std::condition_variable room_;   // the consumer took one, or the loader closes
  std::map<int64_t, std::variant<Batch, std::exception_ptr>> made_;
  int64_t nextToClaim_;
  int64_t nextToTake_;
  bool closing_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace firebrand
