# Included from tests/CMakeLists.txt (same folder scope: its helpers cls_c_test and cls_cli_test, CLS,
# CLS_TEST_ENV and CLSPEECH_TEST_DATA): the training command's tests (label train): LDC93S1 overfitting, bad inputs, a kill mid-training, resume, flags.
# ---- train (LDC93S1 as DeepSpeech's smoke test overfits it; bad inputs; a kill mid-training) ----
set(SMOKE "${CLSPEECH_TEST_DATA}/deepspeech-smoke")
set(LDC_RUN ${CMAKE_CURRENT_BINARY_DIR}/ldc93s1)
cls_cli_test(train_ldc93s1_overfits train
  EXPECT 0 --has "Test on .*ldc93s1.csv - WER: 0.000000, CER: 0.000000"
         --has "res: .she had your dark suit in greasy wash water all year.$"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --test_files ${SMOKE}/ldc93s1.csv
            --alphabet_config_path ${SMOKE}/alphabet.txt --n_hidden 100 --epochs 250 --train_batch_size 1
            --learning_rate 0.001 --checkpoint_dir ${LDC_RUN} --load_train init --noshow_progressbar)
set_tests_properties(cli_train_ldc93s1_overfits PROPERTIES FIXTURES_SETUP ldc93s1 LABELS "train;slow" TIMEOUT 900)
cls_cli_test(transcribe_ldc93s1 train
  EXPECT 0 --has "LDC93S1.wav: she had your dark suit in greasy wash water all year$"
         -- ${CLS} transcribe --checkpoint_dir ${LDC_RUN} --alphabet_config_path ${SMOKE}/alphabet.txt
            --audio ${SMOKE}/LDC93S1.wav)
# The 44.1 kHz stereo copy goes through downmixing and resampling, yet gives the same transcript.
cls_cli_test(transcribe_ldc93s1_44k_stereo train
  EXPECT 0 --has "LDC93S1_pcms16le_2_44100.wav: she had your dark suit in greasy wash water all year$"
         -- ${CLS} transcribe --checkpoint_dir ${LDC_RUN} --alphabet_config_path ${SMOKE}/alphabet.txt
            --audio ${SMOKE}/LDC93S1_pcms16le_2_44100.wav)
add_test(NAME checkpoint_readable_by_python
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/ref/read_checkpoint.py ${LDC_RUN}/train-250.safetensors 100 29 250)
set_tests_properties(cli_transcribe_ldc93s1 cli_transcribe_ldc93s1_44k_stereo checkpoint_readable_by_python
                     PROPERTIES FIXTURES_REQUIRED ldc93s1 LABELS "train;slow")
set_tests_properties(checkpoint_readable_by_python PROPERTIES PASS_REGULAR_EXPRESSION "read_checkpoint: 0 problems")
# examples/train_evaluate, a program on the public headers alone: 2 training steps on LDC93S1, then
# the checkpoint tested through cls_evaluate (a finite loss, the sample's transcripts printed).
set(EXAMPLE_RUN ${CMAKE_CURRENT_BINARY_DIR}/example-train-evaluate)
add_test(NAME example_train_evaluate
         COMMAND sh -c "rm -rf ${EXAMPLE_RUN} && $<TARGET_FILE:train_evaluate> ${SMOKE}/ldc93s1.csv ${SMOKE}/alphabet.txt ${EXAMPLE_RUN}")
set_tests_properties(example_train_evaluate PROPERTIES LABELS train ENVIRONMENT "${CLS_TEST_ENV};${CLS_OWN_DATA_HOME}/example_train_evaluate"
  PASS_REGULAR_EXPRESSION "trained 2 steps.*Test on .*ldc93s1.csv - WER: [0-9.]+, CER: [0-9.]+, loss: [0-9.]+\n.* - src: \"she had your dark suit in greasy wash water all year\"\n - res: .*train_evaluate: OK")
add_test(NAME cli_train_killed_keeps_checkpoint
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/kill_during_training.sh ${CLS} ${CLSPEECH_TEST_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/killed-run)
set_tests_properties(cli_train_killed_keeps_checkpoint PROPERTIES LABELS "train" ENVIRONMENT "${CLS_TEST_ENV};${CLS_OWN_DATA_HOME}/cli_train_killed_keeps_checkpoint"
                     PASS_REGULAR_EXPRESSION "kill_during_training: ok")
# --load_train init loads nothing: a layer to drop or a folder to load from would be ignored (issue 45).
cls_cli_test(train_init_refuses_drop train
  EXPECT 2 --has "^clspeech train: --drop_source_layers 3 with --load_train init: nothing is loaded, so no layer is dropped"
         --lacks "training on device"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt
            --load_checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/init-ck --drop_source_layers 3 --load_train init)
cls_cli_test(train_init_refuses_load_dir train
  EXPECT 2 --has "^clspeech train: --load_checkpoint_dir .*/init-ck with --load_train init: nothing is loaded from it"
         --lacks "training on device"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt
            --load_checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/init-ck --load_train init)
cls_cli_test(train_missing_csv train
  EXPECT 1 --has "training set: /nonexistent/train.csv: cannot open: No such file or directory$"
         -- ${CLS} train --train_files /nonexistent/train.csv --alphabet_config_path ${SMOKE}/alphabet.txt)
cls_cli_test(train_missing_alphabet train
  EXPECT 2 --has "--alphabet_config_path: /nonexistent/alphabet.txt: cannot open: No such file or directory$"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path /nonexistent/alphabet.txt)
# Separate load and save folders, and DeepSpeech's transfer learning (--drop_source_layers, a new alphabet).
add_test(NAME cli_train_transfer
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/transfer.sh ${CLS} ${CLSPEECH_TEST_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/transfer-run)
set_tests_properties(cli_train_transfer PROPERTIES LABELS "train" ENVIRONMENT "${CLS_TEST_ENV};${CLS_OWN_DATA_HOME}/cli_train_transfer"
                     PASS_REGULAR_EXPRESSION "transfer: ok")
# A resume whose alphabet or features differ from the folder's is refused; metadata never rewritten (issue 37).
add_test(NAME cli_train_resume_refuses
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/resume_refuses.sh ${CLS} ${CLSPEECH_TEST_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/resume-refuses)
set_tests_properties(cli_train_resume_refuses PROPERTIES LABELS "train" ENVIRONMENT "${CLS_TEST_ENV};${CLS_OWN_DATA_HOME}/cli_train_resume_refuses"
                     PASS_REGULAR_EXPRESSION "resume_refuses: ok")
# One trainer per checkpoint folder: a second is refused naming the holder; a killed one's lock never blocks (issue 45).
cls_script_test(train_checkpoint_lock train checkpoint_lock.sh PASS "checkpoint_lock: ok"
                ARGS ${CMAKE_CURRENT_BINARY_DIR}/checkpoint-lock)
# A checkpoint no index lists is swept at the next start, which holds the folder's lock (issues 37, 45).
add_test(NAME cli_train_orphan_checkpoints
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/orphan_checkpoints.sh ${CLS} ${CLSPEECH_TEST_DATA}
                 ${CMAKE_CURRENT_BINARY_DIR}/orphan-checkpoints)
set_tests_properties(cli_train_orphan_checkpoints PROPERTIES LABELS "train" ENVIRONMENT "${CLS_TEST_ENV};${CLS_OWN_DATA_HOME}/cli_train_orphan_checkpoints"
                     PASS_REGULAR_EXPRESSION "orphan_checkpoints: ok")
add_test(NAME cli_train_bad_flag_values COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/bad_flags.sh ${CLS} ${CLSPEECH_TEST_DATA})
set_tests_properties(cli_train_bad_flag_values PROPERTIES LABELS train ENVIRONMENT "${CLS_TEST_ENV};${CLS_OWN_DATA_HOME}/cli_train_bad_flag_values"
                     PASS_REGULAR_EXPRESSION "bad_flags: [1-9][0-9]* passed, 0 failed")
# Every training flag's --help text, values and flags.txt line as the build before the one option table
# printed and wrote them (tests/fixtures/train_flags/).
cls_script_test(train_flags_identical train train_flags_identical.sh PASS "train_flags_identical: [0-9]+ flags, ok"
                ARGS ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/train_flags ${CMAKE_CURRENT_BINARY_DIR}/train-flags-identical)
# The checkpoint folder is proven writable before any work (it was found unwritable only after an
# epoch); a dead process's temporary checkpoint is removed, a live process's (PID 1) kept.
cls_cli_test(train_checkpoint_dir_is_file train
  EXPECT 1 --has "clspeech train: --checkpoint_dir: .*CMakeLists.txt: cannot open the folder: Not a directory"
         --lacks "training on device"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt
            --checkpoint_dir ${CMAKE_CURRENT_SOURCE_DIR}/CMakeLists.txt)
cls_cli_test(train_checkpoint_dir_unwritable train
  EXPECT 1 --has "clspeech train: --save_checkpoint_dir: /proc/1: cannot write in the folder" --lacks "training on device"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt
            --save_checkpoint_dir /proc/1)
set(STALE_RUN ${CMAKE_CURRENT_BINARY_DIR}/stale-tmp-run)
cls_cli_test(train_removes_dead_temporaries train
  EXPECT 0 --has "removed 1 temporary files of dead processes from .*stale-tmp-run$" --has "FINISHED optimization"
         --has "^left: best_dev-1.safetensors.tmp.1.0 gone: train-1.safetensors.tmp.999999999.0$"
         -- sh -c "rm -rf ${STALE_RUN} && mkdir -p ${STALE_RUN} && touch -d '1 hour ago' ${STALE_RUN}/train-1.safetensors.tmp.999999999.0 ${STALE_RUN}/best_dev-1.safetensors.tmp.1.0 && ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt --n_hidden 8 --epochs 1 --devices 0:0 --checkpoint_dir ${STALE_RUN} --load_train init --noshow_progressbar --summary_dir '' && echo left: $(cd ${STALE_RUN} && ls *.tmp.*) gone: $(test -e ${STALE_RUN}/train-1.safetensors.tmp.999999999.0 || echo train-1.safetensors.tmp.999999999.0)")
# Inputs that are not regular files are read with a bound (/dev/zero once was read until memory ran out).
cls_cli_test(train_files_dev_zero train
  EXPECT 1 --has "training set: /dev/zero:1: holds a NUL byte. this is not a CSV text file"
         -- ${CLS} train --train_files /dev/zero --alphabet_config_path ${SMOKE}/alphabet.txt
            --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/dev-zero-run)
cls_cli_test(train_alphabet_dev_zero train
  EXPECT 2 --has "--alphabet_config_path: /dev/zero: larger than 1048576 bytes .1 MiB., the most this reader takes. refused"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path /dev/zero
            --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/dev-zero-run)
cls_cli_test(train_scorer_dev_zero train
  EXPECT 1 --has "clspeech train: --scorer_path: /dev/zero:1: a NUL byte: binary data, not ARPA text" --lacks "Epoch"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --test_files ${SMOKE}/ldc93s1.csv
            --alphabet_config_path ${SMOKE}/alphabet.txt --n_hidden 16 --epochs 1
            --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/scorer_dev_zero --scorer_path /dev/zero)
cls_cli_test(transcribe_model_dev_zero train
  EXPECT 1 --has "/dev/zero: not a clspeech model package"
         -- ${CLS} transcribe --model /dev/zero --audio ${SMOKE}/LDC93S1.wav)
cls_cli_test(lm_arpa_in_dev_zero train
  EXPECT 1 --has "clspeech lm: /dev/zero:1: a NUL byte: binary data, not ARPA text"
         -- ${CLS} lm --arpa_in /dev/zero --out ${CMAKE_CURRENT_BINARY_DIR}/lm_dev_zero.clm)
cls_cli_test(lm_arpa_in_urandom train
  EXPECT 1 --has "clspeech lm: /dev/urandom:[0-9]+: a NUL byte: binary data, not ARPA text"
         -- ${CLS} lm --arpa_in /dev/urandom --out ${CMAKE_CURRENT_BINARY_DIR}/lm_dev_zero.clm)
cls_cli_test(lm_text_dev_zero train
  EXPECT 1 --has "clspeech lm: /dev/zero:1: a NUL byte: binary data, not text"
         -- ${CLS} lm --text /dev/zero --out ${CMAKE_CURRENT_BINARY_DIR}/lm_dev_zero.clm)
set_tests_properties(cli_train_files_dev_zero cli_train_alphabet_dev_zero cli_train_scorer_dev_zero
                     cli_transcribe_model_dev_zero cli_lm_arpa_in_dev_zero cli_lm_arpa_in_urandom
                     cli_lm_text_dev_zero PROPERTIES TIMEOUT 60)
# A misspelt flag is an error naming it, never ignored (every DeepSpeech flag is a row: deepspeech_flags.sh).
cls_cli_test(train_unknown_deepspeech_flag train
  EXPECT 2 --has "unknown flag --use_allow_grow "
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --use_allow_grow)
# A scorer that cannot be read fails before any training, naming the file.
cls_cli_test(train_scorer_missing train
  EXPECT 1 --has "clspeech train: --scorer_path: .*no_such[.]arpa" --lacks "Epoch"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --test_files ${SMOKE}/ldc93s1.csv
            --alphabet_config_path ${SMOKE}/alphabet.txt --n_hidden 16 --epochs 1
            --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/scorer_missing --scorer_path ${CMAKE_CURRENT_BINARY_DIR}/no_such.arpa)
# A sample with characters outside the alphabet ('e' of "eight"): with --strict the first one (line 2) is
# the error, named by file, line, audio file and character; without it every one is skipped, named, and
# then no sample is left to train on.
cls_cli_test(train_strict_bad_sample train
  EXPECT 1 --count 1 "training set: .*/formats/formats.csv:2: .*/formats/digits-1.wav: transcript has characters not in the alphabet: 'e' \\(U[+]0065\\)$"
         --count 1 "not in the alphabet" --lacks "samples skipped|training on device"
         -- ${CLS} train --train_files ${CLSPEECH_TEST_DATA}/formats/formats.csv --strict --epochs 1
            --alphabet_config_path ${CMAKE_CURRENT_SOURCE_DIR}/cli/alphabet-no-e.txt)
cls_cli_test(train_skips_bad_samples train
  EXPECT 1 --has "training set .*/formats/formats.csv: 6 of 6 samples skipped, 0 kept"
         --count 1 "^  6 characters not in the alphabet: 'e' \\(U[+]0065\\)$"
         --count 5 "^    .*/formats/formats.csv:[2-6]: .*/formats/digits-[12][.](wav|flac|ogg): transcript has characters not in the alphabet: 'e' \\(U[+]0065\\)$"
         --has "^    [.][.][.] and 1 more$"
         --has "clspeech train: the training set has 0 usable samples, fewer than --train_batch_size 1$"
         -- ${CLS} train --train_files ${CLSPEECH_TEST_DATA}/formats/formats.csv --epochs 1
            --alphabet_config_path ${CMAKE_CURRENT_SOURCE_DIR}/cli/alphabet-no-e.txt)
# Utterances too long for a device's memory (capped at 1 MiB here) are skipped, each named with the
# limit; the short ones train (3 steps); --strict makes the first an error; a bad cap is a usage error.
cls_cli_test(train_skips_too_long_for_device train
  ENV "CLSPEECH_DEVICE_MEMORY_MB=1"
  EXPECT 0 --has "warning: training set .*ldc93s1.csv:2: .*LDC93S1.wav: 2.9 s \\(145 frames\\) skipped: too long for the device's memory, the limit is [0-9]+ frames \\([0-9.]+ s\\)"
         --has "formats.csv:5: .*digits-2.wav: 1.6 s \\(80 frames\\) skipped"
         --has "4 samples skipped: device 0:0 .*1.0 MiB of memory \\(capped\\)"
         --has "FINISHED optimization \\(global step 3\\)"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv,${CLSPEECH_TEST_DATA}/formats/formats.csv
            --alphabet_config_path ${SMOKE}/alphabet.txt --n_hidden 32 --epochs 1 --devices 0:0
            --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/too-long-run --load_train init --noshow_progressbar)
cls_cli_test(train_strict_too_long_for_device train
  ENV "CLSPEECH_DEVICE_MEMORY_MB=1"
  EXPECT 1 --has "ldc93s1.csv:2: .*LDC93S1.wav: 2.9 s \\(145 frames\\) is too long for the device's memory, the limit is [0-9]+ frames"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --strict --alphabet_config_path ${SMOKE}/alphabet.txt
            --n_hidden 32 --epochs 1 --devices 0:0 --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/too-long-strict
            --load_train init --noshow_progressbar)
# A flag's value of the wrong type names the type with its article: "an int", "a float" (issue 37).
cls_cli_test(train_flag_wrong_type train
  EXPECT 2 --has "^clspeech train: --epochs expects an int value, got \"three\"$"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --epochs three)
cls_cli_test(train_flag_wrong_type_float train
  EXPECT 2 --has "^clspeech train: --learning_rate expects a float value, got \"fast\"$"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --learning_rate fast)
cls_cli_test(train_bad_device_memory_cap train
  ENV "CLSPEECH_DEVICE_MEMORY_MB=lots"
  EXPECT 2 --has "CLSPEECH_DEVICE_MEMORY_MB=lots: must be a whole number of MiB"
         -- ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt
            --n_hidden 32 --epochs 1 --devices 0:0 --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/too-long-strict
            --load_train init --noshow_progressbar)
# Evaluation streams what the device cannot hold: with the cap, the test report scores every sample as
# without it (the long ones streamed in chunks), and validation streams a long dev sample.
add_test(NAME cli_train_streams_long_evaluation
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/stream_eval.py ${CLS} ${SMOKE}
                 ${CLSPEECH_TEST_DATA}/formats/formats.csv ${CMAKE_CURRENT_BINARY_DIR}/stream-eval)
set_tests_properties(cli_train_streams_long_evaluation PROPERTIES LABELS train ENVIRONMENT "${CLS_TEST_ENV};${CLS_OWN_DATA_HOME}/cli_train_streams_long_evaluation"
                     PASS_REGULAR_EXPRESSION "stream_eval: [^\n]* ok")
# The forward-only replica and the checkpoint folder it reads (alphabet.txt, features.txt): a short
# training run, then transcription without --alphabet_config_path/--n_hidden; the same transcript
# with them given (and agreeing), as the tower's path gave it (test_infer compares the logits bit for
# bit); a disagreeing flag names both values; a folder from before the description needs the flags.
cls_c_test(test_infer train)
cls_c_test(test_package train)
cls_c_test(test_untrusted train)
set(SHORT_RUN ${CMAKE_CURRENT_BINARY_DIR}/short-run)
cls_cli_test(train_short_describes_folder train
  EXPECT 0 --has "FINISHED optimization \\(global step 2\\)" --has "^alphabet ok$"
         --has "^audio_sample_rate=16000$" --has "^feature_win_len=32$" --has "^feature_win_step=20$"
         -- sh -c "rm -rf ${SHORT_RUN} && ${CLS} train --train_files ${SMOKE}/ldc93s1.csv --dev_files ${SMOKE}/ldc93s1.csv --alphabet_config_path ${SMOKE}/alphabet.txt --n_hidden 32 --epochs 2 --devices 0:0 --checkpoint_dir ${SHORT_RUN} --load_train init --noshow_progressbar && cmp ${SHORT_RUN}/alphabet.txt ${SMOKE}/alphabet.txt && echo alphabet ok && cat ${SHORT_RUN}/features.txt")
set_tests_properties(cli_train_short_describes_folder PROPERTIES FIXTURES_SETUP short_run)
cls_cli_test(transcribe_from_folder train
  EXPECT 0 --count 2 "^.*/LDC93S1(_pcms16le_2_44100)?[.]wav: [a-z' ]*[a-z'][a-z' ]*$" --has "placement: forward-only replica on device 0:0 .*no gradient, Adam or reduction buffers"
         -- ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav
            --devices 0:0 --beam_width 1 --log_placement)
cls_cli_test(transcribe_agreeing_flags train
  EXPECT 0 --has "^same transcript$" --count 2 "^.*/LDC93S1(_pcms16le_2_44100)?[.]wav: [a-z' ]*[a-z'][a-z' ]*$"
         -- sh -c "${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav --devices 0:0 --beam_width 1 > ${SHORT_RUN}/plain.out && ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav --devices 0:0 --beam_width 1 --alphabet_config_path ${SMOKE}/alphabet.txt --n_hidden 32 --audio_sample_rate 16000 > ${SHORT_RUN}/flags.out && cmp ${SHORT_RUN}/plain.out ${SHORT_RUN}/flags.out && echo same transcript && cat ${SHORT_RUN}/flags.out")
# Streamed in chunks of 20 frames (8 chunks, each shorter than its 2 x 9 frames of context) as in one
# chunk of 1024: the same transcripts (issue 15).
cls_cli_test(transcribe_small_chunks train
  EXPECT 0 --has "^same transcript$" --count 2 "^.*/LDC93S1(_pcms16le_2_44100)?[.]wav: [a-z' ]*[a-z'][a-z' ]*$"
         -- sh -c "${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav --devices 0:0 --beam_width 1 > ${SHORT_RUN}/whole.out && ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav --devices 0:0 --beam_width 1 --stream_frames 20 > ${SHORT_RUN}/chunks.out && cmp ${SHORT_RUN}/whole.out ${SHORT_RUN}/chunks.out && echo same transcript && cat ${SHORT_RUN}/chunks.out")
cls_cli_test(transcribe_small_chunks_beam train
  EXPECT 0 --has "^same transcript$" --count 2 "^.*/LDC93S1(_pcms16le_2_44100)?[.]wav: [a-z' ]*[a-z'][a-z' ]*$"
         -- sh -c "${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav --devices 0:0 --beam_width 64 > ${SHORT_RUN}/whole-beam.out && ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav --devices 0:0 --beam_width 64 --stream_frames 13 > ${SHORT_RUN}/chunks-beam.out && cmp ${SHORT_RUN}/whole-beam.out ${SHORT_RUN}/chunks-beam.out && echo same transcript && cat ${SHORT_RUN}/chunks-beam.out")
# With a scorer built by `clspeech lm` from LDC93S1's transcript, whatever the 2-epoch model hears comes
# out as words of that sentence (or nothing), the same in chunks of 13 frames as in one.
set(LDC_LM ${CMAKE_CURRENT_BINARY_DIR}/ldc93s1_lm)
cls_cli_test(transcribe_scorer_words train
  EXPECT 0 --has "^same transcript$" --has "scorer .*ldc93s1.arpa: 3-gram, 11 words"
         --count 2 "^.*/LDC93S1(_pcms16le_2_44100)?[.]wav: ((she|had|your|dark|suit|in|greasy|wash|water|all|year)( |$))*$"
         -- sh -c "mkdir -p ${LDC_LM} && cut -d, -f3 ${SMOKE}/ldc93s1.csv | tail -n +2 > ${LDC_LM}/text.txt && ${CLS} lm --text ${LDC_LM}/text.txt --order 3 --discount_fallback --out ${LDC_LM}/ldc93s1.arpa && ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav --devices 0:0 --beam_width 64 --scorer_path ${LDC_LM}/ldc93s1.arpa > ${LDC_LM}/whole.out && ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav ${SMOKE}/LDC93S1_pcms16le_2_44100.wav --devices 0:0 --beam_width 64 --stream_frames 13 --scorer_path ${LDC_LM}/ldc93s1.arpa > ${LDC_LM}/chunks.out && cmp ${LDC_LM}/whole.out ${LDC_LM}/chunks.out && echo same transcript && cat ${LDC_LM}/chunks.out")
# A folder whose alphabet.txt was deleted: that file named missing, not the default --alphabet_config_path (issue 37).
set(NO_ALPHABET ${CMAKE_CURRENT_BINARY_DIR}/short-run-no-alphabet)
cls_cli_test(transcribe_folder_alphabet_deleted train
  EXPECT 1 --has "^clspeech transcribe: .*/short-run-no-alphabet/alphabet.txt is missing .the alphabet `clspeech train` wrote beside the checkpoints and features.txt.. give the alphabet the model was trained with as --alphabet_config_path$"
         --lacks "data/alphabet.txt"
         -- sh -c "rm -rf ${NO_ALPHABET} && cp -r ${SHORT_RUN} ${NO_ALPHABET} && rm ${NO_ALPHABET}/alphabet.txt && ${CLS} transcribe --checkpoint_dir ${NO_ALPHABET} --audio ${SMOKE}/LDC93S1.wav --devices 0:0")
set_tests_properties(cli_transcribe_folder_alphabet_deleted PROPERTIES FIXTURES_REQUIRED short_run)
# Model packages: `clspeech export`, then `transcribe --model` gives the checkpoint folder's transcripts
# byte for byte, greedy and beam, with and without a packaged scorer (tests/cli/package_round_trip.sh);
# the command's errors name the file.
cls_cli_test(export_round_trip train
  EXPECT 0 --has "^package round trip: ok$"
         --has "clspeech export: wrote .*plain[.]clsm: [0-9.]+ KiB, 12 tensors [(][0-9]+ weights, n_hidden 32, 29 classes[)] from .*best_dev-2[.]safetensors [(]global step 2[)].*no scorer"
         --has "clspeech export: wrote .*scored[.]clsm: .*scorer [0-9.]+ KiB [(]lm_alpha 0.75, lm_beta 1.5[)]"
         --has "clspeech transcribe: scorer .*scored[.]clsm [(]scorer[)]: 3-gram, 11 words"
         -- ${CMAKE_CURRENT_SOURCE_DIR}/cli/package_round_trip.sh ${CLS} ${SMOKE} ${SHORT_RUN} ${CMAKE_CURRENT_BINARY_DIR}/package-rt)
cls_cli_test(export_no_checkpoint train
  EXPECT 1 --has "clspeech export: no checkpoint to load in .*/export_nothing_here"
         -- ${CLS} export --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/export_nothing_here --out ${CMAKE_CURRENT_BINARY_DIR}/nothing.clsm)
cls_cli_test(export_weights_without_scorer train
  EXPECT 2 --has "^clspeech export: --lm_alpha, --lm_beta without --scorer_path: the package holds no scorer to weigh$"
         --lacks "wrote"
         -- ${CLS} export --checkpoint_dir ${SHORT_RUN} --out ${CMAKE_CURRENT_BINARY_DIR}/unweighed.clsm --lm_alpha 3 --lm_beta 1)
cls_cli_test(export_needs_out train
  EXPECT 2 --has "clspeech export: --out FILE.clsm is required" -- ${CLS} export --checkpoint_dir ${SHORT_RUN})
cls_cli_test(export_bad_format train
  EXPECT 2 --has "clspeech export: --format must be clsm, onnx or tf, not \"tflite\""
         -- ${CLS} export --checkpoint_dir ${SHORT_RUN} --out ${CMAKE_CURRENT_BINARY_DIR}/x.clsm --format tflite)
set(PKG_BAD ${CMAKE_CURRENT_BINARY_DIR}/package-bad)
cls_cli_test(transcribe_truncated_package train
  EXPECT 1 --has "clspeech transcribe: .*package-bad/half[.]clsm: truncated: the header says [0-9]+ bytes, the file has [0-9]+"
         -- sh -c "rm -rf ${PKG_BAD} && mkdir -p ${PKG_BAD} && ${CLS} export --checkpoint_dir ${SHORT_RUN} --out ${PKG_BAD}/whole.clsm && head -c 5000 ${PKG_BAD}/whole.clsm > ${PKG_BAD}/half.clsm && ${CLS} transcribe --model ${PKG_BAD}/half.clsm --audio ${SMOKE}/LDC93S1.wav --devices 0:0")
cls_cli_test(transcribe_package_disagreeing_n_hidden train
  EXPECT 2 --has "clspeech transcribe: --n_hidden 64 disagrees with n_hidden 32 in .*package-disagree[.]clsm"
         -- sh -c "${CLS} export --checkpoint_dir ${SHORT_RUN} --out ${CMAKE_CURRENT_BINARY_DIR}/package-disagree.clsm && ${CLS} transcribe --model ${CMAKE_CURRENT_BINARY_DIR}/package-disagree.clsm --audio ${SMOKE}/LDC93S1.wav --devices 0:0 --n_hidden 64")
cls_cli_test(transcribe_model_and_checkpoint_dir train
  EXPECT 2 --has "clspeech transcribe: --model and --checkpoint_dir/--load_checkpoint_dir exclude each other"
         -- ${CLS} transcribe --model x.clsm --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav)
set_tests_properties(cli_export_round_trip cli_export_needs_out cli_export_bad_format cli_transcribe_truncated_package
                     cli_transcribe_package_disagreeing_n_hidden cli_export_weights_without_scorer
                     PROPERTIES FIXTURES_REQUIRED short_run)
# lm_optimizer on LDC93S1 with a 3-gram of its transcript: 6 trials within the ranges given, each line's
# best so far and the Best params line the trials' best, no worse than the baseline without the scorer
# (lm_optimizer_check.py); the same trials with 1 and 3 threads.
set(LMOPT ${CMAKE_CURRENT_BINARY_DIR}/lm_optimizer)
set(LMOPT_RUN "${CLS} lm_optimizer --checkpoint_dir ${SHORT_RUN} --test_files ${SMOKE}/ldc93s1.csv --scorer_path ${LMOPT}/ldc93s1.arpa --devices 0:0 --beam_width 64 --n_trials 6 --lm_alpha_max 4 --lm_beta_max 3 --noshow_progressbar")
cls_cli_test(lm_optimizer_ldc93s1 train
  EXPECT 0 --has "^lm_optimizer check: ok$" --has "^same trials$" --count 6 "^Trial [1-6]/6: lm_alpha [0-9.]+, lm_beta [0-9.]+: WER "
         --has "^Without scorer: WER [0-9.]+, CER [0-9.]+ [(]1 utterances, beam 64"
         --has "^Best params: lm_alpha=[0-9.]+ and lm_beta=[0-9.]+ with WER = [0-9.]+, CER = [0-9.]+"
         --has "^Decoding time per trial .*: [0-9.]+ s with the scorer [(]mean of 6[)], [0-9.]+ s without"
         -- sh -c "mkdir -p ${LMOPT} && cut -d, -f3 ${SMOKE}/ldc93s1.csv | tail -n +2 > ${LMOPT}/text.txt && ${CLS} lm --text ${LMOPT}/text.txt --order 3 --discount_fallback --out ${LMOPT}/ldc93s1.arpa && ${LMOPT_RUN} --threads 1 > ${LMOPT}/one.out && ${LMOPT_RUN} --threads 3 > ${LMOPT}/three.out && python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/lm_optimizer_check.py ${LMOPT}/three.out 6 4 3 && grep -E '^(Trial|Best)' ${LMOPT}/one.out > ${LMOPT}/one.trials && grep -E '^(Trial|Best)' ${LMOPT}/three.out > ${LMOPT}/three.trials && cmp ${LMOPT}/one.trials ${LMOPT}/three.trials && echo same trials && cat ${LMOPT}/three.out")
cls_cli_test(lm_optimizer_needs_scorer train
  EXPECT 2 --has "clspeech lm_optimizer: --scorer_path is required"
         -- ${CLS} lm_optimizer --checkpoint_dir ${SHORT_RUN} --test_files ${SMOKE}/ldc93s1.csv --devices 0:0)
cls_cli_test(lm_optimizer_negative_alpha_max train
  EXPECT 2 --has "clspeech lm_optimizer: --lm_alpha_max must be a finite number in .0, 1e[+]06. .got -1"
         -- ${CLS} lm_optimizer --checkpoint_dir ${SHORT_RUN} --test_files ${SMOKE}/ldc93s1.csv --devices 0:0
            --scorer_path ${LMOPT}/ldc93s1.arpa --lm_alpha_max -1)
cls_cli_test(lm_optimizer_missing_scorer train
  EXPECT 1 --has "clspeech lm_optimizer: --scorer_path: .*no_such[.]arpa" --lacks "^Trial"
         -- ${CLS} lm_optimizer --checkpoint_dir ${SHORT_RUN} --test_files ${SMOKE}/ldc93s1.csv --devices 0:0
            --scorer_path ${CMAKE_CURRENT_BINARY_DIR}/no_such.arpa)
cls_cli_test(lm_optimizer_no_checkpoint train
  EXPECT 1 --has "clspeech lm_optimizer: no checkpoint to load in .*/lm_optimizer_nothing_here" --lacks "^Trial"
         -- ${CLS} lm_optimizer --checkpoint_dir ${CMAKE_CURRENT_BINARY_DIR}/lm_optimizer_nothing_here
            --test_files ${SMOKE}/ldc93s1.csv --devices 0:0 --scorer_path ${CMAKE_CURRENT_BINARY_DIR}/no_such.arpa)
cls_cli_test(transcribe_bad_chunk train
  EXPECT 2 --has "transcribe: --stream_frames 0: must be 1 .. 65536"
         -- ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav --devices 0:0 --stream_frames 0)
cls_cli_test(transcribe_disagreeing_n_hidden train
  EXPECT 2 --has "transcribe: --n_hidden 2048 disagrees with n_hidden 32 in .*short-run/best_dev-2.safetensors$"
         -- ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav --devices 0:0 --n_hidden 2048)
cls_cli_test(transcribe_disagreeing_alphabet train
  EXPECT 2 --has "--alphabet_config_path .*alphabet-no-e.txt disagrees with .*short-run/alphabet.txt: 27 labels against 28"
         -- ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav --devices 0:0
            --alphabet_config_path ${CMAKE_CURRENT_SOURCE_DIR}/cli/alphabet-no-e.txt)
cls_cli_test(transcribe_disagreeing_features train
  EXPECT 2 --has "--feature_win_step 10 disagrees with feature_win_step 20 in .*short-run/features.txt$"
         -- ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav --devices 0:0 --feature_win_step 10)
# n_hidden from the checkpoint's metadata is a checked integer: -1, 0 and abc name the file and key
# (-1 once asked for 18446744073709551125 parameters, 0 and abc gave "invalid configuration").
set(BAD_META_RUN ${CMAKE_CURRENT_BINARY_DIR}/short-run-bad-metadata)
set(BAD_META_STEPS "true")
foreach(value -1 0 abc)
  string(APPEND BAD_META_STEPS " && rm -rf ${BAD_META_RUN} && cp -r ${SHORT_RUN} ${BAD_META_RUN} && python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/set_checkpoint_meta.py ${BAD_META_RUN}/best_dev-2.safetensors n_hidden ${value} && (${CLS} transcribe --checkpoint_dir ${BAD_META_RUN} --audio ${SMOKE}/LDC93S1.wav --devices 0:0 || echo exit status $?)")
endforeach()
cls_cli_test(transcribe_bad_n_hidden_metadata train
  EXPECT 0 --count 3 "clspeech transcribe: .*short-run-bad-metadata/best_dev-2.safetensors: metadata n_hidden is \"(-1|0|abc)\", not a whole number in 1..65536$"
         --count 3 "^exit status 1$" --lacks "parameters|invalid configuration"
         -- sh -c "${BAD_META_STEPS}")
set(OLD_RUN ${CMAKE_CURRENT_BINARY_DIR}/short-run-before-description)
cls_cli_test(transcribe_folder_before_description train
  EXPECT 0 --has "^same transcript$" --count 1 "^.*/LDC93S1(_pcms16le_2_44100)?[.]wav: [a-z' ]*[a-z'][a-z' ]*$" --has "--alphabet_config_path: .*/alphabet-missing.txt: cannot open: No such file or directory$"
         -- sh -c "rm -rf ${OLD_RUN} && mkdir -p ${OLD_RUN} && cp ${SHORT_RUN}/*.safetensors ${SHORT_RUN}/checkpoint ${SHORT_RUN}/best_dev_checkpoint ${OLD_RUN}/ && ${CLS} transcribe --checkpoint_dir ${OLD_RUN} --audio ${SMOKE}/LDC93S1.wav --devices 0:0 --alphabet_config_path ${OLD_RUN}/alphabet-missing.txt || true && ${CLS} transcribe --checkpoint_dir ${SHORT_RUN} --audio ${SMOKE}/LDC93S1.wav --devices 0:0 > ${OLD_RUN}/plain.out && ${CLS} transcribe --checkpoint_dir ${OLD_RUN} --audio ${SMOKE}/LDC93S1.wav --devices 0:0 --alphabet_config_path ${SMOKE}/alphabet.txt --n_hidden 32 > ${OLD_RUN}/flags.out && cmp ${OLD_RUN}/plain.out ${OLD_RUN}/flags.out && echo same transcript && cat ${OLD_RUN}/flags.out")
set_tests_properties(cli_transcribe_from_folder cli_transcribe_agreeing_flags cli_transcribe_disagreeing_n_hidden
                     cli_transcribe_small_chunks cli_transcribe_small_chunks_beam cli_transcribe_bad_chunk
                     cli_transcribe_disagreeing_alphabet cli_transcribe_disagreeing_features
                     cli_transcribe_folder_before_description cli_transcribe_bad_n_hidden_metadata
                     cli_transcribe_scorer_words cli_lm_optimizer_ldc93s1 cli_lm_optimizer_missing_scorer
                     PROPERTIES FIXTURES_REQUIRED short_run)
# --auto_input_dataset (Coqui STT's flag): one CSV split beside itself, an alphabet made, reuse, refusals (issue 47).
cls_script_test(train_auto_input train auto_input.sh PASS "auto_input: ok" ARGS ${CMAKE_CURRENT_BINARY_DIR}/auto-input)
# --estimate prints the time estimate and writes nothing; a real run's measured epoch is within 3x of it.
cls_script_test(estimate train estimate.sh PASS "estimate: ok" ARGS ${CMAKE_CURRENT_BINARY_DIR}/estimate)
# DeepSpeech 0.9.3's flags taken or refused with a reason; --export_dir, --export_zip, --one_shot_infer (issue 48).
cls_script_test(train_deepspeech_flags train deepspeech_flags.sh PASS "deepspeech_flags: ok" ARGS ${CMAKE_CURRENT_BINARY_DIR}/deepspeech_flags)
# --bytes_output_mode on Mandarin spoken by espeak-ng's cmn voice: the loss falls, the report's CER is
# counted on code points and its transcripts are valid UTF-8, a character scorer lowers the CER.
cls_script_test(train_bytes_mandarin train bytes_mandarin.sh PASS "bytes_mandarin: [1-9][0-9]* passed, 0 failed"
                ARGS ${CMAKE_CURRENT_BINARY_DIR}/bytes-mandarin $<TARGET_FILE:test_onnx>)
# --layer_norm: a short training writes the norms' tensors under DeepSpeech's names with the switch,
# transcribe reads the switch from the checkpoint, the package holds the norms and transcribes the same,
# the ONNX export holds them (test_onnx --check), resuming without the flag is refused naming it
cls_cli_test(train_layer_norm train
  EXPECT 0 --has "FINISHED optimization" --has "^layer_1/LayerNorm/beta .8.$" --has "^layer_5/LayerNorm/gamma/Adam_1 .8.$"
         --count 24 "LayerNorm" --has "^layer_norm=1$" --has "LDC93S1.wav: "
         --has "trained with --layer_norm. this model lacks it" --has "^layer_norm: PASS$"
         --has "wrote .*model.clsm: .*, 20 tensors" --has "^package: 20 tensors, the same transcript$"
         --has "^wrote .*/model[.]onnx .ONNX opset 13. from .*/train-1[.]safetensors$"
         --has "parsed: [0-9]+ bytes, n_hidden 8, n_classes 29, layer_norm$" --has "^test_onnx: [0-9]+ passed, 0 failed$"
         -- ${CMAKE_CURRENT_SOURCE_DIR}/cli/layer_norm_run.sh ${CLS} ${SMOKE} ${CMAKE_CURRENT_BINARY_DIR}/layer-norm-run
            $<TARGET_FILE:test_onnx>)
