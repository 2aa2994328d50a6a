// A dataset field decoded from image files as its batches are cut, on the
// loader's worker threads: each sample is read, decoded (images/image_decoding.h)
// and put through the per-image transforms (images/image_transforms.h) with
// the batch's generator, so a seed replays the same crops and flips.
#pragma once
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/images/image_decoding.h"
#include "core/images/image_transforms.h"

namespace firebrand {

// What a file that does not decode does: stop training with an error naming it,
// or leave it out of its batch and count it.
enum class BrokenImagePolicy { Stop, Skip };

struct ImageFileOptions {
  ImageReadMode mode = ImageReadMode::Rgb;
  ImageTransforms transforms;
  BrokenImagePolicy onError = BrokenImagePolicy::Stop;
  int64_t maxPixels = kDefaultMaxPixels;  // a file over it is broken (image_decoding.h)
};

// Files left out under BrokenImagePolicy::Skip, each once, with why; shared by a dataset's parts.
class SkippedImages {
 public:
  void note(const std::string& path, const std::string& reason);
  std::vector<std::pair<std::string, std::string>> list() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, std::string>> files_;
};

class ImageFiles {
 public:
  ImageFiles(std::vector<std::string> paths, ImageFileOptions options);

  int64_t size() const { return static_cast<int64_t>(paths_.size()); }
  const std::vector<std::string>& paths() const { return paths_; }
  const ImageFileOptions& options() const { return *options_; }

  // The files `indices`, in that order, with the same options and skip list.
  ImageFiles select(c10::ArrayRef<int64_t> indices) const;
  ImageFiles withTransforms(ImageTransforms transforms) const;

  // Sample `index` decoded and transformed; nullopt for a broken file left out (BrokenImagePolicy::Skip).
  std::optional<at::Tensor> load(int64_t index, at::Generator& generator) const;
  // A sample's shape after the transforms, from the read mode and the transforms alone (nothing is decoded
  // here: decoding is the loader's work): -1 where only decoding would tell (a size no transform fixes).
  std::vector<int64_t> sampleShape() const;
  const SkippedImages& skipped() const { return *skipped_; }

 private:
  ImageFiles(std::vector<std::string> paths, std::shared_ptr<const ImageFileOptions> options,
             std::shared_ptr<SkippedImages> skipped);

  std::vector<std::string> paths_;
  std::shared_ptr<const ImageFileOptions> options_;
  std::shared_ptr<SkippedImages> skipped_;
};

}  // namespace firebrand
