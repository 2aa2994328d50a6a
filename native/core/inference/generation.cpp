#include "core/inference/generation.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
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
  const auto finitePositive = [](double value) { return std::isfinite(value) && value > 0; };
  if (options.maxNewTokens < 1) fail("maxNewTokens", std::to_string(options.maxNewTokens), "an integer >= 1");
  if (!finitePositive(options.temperature))
    fail("temperature", std::to_string(options.temperature), "a finite number > 0");
  if (options.topK && *options.topK < 1) fail("topK", std::to_string(*options.topK), "an integer >= 1");
  if (!finitePositive(options.repetitionPenalty))
    fail("repetitionPenalty", std::to_string(options.repetitionPenalty), "a finite number > 0");
  if (options.noRepeatNgramSize < 0)
    fail("noRepeatNgramSize", std::to_string(options.noRepeatNgramSize), "an integer >= 0 (0: off)");
  if (options.minP && !(*options.minP >= 0 && *options.minP <= 1))
    fail("minP", std::to_string(*options.minP), "a number in [0, 1]");
  if (options.topP && !(*options.topP > 0 && *options.topP <= 1))
    fail("topP", std::to_string(*options.topP), "a number in (0, 1]");
  if (options.contextLength && *options.contextLength < 1)
    fail("contextLength", std::to_string(*options.contextLength), "an integer >= 1");
}

// `prompt`'s token ids as int64: 1-D, at least one, whole numbers (a plain JS array arrives as float64).
// `name`: "prompt", or "prompts[i]" in a batch.
at::Tensor promptIds(const at::Tensor& prompt, const std::string& name) {
  const std::string subject = name == "prompt" ? "the prompt" : name;
  if (prompt.dim() != 1 || prompt.numel() == 0)
    throw InvalidArgument("generate: " + subject + " must hold at least one token id, got " + shapeText(prompt));
  if (prompt.is_floating_point()) {
    const at::Tensor fractional = (prompt != prompt.floor()).nonzero();
    if (fractional.numel() > 0) {
      const int64_t at = fractional[0][0].item<int64_t>();
      throw InvalidArgument("generate: " + subject + " must hold integer token ids; " + name + "[" +
                            std::to_string(at) + "] is " + std::to_string(prompt[at].item<double>()));
    }
  }
  return prompt.to(at::kLong);
}

}  // namespace

TokenGenerator::TokenGenerator(std::shared_ptr<Model> model, const std::vector<at::Tensor>& prompts,
                               GenerationOptions options, c10::Device device)
    : model_(std::move(model)),
      options_(std::move(options)),
      device_(device),
      ended_(prompts.size(), false),
      generator_(at::detail::createCPUGenerator(options_.seed.value_or(std::random_device()()))) {
  check(options_);
  if (prompts.empty()) throw InvalidArgument("generate: got no prompts, expected at least one");
  int64_t longest = 0;
  for (const at::Tensor& prompt : prompts) longest = std::max(longest, prompt.numel());
  const auto batch = static_cast<int64_t>(prompts.size());
  tokens_ = at::zeros({batch, longest}, at::kLong);
  mask_ = at::zeros({batch, longest}, at::kLong);
  for (int64_t i = 0; i < batch; ++i) {
    const std::string name = batch == 1 ? "prompt" : "prompts[" + std::to_string(i) + "]";
    const at::Tensor ids = promptIds(prompts[static_cast<size_t>(i)], name);
    // Left padding: every prompt's last token in the last column, where each next token follows.
    tokens_[i].narrow(0, longest - ids.numel(), ids.numel()).copy_(ids);
    mask_[i].narrow(0, longest - ids.numel(), ids.numel()).fill_(1);
  }
  if (options_.kvCache.value_or(true)) cache_.emplace();
}

std::pair<at::Tensor, at::Tensor> TokenGenerator::contextFrom(int64_t first) const {
  const int64_t length = tokens_.size(1) - first;
  return {tokens_.narrow(1, first, length).to(device_), mask_.narrow(1, first, length).to(device_)};
}

template <typename Forward>
at::Tensor TokenGenerator::lastLogits(const at::Tensor& ids, Forward forward) {
  at::Tensor output;
  try {
    output = forward();
  } catch (const NotIncremental&) {
    throw;
  } catch (...) {
    rethrowWithContext("generate, token " + std::to_string(produced_ + 1) + " (the model saw the last " +
                       std::to_string(cache_ ? cache_->past + ids.size(1) : ids.size(1)) +
                       " tokens; contextLength crops them to its position table)");
  }
  logitsDtype_ = output.scalar_type();
  // Language models give [batch, vocabulary, time] (cross_entropy's layout) or [batch, vocabulary].
  const int64_t batch = ids.size(0), time = ids.size(1);
  if (output.dim() == 3 && output.size(0) == batch && output.size(2) != time && output.size(1) == time) {
    throw ShapeMismatch("generate: the model's output for " + shapeText(ids) + " tokens is " + shapeText(output) +
                        ", its vocabulary last; a language model's classes go on dim 1 ([batch, vocabulary, time], "
                        "as cross_entropy takes them): return logits.transpose(1, 2) from forward");
  }
  if (output.dim() == 3 && output.size(0) == batch) return output.select(2, -1).to(at::kCPU, at::kFloat);
  if (output.dim() == 2 && output.size(0) == batch) return output.to(at::kCPU, at::kFloat);
  throw ShapeMismatch(
      "generate: the model's output for " + shapeText(ids) + " tokens is " + shapeText(output) +
      "; a language model's must be [batch, vocabulary, time] (as cross_entropy takes it) or [batch, vocabulary]");
}

at::Tensor TokenGenerator::fullLogits() {
  const int64_t length = tokens_.size(1);
  const auto [ids, mask] = contextFrom(length - std::min(length, options_.contextLength.value_or(length)));
  return lastLogits(ids, [&, &ids = ids, &mask = mask] { return model_->forwardTokens(ids, mask, nullptr); });
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
  const at::Tensor ids = contextFrom(past).first;
  // The mask covers every position: the cached ones' padding stays hidden from the new ones.
  const at::Tensor mask = mask_.to(device_);
  at::Tensor logits;
  try {
    logits = lastLogits(ids, [&] { return model_->forwardTokens(ids, mask, &*cache_); });
  } catch (const NotIncremental& reason) {
    giveUpCache(reason.what());
    return std::nullopt;
  }
  const bool padded = (mask_ == 0).any().item<bool>();
  if (past == 0 || cacheChecked_ || model_->decodeCacheChecked(padded)) return logits;
  // The first step from the cache is checked once (per model, with padding and without) against a full
  // forward: an op that mixes positions other than attention and recurrence (a convolution or a mean over
  // the sequence) gives other logits. Rounding differs by ~10 steps of the logits' precision at most (1e-5
  // in float32, 2^-7 in bfloat16, whose products round after every op); a wrong position differs by far more.
  cacheChecked_ = true;
  const double step = logitsDtype_ == at::kBFloat16 ? 0.0078125 : logitsDtype_ == at::kHalf ? 0.0009765625 : 1e-5;
  const at::Tensor full = fullLogits();
  const double difference = (logits - full).abs().max().item<double>();
  if (difference <= 10 * step * (1.0 + full.abs().max().item<double>())) {
    model_->markDecodeCacheChecked(padded);
    return logits;
  }
  giveUpCache("its logits from the cache differ from a full forward's by " + std::to_string(difference) + " at token " +
              std::to_string(produced_ + 1) + ", so an op mixes positions in a way the cache does not carry");
  return full;
}

at::Tensor TokenGenerator::nextLogits() {
  torch::NoGradGuard noGrad;
  const InferenceRun::Scope inferenceKernels;
  EvalModeScope evalMode(*model_);
  // Once the window slides, every position (a learned one, too) moves: each step runs it whole.
  if (cache_ && options_.contextLength && tokens_.size(1) > *options_.contextLength) cache_.reset();
  // Keys computed with weights that have since changed (generating during fit) are computed again.
  if (cache_ && cache_->past > 0 && model_->weightsFingerprint() != cachedWeights_) cache_.emplace();
  if (cache_) {
    if (cache_->past == 0) cachedWeights_ = model_->weightsFingerprint();
    if (auto logits = cachedLogits()) return *logits;
  }
  return fullLogits();
}

at::Tensor TokenGenerator::sample(at::Tensor logits) {
  if (options_.repetitionPenalty != 1) {
    // Each token a sequence holds (its padding left out) has its logit moved towards less likely.
    const at::Tensor held = at::zeros_like(logits).scatter_add_(1, tokens_, mask_.to(logits.scalar_type())).gt(0);
    const double penalty = options_.repetitionPenalty;
    logits = at::where(held, at::where(logits < 0, logits * penalty, logits / penalty), logits);
  }
  if (options_.noRepeatNgramSize > 0) logits = blockRepeatedNgrams(logits);
  if (options_.greedy) return logits.argmax(-1);
  logits = logits / options_.temperature;
  const double blocked = -std::numeric_limits<double>::infinity();
  if (options_.topK && *options_.topK < logits.size(-1)) {
    const at::Tensor kth = std::get<0>(logits.topk(*options_.topK, -1)).narrow(-1, *options_.topK - 1, 1);
    logits = logits.masked_fill(logits < kth, blocked);
  }
  if (options_.topP && *options_.topP < 1) {
    // Keep the smallest set of most likely tokens whose probability reaches topP (at least one).
    const auto [sorted, order] = logits.sort(/*dim=*/-1, /*descending=*/true);
    const at::Tensor probabilities = at::softmax(sorted, -1);
    const at::Tensor before = probabilities.cumsum(-1) - probabilities;
    logits =
        logits.masked_fill(at::zeros_like(logits, at::kBool).scatter(-1, order, before >= *options_.topP), blocked);
  }
  if (options_.minP && *options_.minP > 0) {
    // Keep the tokens at least minP times as likely as the most likely one (which always stays).
    const at::Tensor probabilities = at::softmax(logits, -1);
    const at::Tensor floor = std::get<0>(probabilities.max(-1, /*keepdim=*/true)) * *options_.minP;
    logits = logits.masked_fill(probabilities < floor, blocked);
  }
  return at::multinomial(at::softmax(logits, -1), 1, /*replacement=*/false, generator_).squeeze(-1);
}

at::Tensor TokenGenerator::blockRepeatedNgrams(at::Tensor logits) const {
  const int64_t n = options_.noRepeatNgramSize;
  const at::Tensor tokens = tokens_.cpu().contiguous();
  const at::Tensor mask = mask_.cpu().contiguous();
  const auto tokenAt = tokens.accessor<int64_t, 2>();
  const auto maskAt = mask.accessor<int64_t, 2>();
  at::Tensor blocked = at::zeros(logits.sizes(), at::kBool);
  auto blockedAt = blocked.accessor<bool, 2>();
  for (int64_t row = 0; row < tokens.size(0); ++row) {
    // The row's tokens, its padding left out: an n-gram ending with the last n-1 of them is not made again.
    std::vector<int64_t> held;
    for (int64_t at = 0; at < tokens.size(1); ++at)
      if (maskAt[row][at] != 0) held.push_back(tokenAt[row][at]);
    const int64_t length = static_cast<int64_t>(held.size());
    if (length + 1 < n) continue;
    for (int64_t start = 0; start + n <= length; ++start) {
      if (std::equal(held.begin() + start, held.begin() + start + n - 1, held.end() - (n - 1)))
        blockedAt[row][held[start + n - 1]] = true;
    }
  }
  return logits.masked_fill(blocked.to(logits.device()), -std::numeric_limits<double>::infinity());
}

std::vector<std::optional<int64_t>> TokenGenerator::next() {
  if (produced_ >= options_.maxNewTokens || std::all_of(ended_.begin(), ended_.end(), [](bool ended) { return ended; }))
    return {};
  // Here, on the model's task thread: the constructor runs on the JS thread, and the copy takes a while.
  if (produced_ == 0) model_->backWeightsWithHugePages();
  const at::Tensor logits = nextLogits();
  at::Tensor column = sample(logits).to(at::kLong).contiguous();
  const int64_t* chosen = column.data_ptr<int64_t>();
  if (options_.logprobs) {
    const at::Tensor chosenLogprobs =
        at::log_softmax(logits.to(at::kFloat), -1).gather(1, column.to(logits.device()).unsqueeze(1)).squeeze(1);
    const at::Tensor values = chosenLogprobs.to(at::kCPU, at::kDouble).contiguous();
    logprobs_.assign(ended_.size(), std::nullopt);
    for (size_t i = 0; i < ended_.size(); ++i)
      if (!ended_[i]) logprobs_[i] = values.data_ptr<double>()[i];
  }
  std::vector<std::optional<int64_t>> tokens(ended_.size());
  for (size_t i = 0; i < ended_.size(); ++i) {
    if (ended_[i]) continue;
    tokens[i] = chosen[i];
    ended_[i] =
        std::find(options_.stopTokens.begin(), options_.stopTokens.end(), chosen[i]) != options_.stopTokens.end();
  }
  // An ended prompt's row goes on with the tokens sampled for it; nothing reads them (transformers feeds padding).
  tokens_ = at::cat({tokens_, column.unsqueeze(1)}, 1);
  mask_ = at::cat({mask_, at::ones({mask_.size(0), 1}, at::kLong)}, 1);
  ++produced_;
  return tokens;
}

}  // namespace firebrand
