/* What `clspeech train` does after training and testing, in DeepSpeech's order (see train_after.h): the
 * export into --export_dir (the package, its metadata file, with --export_onnx the ONNX file, with
 * --export_zip an archive of them beside the folder) and the one-shot transcription of --one_shot_infer. */
#include "train_after.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "clspeech/onnx.h"
#include "export_package.h"
#include "transcribe.h"
#include "zip_store.h"

/* An existing path that is not a folder, or (`must_be_empty`) a folder with entries: refused. */
static int check_export_dir(const char *command, const char *dir, int must_be_empty) {
  struct stat sb;
  if (stat(dir, &sb) != 0) return 0; /* made at the export */
  if (!S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "clspeech %s: --export_dir %s exists and is not a folder\n", command, dir);
    return CLI_EXIT_USAGE;
  }
  if (!must_be_empty) return 0;
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "clspeech %s: --export_dir %s: cannot read: %s\n", command, dir, strerror(errno));
    return CLI_EXIT_USAGE;
  }
  int entries = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) entries++;
  closedir(d);
  if (entries) {
    fprintf(stderr, "clspeech %s: --export_zip: --export_dir %s holds %d entr%s: it must be empty or new (as "
            "DeepSpeech asks), so that the archive holds this export alone\n",
            command, dir, entries, entries == 1 ? "y" : "ies");
    return CLI_EXIT_USAGE;
  }
  return 0;
}

int train_after_check(const char *command, const train_flags *f) {
  if (*f->one_shot_infer && access(f->one_shot_infer, R_OK) != 0) {
    fprintf(stderr, "clspeech %s: --one_shot_infer %s: %s\n", command, f->one_shot_infer, strerror(errno));
    return CLI_EXIT_USAGE;
  }
  return *f->export_dir ? check_export_dir(command, f->export_dir, f->export_zip) : 0;
}

/* --remove_export: the files and links directly in `dir` removed (folders inside are left, named). */
static int remove_export(const char *command, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT ? 0 : (fprintf(stderr, "clspeech %s: --remove_export: %s: %s\n", command, dir,
                                                strerror(errno)),
                                        CLI_EXIT_FAILURE);
  int removed = 0, kept = 0, rc = 0;
  char path[CLS_PATH_CAP];
  for (struct dirent *e; (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (lstat(path, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) {
      kept++;
    } else if (unlink(path) == 0) {
      removed++;
    } else {
      fprintf(stderr, "clspeech %s: --remove_export: cannot remove %s: %s\n", command, path, strerror(errno));
      rc = CLI_EXIT_FAILURE;
    }
  }
  closedir(d);
  fprintf(stderr, "clspeech %s: --remove_export: removed %d file%s from %s%s\n", command, removed,
          removed == 1 ? "" : "s", dir, kept ? " (the folders in it are left)" : "");
  return rc;
}

/* The metadata file DeepSpeech writes beside an export (AUTHOR_MODEL_VERSION.md: YAML front matter, then
 * the description), with the package's facts. */
static int write_metadata(const char *command, const train_flags *f, const char *path, const char *package,
                          const cls_package_summary *sum, int n_hidden, int n_classes) {
  char text[8192];
  const int n = snprintf(text, sizeof text,
                         "---\nauthor: %s\nmodel_name: %s\nmodel_version: %s\ncontact_info: %s\nlicense: %s\n"
                         "language: %s\nmin_ds_version: %s\nmax_ds_version: %s\nacoustic_model: %s\n"
                         "format: clspeech model package (clspeech transcribe --model, stt.h)\n"
                         "n_hidden: %d\nn_classes: %d\nsample_rate: %d\nfeature_win_len: %d\nfeature_win_step: %d\n"
                         "beam_width: %d\nscorer: %s\nglobal_step: %lld\n---\n%s\n",
                         f->export_author_id, f->export_model_name, f->export_model_version, f->export_contact_info,
                         f->export_license, f->export_language, f->export_min_ds_version, f->export_max_ds_version,
                         package, n_hidden, n_classes, f->audio_sample_rate, f->feature_win_len,
                         f->feature_win_step, f->export_beam_width, sum->scorer_bytes ? "inside the package" : "none",
                         (long long)sum->global_step, f->export_description);
  if (n < 0 || n >= (int)sizeof text) {
    fprintf(stderr, "clspeech %s: %s: the --export_* metadata is longer than %zu bytes\n", command, path, sizeof text);
    return CLI_EXIT_USAGE;
  }
  const void *chunks[1] = {text};
  const size_t sizes[1] = {(size_t)n};
  cls_error err;
  if (cls_write_atomic(path, chunks, sizes, 1, &err) != CLS_OK) {
    fprintf(stderr, "clspeech %s: %s\n", command, err.text);
    return CLI_EXIT_FAILURE;
  }
  return 0;
}

/* --export_onnx: DIR/EXPORT_FILE_NAME.onnx, its name into name[cap]. 0 or the exit status. */
static int write_onnx(const char *command, const train_flags *f, const char *checkpoint_dir, const char *dir,
                      char *name, size_t cap) {
  char path[CLS_PATH_CAP], chosen[CLS_PATH_CAP] = "";
  if (snprintf(name, cap, "%s.onnx", f->export_file_name) >= (int)cap ||
      snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
    fprintf(stderr, "clspeech %s: --export_onnx: the file name is too long\n", command);
    return CLI_EXIT_USAGE;
  }
  int rc = cli_refuse_input_folder(command, "--export_dir", path, "--checkpoint_dir", checkpoint_dir);
  if (rc) return rc;
  cls_error err;
  cls_status st = cls_onnx_export_checkpoint(checkpoint_dir, f->load_evaluate_mode, path, chosen, sizeof chosen, &err);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech %s: --export_onnx: %s\n", command, err.text);
    return cli_exit_status(st);
  }
  fprintf(stderr, "clspeech %s: wrote %s (ONNX opset %d) from %s\n", command, path, CLS_ONNX_OPSET, chosen);
  return 0;
}

int train_after_export(const char *command, const train_flags *f, const cli_flag *flags, int n_flags,
                       const char *checkpoint_dir) {
  const char *dir = f->export_dir;
  int rc = check_export_dir(command, dir, f->export_zip);
  if (!rc && f->remove_export) rc = remove_export(command, dir);
  if (rc) return rc;
  if (cls_make_dirs(dir) != CLS_OK) {
    fprintf(stderr, "clspeech %s: --export_dir %s: cannot make the folder: %s\n", command, dir, strerror(errno));
    return CLI_EXIT_FAILURE;
  }
  char package[CLS_PATH_CAP], md_name[768], md[CLS_PATH_CAP + 768], package_name[512];
  if (snprintf(package_name, sizeof package_name, "%s.clsm", f->export_file_name) >= (int)sizeof package_name ||
      snprintf(md_name, sizeof md_name, "%s_%s_%s.md", f->export_author_id, f->export_model_name,
               f->export_model_version) >= (int)sizeof md_name ||
      strchr(md_name, '/') ||
      snprintf(package, sizeof package, "%s/%s", dir, package_name) >= (int)sizeof package ||
      snprintf(md, sizeof md, "%s/%s", dir, md_name) >= (int)sizeof md) {
    fprintf(stderr,
            "clspeech %s: --export_dir: the package or metadata name is too long or holds '/' (--export_file_name, "
            "--export_author_id, --export_model_name, --export_model_version)\n",
            command);
    return CLI_EXIT_USAGE;
  }
  if ((rc = cli_refuse_input_folder(command, "--export_dir", package, "--checkpoint_dir", checkpoint_dir)) ||
      (rc = cli_refuse_input_folder(command, "--export_dir", md, "--checkpoint_dir", checkpoint_dir)))
    return rc;
  train_flags g = *f;
  g.load_checkpoint_dir = checkpoint_dir;
  cls_package_summary sum;
  memset(&sum, 0, sizeof sum);
  cls_model_config model;
  memset(&model, 0, sizeof model);
  rc = export_package(command, &g, flags, n_flags, package, &sum, &model);
  if (!rc) rc = write_metadata(command, &g, md, package_name, &sum, model.n_hidden, model.n_classes);
  if (!rc) fprintf(stderr, "clspeech %s: wrote %s (the export's metadata)\n", command, md);
  char onnx_name[512] = "";
  if (!rc && f->export_onnx) rc = write_onnx(command, f, checkpoint_dir, dir, onnx_name, sizeof onnx_name);
  if (!rc && f->export_zip) {
    char zip[CLS_PATH_CAP + 8];
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    snprintf(zip, sizeof zip, "%.*s.zip", (int)len, dir);
    const char *names[3] = {package_name, md_name, onnx_name};
    const int n = *onnx_name ? 3 : 2;
    cls_error err;
    if (zip_store_write(zip, dir, names, n, &err) != CLS_OK) {
      fprintf(stderr, "clspeech %s: --export_zip: %s: %s\n", command, zip, err.text);
      return CLI_EXIT_FAILURE;
    }
    fprintf(stderr, "clspeech %s: wrote %s (--export_zip: %s, %s%s%s)\n", command, zip, package_name, md_name,
            n == 3 ? ", " : "", n == 3 ? onnx_name : "");
  }
  return rc;
}

int train_after_one_shot(const char *command, const train_flags *f, const cli_flag *flags, int n_flags,
                         const char *checkpoint_dir) {
  return transcribe_one_shot(command, f, flags, n_flags, checkpoint_dir, f->one_shot_infer);
}
