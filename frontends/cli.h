/* What every clspeech subcommand shares: exit statuses, the engine with a log callback that prints
 * to stderr, and turning an engine status into a message. */
#ifndef CLS_CLI_H
#define CLS_CLI_H

#include "clspeech/clspeech.h"

/* Exit statuses of the clspeech command (documented in README.md). */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAILURE = 1,   /* the work failed: a device failed its self-test, training stopped on an error, ... */
  CLI_EXIT_USAGE = 2,     /* bad flags or arguments, including a --devices string that selects nothing */
  CLI_EXIT_NO_DEVICE = 3  /* no OpenCL platform or no usable device */
};

/* Creates the engine with the options the environment sets (CLSPEECH_DEVICES, CLSPEECH_KERNEL_CACHE,
 * ...: cls_engine_options_from_environment) and notices, warnings and errors going to stderr. On
 * failure prints the engine's error and returns the exit status to use (the engine is destroyed); 0
 * on success. */
int cli_engine_open(cls_engine **engine);

/* Opens the engine and the devices `devices` selects (NULL/"": CLSPEECH_DEVICES or the default),
 * building their kernels and dropping those that fail. 0, or the exit status after printing the
 * error (the engine is then destroyed and *engine NULL). */
int cli_open_devices(const char *command, const char *devices, cls_engine **engine, int *sel, int cap, int *n_sel);

/* Prints "clspeech <command>: <engine error>" and maps the status to an exit status. */
int cli_report(const char *command, cls_engine *engine, cls_status status);

int cli_exit_status(cls_status status);

/* --horovod: the engine's messages of rank `rank` > 0 are prefixed "rank R (host)" and only warnings
 * and errors are printed (verbose 1: notices too, e.g. --log_placement); rank 0 prints as one process. */
void cli_log_rank(int rank, const char *host, int verbose);

/* An output that is also an input of the command is refused: when `out` and `in` (either may be NULL or
 * "") are one file (cls_same_file), prints "clspeech COMMAND: OUT_FLAG OUT is IN_FLAG's file (IN): an
 * output never overwrites an input" and returns CLI_EXIT_USAGE; else 0. */
int cli_refuse_input(const char *command, const char *out_flag, const char *out, const char *in_flag, const char *in);

/* The same against every entry of the folder `dir` (an input folder, e.g. a checkpoint folder). */
int cli_refuse_input_folder(const char *command, const char *out_flag, const char *out, const char *dir_flag,
                            const char *dir);

/* Human-readable byte count: "21.5 GiB". */
const char *cli_bytes(unsigned long long bytes, char *buf, unsigned long cap);

int cmd_devices(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_features(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_transcribe(int argc, char **argv);
int cmd_lm(int argc, char **argv);
int cmd_lm_optimizer(int argc, char **argv);
int cmd_export(int argc, char **argv);
/* `clspeech export --format onnx` (export_onnx.c), which cmd_export hands the command to. */
int cmd_export_onnx(int argc, char **argv);

#endif
