# Compiler settings shared by every weft target: ccache, CUDA detection, sanitizers,
# and weft_target_defaults(), which turns warnings into errors for our own code only.

# Paths relative to the source tree and no build directory in the hash: build/default and
# build/torch2 share the cache for every file that does not see LibTorch (engine, generator).
find_program(WEFT_CCACHE ccache)
if(WEFT_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(weft_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1
                    ${WEFT_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${weft_launcher})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${weft_launcher})
endif()

# Off only where the compiler is not the one weft is kept clean with (scripts/device-check builds
# on the GPU machine's own, newer GCC: its new warnings are counted in the log, not fatal there).
option(WEFT_WERROR "Treat warnings in weft's own code as errors" ON)

# Eigen picks its SIMD width at compile time: without -march=native its GEMM runs SSE2 code,
# ~5x slower than OpenBLAS on this AVX-512 CPU. On by default because weft is built where it
# runs; turn it off to build binaries for other machines.
option(WEFT_NATIVE "Compile for this machine's CPU (-march=native)" ON)
if(WEFT_NATIVE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()

# CUDA: AUTO turns it on when nvcc exists (the default toolkit lives in /usr/local/cuda).
set(WEFT_CUDA_ENABLED OFF)
if(NOT WEFT_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(WEFT_NVCC nvcc HINTS /usr/local/cuda/bin)
    if(WEFT_NVCC)
      set(CMAKE_CUDA_COMPILER ${WEFT_NVCC})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)  # CUDA 13 dropped everything below 75
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    find_package(CUDAToolkit REQUIRED)
    set(WEFT_CUDA_ENABLED ON)
  elseif(WEFT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "WEFT_CUDA=ON but no CUDA compiler (nvcc) was found; "
                        "install the CUDA toolkit or configure with -DWEFT_CUDA=OFF")
  endif()
endif()

if(WEFT_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "WEFT_FUZZ needs clang (libFuzzer): use the 'fuzz' preset")
endif()

set(WEFT_SANITIZE_FLAGS "")
foreach(sanitizer IN LISTS WEFT_SANITIZE)
  if(NOT sanitizer MATCHES "^(address|undefined)$")
    message(FATAL_ERROR "WEFT_SANITIZE: '${sanitizer}' is not one of: address, undefined")
  endif()
  list(APPEND WEFT_SANITIZE_FLAGS -fsanitize=${sanitizer})
endforeach()
if(WEFT_SANITIZE_FLAGS)
  list(APPEND WEFT_SANITIZE_FLAGS -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
endif()

# Flags for our own targets (never for dependencies): strict warnings as errors,
# sanitizers, and libFuzzer coverage instrumentation for the fuzz build.
function(weft_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>
    # Modules with other signatures (LSTM, GRU, MultiheadAttention) define their own forward
    # beside Module's single-tensor one, on purpose; GCC 13 puts this warning in -Wall.
    $<$<COMPILE_LANGUAGE:CXX>:-Wno-overloaded-virtual>)
  if(WEFT_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  # GCC 12 at -O3 reports maybe-uninitialized inside Eigen's AVX-512 intrinsics (avx512fintrin.h)
  # where nothing is uninitialized; clang still checks ours.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
    if(WEFT_SANITIZE_FLAGS)  # with sanitizers the same false positive is a plain -Wuninitialized
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-uninitialized>)
    endif()
  endif()
  if(WEFT_SANITIZE_FLAGS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${WEFT_SANITIZE_FLAGS}>)
    target_link_options(${target} PUBLIC ${WEFT_SANITIZE_FLAGS})
  endif()
  if(WEFT_FUZZ)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
  endif()
endfunction()
