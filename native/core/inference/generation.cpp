#include "core/inference/generation.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#include <algorithm>
#include <limits>
#include <random>

#include "core/errors.h"
#include "core/model/eval_mode_scope.h"
#include "core/runtime/inference_run.h"
#include "core/shape_text.h"

namespace firebrand {
namespace {

void check(const GenerationOptions& options) {
  const auto fail = [](const std::string& field, const std::string& got, const std::string& expected) {
    throw InvalidArgument("generate." + field + ": got " + got + ", expected " + expected);
  };
  if (options.maxNewTokens < 1) fail("maxNewTokens", std::to_string(options.maxNewTokens), "an integer >= 1");
  if (!(options.temperature > 0)) fail("temperature", std::to_string(options.temperature), "a number > 0");
  if (options.topK && *options.topK < 1) fail("topK", std::to_string(*options.topK), "an integer >= 1");
  if (options.topP && !(*options.topP > 0 && *options.topP <= 1))
    fail("topP", std::to_string(*options.topP), "a number in (0, 1]");
  if (options.contextLength && *options.contextLength < 1)
    fail("contextLength", std::to_string(*options.contextLength), "an integer >= 1");
}

}  // namespace

TokenGenerator::TokenGenerator(std::shared_ptr<Model> model, const at::Tensor& prompt, GenerationOptions options,
                               c10::Device device)
    : model_(std::move(model)),
      options_(std::move(options)),
      device_(device),
      generator_(at::detail::createCPUGenerator(options_.seed.value_or(std::random_device()()))) {
  check(options_);
  if (prompt.dim() != 1 || prompt.numel() == 0)
    throw InvalidArgument("generate: the prompt must hold at least one token id, got " + shapeText(prompt));
  if (prompt.is_floating_point()) {
    // A plain JS array arrives as float64: whole numbers are ids, anything else is named.
    const at::Tensor fractional = (prompt != prompt.floor()).nonzero();
    if (fractional.numel() > 0) {
      const int64_t at = fractional[0][0].item<int64_t>();
      throw InvalidArgument("generate: the prompt must hold integer token ids; prompt[" + std::to_string(at) + "] is " +
                            std::to_string(prompt[at].item<double>()));
    }
  }
  const at::Tensor ids = prompt.to(at::kLong).contiguous();
  tokens_.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  if (options_.kvCache.value_or(true)) cache_.emplace();
}

at::Tensor TokenGenerator::tokensFrom(int64_t first) const {
  return at::tensor(std::vector<int64_t>(tokens_.begin() + first, tokens_.end()), at::kLong).unsqueeze(0).to(device_);
}

template <typename Forward>
at::Tensor TokenGenerator::lastLogits(const at::Tensor& context, Forward forward) {
  at::Tensor output;
  try {
    output = forward();
  } catch (const NotIncremental&) {
    throw;
  } catch (...) {
    rethrowWithContext("generate, token " + std::to_string(produced_ + 1) + " (the model saw the last " +
                       std::to_string(cache_ ? cache_->past + context.size(1) : context.size(1)) +
                       " tokens; contextLength crops them to its position table)");
  }
  logitsDtype_ = output.scalar_type();
  // Language models give [1, vocabulary, time] (cross_entropy's layout) or [1, vocabulary].
  const int64_t time = context.size(1);
  if (output.dim() == 3 && output.size(0) == 1 && output.size(2) != time && output.size(1) == time) {
    throw ShapeMismatch("generate: the model's output for " + shapeText(context) + " tokens is " + shapeText(output) +
                        ", its vocabulary last; a language model's classes go on dim 1 ([1, vocabulary, time], as "
                        "cross_entropy takes them): return logits.transpose(1, 2) from forward");
  }
  if (output.dim() == 3 && output.size(0) == 1) return output.select(0, 0).select(1, -1).to(at::kCPU, at::kFloat);
  if (output.dim() == 2 && output.size(0) == 1) return output.select(0, 0).to(at::kCPU, at::kFloat);
  throw ShapeMismatch(
      "generate: the model's output for " + shapeText(context) + " tokens is " + shapeText(output) +
      "; a language model's must be [1, vocabulary, time] (as cross_entropy takes it) or [1, vocabulary]");
}

at::Tensor TokenGenerator::fullLogits() {
  const int64_t length = static_cast<int64_t>(tokens_.size());
  const at::Tensor context = tokensFrom(length - std::min(length, options_.contextLength.value_or(length)));
  return lastLogits(context, [&] { return model_->forward(context); });
}

void TokenGenerator::giveUpCache(const std::string& reason) {
  cache_.reset();
  if (options_.kvCache.value_or(false)) {
    throw InvalidArgument("generate.kvCache: the model cannot decode from a key/value cache: " + reason +
                          ". Pass kvCache: false, or leave it unset to fall back to full forwards");
  }
}

std::optional<at::Tensor> TokenGenerator::cachedLogits() {
  const int64_t past = cache_->past;
  const at::Tensor fresh = tokensFrom(past);
  at::Tensor logits;
  try {
    logits = lastLogits(fresh, [&] { return model_->forwardIncremental(fresh, *cache_); });
  } catch (const NotIncremental& reason) {
    giveUpCache(reason.what());
    return std::nullopt;
  }
  if (past == 0 || cacheChecked_) return logits;
  // The first step from the cache is checked once against a full forward: an op that mixes
  // positions other than attention and recurrence (a convolution or a mean over the sequence)
  // gives other logits. Rounding differs by ~10 steps of the logits' precision at most (1e-5 in float32,
  // 2^-7 in bfloat16, whose products round after every op); a wrong position differs by far more.
  cacheChecked_ = true;
  const double step = logitsDtype_ == at::kBFloat16 ? 0.0078125 : logitsDtype_ == at::kHalf ? 0.0009765625 : 1e-5;
  const at::Tensor full = fullLogits();
  const double difference = (logits - full).abs().max().item<double>();
  if (difference <= 10 * step * (1.0 + full.abs().max().item<double>())) return logits;
  giveUpCache("its logits from the cache differ from a full forward's by " + std::to_string(difference) + " at token " +
              std::to_string(produced_ + 1) + ", so an op mixes positions in a way the cache does not carry");
  return full;
}

int64_t TokenGenerator::weightsVersion() const {
  int64_t version = 0;
  for (const at::Tensor& parameter : model_->parameters()) version += static_cast<int64_t>(parameter._version());
  return version;
}

at::Tensor TokenGenerator::nextLogits() {
  torch::NoGradGuard noGrad;
  const InferenceRun inferenceKernels;
  EvalModeScope evalMode(*model_);
  // Once the window slides, every position (a learned one, too) moves: each step runs it whole.
  if (cache_ && options_.contextLength && static_cast<int64_t>(tokens_.size()) > *options_.contextLength)
    cache_.reset();
  // Keys computed with weights that have since changed (generating during fit) are computed again.
  if (cache_ && cache_->past > 0 && weightsVersion() != cachedWeights_) cache_.emplace();
  if (cache_) {
    if (cache_->past == 0) cachedWeights_ = weightsVersion();
    if (auto logits = cachedLogits()) return *logits;
  }
  return fullLogits();
}

std::optional<int64_t> TokenGenerator::next() {
  if (stopped_ || produced_ >= options_.maxNewTokens) return std::nullopt;
  at::Tensor logits = nextLogits();
  int64_t token = 0;
  if (options_.greedy) {
    token = logits.argmax().item<int64_t>();
  } else {
    logits = logits / options_.temperature;
    const double blocked = -std::numeric_limits<double>::infinity();
    if (options_.topK && *options_.topK < logits.size(0)) {
      const at::Tensor kth = std::get<0>(logits.topk(*options_.topK)).select(0, -1);
      logits = logits.masked_fill(logits < kth, blocked);
    }
    if (options_.topP && *options_.topP < 1) {
      // Keep the smallest set of most likely tokens whose probability reaches topP (at least one).
      const auto [sorted, order] = logits.sort(/*dim=*/0, /*descending=*/true);
      const at::Tensor probabilities = at::softmax(sorted, 0);
      const at::Tensor before = probabilities.cumsum(0) - probabilities;
      logits =
          logits.masked_fill(at::zeros_like(logits, at::kBool).scatter(0, order, before >= *options_.topP), blocked);
    }
    token = at::multinomial(at::softmax(logits, 0), 1, /*replacement=*/false, generator_).item<int64_t>();
  }
  tokens_.push_back(token);
  ++produced_;
  stopped_ = std::find(options_.stopTokens.begin(), options_.stopTokens.end(), token) != options_.stopTokens.end();
  return token;
}

}  // namespace firebrand
