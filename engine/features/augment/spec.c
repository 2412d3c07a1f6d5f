/* --augment's specifications, clspeech/features.h's cls_augment_* functions (parse, the kind and
 * parameter names, check_supported): DeepSpeech 0.9.3's grammar and parameter table, the checks of the
 * values, and which augmentations training runs. Host-only: base, and features/augment/codec.h to
 * probe libsndfile for codec. */
#include "clspeech/features.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "features/augment/codec.h"

/* What a parameter's range must keep to (its start and end; the radius is never negative). */
enum rule { ANY, NONNEG, POSITIVE, UNIT };
/* The most masks, warp points or overlay layers one utterance can ask for (start, end + radius). */
#define MAX_COUNT 1000.0

typedef struct param_spec {
  const char *name;
  int integer;   /* an int_range in DeepSpeech: integers only, picks rounded */
  int scalar;    /* a plain number, not a range (tempo's max_time) */
  double start, end, r;
  enum rule rule;
  double max;    /* 0: none; else start, end and end + r at most this */
} param_spec;

typedef struct kind_spec {
  const char *name;
  cls_augment_domain domain; /* default */
  int has_domain;            /* takes domain= */
  int has_source;            /* overlay */
  param_spec params[CLS_AUGMENT_MAX_PARAMS];
} kind_spec;

static const kind_spec kinds[CLS_AUGMENT_N_KINDS] = {
    [CLS_AUGMENT_OVERLAY] = {"overlay", CLS_AUGMENT_SAMPLE, 0, 1,
                             {{"snr", 0, 0, 3.0, 3.0, 0, ANY, 0}, {"layers", 1, 0, 1, 1, 0, NONNEG, MAX_COUNT}}},
    [CLS_AUGMENT_CODEC] = {"codec", CLS_AUGMENT_SAMPLE, 0, 0, {{"bitrate", 1, 0, 3200, 3200, 0, POSITIVE, 0}}},
    [CLS_AUGMENT_REVERB] = {"reverb", CLS_AUGMENT_SAMPLE, 0, 0,
                            {{"delay", 0, 0, 20.0, 20.0, 0, NONNEG, 0}, {"decay", 0, 0, 10.0, 10.0, 0, NONNEG, 0}}},
    [CLS_AUGMENT_RESAMPLE] = {"resample", CLS_AUGMENT_SAMPLE, 0, 0, {{"rate", 1, 0, 8000, 8000, 0, POSITIVE, 0}}},
    [CLS_AUGMENT_VOLUME] = {"volume", CLS_AUGMENT_SAMPLE, 0, 0, {{"dbfs", 0, 0, 3.0103, 3.0103, 0, ANY, 0}}},
    [CLS_AUGMENT_PITCH] = {"pitch", CLS_AUGMENT_SPECTROGRAM, 0, 0, {{"pitch", 0, 0, 1.075, 1.075, 0.125, POSITIVE, 0}}},
    [CLS_AUGMENT_TEMPO] = {"tempo", CLS_AUGMENT_SPECTROGRAM, 0, 0,
                           {{"factor", 0, 0, 1.1, 1.1, 0, POSITIVE, 0}, {"max_time", 0, 1, -1, -1, 0, ANY, 0}}},
    [CLS_AUGMENT_WARP] = {"warp", CLS_AUGMENT_SPECTROGRAM, 0, 0,
                          {{"nt", 1, 0, 1, 1, 0, NONNEG, MAX_COUNT},
                           {"nf", 1, 0, 1, 1, 0, NONNEG, MAX_COUNT},
                           {"wt", 0, 0, 0.1, 0.1, 0, NONNEG, 0},
                           {"wf", 0, 0, 0.0, 0.0, 0, NONNEG, 0}}},
    [CLS_AUGMENT_FREQUENCY_MASK] = {"frequency_mask", CLS_AUGMENT_SPECTROGRAM, 0, 0,
                                    {{"n", 1, 0, 3, 3, 0, NONNEG, MAX_COUNT}, {"size", 1, 0, 2, 2, 0, NONNEG, 0}}},
    [CLS_AUGMENT_TIME_MASK] = {"time_mask", CLS_AUGMENT_SPECTROGRAM, 1, 0,
                               {{"n", 1, 0, 3, 3, 0, NONNEG, MAX_COUNT}, {"size", 0, 0, 10.0, 10.0, 0, NONNEG, 0}}},
    [CLS_AUGMENT_DROPOUT] = {"dropout", CLS_AUGMENT_SPECTROGRAM, 1, 0, {{"rate", 0, 0, 0.05, 0.05, 0, UNIT, 0}}},
    [CLS_AUGMENT_ADD] = {"add", CLS_AUGMENT_FEATURES, 1, 0, {{"stddev", 0, 0, 5, 5, 0, NONNEG, 0}}},
    [CLS_AUGMENT_MULTIPLY] = {"multiply", CLS_AUGMENT_FEATURES, 1, 0, {{"stddev", 0, 0, 5, 5, 0, NONNEG, 0}}},
};

static const char *domain_names[] = {"sample", "signal", "spectrogram", "features"};

const char *cls_augment_kind_name(cls_augment_kind k) {
  return (int)k >= 0 && k < CLS_AUGMENT_N_KINDS ? kinds[k].name : "?";
}

const char *cls_augment_param_name(cls_augment_kind k, int i) {
  if ((int)k < 0 || k >= CLS_AUGMENT_N_KINDS || i < 0 || i >= CLS_AUGMENT_MAX_PARAMS) return NULL;
  return kinds[k].params[i].name;
}

int cls_augment_param_integer(cls_augment_kind k, int i) {
  return cls_augment_param_name(k, i) ? kinds[k].params[i].integer : 0;
}

/* Copies [s, s+n) without surrounding white space (Python's str.strip) into out[cap]; 0 if too long. */
static int strip(const char *s, size_t n, char *out, size_t cap) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  if (n >= cap) return 0;
  memcpy(out, s, n);
  out[n] = '\0';
  return 1;
}

/* One number of a range: an integer (Python's int(): optional sign, digits) or a finite float. */
static int number(const char *s, size_t n, int integer, double *v) {
  char text[64];
  if (!strip(s, n, text, sizeof text) || !*text) return 0;
  char *end = NULL;
  errno = 0;
  if (integer) {
    const char *d = text + (*text == '+' || *text == '-');
    if (!*d) return 0;
    for (const char *c = d; *c; c++)
      if (!isdigit((unsigned char)*c)) return 0;
    long long x = strtoll(text, &end, 10);
    if (errno || *end || x > 1000000000LL || x < -1000000000LL) return 0;
    *v = (double)x;
    return 1;
  }
  double x = strtod(text, &end);
  if (errno || *end || !isfinite(x)) return 0;
  *v = x;
  return 1;
}

/* DeepSpeech's get_value_range: [a[:b]][~r]. */
static int parse_range(const char *s, int integer, cls_value_range *out) {
  const char *tilde = strchr(s, '~');
  if (tilde && strchr(tilde + 1, '~')) return 0;
  size_t head = tilde ? (size_t)(tilde - s) : strlen(s);
  out->r = 0;
  if (tilde && !number(tilde + 1, strlen(tilde + 1), integer, &out->r)) return 0;
  const char *colon = memchr(s, ':', head);
  if (colon && memchr(colon + 1, ':', head - (size_t)(colon + 1 - s))) return 0;
  if (!colon) {
    if (!number(s, head, integer, &out->start)) return 0;
    out->end = out->start;
    return 1;
  }
  return number(s, (size_t)(colon - s), integer, &out->start) &&
         number(colon + 1, head - (size_t)(colon + 1 - s), integer, &out->end);
}

static int rule_holds(enum rule r, double v) {
  switch (r) {
    case ANY: return 1;
    case NONNEG: return v >= 0;
    case POSITIVE: return v > 0;
    case UNIT: return v >= 0 && v <= 1;
  }
  return 0;
}

static const char *rule_text(enum rule r) {
  switch (r) {
    case NONNEG: return "must not be negative";
    case POSITIVE: return "must be positive";
    case UNIT: return "must be in [0, 1]";
    default: return "";
  }
}

static cls_status bad(cls_error *err, const char *fmt, const char *a, const char *b, const char *c) {
  return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, fmt, a, b, c);
}

/* One key=value of kind k into *a; seen[] marks the parameters given (index CLS_AUGMENT_MAX_PARAMS: p,
 * +1: domain, +2: source). */
static cls_status parameter(const kind_spec *k, const char *key, const char *value, cls_augmentation *a, int *seen,
                            cls_error *err) {
  int slot = -1;
  if (!strcmp(key, "p")) slot = CLS_AUGMENT_MAX_PARAMS;
  else if (!strcmp(key, "domain") && k->has_domain) slot = CLS_AUGMENT_MAX_PARAMS + 1;
  else if (!strcmp(key, "source") && k->has_source) slot = CLS_AUGMENT_MAX_PARAMS + 2;
  for (int i = 0; slot < 0 && i < CLS_AUGMENT_MAX_PARAMS && k->params[i].name; i++)
    if (!strcmp(key, k->params[i].name)) slot = i;
  if (slot < 0) {
    char known[160] = "p";
    if (k->has_source) strcat(known, ", source");
    for (int i = 0; i < CLS_AUGMENT_MAX_PARAMS && k->params[i].name; i++)
      snprintf(known + strlen(known), sizeof known - strlen(known), ", %s", k->params[i].name);
    if (k->has_domain) strcat(known, ", domain");
    return bad(err, "%s: unknown parameter \"%s\" (its parameters: %s)", k->name, key, known);
  }
  if (seen[slot]) return bad(err, "%s: parameter \"%s\" given twice%s", k->name, key, "");
  seen[slot] = 1;
  if (slot == CLS_AUGMENT_MAX_PARAMS) {
    double p = 0;
    if (!number(value, strlen(value), 0, &p)) return bad(err, "%s: p=\"%s\" is not a number%s", k->name, value, "");
    if (p < 0 || p > 1) return bad(err, "%s: p must be in [0, 1], not %s%s", k->name, value, "");
    a->p = p;
    return CLS_OK;
  }
  if (slot == CLS_AUGMENT_MAX_PARAMS + 1) {
    for (int d = CLS_AUGMENT_SIGNAL; d <= CLS_AUGMENT_FEATURES; d++)
      if (!strcmp(value, domain_names[d])) {
        a->domain = (cls_augment_domain)d;
        return CLS_OK;
      }
    return bad(err, "%s: domain must be signal, spectrogram or features, not \"%s\"%s", k->name, value, "");
  }
  if (slot == CLS_AUGMENT_MAX_PARAMS + 2) {
    if (!*value || strlen(value) >= sizeof a->source)
      return bad(err, "%s: source must be a file of audio samples (got \"%s\")%s", k->name, value, "");
    strcpy(a->source, value);
    return CLS_OK;
  }
  const param_spec *ps = &k->params[slot];
  cls_value_range v;
  if (ps->scalar) {
    if (!number(value, strlen(value), 0, &v.start))
      return bad(err, "%s: %s=\"%s\" is not a number", k->name, key, value);
    v.end = v.start;
    v.r = 0;
  } else if (!parse_range(value, ps->integer, &v)) {
    return bad(err, ps->integer ? "%s: %s=\"%s\" is not an integer range (v, v~r, a:b or a:b~r with integers)"
                                : "%s: %s=\"%s\" is not a range (v, v~r, a:b or a:b~r)",
               k->name, key, value);
  }
  if (v.r < 0) return bad(err, "%s: %s=\"%s\": the radius after ~ must not be negative", k->name, key, value);
  if (!isfinite(fmin(v.start, v.end) - v.r) || !isfinite(fmax(v.start, v.end) + v.r))
    return bad(err, "%s: %s=\"%s\": the range with its radius overflows", k->name, key, value);
  if (!rule_holds(ps->rule, v.start) || !rule_holds(ps->rule, v.end))
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %s=\"%s\": %s %s", k->name, key, value, key,
                         rule_text(ps->rule));
  if (ps->max > 0 && (v.start > ps->max || v.end + v.r > ps->max || v.start + v.r > ps->max))
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %s=\"%s\": at most %g per utterance", k->name, key,
                         value, ps->max);
  a->param[slot] = v;
  return CLS_OK;
}

cls_status cls_augment_parse(const char *spec, cls_augmentation *a, cls_error *err) {
  memset(a, 0, sizeof *a);
  size_t name_len = 0;
  while (spec[name_len] == '_' || (spec[name_len] >= 'a' && spec[name_len] <= 'z')) name_len++;
  const char *rest = spec + name_len;
  const size_t rest_len = strlen(rest);
  if (name_len == 0 || (rest_len && (rest[0] != '[' || rest[rest_len - 1] != ']' || rest_len < 2)))
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "\"%s\" is not an augmentation specification (NAME or NAME[key=value,...])", spec);
  int kind = -1;
  for (int k = 0; k < CLS_AUGMENT_N_KINDS; k++)
    if (strlen(kinds[k].name) == name_len && !strncmp(spec, kinds[k].name, name_len)) kind = k;
  if (kind < 0) {
    char known[256] = "";
    for (int k = 0; k < CLS_AUGMENT_N_KINDS; k++)
      snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", kinds[k].name);
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "unknown augmentation \"%.*s\" (known: %s)", (int)name_len, spec,
                         known);
  }
  const kind_spec *k = &kinds[kind];
  a->kind = (cls_augment_kind)kind;
  a->domain = k->domain;
  a->p = 1.0;
  for (int i = 0; i < CLS_AUGMENT_MAX_PARAMS && k->params[i].name; i++) {
    a->param[i].start = k->params[i].start;
    a->param[i].end = k->params[i].end;
    a->param[i].r = k->params[i].r;
  }
  int seen[CLS_AUGMENT_MAX_PARAMS + 3] = {0};
  if (rest_len) {
    /* DeepSpeech splits the inside of [...] at every comma, then each piece at '=' (stripped). */
    const char *p = rest + 1, *stop = rest + rest_len - 1;
    for (;;) {
      const char *comma = memchr(p, ',', (size_t)(stop - p));
      const char *piece_end = comma ? comma : stop;
      const char *eq = memchr(p, '=', (size_t)(piece_end - p));
      char key[64], value[CLS_AUGMENT_MAX_SOURCE];
      char piece[80];
      if (!strip(p, (size_t)(piece_end - p), piece, sizeof piece)) snprintf(piece, sizeof piece, "%.60s...", p);
      if (!eq || memchr(eq + 1, '=', (size_t)(piece_end - eq - 1)))
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: \"%s\" is not key=value", k->name,
                             strchr(piece, ',') ? "" : piece);
      if (!strip(p, (size_t)(eq - p), key, sizeof key) || !*key)
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: \"%s\" has no parameter name", k->name, piece);
      if (!strip(eq + 1, (size_t)(piece_end - eq - 1), value, sizeof value))
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: the value of %s is too long", k->name, key);
      cls_status st = parameter(k, key, value, a, seen, err);
      if (st != CLS_OK) return st;
      if (!comma) break;
      p = comma + 1;
    }
  }
  if (k->has_source && !seen[CLS_AUGMENT_MAX_PARAMS + 2])
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "overlay needs source=FILE (a CSV or sample DB of audio)");
  return CLS_OK;
}

cls_status cls_augment_check_supported(const cls_augmentation *a, cls_error *err) {
  int ok = 0;
  switch (a->kind) {
    case CLS_AUGMENT_OVERLAY:
    case CLS_AUGMENT_CODEC:
    case CLS_AUGMENT_VOLUME:
    case CLS_AUGMENT_REVERB:
    case CLS_AUGMENT_RESAMPLE:
    case CLS_AUGMENT_FREQUENCY_MASK:
    case CLS_AUGMENT_WARP: ok = 1; break;
    case CLS_AUGMENT_PITCH:
    case CLS_AUGMENT_TEMPO: {
      /* every pick must be positive: DeepSpeech divides by tempo's factor and sizes pitch's bins by it */
      const cls_value_range *v = &a->param[0];
      if (fmin(v->start, v->end) - v->r <= 0)
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s: %s=%g:%g~%g can pick values at or below 0",
                             kinds[a->kind].name, kinds[a->kind].params[0].name, v->start, v->end, v->r);
      ok = 1;
      break;
    }
    case CLS_AUGMENT_TIME_MASK:
    case CLS_AUGMENT_DROPOUT:
    case CLS_AUGMENT_ADD:
    case CLS_AUGMENT_MULTIPLY: ok = a->domain != CLS_AUGMENT_SAMPLE; break; /* signal, spectrogram, features */
    default: break;
  }
  if (ok && a->kind == CLS_AUGMENT_CODEC) { /* found now, not at the first augmented batch */
    cls_error why;
    if (cls_codec_probe(16000, &why) != CLS_OK) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s", why.text);
  }
  if (ok) return CLS_OK;
  if (kinds[a->kind].has_domain)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s in the %s domain is not implemented", kinds[a->kind].name,
                         domain_names[a->domain]);
  return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s is not implemented", kinds[a->kind].name);
}
