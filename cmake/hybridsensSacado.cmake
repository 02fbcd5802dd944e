# Locates Trilinos Sacado (forward-mode AD headers, Debian: libtrilinos-sacado-dev) with plain
# find_path/find_library — Trilinos' own SacadoConfig.cmake drags in Kokkos and every Teuchos
# sub-library — and defines the imported target hybridsens::Sacado. Used by the build and by
# the installed hybridsensConfig.cmake (component "ad"). Sets HYBRIDSENS_SACADO_FOUND.
set(HYBRIDSENS_SACADO_FOUND FALSE)
if(TARGET hybridsens::Sacado)
  set(HYBRIDSENS_SACADO_FOUND TRUE)
  return()
endif()
find_path(HYBRIDSENS_SACADO_INCLUDE_DIR Sacado_No_Kokkos.hpp PATH_SUFFIXES trilinos)
find_library(HYBRIDSENS_SACADO_LIBRARY trilinos_sacado)
find_library(HYBRIDSENS_TEUCHOSCOMM_LIBRARY trilinos_teuchoscomm)
find_library(HYBRIDSENS_TEUCHOSCORE_LIBRARY trilinos_teuchoscore)
# Sacado's headers call Kokkos::Impl::host_abort when not inlined (e.g. -O0), so Kokkos core is
# linked too when Trilinos was built with it (Debian's is).
find_library(HYBRIDSENS_KOKKOSCORE_LIBRARY trilinos_kokkoscore)
mark_as_advanced(HYBRIDSENS_KOKKOSCORE_LIBRARY HYBRIDSENS_SACADO_INCLUDE_DIR HYBRIDSENS_SACADO_LIBRARY HYBRIDSENS_TEUCHOSCOMM_LIBRARY
                 HYBRIDSENS_TEUCHOSCORE_LIBRARY)
if(HYBRIDSENS_SACADO_INCLUDE_DIR AND HYBRIDSENS_SACADO_LIBRARY AND HYBRIDSENS_TEUCHOSCOMM_LIBRARY
   AND HYBRIDSENS_TEUCHOSCORE_LIBRARY)
  set(_hs_sacado_libs ${HYBRIDSENS_SACADO_LIBRARY} ${HYBRIDSENS_TEUCHOSCOMM_LIBRARY} ${HYBRIDSENS_TEUCHOSCORE_LIBRARY})
  if(HYBRIDSENS_KOKKOSCORE_LIBRARY)
    list(APPEND _hs_sacado_libs ${HYBRIDSENS_KOKKOSCORE_LIBRARY})
  endif()
  add_library(hybridsens::Sacado INTERFACE IMPORTED)
  set_target_properties(hybridsens::Sacado PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${HYBRIDSENS_SACADO_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${_hs_sacado_libs}")
  set(HYBRIDSENS_SACADO_FOUND TRUE)
endif()
