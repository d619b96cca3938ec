# bench/torch_bench.py's targets (PyTorch's own ops as the peer) are the ones
# docs/design.md shows. -DPYTHON= -DSCRIPT= -DDESIGN=
execute_process(COMMAND ${PYTHON} ${SCRIPT} --targets RESULT_VARIABLE status
  OUTPUT_VARIABLE table ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "torch_bench.py --targets failed (${status}):\n${errors}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/targets_table.cmake)
leaky_check_targets_table(${DESIGN} "torch_bench.py --targets" "${table}")
