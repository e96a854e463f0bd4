# Host builds: the mica runner firmware for each QEMU build, cross-compiled as external
# projects (the same sources and settings as the qemu-* presets) when arm-none-eabi-gcc is
# installed. `mica run/check --backend qemu` and the device tests find them under
# <build>/firmware/<build>/firmware/mica_runner.elf (MICA_FIRMWARE_DIR).
include_guard(GLOBAL)
include(ExternalProject)

find_program(MICA_ARM_GCC_FOR_FIRMWARE arm-none-eabi-g++)
set(mica_fw_default OFF)
if(MICA_ARM_GCC_FOR_FIRMWARE)
  set(mica_fw_default ON)
endif()
option(MICA_BUILD_FIRMWARE "Cross-build the QEMU runner firmware (needs arm-none-eabi-gcc)"
       ${mica_fw_default})
set(MICA_FIRMWARE_DIR "${PROJECT_BINARY_DIR}/firmware")

if(MICA_BUILD_FIRMWARE AND MICA_ARM_GCC_FOR_FIRMWARE)
  # build name | CPU | QEMU board (as the qemu-<build> presets)
  set(mica_fw_all "m55-mve|cortex-m55|mps3-an547" "m4-dsp|cortex-m4|mps2-an386"
                  "m55-scalar|cortex-m55+nomve+nodsp|mps3-an547" "m7-dsp|cortex-m7|mps2-an500"
                  "m33-dsp|cortex-m33|mps2-an505")
  set(MICA_FIRMWARE_BUILDS "m55-mve;m4-dsp;m55-scalar;m7-dsp;m33-dsp" CACHE STRING
      "runner firmware builds to cross-compile (each ~40 s of a cold build on 2 cores)")
  set(mica_fw_builds "")
  foreach(spec IN LISTS mica_fw_all)
    string(REGEX REPLACE "\\|.*" "" name "${spec}")
    if(name IN_LIST MICA_FIRMWARE_BUILDS)
      list(APPEND mica_fw_builds "${spec}")
    endif()
  endforeach()
  set(mica_fw_launcher "")
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    set(mica_fw_launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
                         -DCMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER})
  endif()
  add_custom_target(mica_firmware)
  foreach(spec IN LISTS mica_fw_builds)
    string(REPLACE "|" ";" spec "${spec}")
    list(GET spec 0 name)
    list(GET spec 1 cpu)
    list(GET spec 2 board)
    ExternalProject_Add(mica_firmware_${name}
      SOURCE_DIR ${PROJECT_SOURCE_DIR}
      BINARY_DIR ${MICA_FIRMWARE_DIR}/${name}
      CMAKE_ARGS -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/toolchains/arm-none-eabi-gcc.cmake
                 -DMICA_CPU=${cpu} -DMICA_BOARD=${board} -DMICA_HOST_TOOLS=OFF
                 -DMICA_BUILD_TESTS=OFF -DMICA_BUILD_BENCHMARKS=OFF -DMICA_WERROR=ON
                 -DCMAKE_BUILD_TYPE=Release ${mica_fw_launcher}
      # The default build command ($(MAKE) with Makefiles) shares the parent's job server;
      # `all` of a firmware build is the kernel core, the device runtime and the runner.
      INSTALL_COMMAND ""
      BUILD_ALWAYS ON
      EXCLUDE_FROM_ALL OFF)
    add_dependencies(mica_firmware mica_firmware_${name})
  endforeach()
endif()
