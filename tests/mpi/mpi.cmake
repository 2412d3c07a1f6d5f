# Included from tests/CMakeLists.txt (same folder scope: its helpers cls_c_test and cls_cli_test, CLS,
# CLS_TEST_ENV and CLSPEECH_TEST_DATA): the --horovod tests (label mpi): several processes under Open MPI.
# ---- mpi: `train --horovod`, several processes under Open MPI (tests/mpi/; CI installs Open MPI). Open MPI
# refuses to run as root (as CI does) without these two variables; each rank is one PoCL pthread device. ----
# Under the sanitizers, whole stacks (fast_unwind_on_malloc=0: Open MPI has no frame pointers), so that
# tests/sanitizers/lsan.supp recognises Open MPI's own allocations.
set(MPI_TEST_ENV "${CLS_TEST_ENV};OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1"
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:new_delete_type_mismatch=0:fast_unwind_on_malloc=0")
if(MPI_C_FOUND)
  add_test(NAME mpi_two_ranks_as_two_towers
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/two_ranks.sh ${CLS} ${MPIEXEC_EXECUTABLE} ${CLSPEECH_TEST_DATA}
                   ${CMAKE_CURRENT_BINARY_DIR}/mpi-two-ranks)
  set_tests_properties(mpi_two_ranks_as_two_towers PROPERTIES PASS_REGULAR_EXPRESSION "two_ranks: ok")
  add_test(NAME mpi_rank_fails_ends_job
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/rank_fails.sh ${CLS} ${MPIEXEC_EXECUTABLE} ${CLSPEECH_TEST_DATA}
                   ${CMAKE_CURRENT_BINARY_DIR}/mpi-rank-fails)
  set_tests_properties(mpi_rank_fails_ends_job PROPERTIES PASS_REGULAR_EXPRESSION "rank_fails: ok")
  add_test(NAME mpi_two_hosts_netns
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/two_hosts.sh ${CLS} ${MPIEXEC_EXECUTABLE} ${CLSPEECH_TEST_DATA}
                   ${CMAKE_CURRENT_BINARY_DIR}/mpi-two-hosts)
  set_tests_properties(mpi_two_hosts_netns PROPERTIES SKIP_RETURN_CODE 77)
  add_test(NAME mpi_two_ranks_augment
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/two_ranks_augment.sh ${CLS} ${MPIEXEC_EXECUTABLE}
                   ${CLSPEECH_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/mpi-two-ranks-augment)
  set_tests_properties(mpi_two_ranks_augment PROPERTIES PASS_REGULAR_EXPRESSION "two_ranks_augment: ok")
  # Ranks given different settings or data end with a named error on every rank, never a hang (issue 37).
  add_test(NAME mpi_ranks_agree
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/ranks_agree.sh ${CLS} ${MPIEXEC_EXECUTABLE} ${CLSPEECH_TEST_DATA}
                   ${CMAKE_CURRENT_BINARY_DIR}/mpi-ranks-agree)
  set_tests_properties(mpi_ranks_agree PROPERTIES PASS_REGULAR_EXPRESSION "ranks_agree: ok")
  set_tests_properties(mpi_two_ranks_as_two_towers mpi_rank_fails_ends_job mpi_two_hosts_netns mpi_two_ranks_augment
                       mpi_ranks_agree PROPERTIES LABELS mpi ENVIRONMENT "${MPI_TEST_ENV}" TIMEOUT 300 RUN_SERIAL ON)
  cls_cli_test(train_horovod_async mpi
    EXPECT 2 --has "--horovod trains with --strategy hybrid or sync, not async"
           -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt
              --horovod --strategy async)
  # Ranks that disagree on the training set fail naming both (rather than waiting for each other for ever):
  # the settings' agreement before any work names the set and both ranks' samples (issue 37).
  set(HVD_RUN ${CLS} train --train_files ${CLSPEECH_TEST_DATA}/formats/formats.csv --alphabet_config_path
      ${SMOKE}/alphabet.txt --horovod --n_hidden 16 --epochs 1 --load_train init --noshow_progressbar --summary_dir=
      --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/mpi-disagree)
  cls_cli_test(train_horovod_ranks_disagree mpi ENV ${MPI_TEST_ENV} "POCL_DEVICES=pthread"
    EXPECT 2 --count 2 "rank [01] of 2 on host .*: the ranks disagree on the training set .*: rank 0 .host .*. \".*formats.csv: 6 samples, digest [0-9a-f]+\". rank 1 .host .*. \".*formats.csv: 4 samples, digest [0-9a-f]+\": every rank of a --horovod run must be given the same settings and data"
           -- ${MPIEXEC_EXECUTABLE} --oversubscribe -np 1 ${HVD_RUN} : -np 1 ${HVD_RUN} --limit_train 4)
  # Under --horovod the dev set is split between the ranks in batches: with the device memory capped, the
  # rank that owns the long samples streams them (formats.csv sorted by size, batches of 1: rank 1 owns
  # the three digits-2 files).
  set(HVD_STREAM ${CLS} train --train_files ${CLSPEECH_TEST_DATA}/formats/formats.csv --dev_files
      ${CLSPEECH_TEST_DATA}/formats/formats.csv --dev_batch_size 1 --alphabet_config_path ${SMOKE}/alphabet.txt
      --horovod --n_hidden 32 --epochs 1 --load_train init --noshow_progressbar --summary_dir= --log_placement
      --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/mpi-stream-eval)
  cls_cli_test(train_horovod_streams_long_dev mpi
    ENV ${MPI_TEST_ENV} "POCL_DEVICES=pthread" "CLSPEECH_DEVICE_MEMORY_MB=1"
    EXPECT 0 --has "rank 1 .*: Validation .*formats.csv: 3 samples longer than the [0-9]+ frames a tower holds"
             --has "Validation .*Steps: 3 .*Loss: [0-9]+[.][0-9]+" --has "FINISHED optimization \\(global step 1\\)"
           -- ${MPIEXEC_EXECUTABLE} --oversubscribe -np 1 ${HVD_STREAM} : -np 1 ${HVD_STREAM})
  # --horovod outside mpirun: MPI's singleton, one rank, trains as without the flag.
  cls_cli_test(train_horovod_one_process mpi ENV ${MPI_TEST_ENV}
    EXPECT 0 --has "FINISHED optimization \\(global step 2\\)" --lacks "placement: rank"
           -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt --horovod
              --n_hidden 16 --epochs 2 --devices 0:0 --load_train init --noshow_progressbar --summary_dir=
              --log_placement --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/mpi-one-process)
else()
  add_test(NAME mpi_not_installed COMMAND sh -c "echo 'mpi: SKIPPED: this build has no MPI (apt-get install -y openmpi-bin libopenmpi-dev, then configure again)'; exit 77")
  set_tests_properties(mpi_not_installed PROPERTIES LABELS mpi SKIP_RETURN_CODE 77)
  cls_cli_test(train_horovod_without_mpi mpi
    EXPECT 2 --has "--horovod: this clspeech was built without MPI. install Open MPI .apt-get install -y openmpi-bin libopenmpi-dev."
           -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt --horovod)
endif()
