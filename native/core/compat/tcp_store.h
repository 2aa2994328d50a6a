// TCPStore's backend. Since 2.4 TCPStoreOptions asks for the libuv server by
// default, but a libtorch built without libuv (Debian's 2.14) then refuses to
// start ("use_libuv was requested but PyTorch was built without libuv
// support"). The classic server, the only one in 1.13, serves a rendezvous of
// any number of ranks firebrand launches; it is used everywhere.
#pragma once
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <type_traits>
#include <utility>

namespace firebrand::compat {

template <typename Options, typename = void>
struct HasUseLibUV : std::false_type {};
template <typename Options>
struct HasUseLibUV<Options, std::void_t<decltype(std::declval<Options&>().useLibUV)>> : std::true_type {};

// (A template, so that the assignment is compiled only where the field exists.)
template <typename Options = c10d::TCPStoreOptions>
void useClassicTcpStore(Options& options) {
  if constexpr (HasUseLibUV<Options>::value) options.useLibUV = false;
}

}  // namespace firebrand::compat
