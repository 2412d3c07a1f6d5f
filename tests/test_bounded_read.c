/* The bounded reads of untrusted files that are not regular (issue 45): a pipe or device is read to
 * its format's cap (named in the error) or refused at its first bytes (a NUL byte for ARPA text, the
 * magic of the binary forms), never until memory runs out; FIFOs fed without end by a child process,
 * /dev/zero, /dev/urandom and (as root) a device node of our own. Also a positive log10 probability
 * refused by every reader of a language model (ARPA, binary, scorer). */
#define _DEFAULT_SOURCE /* mknod, makedev */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file_util.h"
#include "check.h"
#include "clspeech/lm.h"
#include "clspeech/package.h"
#include "clspeech/scorer.h"
#include "decode/lm_model.h"

static char dir[] = "/tmp/clspeech-bounded-XXXXXX";

static const char *in_dir(const char *leaf) {
  static char path[4][256];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s/%s", dir, leaf);
  return p;
}

/* A child that opens the FIFO `path` for writing and writes `data` (n bytes) once, or over and over
 * with `endless` until the reader closes its end; its pid. */
static pid_t feed(const char *path, const void *data, size_t n, bool endless) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  signal(SIGPIPE, SIG_IGN);
  int fd = open(path, O_WRONLY);
  if (fd < 0) _exit(3);
  do {
    for (size_t done = 0; done < n;) {
      ssize_t w = write(fd, (const char *)data + done, n - done);
      if (w < 0) _exit(endless && errno == EPIPE ? 0 : 4);
      done += (size_t)w;
    }
  } while (endless);
  close(fd);
  _exit(0);
}

static void reap(pid_t pid, const char *what) {
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the feeder exited %d",
        what, status);
}

static const char *fifo(const char *leaf) {
  const char *p = in_dir(leaf);
  unlink(p);
  CHECK(mkfifo(p, 0600) == 0, "mkfifo %s: %s", p, strerror(errno));
  return p;
}

static const char ARPA_TEXT[] = "\\data\\\nngram 1=4\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\n0\t<s>\t-0.3\n-0.5\t</s>\n"
                                "-0.4\ta\t-0.2\n\n\\2-grams:\n-0.1\ta </s>\n\n\\end\\\n";

/* The bounded stream itself: an endless FIFO stops at the cap, named; a NUL in the head ends it. */
static void check_stream_cap(void) {
  static char block[8192];
  memset(block, 'a', sizeof block);
  const char *p = fifo("endless_text");
  pid_t pid = feed(p, block, sizeof block, true);
  char *out = (char *)1;
  size_t len = 1;
  cls_error err;
  CHECK_INT(cls_read_file_max(p, 4096, true, &out, &len, &err), CLS_ERR_IO);
  CHECK(out == NULL && len == 0, "nothing is returned past the cap");
  CHECK_CONTAINS(err.text, "endless_text: larger than 4096 bytes (4 KiB), the most this reader takes; refused");
  reap(pid, "endless text");
  FILE *f = fopen("/dev/zero", "rb");
  CHECK(f != NULL, "open /dev/zero");
  if (f) {
    CHECK_INT(cls_read_stream_max(f, "head", "ab\0c", 4, 1 << 20, true, &out, &len, &err), CLS_OK);
    CHECK(len == 4 && out && !memcmp(out, "ab\0c", 4), "a NUL in the head ends the read at once (%zu bytes)", len);
    free(out);
    CHECK_INT(cls_read_stream_max(f, "head", "abcd", 4, 3, false, &out, &len, &err), CLS_ERR_IO);
    CHECK_CONTAINS(err.text, "head: larger than 3 bytes");
    fclose(f);
  }
}

/* For a FIFO of zeros: a feeder of its own before each read (a FIFO once closed has no writer). */
static const char *zeros_fifo;
static pid_t zeros_pid;

static void before(void) {
  static char zeros[4096];
  if (zeros_fifo) zeros_pid = feed(zeros_fifo, zeros, sizeof zeros, true);
}

static void after(void) {
  if (zeros_fifo) reap(zeros_pid, zeros_fifo);
}

/* Every reader of a model from a device of zeros or noise: refused, naming the file, at once. */
static void check_devices(const char *zero, const char *noise) {
  cls_lm *lm = (cls_lm *)1;
  cls_error err;
  char want[512];
  before();
  CHECK_INT(cls_lm_load(zero, &lm, &err), CLS_ERR_INVALID_ARGUMENT);
  after();
  snprintf(want, sizeof want, "%s:1: a NUL byte: binary data, not ARPA text", zero);
  CHECK(lm == NULL, "nothing loaded");
  CHECK_CONTAINS(err.text, want);
  before();
  CHECK_INT(cls_lm_load_arpa(zero, &lm, &err), CLS_ERR_INVALID_ARGUMENT);
  after();
  CHECK_CONTAINS(err.text, want);
  before();
  CHECK_INT(cls_lm_load_binary(zero, &lm, &err), CLS_ERR_INVALID_ARGUMENT);
  after();
  snprintf(want, sizeof want, "%s: not a clspeech binary language model", zero);
  CHECK_CONTAINS(err.text, want);
  cls_package *pkg = (cls_package *)1;
  before();
  CHECK_INT(cls_package_open(zero, &pkg, &err), CLS_ERR_INVALID_ARGUMENT);
  after();
  snprintf(want, sizeof want, "%s: not a clspeech model package", zero);
  CHECK(pkg == NULL, "no package");
  CHECK_CONTAINS(err.text, want);
  static const char *const labels[] = {" ", "a"};
  cls_scorer *sc = (cls_scorer *)1;
  before();
  CHECK(cls_scorer_load(zero, labels, 2, &sc, NULL, &err) != CLS_OK && sc == NULL, "scorer from %s", zero);
  after();
  CHECK_CONTAINS(err.text, zero);
  if (!noise) return;
  /* noise holds a NUL within its first block but for 1 in 10^111 */
  CHECK(cls_lm_load(noise, &lm, &err) == CLS_ERR_INVALID_ARGUMENT && lm == NULL, "%s as a scorer", noise);
  snprintf(want, sizeof want, "%s:", noise);
  CHECK_CONTAINS(err.text, want);
  CHECK_CONTAINS(err.text, ": a NUL byte: binary data, not ARPA text");
  CHECK_INT(cls_package_open(noise, &pkg, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "not a clspeech model package");
}

/* FIFOs: endless zeros refused at once; a whole ARPA text and a binary model load through one. */
static void check_fifos(void) {
  zeros_fifo = fifo("zeros");
  check_devices(zeros_fifo, NULL);
  zeros_fifo = NULL;
  const char *arpa = fifo("model.arpa");
  pid_t pid = feed(arpa, ARPA_TEXT, sizeof ARPA_TEXT - 1, false);
  cls_lm *lm = NULL;
  cls_error err;
  CHECK_INT(cls_lm_load(arpa, &lm, &err), CLS_OK);
  reap(pid, "arpa");
  CHECK(lm && cls_lm_count(lm, 2) == 1 && cls_lm_vocab_size(lm) == 4, "the ARPA model through a FIFO");
  const char *clm = in_dir("model.clm");
  CHECK_INT(lm ? cls_lm_save_binary(lm, clm, &err) : CLS_ERR_IO, CLS_OK);
  const float want = lm ? cls_lm_score_words(lm, (const char *[]){"a"}, 1, "</s>", NULL) : 0.0f;
  cls_lm_destroy(lm);
  char *bytes = NULL;
  size_t n = 0;
  CHECK_INT(cls_read_file_max(clm, 1 << 20, false, &bytes, &n, &err), CLS_OK);
  const char *pipe_clm = fifo("model_pipe.clm");
  pid = feed(pipe_clm, bytes, n, false);
  lm = NULL;
  CHECK_INT(cls_lm_load(pipe_clm, &lm, &err), CLS_OK);
  reap(pid, "binary");
  CHECK(lm && !cls_lm_is_mapped(lm) && cls_lm_score_words(lm, (const char *[]){"a"}, 1, "</s>", NULL) == want,
        "the binary model through a FIFO scores as the ARPA one");
  cls_lm_destroy(lm);
  free(bytes);
}

/* A device node of our own (root only): the same refusals. */
static void check_own_node(void) {
  if (geteuid() != 0) {
    printf("test_bounded_read: not root: the mknod case is skipped (the /dev/zero ones ran)\n");
    return;
  }
  const char *node = in_dir("zero_node");
  unlink(node);
  CHECK(mknod(node, S_IFCHR | 0600, makedev(1, 5)) == 0, "mknod %s: %s", node, strerror(errno));
  check_devices(node, NULL);
  unlink(node);
}

/* A positive log10 probability: refused by the ARPA reader (as a scorer too) and the binary reader. */
static void check_positive(void) {
  cls_error err;
  const char *arpa = CLS_FIXTURE_DIR "/lm_positive_prob.arpa";
  cls_lm *lm = (cls_lm *)1;
  CHECK_INT(cls_lm_load(arpa, &lm, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(err.text, "lm_positive_prob.arpa:9: the 1-gram 'a' has log10 probability 5, above 0");
  static const char *const labels[] = {" ", "a"};
  cls_scorer *sc = (cls_scorer *)1;
  CHECK(cls_scorer_load(arpa, labels, 2, &sc, NULL, &err) != CLS_OK && sc == NULL, "a scorer");
  CHECK_CONTAINS(err.text, "lm_positive_prob.arpa:9: the 1-gram 'a' has log10 probability 5");
  /* a binary file holding one, made by changing a loaded model before it is written */
  lm = NULL;
  CHECK_INT(cls_lm_parse_arpa(ARPA_TEXT, sizeof ARPA_TEXT - 1, "good.arpa", &lm, &err), CLS_OK);
  if (!lm) return;
  const char *clm = in_dir("positive.clm");
  lm->uni_prob[cls_lm_word_id(lm, "a", 1)] = 5.0f;
  CHECK_INT(cls_lm_save_binary(lm, clm, &err), CLS_OK);
  cls_lm_destroy(lm);
  lm = (cls_lm *)1;
  CHECK_INT(cls_lm_load_binary(clm, &lm, &err), CLS_ERR_INVALID_ARGUMENT);
  CHECK(lm == NULL, "nothing loaded");
  CHECK_CONTAINS(err.text, "positive.clm: the unigram 'a' has log10 probability 5, above 0");
}

int main(void) {
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  check_stream_cap();
  check_devices("/dev/zero", "/dev/urandom");
  check_fifos();
  check_own_node();
  check_positive();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return check_finish("test_bounded_read");
}
