# Configures, builds and runs tests/consumer against an installed leaky.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BINARY} -DCMAKE_PREFIX_PATH=${PREFIX}
  -DCMAKE_BUILD_RPATH=${PREFIX}/lib COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${BINARY}/consumer COMMAND_ERROR_IS_FATAL ANY)
