/* Shared plumbing of the clspeech subcommands (see cli.h): engine creation (the environment's
 * options, cls_engine_options_from_environment, with a stderr log), error reporting and exit
 * statuses. */
#include "cli.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* --horovod: this process's rank (-1: not one of several), its host, and the lowest level it prints. */
static int log_rank = -1;
static char log_host[256];
static cls_log_level log_floor = CLS_LOG_NOTICE;

void cli_log_rank(int rank, const char *host, int verbose) {
  log_rank = rank;
  snprintf(log_host, sizeof log_host, "%s", host);
  log_floor = rank > 0 && !verbose ? CLS_LOG_WARNING : CLS_LOG_NOTICE;
}

static void log_to_stderr(void *user, cls_log_level level, const char *message) {
  (void)user;
  if (level < log_floor) return;
  const char *prefix = level >= CLS_LOG_ERROR ? "error: " : level >= CLS_LOG_WARNING ? "warning: " : "";
  if (log_rank > 0)
    fprintf(stderr, "clspeech: rank %d (%s): %s%s\n", log_rank, log_host, prefix, message);
  else
    fprintf(stderr, "clspeech: %s%s\n", prefix, message);
}

int cli_exit_status(cls_status status) {
  switch (status) {
    case CLS_OK: return CLI_EXIT_OK;
    case CLS_ERR_INVALID_ARGUMENT: return CLI_EXIT_USAGE;
    case CLS_ERR_NO_PLATFORM:
    case CLS_ERR_NO_DEVICE: return CLI_EXIT_NO_DEVICE;
    default: return CLI_EXIT_FAILURE;
  }
}

int cli_report(const char *command, cls_engine *engine, cls_status status) {
  fprintf(stderr, "clspeech %s: %s\n", command, engine ? cls_engine_error(engine) : cls_status_string(status));
  return cli_exit_status(status);
}

int cli_engine_open(cls_engine **engine) {
  cls_engine_options options = cls_engine_options_from_environment();
  options.log = log_to_stderr;
  options.log_level = CLS_LOG_NOTICE;
  cls_status st = cls_engine_create(&options, engine);
  if (st == CLS_OK) return 0;
  int rc = cli_report("error", *engine, st);
  cls_engine_destroy(*engine);
  *engine = NULL;
  return rc;
}

const char *cli_bytes(unsigned long long bytes, char *buf, unsigned long cap) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  snprintf(buf, cap, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

int cli_open_devices(const char *command, const char *devices, cls_engine **engine, int *sel, int cap, int *n_sel) {
  int rc = cli_engine_open(engine);
  if (rc) return rc;
  cls_status st = cls_engine_select(*engine, devices, sel, cap, n_sel);
  if (st == CLS_OK) st = cls_engine_prepare(*engine, sel, n_sel);
  if (st == CLS_OK) return 0;
  rc = cli_report(command, *engine, st);
  cls_engine_destroy(*engine);
  *engine = NULL;
  return rc;
}

int cli_refuse_input(const char *command, const char *out_flag, const char *out, const char *in_flag, const char *in) {
  if (!cls_same_file(out, in)) return 0;
  fprintf(stderr, "clspeech %s: %s %s is %s's file (%s): an output never overwrites an input\n", command, out_flag,
          out, in_flag, in);
  return CLI_EXIT_USAGE;
}

int cli_refuse_input_folder(const char *command, const char *out_flag, const char *out, const char *dir_flag,
                            const char *dir) {
  DIR *d = dir && *dir && out && *out ? opendir(dir) : NULL;
  int rc = 0;
  char path[CLS_PATH_CAP];
  for (struct dirent *x; d && !rc && (x = readdir(d));) {
    if (!strcmp(x->d_name, ".") || !strcmp(x->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, x->d_name);
    rc = cli_refuse_input(command, out_flag, out, dir_flag, path);
  }
  if (d) closedir(d);
  return rc;
}
