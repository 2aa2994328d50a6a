#include "core/distributed/rank_reducer.h"

namespace firebrand {

const std::string& RankReducer::backendName() const {
  static const std::string none = "none";
  return none;
}

}  // namespace firebrand
