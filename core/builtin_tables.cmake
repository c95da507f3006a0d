# The JSON files compiled into the program, each as its text: the layer tables
# (layers/<name>.json, in the order `convstudy list` shows them; the first is the default table)
# and the tuning tables (tuning/<card>.json, bench/tuning.hpp). Used by the top-level
# CMakeLists.txt and by fuzz/configure.cmake (script mode), so both build the same tables.
set(CS_BUILTIN_TABLES alexnet vgg16 resnet50)
set(CS_BUILTIN_TUNING h100 h200)  # a later card's entry wins a tie on a third card

# Writes OUT from TEMPLATE (a .cpp.in whose @CS_EMBEDDED_ENTRIES@ becomes one
# {"<name>", R"cs_json(<text>)cs_json"} line per name) with FOLDER/<name>.json for each name.
function(cs_embed_json folder names template out)
  set(CS_EMBEDDED_ENTRIES "")
  foreach(t IN LISTS names)
    file(READ ${folder}/${t}.json _json)
    if(_json MATCHES "\\)cs_json\"")
      message(FATAL_ERROR "${folder}/${t}.json holds the raw-string delimiter )cs_json\"")
    endif()
    string(APPEND CS_EMBEDDED_ENTRIES "    {\"${t}\", R\"cs_json(${_json})cs_json\"},\n")
  endforeach()
  configure_file(${template} ${out} @ONLY)
endfunction()

function(cs_write_builtin_tables src out)
  cs_embed_json(${src}/layers "${CS_BUILTIN_TABLES}" ${src}/core/builtin_table.cpp.in ${out})
endfunction()

function(cs_write_builtin_tuning src out)
  cs_embed_json(${src}/tuning "${CS_BUILTIN_TUNING}" ${src}/bench/builtin_tuning.cpp.in ${out})
endfunction()
