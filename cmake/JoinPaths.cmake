# join_paths(out base path): `path` when absolute, else base/path. Keeps the
# .pc file right when CMAKE_INSTALL_LIBDIR is given as an absolute path.
function(join_paths out base path)
  if(IS_ABSOLUTE "${path}")
    set(${out} "${path}" PARENT_SCOPE)
  else()
    set(${out} "${base}/${path}" PARENT_SCOPE)
  endif()
endfunction()
