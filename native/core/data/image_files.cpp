#include "core/data/image_files.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>

#include "core/errors.h"

namespace firebrand {

void SkippedImages::note(const std::string& path, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool known = std::any_of(files_.begin(), files_.end(), [&](const auto& file) { return file.first == path; });
  if (!known) files_.emplace_back(path, reason);
}

std::vector<std::pair<std::string, std::string>> SkippedImages::list() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return files_;
}

ImageFiles::ImageFiles(std::vector<std::string> paths, ImageFileOptions options)
    : ImageFiles(std::move(paths), std::make_shared<const ImageFileOptions>(std::move(options)),
                 std::make_shared<SkippedImages>()) {}

ImageFiles::ImageFiles(std::vector<std::string> paths, std::shared_ptr<const ImageFileOptions> options,
                       std::shared_ptr<SkippedImages> skipped)
    : paths_(std::move(paths)), options_(std::move(options)), skipped_(std::move(skipped)) {
  if (paths_.empty()) throw InvalidArgument("image dataset: it holds no image files");
}

ImageFiles ImageFiles::select(c10::ArrayRef<int64_t> indices) const {
  std::vector<std::string> chosen;
  chosen.reserve(indices.size());
  for (const int64_t index : indices) chosen.push_back(paths_.at(static_cast<size_t>(index)));
  return ImageFiles(std::move(chosen), options_, skipped_);
}

ImageFiles ImageFiles::withTransforms(ImageTransforms transforms) const {
  ImageFileOptions options = *options_;
  options.transforms = std::move(transforms);
  return ImageFiles(paths_, std::make_shared<const ImageFileOptions>(std::move(options)), skipped_);
}

std::optional<at::Tensor> ImageFiles::load(int64_t index, at::Generator& generator) const {
  const std::string& path = paths_.at(static_cast<size_t>(index));
  at::Tensor image;
  try {
    image = readImage(path, options_->mode, options_->maxPixels);
  } catch (const FileError& error) {
    if (options_->onError == BrokenImagePolicy::Stop) throw;
    skipped_->note(path, error.what());
    return std::nullopt;
  }
  try {
    return applyImageTransforms(options_->transforms, image, generator);
  } catch (const Error& error) {
    throw Error(error.code(), path + ": " + error.what());
  }
}

std::vector<int64_t> ImageFiles::sampleShape() const {
  static const std::map<ImageReadMode, int64_t> channels = {
      {ImageReadMode::Gray, 1}, {ImageReadMode::GrayAlpha, 2}, {ImageReadMode::Rgb, 3}, {ImageReadMode::RgbAlpha, 4}};
  const auto it = channels.find(options_->mode);
  return transformedShape(options_->transforms, {it == channels.end() ? -1 : it->second, -1, -1});
}

}  // namespace firebrand
