# Included from tests/CMakeLists.txt (same folder scope: CLS, CLS_TEST_ENV, CLSPEECH_TEST_DATA):
# `clspeech import` on corpora the test makes in each layout (label train), with its audio writer.
add_executable(import_make_audio ${CMAKE_CURRENT_SOURCE_DIR}/cli/import_make_audio.c)
target_link_libraries(import_make_audio PRIVATE PkgConfig::SNDFILE)
add_test(NAME cli_import_corpora
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/import_corpus.sh ${CLS} ${CLSPEECH_TEST_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/import-corpora $<TARGET_FILE:import_make_audio>)
set_tests_properties(cli_import_corpora PROPERTIES LABELS train TIMEOUT 600
                     ENVIRONMENT "${CLS_TEST_ENV};${CLS_OWN_DATA_HOME}/cli_import_corpora"
                     PASS_REGULAR_EXPRESSION "import_corpus: [1-9][0-9]* passed, 0 failed")
