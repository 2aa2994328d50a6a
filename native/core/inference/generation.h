// Sampling tokens from a language model in C++, one step per call: the
// context so far (its last contextLength tokens) runs through the model in
// eval mode, the last position's logits are shaped by temperature, top-k and
// top-p (nucleus) filtering, and a generator seeded `seed` draws the token, so
// a seed gives the same tokens on any device. Several prompts decode together
// as one batch, left-padded to the longest (as transformers pads for
// generation), each ending at its own stop token. With a key/value cache
// (models written as TypeScript modules with causal attention or recurrent
// layers) the model runs on the prompts once and then on each new token alone.
#pragma once
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <vector>

#include "core/model/model.h"

namespace firebrand {

struct GenerationOptions {
  int64_t maxNewTokens = 0;
  double temperature = 1.0;
  std::optional<int64_t> topK;
  std::optional<double> topP;
  double repetitionPenalty = 1.0;  // transformers' repetition_penalty over the tokens so far
  int64_t noRepeatNgramSize = 0;   // transformers' no_repeat_ngram_size: no n-gram twice (0: off)
  std::optional<double> minP;      // transformers' min_p: drop tokens below minP × the top probability
  bool greedy = false;
  std::optional<uint64_t> seed;          // none: a fresh seed (tokens differ from call to call)
  std::vector<int64_t> stopTokens;       // generation ends after the first of these
  std::optional<int64_t> contextLength;  // the model sees at most this many last tokens
  // Each chosen token's log-probability under the model's raw logits (log_softmax before any processing,
  // vLLM's raw_logprobs), read after each next() with logprobs().
  bool logprobs = false;
  // A key/value cache: none, one when the model can decode incrementally (else full forwards);
  // true, one or an error saying why not; false, a full forward of the context for every token.
  std::optional<bool> kvCache;
};

class TokenGenerator {
 public:
  // Checks the options and the prompts (each one's token ids, 1-D); errors name the option or the prompt.
  TokenGenerator(std::shared_ptr<Model> model, const std::vector<at::Tensor>& prompts, GenerationOptions options,
                 c10::Device device);

  // Each prompt's next token, nullopt for one that has ended (after a stop token); empty once every
  // one has ended or maxNewTokens are out.
  std::vector<std::optional<int64_t>> next();
  // The last next()'s tokens' log-probabilities (nullopt for an ended prompt); empty unless options.logprobs.
  const std::vector<std::optional<double>>& logprobs() const { return logprobs_; }

 private:
  at::Tensor nextLogits();
  // The last position's logits from the cache, or nullopt once the cache is given up.
  std::optional<at::Tensor> cachedLogits();
  at::Tensor fullLogits();
  // The logits [batch, vocabulary] of `forward`'s output for `ids`; a failure names the token and the context.
  template <typename Forward>
  at::Tensor lastLogits(const at::Tensor& ids, Forward forward);
  // The token ids and mask from column `first` on, on the model's device.
  std::pair<at::Tensor, at::Tensor> contextFrom(int64_t first) const;
  // The next token of each row of `logits` [batch, vocabulary]: repetition penalty and repeated n-grams,
  // then greedy or temperature, top-k, top-p, min-p and a draw (transformers' order of logits processors).
  at::Tensor sample(at::Tensor logits);
  // `logits` with each token that would repeat an n-gram of its row (noRepeatNgramSize) blocked.
  at::Tensor blockRepeatedNgrams(at::Tensor logits) const;
  // Ends incremental decoding, or throws the reason when kvCache was asked for.
  void giveUpCache(const std::string& reason);

  std::shared_ptr<Model> model_;
  GenerationOptions options_;
  c10::Device device_;
  at::Tensor tokens_;        // [batch, positions] int64, the prompts left-padded, then the new tokens
  at::Tensor mask_;          // [batch, positions] int64: 1 for a token, 0 for padding
  std::vector<bool> ended_;  // by prompt: it gave a stop token
  std::vector<std::optional<double>> logprobs_;  // the last step's, with options.logprobs
  at::Generator generator_;
  int64_t produced_ = 0;
  std::optional<DecodeCache> cache_;         // while decoding incrementally
  bool cacheChecked_ = false;                // its first step was compared with a full forward
  at::ScalarType logitsDtype_ = at::kFloat;  // the model's, before they are widened for sampling
  uint64_t cachedWeights_ = 0;               // Model::weightsFingerprint() when the cache was filled
};

}  // namespace firebrand
