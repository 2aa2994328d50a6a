# Finds libtorch for firebrand, in the documented order, and says which one it used:
#   1. LIBTORCH (cmake variable or environment): an unpacked libtorch folder
#   2. Torch_DIR (cmake variable or environment): a folder holding TorchConfig.cmake
#   3. the `torch` package of the python3 on PATH (torch.utils.cmake_prefix_path)
#   4. the system (Debian/Ubuntu libtorch-dev: /usr/lib/<arch>/cmake/Torch)
# Sets FIREBRAND_LIBTORCH_SOURCE and defines the Torch targets through find_package(Torch).

function(_firebrand_use_torch_dir dir source)
  if(NOT EXISTS "${dir}/TorchConfig.cmake")
    message(FATAL_ERROR
      "firebrand: ${source} points at '${dir}', which holds no TorchConfig.cmake.\n"
      "Point it at an unpacked libtorch folder (LIBTORCH) or its share/cmake/Torch folder (Torch_DIR).")
  endif()
  set(Torch_DIR "${dir}" CACHE PATH "Folder holding TorchConfig.cmake" FORCE)
  set(Torch_DIR "${dir}" PARENT_SCOPE)
  # Cached with the folder, so that a re-configure (which finds Torch_DIR set) still says where it came from.
  set(FIREBRAND_LIBTORCH_SOURCE "${source}" CACHE INTERNAL "How libtorch was found")
  set(FIREBRAND_LIBTORCH_SOURCE_DIR "${dir}" CACHE INTERNAL "The folder that source gave")
endfunction()

if(NOT LIBTORCH AND DEFINED ENV{LIBTORCH})
  set(LIBTORCH "$ENV{LIBTORCH}")
endif()
if(NOT Torch_DIR AND DEFINED ENV{Torch_DIR})
  set(Torch_DIR "$ENV{Torch_DIR}")
endif()

if(LIBTORCH)
  _firebrand_use_torch_dir("${LIBTORCH}/share/cmake/Torch" "LIBTORCH=${LIBTORCH}")
elseif(Torch_DIR AND FIREBRAND_LIBTORCH_SOURCE_DIR STREQUAL Torch_DIR)
  # Found by an earlier configure of this build folder: keep its source.
elseif(Torch_DIR)
  _firebrand_use_torch_dir("${Torch_DIR}" "Torch_DIR")
else()
  find_program(FIREBRAND_PYTHON3 python3)
  set(_python_prefix "")
  if(FIREBRAND_PYTHON3)
    execute_process(
      COMMAND "${FIREBRAND_PYTHON3}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE _python_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _python_status ERROR_QUIET)
    if(NOT _python_status EQUAL 0)
      set(_python_prefix "")
    endif()
  endif()
  if(_python_prefix AND EXISTS "${_python_prefix}/Torch/TorchConfig.cmake")
    _firebrand_use_torch_dir("${_python_prefix}/Torch" "the torch package of ${FIREBRAND_PYTHON3}")
  else()
    find_path(_system_torch_dir TorchConfig.cmake
      PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/Torch /usr/lib/x86_64-linux-gnu/cmake/Torch
            /usr/lib/aarch64-linux-gnu/cmake/Torch /usr/local/share/cmake/Torch /usr/share/cmake/Torch
      NO_DEFAULT_PATH)
    if(_system_torch_dir)
      _firebrand_use_torch_dir("${_system_torch_dir}" "the system libtorch")
    else()
      message(FATAL_ERROR
        "firebrand: no libtorch found. Do one of these, then run `npm run build:native` again:\n"
        "  - Debian/Ubuntu, as root: `bash node_modules/firebrand/scripts/setup-debian.sh` (installs libtorch-dev and OpenBLAS)\n"
        "  - unpack a LibTorch zip from pytorch.org and set LIBTORCH=/path/to/libtorch\n"
        "  - `pip install torch` for the python3 on PATH\n"
        "  - set Torch_DIR to a folder holding TorchConfig.cmake")
    endif()
  endif()
endif()

find_package(Torch REQUIRED CONFIG)
message(STATUS "firebrand: libtorch ${Torch_VERSION} from ${FIREBRAND_LIBTORCH_SOURCE} (${Torch_DIR})")
