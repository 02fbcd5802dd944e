# Generates and installs hybridsens.pc (pkg-config) for consumers that do not use CMake:
#   mpicxx main.cpp $(pkg-config --cflags --libs hybridsens)
# PETSc comes through Requires, restricted to the minor version the library was built against.
# MPI is spelled out as found here, because PETSc's own .pc leaves MPI to its compiler wrappers
# (mpicc/mpicxx): so a plain c++ works too, and with a wrapper the MPI flags are merely repeated.
# Nothing is private: nlohmann_json is header-only and used inside the library's .cpp files, and a
# static libhybridsens.a needs nothing beyond PETSc, MPI and the C++ runtime, which are public.
# The prefix is relative to the .pc file's own directory, so the file does not depend on the
# CMAKE_INSTALL_PREFIX of the build (`cmake --install build --prefix DIR` works, as does moving DIR).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "hybridsens.pc needs CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR relative to the prefix "
                      "(got ${CMAKE_INSTALL_LIBDIR}, ${CMAKE_INSTALL_INCLUDEDIR})")
endif()
file(RELATIVE_PATH HS_PC_PREFIX_FROM_PCDIR "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" HS_PC_PREFIX_FROM_PCDIR "${HS_PC_PREFIX_FROM_PCDIR}")

# The PETSc minor version of this build: [major.minor, major.(minor+1)).
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _hs_pc_petsc "${PETSC_VERSION}")
math(EXPR _hs_pc_petsc_next "${CMAKE_MATCH_2} + 1")
set(HS_PC_PETSC_MIN "${_hs_pc_petsc}")
set(HS_PC_PETSC_BELOW "${CMAKE_MATCH_1}.${_hs_pc_petsc_next}")

set(HS_PC_MPI_CFLAGS "")
foreach(_hs_dir IN LISTS MPI_C_INCLUDE_DIRS)
  string(APPEND HS_PC_MPI_CFLAGS " -I${_hs_dir}")
endforeach()
set(HS_PC_MPI_LIBS "")
foreach(_hs_lib IN LISTS MPI_C_LIBRARIES)
  if(_hs_lib MATCHES "^/.*/lib([^/]+)\\.(so|a)$")
    get_filename_component(_hs_libdir "${_hs_lib}" DIRECTORY)
    string(APPEND HS_PC_MPI_LIBS " -L${_hs_libdir} -l${CMAKE_MATCH_1}")
  else()
    string(APPEND HS_PC_MPI_LIBS " ${_hs_lib}")
  endif()
endforeach()

configure_file(${CMAKE_CURRENT_LIST_DIR}/hybridsens.pc.in ${CMAKE_CURRENT_BINARY_DIR}/hybridsens.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hybridsens.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
