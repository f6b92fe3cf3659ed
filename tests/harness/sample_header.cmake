# The trace of a sampled check records it: the header's harness.check and
# harness.check_seed, the summary's check.sample (its seed, the KV heads, the
# query heads that read them, the dX rows).   -DTRACE=file
file(STRINGS "${TRACE}" lines)
list(GET lines 0 header)
list(GET lines -1 summary)
string(JSON mode GET "${header}" harness check)
string(JSON seed GET "${header}" harness check_seed)
if(NOT mode STREQUAL "sampled" OR NOT seed EQUAL 7)
  message(FATAL_ERROR "header: check ${mode}, check_seed ${seed}; want sampled, 7")
endif()
string(JSON sseed GET "${summary}" check sample seed)
string(JSON nkv LENGTH "${summary}" check sample kv_heads)
string(JSON nq LENGTH "${summary}" check sample heads)
string(JSON nrows LENGTH "${summary}" check sample dx_rows)
message("summary: seed ${sseed}, ${nkv} KV heads, ${nq} query heads, ${nrows} dX rows")
if(NOT sseed EQUAL 7 OR NOT nkv EQUAL 1 OR NOT nq EQUAL 1 OR NOT nrows EQUAL 256)
  message(FATAL_ERROR "summary check.sample: want seed 7, 1 KV head, 1 query head, 256 rows")
endif()
