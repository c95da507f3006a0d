# The layer tables compiled into the program: layers/<name>.json for each name below, in the
# order `convstudy list` shows them (the first is the default table). Used by the top-level
# CMakeLists.txt and by fuzz/configure.cmake (script mode), so both build the same tables.
set(CS_BUILTIN_TABLES alexnet vgg16 resnet50)

# Writes OUT (a .cpp) from core/builtin_table.cpp.in with every table's JSON text as a raw
# string literal.
function(cs_write_builtin_tables src out)
  set(CS_BUILTIN_TABLE_ENTRIES "")
  foreach(t IN LISTS CS_BUILTIN_TABLES)
    file(READ ${src}/layers/${t}.json _json)
    if(_json MATCHES "\\)cs_json\"")
      message(FATAL_ERROR "layers/${t}.json holds the raw-string delimiter )cs_json\"")
    endif()
    string(APPEND CS_BUILTIN_TABLE_ENTRIES "    {\"${t}\", R\"cs_json(${_json})cs_json\"},\n")
  endforeach()
  configure_file(${src}/core/builtin_table.cpp.in ${out} @ONLY)
endfunction()
