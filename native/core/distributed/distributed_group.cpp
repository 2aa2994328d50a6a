#include "core/distributed/distributed_group.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "core/compat/tcp_store.h"
#include "core/compat/torch_compat.h"
#include "core/errors.h"

// Which c10d backends this build has is decided by CMake (FIREBRAND_WITH_GLOO,
// FIREBRAND_WITH_NCCL): it looks for their headers next to libtorch's.
#if FIREBRAND_WITH_GLOO
#define USE_C10D_GLOO 1
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if FIREBRAND_WITH_NCCL
#define USE_C10D_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace firebrand {

struct DistributedGroup::Backend {
  c10::intrusive_ptr<compat::CollectiveBackend> collectives;
  c10::intrusive_ptr<c10d::Store> store;  // the run's rendezvous store, where failures are posted
};

namespace {

using Collectives = c10::intrusive_ptr<compat::CollectiveBackend>;

// Where a rank posts that it failed, for the others (postFailure), and how often a waiting rank looks.
const std::string kFailureKey = "firebrand/failure";
constexpr std::chrono::milliseconds kWatchSlice{500};

Collectives makeGloo(const c10::intrusive_ptr<c10d::Store>& store, int64_t rank, int64_t worldSize,
                     std::chrono::milliseconds timeout) {
#if FIREBRAND_WITH_GLOO
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  // As torch.distributed: GLOO_SOCKET_IFNAME picks the network interface, else the hostname's.
  const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
  options->devices.push_back(interface && *interface ? c10d::ProcessGroupGloo::createDeviceForInterface(interface)
                                                     : c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, static_cast<int>(rank), static_cast<int>(worldSize),
                                                     options);
#else
  throw InvalidState("built without Gloo");  // join() checks first
#endif
}

Collectives makeNccl(const c10::intrusive_ptr<c10d::Store>& store, int64_t rank, int64_t worldSize,
                     std::chrono::milliseconds timeout) {
#if FIREBRAND_WITH_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, static_cast<int>(rank), static_cast<int>(worldSize),
                                                     options);
#else
  throw InvalidState("built without NCCL");  // join() checks first
#endif
}

std::chrono::milliseconds timeoutOf(const DistributedOptions& options) {
  return std::chrono::milliseconds(static_cast<int64_t>(options.timeoutSeconds * 1000));
}

std::string secondsText(double seconds) {
  std::ostringstream text;
  text << seconds << " s";
  return text.str();
}

std::string placeText(const DistributedOptions& options) {
  return "rank " + std::to_string(options.rank) + " of " + std::to_string(options.worldSize);
}

std::string causeOf(const std::exception& error) {
  if (const auto* torchError = dynamic_cast<const c10::Error*>(&error)) return torchError->what_without_backtrace();
  return error.what();
}

std::string textOf(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

std::vector<uint8_t> bytesOf(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

std::string rankList(const std::vector<int64_t>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  return text;
}

// Each rank signs in under its RANK with its WORLD_SIZE, then waits for all the others, so that a run
// formed wrongly fails on every rank with what is wrong, within the timeout from its start: two processes
// of one RANK, ranks that disagree on WORLD_SIZE, ranks that never came (named), a failure posted.
void signIn(c10d::Store& store, const DistributedOptions& options, std::chrono::steady_clock::time_point started) {
  const std::string where = options.masterAddr + ":" + std::to_string(options.masterPort);
  const std::string rank = std::to_string(options.rank);
  if (store.add("firebrand/rank/" + rank, 1) > 1) {
    throw DistributedError("distributed: another process already joined the rendezvous at " + where + " as rank " +
                           rank + " of " + std::to_string(options.worldSize) +
                           "; each process needs its own RANK (two were started with RANK=" + rank + "?)");
  }
  store.set("firebrand/world/" + rank, bytesOf(std::to_string(options.worldSize)));
  const int64_t arrived = store.add("firebrand/arrived", 1);
  const auto mismatch = [&](int64_t other, const std::string& said) {
    return DistributedError("distributed: rank " + std::to_string(other) + " says WORLD_SIZE=" + said + ", rank " +
                            rank + " (this one) says " + std::to_string(options.worldSize) +
                            "; every rank of a run must be started with the same WORLD_SIZE");
  };
  // Rank 0 is in every run: a rank compares with it as soon as it is there.
  bool comparedWithRankZero = options.rank == 0;
  for (int64_t count = arrived;; count = store.add("firebrand/arrived", 0)) {
    if (!comparedWithRankZero && store.check({"firebrand/world/0"})) {
      const std::string said = textOf(store.get("firebrand/world/0"));
      if (said != std::to_string(options.worldSize)) throw mismatch(0, said);
      comparedWithRankZero = true;
    }
    if (count >= options.worldSize) break;
    if (store.check({kFailureKey})) {
      throw DistributedError("distributed: the rendezvous at " + where +
                             " stopped, since another rank failed: " + textOf(store.get(kFailureKey)));
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (waited >= options.timeoutSeconds) {
      std::vector<int64_t> missing;
      for (int64_t other = 0; other < options.worldSize; ++other) {
        if (!store.check({"firebrand/world/" + std::to_string(other)})) missing.push_back(other);
      }
      throw DistributedError("distributed: rank " + rankList(missing) + " of " + std::to_string(options.worldSize) +
                             " never came to the rendezvous at " + where + " (" + placeText(options) + ", waited " +
                             secondsText(waited) + " of a timeout of " + secondsText(options.timeoutSeconds) +
                             "); did they start, with MASTER_ADDR and MASTER_PORT naming this address?");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (int64_t other = 0; other < options.worldSize; ++other) {
    const std::string said = textOf(store.get("firebrand/world/" + std::to_string(other)));
    if (said != std::to_string(options.worldSize)) throw mismatch(other, said);
  }
}

// One TCPStore per process: rank 0 serves it at MASTER_ADDR:MASTER_PORT, or a launcher's agent does
// (torchrun's TORCHELASTIC_USE_AGENT_STORE) and every rank is a client, its keys under a prefix.
c10::intrusive_ptr<c10d::Store> connectStore(const DistributedOptions& options) {
  const bool agentServes = !options.agentStorePrefix.empty();
  c10d::TCPStoreOptions storeOptions;
  storeOptions.port = static_cast<std::uint16_t>(options.masterPort);
  storeOptions.isServer = options.rank == 0 && !agentServes;
  storeOptions.numWorkers = static_cast<std::size_t>(options.worldSize);
  // signIn waits for the ranks instead, naming those that never come.
  storeOptions.waitWorkers = false;
  storeOptions.timeout = timeoutOf(options);
  compat::useClassicTcpStore(storeOptions);
  const auto started = std::chrono::steady_clock::now();
  c10::intrusive_ptr<c10d::Store> store;
  try {
    auto server = c10::make_intrusive<c10d::TCPStore>(options.masterAddr, storeOptions);
    store =
        agentServes
            ? c10::intrusive_ptr<c10d::Store>(c10::make_intrusive<c10d::PrefixStore>(options.agentStorePrefix, server))
            : c10::intrusive_ptr<c10d::Store>(server);
  } catch (const std::exception& error) {
    throw DistributedError("distributed: the rendezvous at " + options.masterAddr + ":" +
                           std::to_string(options.masterPort) + " (" + placeText(options) + ") failed within " +
                           secondsText(options.timeoutSeconds) + ": " + causeOf(error) +
                           (agentServes ? "; the launcher's agent (TORCHELASTIC_USE_AGENT_STORE) serves no store there"
                            : options.rank == 0 ? "; is the port free?"
                                                : "; did rank 0 start, at that address?"));
  }
  try {
    signIn(*store, options, started);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    throw DistributedError("distributed: the rendezvous at " + options.masterAddr + ":" +
                           std::to_string(options.masterPort) + " (" + placeText(options) +
                           ") failed: " + causeOf(error));
  }
  return store;
}

std::string chooseBackend(const DistributedOptions& options, const c10::Device& device) {
  if (options.backend != "auto") return options.backend;
  return device.is_cuda() && FIREBRAND_WITH_NCCL ? "nccl" : "gloo";
}

struct JoinedGroups {
  std::mutex mutex;
  c10::intrusive_ptr<c10d::Store> store;
  DistributedOptions place;
  std::map<std::string, std::shared_ptr<DistributedGroup>> byBackend;
};

JoinedGroups& joinedGroups() {
  // Never destroyed: collective threads may outlive static destruction at exit.
  static auto* groups = new JoinedGroups();
  return *groups;
}

bool samePlace(const DistributedOptions& a, const DistributedOptions& b) {
  return a.rank == b.rank && a.worldSize == b.worldSize && a.masterAddr == b.masterAddr && a.masterPort == b.masterPort;
}

}  // namespace

DistributedGroup::DistributedGroup(const DistributedOptions& options, std::string backendName,
                                   std::unique_ptr<Backend> backend)
    : options_(options), backendName_(std::move(backendName)), backend_(std::move(backend)) {}

DistributedGroup::~DistributedGroup() = default;

std::shared_ptr<DistributedGroup> DistributedGroup::join(const DistributedOptions& options, const c10::Device& device) {
  if (options.worldSize < 1 || options.rank < 0 || options.rank >= options.worldSize) {
    throw InvalidArgument("distributed: rank " + std::to_string(options.rank) + " must be in [0, worldSize " +
                          std::to_string(options.worldSize) + ")");
  }
  const std::string backendName = chooseBackend(options, device);
  JoinedGroups& groups = joinedGroups();
  const std::lock_guard<std::mutex> lock(groups.mutex);
  if (groups.store && !samePlace(groups.place, options)) {
    throw InvalidState("distributed: this process already joined a run as " + placeText(groups.place) + " at " +
                       groups.place.masterAddr + ":" + std::to_string(groups.place.masterPort) +
                       "; it cannot join another as " + placeText(options));
  }
  const auto found = groups.byBackend.find(backendName);
  if (found != groups.byBackend.end()) {
    if (found->second->options_.timeoutSeconds != options.timeoutSeconds) {
      throw InvalidState("distributed: this process's " + backendName + " group has a timeout of " +
                         secondsText(found->second->options_.timeoutSeconds) +
                         "; a group's settings cannot change once joined");
    }
    return found->second;
  }
  // Checked before the rendezvous, which would otherwise wait for the other ranks first.
  if (backendName == "nccl" && !device.is_cuda()) {
    throw InvalidArgument("distributed.backend 'nccl' needs a CUDA device, got " + device.str() + "; use 'gloo'");
  }
  if (backendName == "nccl" ? !FIREBRAND_WITH_NCCL : !FIREBRAND_WITH_GLOO) {
    throw InvalidArgument("distributed.backend '" + backendName + "': this build of firebrand has no " + backendName +
                          " (its headers were not found next to libtorch's when it was built)");
  }
  if (!groups.store) {
    groups.store = connectStore(options);
    groups.place = options;
  }
  auto backend = std::make_unique<Backend>();
  backend->store = groups.store;
  try {
    // A prefix per backend keeps their rendezvous keys apart in the one store.
    const auto store = c10::make_intrusive<c10d::PrefixStore>(backendName, groups.store);
    if (backendName == "nccl") {
      backend->collectives = makeNccl(store, options.rank, options.worldSize, timeoutOf(options));
    } else {
      backend->collectives = makeGloo(store, options.rank, options.worldSize, timeoutOf(options));
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    throw DistributedError("distributed: the " + backendName + " rendezvous at " + options.masterAddr + ":" +
                           std::to_string(options.masterPort) + " (" + placeText(options) + ") failed within " +
                           secondsText(options.timeoutSeconds) + ": " + causeOf(error));
  }
  auto group = std::shared_ptr<DistributedGroup>(new DistributedGroup(options, backendName, std::move(backend)));
  groups.byBackend.emplace(backendName, group);
  return group;
}

void DistributedGroup::fail(const std::string& what, const std::string& cause) const {
  const std::string posted = postedFailure();
  throw DistributedError("distributed: " + what + " failed on " + placeText(options_) + " (" + backendName_ +
                         ", timeout " + secondsText(options_.timeoutSeconds) + "): " + cause +
                         (posted.empty() ? ". Another rank probably stopped or failed: see its output"
                                         : ". The first rank to fail said: " + posted));
}

void DistributedGroup::postFailure(const std::string& message) const {
  try {
    if (backend_->store->check({kFailureKey})) return;
    const std::string text = "rank " + std::to_string(options_.rank) + ": " + message.substr(0, 2000);
    backend_->store->set(kFailureKey, std::vector<uint8_t>(text.begin(), text.end()));
  } catch (const std::exception&) {
    // The store is gone (rank 0 stopped): the others see the connections close instead.
  }
}

std::string DistributedGroup::postedFailure() const {
  try {
    if (!backend_->store->check({kFailureKey})) return "";
    const std::vector<uint8_t> text = backend_->store->get(kFailureKey);
    return std::string(text.begin(), text.end());
  } catch (const std::exception&) {
    return "";
  }
}

void DistributedGroup::waitWatching(const c10::intrusive_ptr<c10d::Work>& work, const std::string& operation) const {
  // NCCL's wait only syncs a stream; its own watchdog ends a stuck collective.
  if (backendName_ != "gloo") {
    try {
      work->wait();
    } catch (const std::exception& error) {
      fail(operation, causeOf(error));
    }
    return;
  }
  // Gloo's work ends at its timeout; meanwhile, a slice at a time, a failure another rank posted ends it.
  while (true) {
    try {
      work->wait(kWatchSlice);
      return;
    } catch (const std::exception& error) {
      if (work->isCompleted()) fail(operation, causeOf(error));
      const std::string posted = postedFailure();
      if (!posted.empty()) fail(operation, "stopped waiting, since another rank failed");
    }
  }
}

c10::intrusive_ptr<c10d::Work> DistributedGroup::startAllReduce(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  try {
    return backend_->collectives->allreduce(tensors);
  } catch (const std::exception& error) {
    fail("an all-reduce", causeOf(error));
  }
}

void DistributedGroup::wait(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what) const {
  waitWatching(work, "the all-reduce of " + what);
}

void DistributedGroup::allReduceSum(at::Tensor& tensor, const std::string& what) { wait(startAllReduce(tensor), what); }

void DistributedGroup::broadcast(int64_t root, const std::vector<at::Tensor>& tensors, const std::string& what) {
  const std::string operation = "broadcasting " + what + " from rank " + std::to_string(root);
  // One flat tensor per dtype: one collective each, however many tensors.
  std::map<at::ScalarType, std::vector<at::Tensor>> byDtype;
  for (const auto& tensor : tensors) byDtype[tensor.scalar_type()].push_back(tensor);
  for (auto& [dtype, group] : byDtype) {
    std::vector<at::Tensor> flat;
    for (const auto& tensor : group) flat.push_back(tensor.detach().reshape({-1}));
    std::vector<at::Tensor> buffer{at::cat(flat)};
    c10d::BroadcastOptions broadcastOptions;
    broadcastOptions.rootRank = root;
    c10::intrusive_ptr<c10d::Work> work;
    try {
      work = backend_->collectives->broadcast(buffer, broadcastOptions);
    } catch (const std::exception& error) {
      fail(operation, causeOf(error));
    }
    waitWatching(work, operation);
    if (root == rank()) continue;
    at::NoGradGuard noGrad;
    int64_t offset = 0;
    for (auto& tensor : group) {
      tensor.detach().copy_(buffer.front().narrow(0, offset, tensor.numel()).view_as(tensor));
      offset += tensor.numel();
    }
  }
}

}  // namespace firebrand
