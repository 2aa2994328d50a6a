// The floor of `npm run bench`: the bench workloads trained by a plain
// libtorch C++ loop (no framework): batches pre-cut in memory, forward, loss,
// backward, optimizer step, and the loss read back every 50 steps as a
// logging loop would. Prints one JSON line.
//   raw_loop <tiny|mlp|cnn|cnn-module|resnet|resnet-head|transformer|gpt> <steps> <threads> [transformer.pt]
// (cnn-module is the cnn; resnet is torchvision's ResNet-18 layout with a CIFAR
// stem at width 16, written with torch::nn as a C++ user would.)
#include <sys/resource.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

struct Workload {
  std::function<at::Tensor(const at::Tensor&)> forward;
  std::vector<at::Tensor> parameters;
  std::function<void(bool)> train;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> loss;
  at::Tensor inputs;   // [batches, batch, ...]
  at::Tensor targets;  // [batches, batch, ...]
};

template <typename Module>
void useModule(Workload& workload, Module module) {
  workload.forward = [module](const at::Tensor& x) mutable { return module->forward(x); };
  workload.parameters = module->parameters();
  workload.train = [module](bool on) mutable { module->train(on); };
}

using torch::nn::BatchNorm2d;
using torch::nn::Conv2d;
using torch::nn::Conv2dOptions;

struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t in, int64_t planes, int64_t stride)
      : conv1(register_module("conv1", Conv2d(Conv2dOptions(in, planes, 3).stride(stride).padding(1).bias(false)))),
        bn1(register_module("bn1", BatchNorm2d(planes))),
        conv2(register_module("conv2", Conv2d(Conv2dOptions(planes, planes, 3).padding(1).bias(false)))),
        bn2(register_module("bn2", BatchNorm2d(planes))) {
    if (stride != 1 || in != planes) {
      downsample = register_module(
          "downsample",
          torch::nn::Sequential(Conv2d(Conv2dOptions(in, planes, 1).stride(stride).bias(false)), BatchNorm2d(planes)));
    }
  }
  at::Tensor forward(const at::Tensor& x) {
    at::Tensor out = torch::relu(bn1(conv1(x)));
    out = bn2(conv2(out));
    return torch::relu(out + (downsample.is_empty() ? x : downsample->forward(x)));
  }
  Conv2d conv1;
  BatchNorm2d bn1;
  Conv2d conv2;
  BatchNorm2d bn2;
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

struct ResNet18Impl : torch::nn::Module {
  explicit ResNet18Impl(int64_t width)
      : conv1(register_module("conv1", Conv2d(Conv2dOptions(3, width, 3).padding(1).bias(false)))),
        bn1(register_module("bn1", BatchNorm2d(width))) {
    int64_t planes = width;
    for (int64_t stage = 0; stage < 4; ++stage) {
      const int64_t out = width << stage;
      stages.push_back(
          register_module("layer" + std::to_string(stage + 1),
                          torch::nn::Sequential(BasicBlock(planes, out, stage == 0 ? 1 : 2), BasicBlock(out, out, 1))));
      planes = out;
    }
    fc = register_module("fc", torch::nn::Linear(planes, 10));
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<torch::nn::Conv2dImpl>())
        torch::nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
    }
  }
  at::Tensor forward(at::Tensor x) {
    x = torch::relu(bn1(conv1(x)));
    for (auto& stage : stages) x = stage->forward(x);
    return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
  Conv2d conv1;
  BatchNorm2d bn1;
  std::vector<torch::nn::Sequential> stages;
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet18);

// GPT-mini as a C++ user writes it with torch::nn: nanoGPT's blocks, causal attention by its
// formula, the head tied to the token embedding (a linear over wte's weight).
struct GptBlockImpl : torch::nn::Module {
  GptBlockImpl(int64_t dim, int64_t heads)
      : dim(dim),
        heads(heads),
        ln_1(register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        c_attn(register_module("c_attn", torch::nn::Linear(dim, 3 * dim))),
        attn_proj(register_module("attn_proj", torch::nn::Linear(dim, dim))),
        ln_2(register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        c_fc(register_module("c_fc", torch::nn::Linear(dim, 4 * dim))),
        mlp_proj(register_module("mlp_proj", torch::nn::Linear(4 * dim, dim))) {}
  at::Tensor attend(const at::Tensor& x) {
    const int64_t batch = x.size(0), time = x.size(1);
    const auto qkv = c_attn(x).split(dim, 2);
    const auto split = [&](const at::Tensor& t) { return t.view({batch, time, heads, dim / heads}).transpose(1, 2); };
    at::Tensor weights = torch::matmul(split(qkv[0]), split(qkv[1]).transpose(-2, -1)) *
                         (1.0 / std::sqrt(static_cast<double>(dim / heads)));
    weights = weights.masked_fill(torch::ones({time, time}, torch::kBool).tril().logical_not(),
                                  -std::numeric_limits<double>::infinity());
    return attn_proj(torch::matmul(torch::softmax(weights, -1), split(qkv[2]))
                         .transpose(1, 2)
                         .contiguous()
                         .view({batch, time, dim}));
  }
  at::Tensor forward(const at::Tensor& x) {
    const at::Tensor h = x + attend(ln_1(x));
    return h + mlp_proj(torch::gelu(c_fc(ln_2(h))));
  }
  int64_t dim, heads;
  torch::nn::LayerNorm ln_1;
  torch::nn::Linear c_attn, attn_proj;
  torch::nn::LayerNorm ln_2;
  torch::nn::Linear c_fc, mlp_proj;
};
TORCH_MODULE(GptBlock);

struct GptImpl : torch::nn::Module {
  GptImpl(int64_t vocab, int64_t context, int64_t dim, int64_t heads, int64_t layers)
      : wte(register_module("wte", torch::nn::Embedding(vocab, dim))),
        wpe(register_module("wpe", torch::nn::Embedding(context, dim))),
        ln_f(register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))) {
    for (int64_t i = 0; i < layers; ++i)
      blocks.push_back(register_module("h" + std::to_string(i), GptBlock(dim, heads)));
  }
  at::Tensor forward(const at::Tensor& tokens) {
    at::Tensor x = wte(tokens) + wpe(torch::arange(tokens.size(1)));
    for (auto& block : blocks) x = block->forward(x);
    return torch::linear(ln_f(x), wte->weight).transpose(1, 2);
  }
  torch::nn::Embedding wte, wpe;
  torch::nn::LayerNorm ln_f;
  std::vector<GptBlock> blocks;
};
TORCH_MODULE(Gpt);

Workload makeWorkload(const std::string& name, const std::string& scriptPath) {
  constexpr int64_t kBatches = 16;
  Workload workload;
  const auto crossEntropy = [](const at::Tensor& output, const at::Tensor& target) {
    return torch::nn::functional::cross_entropy(output, target);
  };
  if (name == "tiny") {
    useModule(workload, torch::nn::Sequential(torch::nn::Linear(16, 16), torch::nn::ReLU(), torch::nn::Linear(16, 1)));
    workload.optimizer = std::make_unique<torch::optim::SGD>(workload.parameters, torch::optim::SGDOptions(0.01));
    workload.loss = [](const at::Tensor& output, const at::Tensor& target) { return torch::mse_loss(output, target); };
    workload.inputs = torch::randn({kBatches, 32, 16});
    workload.targets = torch::randn({kBatches, 32, 1});
  } else if (name == "mlp") {
    useModule(workload,
              torch::nn::Sequential(torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
                                    torch::nn::ReLU(), torch::nn::Linear(256, 10)));
    workload.optimizer = std::make_unique<torch::optim::Adam>(workload.parameters, torch::optim::AdamOptions(1e-3));
    workload.loss = crossEntropy;
    workload.inputs = torch::randn({kBatches, 128, 784});
    workload.targets = torch::randint(10, {kBatches, 128});
  } else if (name == "resnet") {
    useModule(workload, ResNet18(16));
    workload.optimizer = std::make_unique<torch::optim::AdamW>(workload.parameters, torch::optim::AdamWOptions(1e-3));
    workload.loss = crossEntropy;
    workload.inputs = torch::randn({kBatches, 32, 3, 32, 32});
    workload.targets = torch::randint(10, {kBatches, 32});
  } else if (name == "resnet-head") {
    // Fine-tuning the head: the backbone's parameters need no gradient and its modules run in eval mode.
    ResNet18 module(16);
    useModule(workload, module);
    for (const auto& item : module->named_parameters()) item.value().requires_grad_(item.key().rfind("fc.", 0) == 0);
    workload.train = [module](bool on) mutable {
      module->train(on);
      for (const auto& child : module->named_children()) {
        if (child.key() != "fc") child.value()->eval();
      }
    };
    workload.optimizer =
        std::make_unique<torch::optim::AdamW>(module->fc->parameters(), torch::optim::AdamWOptions(1e-3));
    workload.loss = crossEntropy;
    workload.inputs = torch::randn({kBatches, 32, 3, 32, 32});
    workload.targets = torch::randint(10, {kBatches, 32});
  } else if (name == "gpt") {
    useModule(workload, Gpt(256, 64, 128, 4, 2));
    workload.optimizer = std::make_unique<torch::optim::AdamW>(workload.parameters, torch::optim::AdamWOptions(1e-3));
    workload.loss = crossEntropy;
    workload.inputs = torch::randint(256, {kBatches, 16, 64});
    workload.targets = torch::randint(256, {kBatches, 16, 64});
  } else if (name == "cnn" || name == "cnn-module") {
    useModule(workload, torch::nn::Sequential(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3).padding(1)),
                                              torch::nn::ReLU(), torch::nn::MaxPool2d(2),
                                              torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3).padding(1)),
                                              torch::nn::ReLU(), torch::nn::MaxPool2d(2), torch::nn::Flatten(),
                                              torch::nn::Linear(64 * 7 * 7, 128), torch::nn::ReLU(),
                                              torch::nn::Dropout(0.25), torch::nn::Linear(128, 10)));
    workload.optimizer = std::make_unique<torch::optim::AdamW>(workload.parameters, torch::optim::AdamWOptions(1e-3));
    workload.loss = crossEntropy;
    workload.inputs = torch::randn({kBatches, 64, 1, 28, 28});
    workload.targets = torch::randint(10, {kBatches, 64});
  } else if (name == "transformer") {
    auto module = std::make_shared<torch::jit::Module>(torch::jit::load(scriptPath));
    workload.forward = [module](const at::Tensor& x) { return module->forward({x}).toTensor(); };
    for (const auto& parameter : module->parameters()) workload.parameters.push_back(parameter);
    workload.train = [module](bool on) { module->train(on); };
    workload.optimizer = std::make_unique<torch::optim::AdamW>(workload.parameters, torch::optim::AdamWOptions(1e-3));
    workload.loss = crossEntropy;
    workload.inputs = torch::randint(1000, {kBatches, 32, 64});
    workload.targets = torch::randint(10, {kBatches, 32});
  } else {
    throw std::invalid_argument("unknown workload " + name);
  }
  return workload;
}

double peakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: raw_loop <tiny|mlp|cnn|transformer> <steps> <threads> [transformer.pt]\n";
    return 2;
  }
  const std::string name = argv[1];
  const int64_t steps = std::stoll(argv[2]);
  at::set_num_threads(std::stoi(argv[3]));
  torch::manual_seed(0);
  const auto started = Clock::now();
  Workload workload = makeWorkload(name, argc > 4 ? argv[4] : "");
  workload.train(true);
  const auto step = [&](int64_t i) {
    const int64_t batch = i % workload.inputs.size(0);
    workload.optimizer->zero_grad();
    const at::Tensor loss = workload.loss(workload.forward(workload.inputs[batch]), workload.targets[batch]);
    loss.backward();
    workload.optimizer->step();
    return loss;
  };
  step(0);
  const double firstStep = std::chrono::duration<double>(Clock::now() - started).count();
  const auto timed = Clock::now();
  double lastLoss = 0;
  for (int64_t i = 1; i <= steps; ++i) {
    const at::Tensor loss = step(i);
    if (i % 50 == 0) lastLoss = loss.item<double>();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - timed).count();
  std::cout << "{\"stepsPerSecond\":" << static_cast<double>(steps) / seconds << ",\"firstStepSeconds\":" << firstStep
            << ",\"peakRssMb\":" << peakRssMb() << ",\"loss\":" << lastLoss << "}" << std::endl;
  return 0;
}
