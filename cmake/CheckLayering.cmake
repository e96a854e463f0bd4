# Fails when a library reaches above its layer, or when the kernel core includes anything but
# freestanding headers and its own. Run as: cmake -DROOT=<tree> -P CheckLayering.cmake
#
# Layers, bottom to top (a layer may use only lower-ranked ones):
#   0 kernels (libkernels/core)   1 base, model   2 quant   3 runtime (libkernels/runtime)
#   4 estimate   5 fvp   6 apps
if(NOT ROOT)
  message(FATAL_ERROR "pass -DROOT=<source tree>")
endif()

set(rank_kernels 0)
set(rank_base 1)
set(rank_model 1)
set(rank_quant 2)
set(rank_runtime 3)
set(rank_estimate 4)
set(rank_fvp 5)
set(rank_apps 6)

# directory -> layer name
set(layer_dirs libkernels/core libmodel libquant libkernels/runtime libestimate libfvp apps)
set(layer_names kernels model quant runtime estimate fvp apps)

# Headers the freestanding kernel core may include (C++17 freestanding set, plus Arm's ACLE).
set(freestanding cstddef cstdint climits cfloat limits type_traits cstdarg new initializer_list
    stddef.h stdint.h limits.h float.h arm_mve.h arm_acle.h)

set(violations "")
list(LENGTH layer_dirs n)
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  list(GET layer_dirs ${i} dir)
  list(GET layer_names ${i} layer)
  if(NOT IS_DIRECTORY ${ROOT}/${dir})
    continue()
  endif()
  set(own ${rank_${layer}})
  file(GLOB_RECURSE files ${ROOT}/${dir}/*.h ${ROOT}/${dir}/*.cc ${ROOT}/${dir}/*.inc
       ${ROOT}/${dir}/*.hpp ${ROOT}/${dir}/*.cpp)
  foreach(f IN LISTS files)
    file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*" "\\1" inc "${line}")
      if(inc MATCHES "^mica/([a-z_]+)/")
        set(dep ${CMAKE_MATCH_1})
        if(DEFINED rank_${dep} AND rank_${dep} GREATER own)
          list(APPEND violations "${f}: ${layer} (layer ${own}) includes ${inc} (layer ${rank_${dep}})")
        endif()
        if(layer STREQUAL "kernels" AND NOT dep STREQUAL "kernels")
          list(APPEND violations "${f}: the kernel core includes ${inc}")
        endif()
      elseif(layer STREQUAL "kernels")
        list(FIND freestanding "${inc}" known)
        get_filename_component(fdir ${f} DIRECTORY)
        if(known EQUAL -1 AND NOT EXISTS ${fdir}/${inc} AND NOT EXISTS ${ROOT}/${dir}/src/${inc})
          list(APPEND violations "${f}: the kernel core includes non-freestanding <${inc}>")
        endif()
      endif()
    endforeach()
  endforeach()
  # Link dependencies: mica::<x> named in this layer's CMake files.
  file(GLOB_RECURSE cmake_files ${ROOT}/${dir}/CMakeLists.txt ${ROOT}/${dir}/*.cmake)
  foreach(f IN LISTS cmake_files)
    file(READ ${f} text)
    string(REGEX MATCHALL "mica::[a-z_]+" deps "${text}")
    foreach(d IN LISTS deps)
      string(REPLACE "mica::" "" d "${d}")
      if(DEFINED rank_${d} AND rank_${d} GREATER own)
        list(APPEND violations "${f}: ${layer} (layer ${own}) links mica::${d} (layer ${rank_${d}})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "layering violations:\n  ${text}")
endif()
message(STATUS "layering: OK (${ROOT})")
