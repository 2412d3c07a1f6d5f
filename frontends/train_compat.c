/* DeepSpeech 0.9.3's training flags that have no engine counterpart in clspeech (see train_compat.h):
 * each one taken with what it means here (a size checked), a notice when a value
 * given has no effect, or a refusal naming why and what to use instead. The table of every
 * DeepSpeech flag and what clspeech does with it is docs/train.md's. */
#include "train_compat.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* DeepSpeech's size syntax (util/helpers.py's parse_file_size): digits, then optionally K, M, G or T
 * (any case), then optionally B. */
static int size_ok(const char *s) {
  const char *p = s;
  if (!isdigit((unsigned char)*p)) return 0;
  while (isdigit((unsigned char)*p)) p++;
  if (*p && strchr("kKmMgGtT", *p)) p++;
  if (*p == 'b' || *p == 'B') p++;
  return *p == '\0';
}

static void notice(const char *command, const char *text) {
  fprintf(stderr, "clspeech %s: notice: %s\n", command, text);
}

/* The flags that only `clspeech train` acts on: elsewhere (transcribe, export, lm_optimizer) they are
 * refused, naming the command's own way. 0 or CLI_EXIT_USAGE. */
static int train_only(const train_flags *f, const char *command) {
  if (!strcmp(command, "train")) return 0;
  const char *flag = *f->export_dir ? "--export_dir" : *f->one_shot_infer ? "--one_shot_infer" : NULL;
  if (!flag) return 0;
  fprintf(stderr, "clspeech %s: %s acts at the end of clspeech train; here use %s\n", command, flag,
          !strcmp(command, "export") ? "--out" : !strcmp(command, "transcribe") ? "--audio" : "clspeech train");
  return CLI_EXIT_USAGE;
}

int train_compat_finish(train_flags *f, const char *command) {
  if (f->automatic_mixed_precision) {
    fprintf(stderr,
            "clspeech %s: --automatic_mixed_precision: refused: clspeech trains in fp32 on every device and has no "
            "fp16 kernels yet (DeepSpeech itself calls the flag unsupported: its checkpoints need mixed precision "
            "to be used again); leave the flag out\n",
            command);
    return CLI_EXIT_USAGE;
  }
  if (f->export_tflite) {
    fprintf(stderr,
            "clspeech %s: --export_tflite: refused: clspeech writes no TensorFlow Lite model. Write a TensorFlow "
            "checkpoint (clspeech export --format tf --out DIR) and run DeepSpeech 0.9.3's exporter on it "
            "(python3 DeepSpeech.py --checkpoint_dir DIR --export_dir OUT --export_tflite), or use --export_dir "
            "alone for clspeech's own package (docs/train.md#checkpoints-and-resuming)\n",
            command);
    return CLI_EXIT_USAGE;
  }
  if ((f->export_zip || f->remove_export || f->export_onnx) && !*f->export_dir) {
    fprintf(stderr, "clspeech %s: --%s acts on the export: give --export_dir too\n", command,
            f->export_zip ? "export_zip" : f->remove_export ? "remove_export" : "export_onnx");
    return CLI_EXIT_USAGE;
  }
  if (f->export_zip && f->remove_export) {
    fprintf(stderr,
            "clspeech %s: --export_zip needs an empty or new --export_dir and --remove_export would empty it: give "
            "one of them\n",
            command);
    return CLI_EXIT_USAGE;
  }
  if (*f->export_dir && (!*f->export_file_name || strchr(f->export_file_name, '/'))) {
    fprintf(stderr, "clspeech %s: --export_file_name \"%s\": must be a file name, not empty and without '/'\n",
            command, f->export_file_name);
    return CLI_EXIT_USAGE;
  }
  int rc = train_only(f, command);
  if (rc) return rc;
  if (!size_ok(f->read_buffer)) {
    fprintf(stderr, "clspeech %s: --read_buffer \"%s\": must be a size such as 1MB, 512KB or 1048576\n", command,
            f->read_buffer);
    return CLI_EXIT_USAGE;
  }
  char text[512];
  if (strcmp(f->read_buffer, "1MB")) {
    snprintf(text, sizeof text, "--read_buffer %s has no effect: clspeech reads each audio file whole",
             f->read_buffer);
    notice(command, text);
  }
  if (f->inter_op_parallelism_threads || f->intra_op_parallelism_threads)
    notice(command,
           "--inter_op_parallelism_threads and --intra_op_parallelism_threads have no effect: each OpenCL device "
           "schedules its own work (PoCL's threads: POCL_MAX_PTHREAD_COUNT)");
  if (f->use_allow_growth)
    notice(command,
           "--use_allow_growth has no effect: each tower allocates its device buffers once, sized for the longest "
           "utterance (CLSPEECH_DEVICE_MEMORY_MB caps what it assumes a device holds)");
  if (f->train_cudnn)
    notice(command,
           "--train_cudnn: clspeech's LSTM is one kernel on every device, the same with or without the flag; "
           "checkpoints use the LSTMBlockFusedCell names (cudnn_lstm/rnn/multi_rnn_cell/cell_0/"
           "cudnn_compatible_lstm_cell), which DeepSpeech loads on any device");
  if (f->log_level != 1) {
    snprintf(text, sizeof text, "--log_level %d has no effect: clspeech prints the same lines at every level",
             f->log_level);
    notice(command, text);
  }
  if (*f->export_dir && (f->export_batch_size != 1 || f->n_steps != 16)) {
    snprintf(text, sizeof text,
             "--export_batch_size %d and --n_steps %d have no effect: the package runs any batch and streams any "
             "chunk length (transcribe --stream_frames)",
             f->export_batch_size, f->n_steps);
    notice(command, text);
  }
  return 0;
}
