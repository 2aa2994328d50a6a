#include "binding/image_exports.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "binding/config_convert.h"
#include "binding/convert.h"
#include "binding/dataset_wrap.h"
#include "binding/js_errors.h"
#include "binding/promise_worker.h"
#include "binding/results.h"
#include "core/data/image_files.h"
#include "core/errors.h"
#include "core/images/image_batch.h"
#include "core/images/image_decoding.h"
#include "core/images/image_encoding.h"
#include "core/shape_text.h"

namespace firebrand::binding {
namespace {

// (paths, targets { data, shape }, { mode, onError, transforms, maxPixels }) -> NativeDataset whose input is decoded
// from the files as batches are cut.
Napi::Value ImageDataset(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    std::vector<std::string> paths = toStrings(info[0], "paths");
    TensorDict fields = toTensorDict(info[1], "fields");
    const Napi::Object options = toObject(info[2], "image options");
    ImageFileOptions imageOptions;
    imageOptions.mode = imageReadMode(toString(options.Get("mode"), "mode"));
    imageOptions.onError =
        toString(options.Get("onError"), "onError") == "skip" ? BrokenImagePolicy::Skip : BrokenImagePolicy::Stop;
    imageOptions.transforms = toImageTransforms(options.Get("transforms"), "transforms");
    imageOptions.maxPixels = toInteger(options.Get("maxPixels"), "maxPixels", 0);
    return DatasetWrap::NewInstance(
        env, TensorDataset(std::move(fields), ImageFiles(std::move(paths), std::move(imageOptions))));
  });
}

// (dataset, transforms) -> the same images through other per-image transforms.
Napi::Value WithImageTransforms(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const DatasetRef dataset = DatasetWrap::From(info[0], "dataset");
    auto images = std::make_shared<const TensorDataset>(
        dataset.data->withImageTransforms(toImageTransforms(info[1], "transforms")));
    return DatasetWrap::NewInstance(env, {std::move(images), dataset.transforms});
  });
}

// (dataset) -> [{ path, reason }]: the files left out so far (onError 'skip').
Napi::Value SkippedImages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const DatasetRef dataset = DatasetWrap::From(info[0], "dataset");
    auto list = Napi::Array::New(env);
    if (dataset.data->images() == nullptr) return list;
    uint32_t i = 0;
    for (const auto& [path, reason] : dataset.data->images()->skipped().list()) {
      auto entry = Napi::Object::New(env);
      entry.Set("path", path);
      entry.Set("reason", reason);
      list.Set(i++, entry);
    }
    return list;
  });
}

// A sample of raw pixels as an image [C, H, W]: [H, W] has one channel, [n] is one row of one channel.
at::Tensor asImage(const at::Tensor& sample, int64_t index) {
  switch (sample.dim()) {
    case 3:
      return sample;
    case 2:
      return sample.unsqueeze(0);
    case 1:
      return sample.view({1, 1, -1});
    default:
      throw ShapeMismatch("inputs[" + std::to_string(index) + "] " + shapeText(sample) +
                          ": raw pixels are [C, H, W], [H, W] or [n] per sample");
  }
}

// ({ data: Uint8Array, shape: [N, ...] }, transforms) -> Promise<{ data, shape }>: raw pixels, each sample
// through the transforms (random ones seeded 0), stacked.
Napi::Value TransformImages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const Napi::Object batch = toObject(info[0], "inputs");
    const at::Tensor pixels = toTensor(batch.Get("data"), toShape(batch.Get("shape"), "inputs.shape"), "inputs");
    auto transforms = std::make_shared<ImageTransforms>(toImageTransforms(info[1], "transforms"));
    return PromiseWorker::Start(env, [pixels, transforms]() -> PromiseWorker::Finish {
      at::Generator generator = at::detail::createCPUGenerator(0);
      std::vector<at::Tensor> images;
      for (int64_t i = 0; i < pixels.size(0); ++i) {
        try {
          images.push_back(applyImageTransforms(*transforms, asImage(pixels[i], i), generator));
        } catch (const Error& error) {
          throw Error(error.code(), "inputs[" + std::to_string(i) + "]: " + error.what());
        }
        if (images.back().sizes() != images.front().sizes()) {
          throw ShapeMismatch("inputs[" + std::to_string(i) + "] is " + shapeText(images.back()) +
                              " after the transforms but inputs[0] is " + shapeText(images.front()));
        }
      }
      const at::Tensor stacked = at::stack(images);
      return [stacked](Napi::Env env) -> Napi::Value { return fromTensor(env, stacked); };
    });
  });
}

// ({ data: Uint8Array, shape: [C, H, W] }, 'png' | 'jpeg', level or quality) -> Promise<Buffer>.
Napi::Value EncodeImage(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const Napi::Object image = toObject(info[0], "image");
    const at::Tensor pixels = toTensor(image.Get("data"), toShape(image.Get("shape"), "image.shape"), "image");
    const bool png = toString(info[1], "format") == "png";
    const int setting = static_cast<int>(toInteger(info[2], png ? "compressionLevel" : "quality", 0));
    return PromiseWorker::Start(env, [pixels, png, setting]() -> PromiseWorker::Finish {
      auto bytes =
          std::make_shared<std::vector<uint8_t>>(png ? encodePng(pixels, setting) : encodeJpeg(pixels, setting));
      return [bytes](Napi::Env env) -> Napi::Value {
        return Napi::Buffer<uint8_t>::Copy(env, bytes->data(), bytes->size());
      };
    });
  });
}

// (dataset) -> string[]: the image file of each sample, in order.
Napi::Value ImagePaths(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const DatasetRef dataset = DatasetWrap::From(info[0], "dataset");
    if (dataset.data->images() == nullptr) throw InvalidArgument("the dataset holds no image files");
    return toJs(env, dataset.data->images()->paths());
  });
}

// (bytes: Uint8Array, mode, transforms, seed, source, maxPixels) -> Promise<{ data, shape }>: one encoded image decoded
// and transformed, random transforms drawn from a generator seeded `seed`.
std::vector<uint8_t> imageBytes(const Napi::Value& value) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw InvalidArgument("image bytes must be a Buffer or Uint8Array of an encoded JPEG, PNG or WebP");
  }
  const auto view = value.As<Napi::Uint8Array>();
  return {view.Data(), view.Data() + view.ByteLength()};
}

Napi::Value DecodeImage(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    // Copied: JavaScript may change or transfer the buffer while the pool decodes.
    auto bytes = std::make_shared<std::vector<uint8_t>>(imageBytes(info[0]));
    const ImageReadMode mode = imageReadMode(toString(info[1], "mode"));
    auto transforms = std::make_shared<ImageTransforms>(toImageTransforms(info[2], "transforms"));
    const auto seed = static_cast<uint64_t>(toInteger(info[3], "seed", 0));
    const std::string source = toString(info[4], "source");
    const int64_t maxPixels = toInteger(info[5], "maxPixels", 0);
    return PromiseWorker::Start(env, [=]() -> PromiseWorker::Finish {
      // On one kernel thread (PromiseWorker), as the loader's workers transform: elementwise kernels round
      // their vector and scalar parts differently, so a split between threads can move a pixel by one step.
      at::Generator generator = at::detail::createCPUGenerator(seed);
      const at::Tensor transformed =
          decodeTransformed(bytes->data(), bytes->size(), mode, *transforms, generator, source, maxPixels);
      return [transformed](Napi::Env env) -> Napi::Value { return fromTensor(env, transformed); };
    });
  });
}

// (images: Uint8Array[], mode, transforms, seed, field, maxPixels) -> Promise<TensorData>: [N, ...] on libuv's pool.
Napi::Value DecodeImages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const std::string field = toString(info[4], "field");
    if (!info[0].IsArray()) throw InvalidArgument(field + " must be an array of Buffers or Uint8Arrays");
    const auto list = info[0].As<Napi::Array>();
    // Copied: JavaScript may change or transfer the buffers while the pool decodes.
    auto images = std::make_shared<std::vector<std::vector<uint8_t>>>();
    for (uint32_t i = 0; i < list.Length(); ++i) images->push_back(imageBytes(list.Get(i)));
    const ImageReadMode mode = imageReadMode(toString(info[1], "mode"));
    auto transforms = std::make_shared<ImageTransforms>(toImageTransforms(info[2], "transforms"));
    const auto seed = static_cast<uint64_t>(toInteger(info[3], "seed", 0));
    const int64_t maxPixels = toInteger(info[5], "maxPixels", 0);
    return PromiseWorker::Start(env, [=]() -> PromiseWorker::Finish {
      const at::Tensor batch = decodeImageBatch(*images, mode, *transforms, seed, field, maxPixels);
      return [batch](Napi::Env env) -> Napi::Value { return fromTensor(env, batch); };
    });
  });
}

// () -> { name, random }[]: every image transform C++ runs.
Napi::Value ImageTransformRows(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array out = Napi::Array::New(env);
  for (const auto& [name, random] : imageTransformRows()) {
    Napi::Object row = Napi::Object::New(env);
    row.Set("name", name);
    row.Set("random", random);
    out.Set(out.Length(), row);
  }
  return out;
}

}  // namespace

ImageTransforms toImageTransforms(const Napi::Value& value, const std::string& field) {
  if (!value.IsArray()) throw InvalidArgument(field + " must be an array of { name, ... }");
  const auto specs = value.As<Napi::Array>();
  ImageTransforms transforms;
  for (uint32_t i = 0; i < specs.Length(); ++i) {
    const std::string owner = field + "[" + std::to_string(i) + "]";
    const Napi::Value spec = specs.Get(i);
    if (!spec.IsObject() || spec.IsArray()) throw InvalidArgument(owner + " must be an object with a 'name'");
    const std::string name = toString(spec.As<Napi::Object>().Get("name"), owner + ".name");
    transforms.push_back(makeImageTransform(i, name, toOptionMap(spec, owner, {"name"})));
  }
  return transforms;
}

void exportImages(Napi::Env env, Napi::Object exports) {
  exports.Set("imageDataset", Napi::Function::New<ImageDataset>(env, "imageDataset"));
  exports.Set("withImageTransforms", Napi::Function::New<WithImageTransforms>(env, "withImageTransforms"));
  exports.Set("imagePaths", Napi::Function::New<ImagePaths>(env, "imagePaths"));
  exports.Set("skippedImages", Napi::Function::New<SkippedImages>(env, "skippedImages"));
  exports.Set("transformImages", Napi::Function::New<TransformImages>(env, "transformImages"));
  exports.Set("encodeImage", Napi::Function::New<EncodeImage>(env, "encodeImage"));
  exports.Set("decodeImage", Napi::Function::New<DecodeImage>(env, "decodeImage"));
  exports.Set("decodeImages", Napi::Function::New<DecodeImages>(env, "decodeImages"));
  exports.Set("imageTransformRows", Napi::Function::New<ImageTransformRows>(env, "imageTransformRows"));
}

}  // namespace firebrand::binding
