# Which LibTorch weft builds against. By default Debian's 1.13 (libtorch-dev, found with no
# hints). With WEFT_TORCH_PYTHON (the `torch2` preset: .venv/bin/python), the LibTorch inside
# that interpreter's torch wheel: PyTorch 2.x, CUDA-enabled. Every other difference between the
# two targets lives in the oracle's sources that CMake picks here (oracle/CMakeLists.txt).
set(WEFT_TORCH_PYTHON "" CACHE FILEPATH
    "Build against the LibTorch of this Python's torch wheel instead of Debian's 1.13")

if(WEFT_TORCH_PYTHON)
  execute_process(
    COMMAND ${WEFT_TORCH_PYTHON} -c "import os, torch; print(os.path.dirname(torch.__file__))"
    OUTPUT_VARIABLE weft_torch_root RESULT_VARIABLE weft_torch_status
    ERROR_VARIABLE weft_torch_error OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT weft_torch_status EQUAL 0 OR NOT EXISTS "${weft_torch_root}/share/cmake/Torch")
    message(FATAL_ERROR "WEFT_TORCH_PYTHON=${WEFT_TORCH_PYTHON}: cannot import torch or find its "
                        "CMake files (${weft_torch_error}); run scripts/setup-torch2")
  endif()
  set(Torch_DIR "${weft_torch_root}/share/cmake/Torch" CACHE PATH "" FORCE)
  # TorchConfig's find_dependency(Caffe2 PATHS <wheel>) and find_library(NAME PATHS <wheel>/lib)
  # search /usr/lib first, where Debian's LibTorch 1.13 lives, and take it: pin the wheel's
  # Caffe2 config (its imported targets are the libraries weft links) and every library.
  set(Caffe2_DIR "${weft_torch_root}/share/cmake/Caffe2" CACHE PATH "" FORCE)
  file(GLOB weft_torch_libraries "${weft_torch_root}/lib/lib*.so")
  foreach(library IN LISTS weft_torch_libraries)
    get_filename_component(name "${library}" NAME_WE)
    string(REGEX REPLACE "^lib" "" name "${name}")
    set(${name}_LIBRARY "${library}" CACHE FILEPATH "" FORCE)
  endforeach()
  set(TORCH_LIBRARY "${weft_torch_root}/lib/libtorch.so" CACHE FILEPATH "" FORCE)
  # libtorch_cuda.so finds its NVIDIA libraries (the nvidia/*/lib wheels) by its $ORIGIN rpath
  # at run time; the linker looks in ld.so's cache instead, where the CUDA toolkit's older NCCL
  # lacks symbols the wheel's libtorch_cuda uses. Show it the wheels'.
  file(GLOB weft_nvidia_libraries LIST_DIRECTORIES true "${weft_torch_root}/../nvidia/*/lib")
  foreach(directory IN LISTS weft_nvidia_libraries)
    add_link_options("LINKER:-rpath-link,${directory}")
  endforeach()
  set(C10_CUDA_LIBRARY "${weft_torch_root}/lib/libc10_cuda.so" CACHE FILEPATH "" FORCE)
endif()

# A CUDA LibTorch's config appends -gencode flags for its own architecture list (sm_50 among
# them, which CUDA 13's nvcc refuses) to CMAKE_CUDA_FLAGS; weft's kernels keep their own.
set(weft_cuda_flags "${CMAKE_CUDA_FLAGS}")
find_package(Torch REQUIRED)
set(CMAKE_CUDA_FLAGS "${weft_cuda_flags}")

# Whether this LibTorch has CUDA kernels: torch_cuda is among its libraries.
set(WEFT_TORCH_CUDA OFF)
if("${TORCH_LIBRARIES}" MATCHES "torch_cuda|c10_cuda")
  set(WEFT_TORCH_CUDA ON)
endif()

string(REGEX MATCH "^[0-9]+" WEFT_TORCH_MAJOR "${Torch_VERSION}")
if(NOT WEFT_TORCH_MAJOR)
  message(FATAL_ERROR "cannot tell the LibTorch major version from '${Torch_VERSION}'")
endif()
message(STATUS "LibTorch ${Torch_VERSION} from ${Torch_DIR} (CUDA: ${WEFT_TORCH_CUDA})")
