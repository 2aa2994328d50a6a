#include "core/distributed/distributed_options.h"

#include "core/errors.h"
#include "core/options/option_reader.h"

namespace firebrand {

DistributedOptions distributedOptions(const OptionMap& optionMap, const std::string& owner) {
  OptionReader reader(owner, optionMap);
  DistributedOptions options;
  options.worldSize = reader.positiveInt("worldSize", options.worldSize);
  options.rank = reader.nonNegativeInt("rank", options.rank);
  if (options.rank >= options.worldSize) {
    throw InvalidArgument(owner + ".rank: " + std::to_string(options.rank) + " must be below worldSize " +
                          std::to_string(options.worldSize));
  }
  options.masterAddr = reader.optionalText("masterAddr").value_or(options.masterAddr);
  options.masterPort = reader.positiveInt("masterPort", options.masterPort);
  if (options.masterPort > 65535) {
    throw InvalidArgument(owner + ".masterPort: " + std::to_string(options.masterPort) + " is not a TCP port (1-65535)");
  }
  options.backend = reader.choice("backend", options.backend, {"auto", "gloo", "nccl"});
  options.timeoutSeconds = reader.number("timeout", options.timeoutSeconds, 0.001, kUnbounded);
  options.bucketCapBytes =
      static_cast<int64_t>(reader.number("bucketCapMb", 25, 0.000001, 1 << 20) * 1024 * 1024);
  options.broadcastBuffers = reader.flag("broadcastBuffers", options.broadcastBuffers);
  reader.finish();
  return options;
}

}  // namespace firebrand
