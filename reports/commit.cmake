# Writes OUT (a C++ file defining build_info::commit()) from `git rev-parse HEAD` in SRC, with
# "-dirty" when tracked files differ from HEAD; "unknown" outside a git checkout. Run at every
# build; the file is replaced only when its text changes, so an unchanged commit rebuilds nothing.
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc
                  ERROR_QUIET)
  if(rc EQUAL 0 AND head)
    set(commit "${head}")
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE changes RESULT_VARIABLE rc2
                    ERROR_QUIET)
    if(rc2 EQUAL 0 AND NOT changes STREQUAL "")
      set(commit "${commit}-dirty")
    endif()
  endif()
endif()
set(text "// Generated at build time by reports/commit.cmake.\n#include \"reports/build_info.h\"\n\nconst char* convcheck::reports::build_info::commit() { return \"${commit}\"; }\n")
file(WRITE ${OUT}.new "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.new ${OUT})
file(REMOVE ${OUT}.new)
