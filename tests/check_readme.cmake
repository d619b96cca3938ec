# Fails unless README.md contains each example file verbatim.
file(READ "${README}" readme)
foreach(example IN LISTS EXAMPLES)
  file(READ "${example}" text)
  string(FIND "${readme}" "${text}" position)
  if(position EQUAL -1)
    message(FATAL_ERROR "README.md does not contain ${example} verbatim")
  endif()
endforeach()
