# Included from tests/CMakeLists.txt (same folder scope: its helpers cls_c_test and cls_cli_test, CLS,
# CLS_TEST_ENV and CLSPEECH_TEST_DATA): the benchmark programs' smoke tests and `clspeech bench` (label bench).
# ---- bench smoke tests: the benchmark programs run at tiny sizes (figures come from bench/*.py) ----
cls_cli_test(bench_ops_smoke bench
  EXPECT 0 --count 6 "(dense_fwd|dense_bwd|lstm_fwd|lstm_bwd|ctc_loss_grad|adam) +16 "
         -- $<TARGET_FILE:bench_ops> --n_hidden 16 --batch 2 --time 12 --labels 3 --reps 1 --devices 0:0)
cls_cli_test(bench_train_smoke bench
  EXPECT 0 --has "H=16 +B=2 +T=20 .* ms/step .* frames/s"
         -- $<TARGET_FILE:bench_train> --n_hidden 16 --batch 2 --time 20 --labels 3 --steps 1 --devices 0:0)
# bench_train --features device: training's step with the batch as audio, its MFCC on the device (`clspeech train`'s
# default); the JSON line that bench/compare-pytorch reads, with the features named; another value is refused
cls_cli_test(bench_train_device_features bench
  EXPECT 0 --count 1 "^[{]\"device\": \"0:0 .*\", \"n_hidden\": 16, \"batch\": 2, \"time\": 20, \"ms\": [0-9.]+, \"frames_per_second\": [0-9.]+, \"audio_seconds_per_second\": [0-9.]+, \"parameters\": 11341, \"features\": \"device\"[}]$"
         -- $<TARGET_FILE:bench_train> --n_hidden 16 --batch 2 --time 20 --labels 3 --steps 1 --devices 0:0
            --features device --json)
cls_cli_test(bench_train_bad_features bench
  EXPECT 2 --has "^usage: bench_train .*--features host.device"
         -- $<TARGET_FILE:bench_train> --n_hidden 16 --features gpu)
cls_cli_test(bench_decode_smoke bench
  EXPECT 0 --count 1 "^flat +20 +1024 +[0-9.]+ +[0-9]+ +[0-9]+$" --count 1 "^peaked +20 +1024 +[0-9.]+ +[0-9]+ +[0-9]+$"
         -- $<TARGET_FILE:bench_decode> --time 20 --reps 1)
cls_cli_test(bench_lm_smoke bench
  EXPECT 0 --count 1 "^bench_lm: .*lm_small.arpa: order 3, 11 1-grams 16 2-grams 13 3-grams$"
           --count 1 "^bench_lm: load [0-9.]+ ms" --count 1 "^bench_lm: 1000 scores in"
         -- $<TARGET_FILE:bench_lm> ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/lm_small.arpa --reps 1 --queries 1000)
cls_cli_test(bench_decode_bad_time bench
  EXPECT 2 --has "^bench_decode: --time 0: must be 1..1000000 frames$" -- $<TARGET_FILE:bench_decode> --time 20,0)
cls_cli_test(bench_features_smoke bench
  EXPECT 0 --has "host .* audio-s/s" --has "device 0:0 .* audio-s/s"
         -- $<TARGET_FILE:bench_features> --audio ${LDC} --batch 2 --reps 1 --devices 0:0)
# bench_gemm --versus: a second engine built with other kernel options, its results checked (--check) and
# timed in turns with the first; the thin and few-rows tiles against other geometries
cls_cli_test(bench_gemm_versus_smoke bench
  EXPECT 0 --has "versus: build options .*-DCLS_GEMM_MR_NARROW=12" --has "out_fwd .*[|] +[0-9.]+x"
         --has "lstm_rec_bwd .*[|] +[0-9.]+x"
         -- $<TARGET_FILE:bench_gemm> --n_hidden 64 --batch 4 --time 20 --runs 2 --check --devices 0:0
            --shapes out_fwd,lstm_rec_bwd --versus "cpu=-DCLS_GEMM_MR_NARROW=12 -DCLS_GEMM_MR_FEW=6 -DCLS_GEMM_NV_FEW=4")
# bench_gemm --json (bench/compare_gemm.py reads it): one object per shape and side, with the shape's sizes
cls_cli_test(bench_gemm_json bench
  EXPECT 0 --has "^[{]\"shape\": \"dense_dw\", \"n_hidden\": 64, \"m\": 64, \"n\": 64, \"k\": 80, \"trans_a\": 1, .*\"side\": \"own\", .*\"runs\": 1, \"repeat\": 1, \"ms\": [0-9.]+, \"gflops\": [0-9.]+, \"fma_peak_gflops\": [0-9.]+[}]$"
         --count 2 "^[{]"
         -- $<TARGET_FILE:bench_gemm> --n_hidden 64 --batch 4 --time 20 --runs 1 --devices 0:0 --backends own
            --shapes dense_dw,out_fwd --json)
# bench_gemm --repeat: calls back to back in each run, timed per call (the results still checked); 0 is refused
cls_cli_test(bench_gemm_repeat bench
  EXPECT 0 --has "; ms per call, 3 calls back to back in each run$" --has "\"repeat\": 3, \"ms\": [0-9.]+,"
         --has "^  out_dx .* [|] +[0-9.]+ +[0-9.]+ +[0-9.]+$"
         -- $<TARGET_FILE:bench_gemm> --n_hidden 64 --batch 4 --time 20 --runs 2 --repeat 3 --check --devices 0:0
            --backends own --shapes out_dx --json)
# bench_gemm --beside: the FMA peak run after every turn; per side the runs at full speed (their median as % of
# the peak, and how many of the 3), in the table and the JSON (a median in ms, or null when no run was)
cls_cli_test(bench_gemm_beside bench
  EXPECT 0 --has "; % fs: the median of the fs runs at full speed [(]both peak runs beside them >= 85 % of it[)]$"
         --has "^  shape .* [|] own +ms +GFLOP/s +% +% fs +fs$"
         --count 2 "^  (out_fwd|dense_dw) .* [|] +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9.]+ +[1-3]|- +0)$"
         --count 2 "\"fma_peak_gflops\": [0-9.]+, (\"full_speed_runs\": [1-3], \"full_speed_ms\": [0-9.]+|\"full_speed_runs\": 0, \"full_speed_ms\": null)[}]$"
         -- $<TARGET_FILE:bench_gemm> --n_hidden 64 --batch 4 --time 20 --runs 3 --beside --devices 0:0
            --backends own --shapes out_fwd,dense_dw --json)
cls_cli_test(bench_gemm_repeat_zero bench
  EXPECT 2 --has "^bench_gemm: --repeat 0: must be 1..[0-9]+$" --has "^usage: bench_gemm .*--repeat 1"
         -- $<TARGET_FILE:bench_gemm> --repeat 0)
cls_cli_test(help devices EXPECT 0 --has "devices +list every OpenCL device" -- ${CLS} --help)
# ---- clspeech bench ----
# Tiny sizes: every figure measured, one step profiled by op, the JSON checked against docs/bench.md's
# fields (positive numbers, the profile's rows summing to its wall time),
# the SVG parsed as XML; --tune with one candidate pair writes the device's tuning file, which later
# processes load (bench, and features: the engine-preparation path training takes), and a damaged or
# refused file is ignored with a warning.
set(BENCH_DIR ${CMAKE_CURRENT_BINARY_DIR}/bench)
set(BENCH_TINY "--n_hidden 32 --batch 2 --time 20 --runs 2")
set(BENCH_CHECK "python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/bench_check.py")
set(BENCH_TUNED ${BENCH_DIR}/tune-cache)
cls_cli_test(bench_table_json_plot bench
  EXPECT 0 --count 3 "^device 0:[0-9]  " --count 3 "^  peak +FMA [0-9.]+ GFLOP/s"
         --count 3 "^  sgemm lstm_rec_fwd +2 x 128 x 32 +19 +[0-9.]+ +[0-9.]+ GFLOP/s +[0-9.]+ +[0-9.]+ +([0-9.]+ +[1-9][0-9]*|- +0)$"
         --count 3 "^  op +shape +calls +ms +rate +% peak +best % +full % +runs$"
         --count 3 "^  training step +MFCC.fwd.CTC.bwd.Adam +[0-9.]+ +[0-9.]+ frames/s"
         --count 3 "^  one training step by op .*: wall [0-9.]+ ms, device [0-9.]+ ms, [0-9]+ commands recorded$"
         --count 3 "^  lstm_seq_fwd +1 +[0-9.]+ +[0-9.]+ *$"
         --count 3 "^  (GEMMs . )?host waits . unrecorded +-?[0-9.]+ +-?[0-9.]+"
         --count 3 "^  by group, % of the step: (gemm [0-9.]+ )?lstm [0-9.]+ dense [0-9.]+ ctc [0-9.]+ adam [0-9.]+ mfcc [0-9.]+"
         --has "all devices as towers: H=32 [0-9.]+" --has "bench_check: ok json" --has "bench_check: ok svg"
         -- sh -c "mkdir -p ${BENCH_DIR} && ${CLS} bench ${BENCH_TINY} --json ${BENCH_DIR}/tiny.json --plot ${BENCH_DIR}/tiny.svg && ${BENCH_CHECK} json ${BENCH_DIR}/tiny.json && ${BENCH_CHECK} svg ${BENCH_DIR}/tiny.svg")
cls_cli_test(bench_bad_hidden bench
  EXPECT 2 --has "^clspeech bench: --n_hidden expects up to 8 comma-separated widths 1..8192, got \"512,0\"$"
         -- ${CLS} bench --n_hidden 512,0)
cls_cli_test(bench_bad_candidates bench
  EXPECT 2 --has "^clspeech bench: --tune_candidates must be 1..8, got 9$" -- ${CLS} bench --tune --tune_candidates 9)
cls_cli_test(bench_tune_stores bench
  EXPECT 0 --has "^  GEMM tuning: 1 candidate pairs in [0-9]+ s" --has "^  1 +[0-9.]+ ms timed, best +[0-9.]+ ms timed, best"
         --has "^    stored in .*/gemm-tuning/[0-9a-f]{16}[.]txt$"
         --count 1 "^  all, per step .* ms .* ms +[0-9.]+x$" --has "bench_check: ok json"
         -- sh -c "rm -rf ${BENCH_TUNED} && mkdir -p ${BENCH_DIR} && CLSPEECH_KERNEL_CACHE_DIR=${BENCH_TUNED} ${CLS} bench ${BENCH_TINY} --devices 0:0 --tune --tune_kernels clblast --tune_candidates 1 --json ${BENCH_DIR}/tune.json && ${BENCH_CHECK} json ${BENCH_DIR}/tune.json --tuned")
set_tests_properties(cli_bench_tune_stores PROPERTIES FIXTURES_SETUP bench_tuning TIMEOUT 900)
cls_cli_test(bench_tune_loaded_by_bench bench
  EXPECT 0 --count 1 "^clspeech: device 0:0 .*: GEMM tuning loaded from .*/gemm-tuning/[0-9a-f]{16}[.]txt .tuned at H=32"
         --has "^  GEMM tuning +(loaded from|found in) .*/gemm-tuning/"
         -- sh -c "CLSPEECH_KERNEL_CACHE_DIR=${BENCH_TUNED} ${CLS} bench ${BENCH_TINY} --devices 0:0")
cls_cli_test(bench_tune_loading_off bench ENV "CLSPEECH_GEMM_TUNING=0"
  EXPECT 0 --lacks "GEMM tuning loaded" --has "^  GEMM tuning +found .not loaded: CLSPEECH_GEMM_TUNING. in .*/gemm-tuning/"
         -- sh -c "CLSPEECH_KERNEL_CACHE_DIR=${BENCH_TUNED} ${CLS} bench ${BENCH_TINY} --devices 0:0")
cls_cli_test(bench_tune_params_loaded_by_features bench
  EXPECT 0 --has "bench_check: ok tuning"
         --count 1 "GEMM tuning loaded from .*: Xgemm GEMMK=0 KREG=1 KWG=32 KWI=2 MDIMA=8 MDIMC=8 MWG=64 .*. XgemmDirect KWID=2 .* WGD=32$"
         --has "LDC93S1.wav: 145 frames x 26 coefficients"
         -- sh -c "rm -rf ${BENCH_DIR}/params-cache && cp -r ${BENCH_TUNED} ${BENCH_DIR}/params-cache && ${BENCH_CHECK} tuning ${BENCH_DIR}/params-cache params && CLSPEECH_KERNEL_CACHE_DIR=${BENCH_DIR}/params-cache ${CLS} features --audio ${LDC} --devices 0:0")
cls_cli_test(bench_tune_corrupt_ignored bench
  EXPECT 0 --has "bench_check: ok tuning"
         --count 1 "^clspeech: warning: device 0:0 .*: GEMM tuning file .*/gemm-tuning/[0-9a-f]{16}[.]txt ignored: checksum mismatch"
         --has "^  GEMM tuning +.* ignored: checksum mismatch" --lacks "GEMM tuning loaded"
         -- sh -c "rm -rf ${BENCH_DIR}/corrupt-cache && cp -r ${BENCH_TUNED} ${BENCH_DIR}/corrupt-cache && ${BENCH_CHECK} tuning ${BENCH_DIR}/corrupt-cache corrupt && CLSPEECH_KERNEL_CACHE_DIR=${BENCH_DIR}/corrupt-cache ${CLS} bench ${BENCH_TINY} --devices 0:0")
cls_cli_test(bench_tune_refused_ignored bench
  EXPECT 0 --has "bench_check: ok tuning"
         --count 1 "^clspeech: warning: device 0:0 .*: CLBlastOverrideParameters.Xgemm. refused the parameters .*that part of GEMM tuning file .* is ignored"
         --has "LDC93S1.wav: 145 frames"
         -- sh -c "rm -rf ${BENCH_DIR}/refused-cache && cp -r ${BENCH_TUNED} ${BENCH_DIR}/refused-cache && ${BENCH_CHECK} tuning ${BENCH_DIR}/refused-cache refused && CLSPEECH_KERNEL_CACHE_DIR=${BENCH_DIR}/refused-cache ${CLS} features --audio ${LDC} --devices 0:0")
# Values CLBlast accepts but its kernels cannot run with (a work-group dimension of 0 divided by)
# are checked against the kernels' constraints and never applied.
cls_cli_test(bench_tune_invalid_values_ignored bench
  EXPECT 0 --has "bench_check: ok tuning"
         --count 1 "^clspeech: warning: device 0:0 .*: GEMM tuning file .*: Xgemm parameters ignored .CLBlast's defaults kept.: MDIMC=0 must be 1..1024$"
         --count 1 "^clspeech: warning: device 0:0 .*: XgemmDirect parameters ignored .*: WGD=24 is not a multiple of MDIMCD.VWMD$"
         --has "LDC93S1.wav: 145 frames"
         -- sh -c "rm -rf ${BENCH_DIR}/zero-cache && cp -r ${BENCH_TUNED} ${BENCH_DIR}/zero-cache && ${BENCH_CHECK} tuning ${BENCH_DIR}/zero-cache zero && CLSPEECH_KERNEL_CACHE_DIR=${BENCH_DIR}/zero-cache ${CLS} features --audio ${LDC} --devices 0:0")
# Our own kernels' search: a candidate that computes a wrong result (the kernels' fault switch, through
# --tune_try) is rejected by the result check and never stored (a real winner may be); the budget stops the
# search early. The test has a PoCL cache of its own, emptied first, so that the defaults' and the tried
# candidate's builds (which run whatever the budget) compile for real and use up the 10 s (measured: 2 builds
# in 10-11 s), on a second run of the suite too: with the suite's shared PoCL cache warm from a run before,
# all 22 builds once took 2 s and the budget never stopped the search.
cls_cli_test(bench_tune_own_rejects_wrong bench
  EXPECT 0 --has "^  own kernels' tuning at H=32 .11 shapes., LSTM sequence kernels at H=32: [0-9]+ builds in [0-9]+ s, stopped by --tune_budget"
         --has "^  defaults +timed +[0-9.]+ " --has "^  tried +rejected +- .*-DCLS_GEMM_FAULT=1$"
         --has "^    [0-9]+ rejections?. the last: .*-DCLS_GEMM_FAULT=1: wrong result on "
         --lacks "^    winner: .*FAULT"
         --has "^    stored in .*/gemm-tuning/[0-9a-f]{16}[.]txt$" --has "^fault_lines=0$"
         -- sh -c "rm -rf ${BENCH_DIR}/own-cache ${BENCH_DIR}/own-pocl-cache && mkdir -p ${BENCH_DIR} && POCL_CACHE_DIR=${BENCH_DIR}/own-pocl-cache CLSPEECH_KERNEL_CACHE_DIR=${BENCH_DIR}/own-cache ${CLS} bench ${BENCH_TINY} --devices 0:0 --tune --tune_kernels own --tune_budget 10 --tune_try=-DCLS_GEMM_FAULT=1 && echo fault_lines=$(cat ${BENCH_DIR}/own-cache/gemm-tuning/*.txt | grep -c FAULT)")
# The LSTM's sequence kernels alike: a candidate whose recurrent products skip a step of k (their fault switch)
# is rejected by the check against the per-step path, never stored; at H=32 the LSTM takes the sequence path,
# so its recurrent GEMM shapes are left out of the timed ones (11 of 13).
cls_cli_test(bench_tune_own_rejects_wrong_sequence bench
  EXPECT 0 --has "^  tried +rejected +- .*-DCLS_LSTM_SEQ_FAULT=1$"
         --has "^    1 rejection. the last: .*-DCLS_LSTM_SEQ_FAULT=1: wrong result on lstm sequence H=32: h differs from the per-step path's by "
         --has "^  defaults +timed .*-DCLS_LSTM_SEQ_MR=[0-9]+ -DCLS_LSTM_SEQ_NV=[0-9]+$" --lacks "^    winner: .*FAULT"
         --has "^fault_lines=0$"
         -- sh -c "rm -rf ${BENCH_DIR}/own-seq-cache && mkdir -p ${BENCH_DIR} && CLSPEECH_KERNEL_CACHE_DIR=${BENCH_DIR}/own-seq-cache ${CLS} bench ${BENCH_TINY} --devices 0:0 --tune --tune_kernels own --tune_budget 10 --tune_try=-DCLS_LSTM_SEQ_FAULT=1 && echo fault_lines=$(cat ${BENCH_DIR}/own-seq-cache/gemm-tuning/*.txt | grep -c FAULT)")
cls_cli_test(bench_tune_kernels_bad bench
  EXPECT 2 --has "^clspeech bench: --tune_kernels takes clblast, own or both comma-separated, got \"cublas\"$"
         -- ${CLS} bench --tune --tune_kernels cublas)
set_tests_properties(cli_bench_tune_loaded_by_bench cli_bench_tune_loading_off cli_bench_tune_params_loaded_by_features
                     cli_bench_tune_corrupt_ignored cli_bench_tune_invalid_values_ignored
                     cli_bench_tune_refused_ignored PROPERTIES FIXTURES_REQUIRED bench_tuning)
