#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what is missing, builds, makes a small speech
# corpus with espeak-ng (scripts/make_corpus.sh), trains a DeepSpeech model on it on the default
# OpenCL device (PoCL on the CPU when there is no GPU), tests it (WER, CER), builds a language model of
# the training transcripts (`clspeech lm`), tests again with it as the beam search's scorer and
# transcribes a file without and with it.
# Everything goes under build/demo/ (the TensorBoard summaries in build/demo/summaries). About 5
# minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
demo=build/demo
bash scripts/make_corpus.sh "$demo/corpus" --train 600 --dev 40 --test 40
epochs=${DEMO_EPOCHS:-14}
./build/clspeech train \
  --train_files "$demo/corpus/train.csv" --dev_files "$demo/corpus/dev.csv" --test_files "$demo/corpus/test.csv" \
  --alphabet_config_path "$demo/corpus/alphabet.txt" \
  --n_hidden 128 --train_batch_size 8 --dev_batch_size 8 --test_batch_size 8 \
  --epochs "$epochs" --learning_rate 0.002 --dropout_rate 0.1 \
  --checkpoint_dir "$demo/checkpoints" --load_train init --checkpoint_secs 0 --summary_dir "$demo/summaries" \
  --beam_width 64 --report_count 3 --test_output_file "$demo/test-results.json"
# A language model of the training transcripts (a 5-gram; the text is small and uniform, so
# --discount_fallback), and the test set again with it as the beam search's scorer.
tail -n +2 "$demo/corpus/train.csv" | cut -d, -f3 > "$demo/train-text.txt"
./build/clspeech lm --text "$demo/train-text.txt" --order 5 --discount_fallback --out "$demo/lm.clm"
./build/clspeech train --test_files "$demo/corpus/test.csv" --alphabet_config_path "$demo/corpus/alphabet.txt" \
  --n_hidden 128 --test_batch_size 8 --checkpoint_dir "$demo/checkpoints" --summary_dir "" \
  --beam_width 64 --report_count 3 --scorer_path "$demo/lm.clm" --test_output_file "$demo/test-results-scorer.json"
first=$(sed -n 2p "$demo/corpus/test.csv" | cut -d, -f1)
./build/clspeech transcribe --checkpoint_dir "$demo/checkpoints" --alphabet_config_path "$demo/corpus/alphabet.txt" \
  --beam_width 64 --audio "$demo/corpus/$first"
./build/clspeech transcribe --checkpoint_dir "$demo/checkpoints" --alphabet_config_path "$demo/corpus/alphabet.txt" \
  --beam_width 64 --scorer_path "$demo/lm.clm" --audio "$demo/corpus/$first"
echo "demo: reference transcript: $(sed -n 2p "$demo/corpus/test.csv" | cut -d, -f3)"
echo "demo: watch the run in TensorBoard (pip install tensorboard): tensorboard --logdir $demo/summaries"
