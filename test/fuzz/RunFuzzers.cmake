# Runs every libFuzzer target deterministically: first the committed corpus is replayed, then a
# search with a fixed seed and a fixed number of executions, so every run of the suite explores
# the same inputs (a finding fails every run of that commit, not one in N). Any crash, leak,
# sanitizer report or broken round trip fails the test; the reproducer is left in
# BUILD_DIR/artifacts/<target>/ and belongs in test/fuzz/corpus/<target>/ once fixed.
# Invoked by ctest (test/fuzz/CMakeLists.txt) as
#   cmake -DSOURCE_DIR=... -DBUILD_DIR=... -DSHARED_DIR=... -DCLANG=... -DCLANGXX=...
#         -DRUNS=300000 -DSEED=1 -DMAX_SECONDS=240 -P RunFuzzers.cmake
# Corpus per target fuzz_<fmt>: the committed corpus (SOURCE_DIR/test/fuzz/corpus/fuzz_<fmt>),
# seeds written by mica_fuzz_seeds (tflite) and every *.<fmt> model under SHARED_DIR/models
# (read in place, never copied into the source tree). What the search adds goes to a scratch
# folder emptied at each run.
cmake_minimum_required(VERSION 3.25)
foreach(v SOURCE_DIR BUILD_DIR CLANG CLANGXX RUNS SEED MAX_SECONDS)
  if(NOT ${v})
    message(FATAL_ERROR "RunFuzzers.cmake: ${v} is not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()

message(STATUS "fuzz: configuring the clang build in ${BUILD_DIR}")
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BUILD_DIR}
    -DCMAKE_C_COMPILER=${CLANG} -DCMAKE_CXX_COMPILER=${CLANGXX}
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG"
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG" -DMICA_SANITIZE=address,undefined
    -DMICA_BUILD_FUZZERS=ON -DMICA_BUILD_TESTS=OFF -DMICA_BUILD_BENCHMARKS=OFF
    -DMICA_SHARED_DIR=${SHARED_DIR})
message(STATUS "fuzz: building the fuzz targets")
run(${CMAKE_COMMAND} --build ${BUILD_DIR} --target mica_fuzzers -j2)

set(bin ${BUILD_DIR}/fuzzers)
set(seeds ${BUILD_DIR}/seeds)
file(REMOVE_RECURSE ${seeds})
file(MAKE_DIRECTORY ${seeds}/fuzz_tflite)
run(${bin}/mica_fuzz_seeds ${seeds}/fuzz_tflite)

file(GLOB fuzzers ${bin}/fuzz_*)
if(NOT fuzzers)
  message(FATAL_ERROR "no fuzz targets were built in ${bin}")
endif()
set(summary "")
foreach(fuzzer IN LISTS fuzzers)
  get_filename_component(name ${fuzzer} NAME)
  string(REGEX REPLACE "^fuzz_" "" format ${name})
  # Executions per target: RUNS divided by the target's cost, so the whole search stays near
  # three minutes on two cores while the rest of the suite runs beside it (the suite's default
  # RUNS is 300,000; 2026-12-02, loaded: 4.9 minutes for 400,000). Rates measured on a loaded
  # 2-core machine, executions/s:
  # tflite ~6,000 on small seeds, npy ~4,500, target_config ~4,000-12,000, run ~2,000 (each
  # input is a whole inference), onnx ~30-800 (mutants that fold constants up to the importer's
  # 2^24-element budget are slow to fill); MAX_SECONDS caps any target that runs slower).
  # pte (ExecuTorch programs) gets a quarter of the executions, so adding it keeps the step
  # near its budget.
  set(divisor 1)
  if(name STREQUAL "fuzz_onnx")
    set(divisor 40)
  elseif(name STREQUAL "fuzz_target_config")
    set(divisor 2)
  elseif(name STREQUAL "fuzz_run")
    set(divisor 16)
  elseif(name STREQUAL "fuzz_pte")
    set(divisor 4)
  elseif(name STREQUAL "fuzz_plan")
    set(divisor 8)
  endif()
  math(EXPR runs "${RUNS} / ${divisor}")
  # fuzz_run executes TFLite models: it starts from the TFLite seeds and corpus.
  set(seed_name ${name})
  if(name STREQUAL "fuzz_run")
    set(format tflite)
    set(seed_name fuzz_tflite)
  endif()
  set(scratch ${BUILD_DIR}/corpus/${name})
  set(artifacts ${BUILD_DIR}/artifacts/${name})
  file(REMOVE_RECURSE ${scratch} ${artifacts})
  file(MAKE_DIRECTORY ${scratch} ${artifacts} ${seeds}/${name})
  set(dirs ${seeds}/${seed_name})
  foreach(c IN ITEMS ${name} ${seed_name})
    if(IS_DIRECTORY ${SOURCE_DIR}/test/fuzz/corpus/${c})
      list(APPEND dirs ${SOURCE_DIR}/test/fuzz/corpus/${c})
    endif()
  endforeach()
  if(name STREQUAL "fuzz_target_config")
    list(APPEND dirs ${SOURCE_DIR}/libestimate/targets)  # the built-in profiles are its seeds
  endif()
  list(REMOVE_DUPLICATES dirs)
  if(SHARED_DIR AND IS_DIRECTORY ${SHARED_DIR}/models AND NOT format MATCHES "^(npy|target_config|plan)$")
    file(GLOB_RECURSE shared_models ${SHARED_DIR}/models/*.${format})
    set(model_dirs "")
    foreach(m IN LISTS shared_models)
      get_filename_component(d ${m} DIRECTORY)
      list(APPEND model_dirs ${d})
    endforeach()
    list(REMOVE_DUPLICATES model_dirs)
    list(APPEND dirs ${model_dirs})
  endif()
  # The scratch folder comes first: libFuzzer writes new inputs only to the first folder.
  message(STATUS "fuzz: ${name}: ${runs} executions, seed ${SEED}, on ${dirs}")
  execute_process(
    COMMAND ${fuzzer} -seed=${SEED} -runs=${runs} -max_total_time=${MAX_SECONDS} -timeout=30
            -rss_limit_mb=2560 -print_final_stats=1 -artifact_prefix=${artifacts}/
            ${scratch} ${dirs}
    RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  file(WRITE ${BUILD_DIR}/${name}.log "${log}")
  string(REGEX MATCH "stat::number_of_executed_units: *([0-9]+)" _ "${log}")
  set(execs "${CMAKE_MATCH_1}")
  if(NOT rc EQUAL 0)
    string(LENGTH "${log}" n)
    math(EXPR start "${n} - 6000")
    if(start LESS 0)
      set(start 0)
    endif()
    string(SUBSTRING "${log}" ${start} -1 tail)
    message(FATAL_ERROR "fuzz: ${name} FAILED (exit ${rc}) after ${execs} executions; "
                        "reproducer in ${artifacts}, full log ${BUILD_DIR}/${name}.log\n${tail}")
  endif()
  string(REGEX MATCH "stat::average_exec_per_sec: *([0-9]+)" _ "${log}")
  string(APPEND summary "${name}: ${execs} executions (seed ${SEED}, ${CMAKE_MATCH_1}/s), no finding\n")
endforeach()
message(STATUS "fuzz summary:\n${summary}")
