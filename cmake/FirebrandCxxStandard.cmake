# Sets CMAKE_CXX_STANDARD from the libtorch found (after find_package(FirebrandLibtorch)):
# 17 where its headers allow it (1.13, 2.6), 20 where they require it (2.14's stop
# at an #error under 17). firebrand's sources are valid in both.
include(CheckCXXSourceCompiles)
string(MAKE_C_IDENTIFIER "FIREBRAND_TORCH_${Torch_VERSION}_TAKES_CXX17" FIREBRAND_CXX17_CHECK)
set(CMAKE_REQUIRED_INCLUDES ${TORCH_INCLUDE_DIRS})
set(CMAKE_REQUIRED_FLAGS "-std=c++17")
set(CMAKE_REQUIRED_QUIET ON)
check_cxx_source_compiles("#include <ATen/core/Tensor.h>\nint main() { return 0; }" ${FIREBRAND_CXX17_CHECK})
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_FLAGS)
if(${FIREBRAND_CXX17_CHECK})
  set(CMAKE_CXX_STANDARD 17)
else()
  set(CMAKE_CXX_STANDARD 20)
endif()
set(CMAKE_CXX_STANDARD_REQUIRED ON)
message(STATUS "firebrand: C++${CMAKE_CXX_STANDARD} (libtorch ${Torch_VERSION})")
