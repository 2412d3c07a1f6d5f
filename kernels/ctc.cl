/* CTC loss with TensorFlow's semantics (tf.compat.v1.nn.ctc_loss, ctc_merge_repeated, blank = last
 * class) and greedy decoding. ctc_loss_grad_local/_global: log-softmax, forward-backward in log space,
 * the loss and the gradient with respect to the logits, one work-group per utterance, with the
 * per-utterance tables in local memory or in a global workspace; ctc_loss_grad_item: the same with one
 * work-item per utterance and 8 states per vector (CPU devices); ctc_greedy_decode: the best path. */
#include "common.h"

/* The local and the global variant must give the same bits, and results should not depend on what
 * a compiler chooses to fuse. */
#pragma OPENCL FP_CONTRACT OFF

/* Per-utterance tables (words; S = 2*L + 1 states for a label of length L, Smax = 2*max_label + 1):
 *   alpha  [rows][S]   rows = time with the gradient (every frame kept), else 2 (a ring)
 *   beta   [2][Smax]   a ring
 *   lse    [time]      log-sum-exp of each frame's logits
 *   then, as int: lab [max_label] (the labels), next [max_label] (next position of the same label,
 *   -1 at the end), first [C] (first position of each class, -1 when absent).
 * The host computes the same sizes (engine/ctc.c: words_per_utterance). Every row is kept relative to
 * its own running offset (the maximum of the row before), so values stay near 0 over any length; the
 * loss adds the offsets back (compensated sum), and the gradient normalises each frame on its own. */

/* Loads and stores of the tables, in local or in global memory; `in_local` is a literal in each
 * kernel, so the branch folds away. */
#define LDF(i) (in_local ? lf[(i)] : gf[(i)])
#define STF(i, v)            \
  do {                       \
    if (in_local)            \
      lf[(i)] = (v);         \
    else                     \
      gf[(i)] = (v);         \
  } while (0)
#define LDI(i) (in_local ? li[(i)] : gi[(i)])
#define STI(i, v)            \
  do {                       \
    if (in_local)            \
      li[(i)] = (v);         \
    else                     \
      gi[(i)] = (v);         \
  } while (0)

/* log(exp(a) + exp(b)) without overflow; -inf when both are -inf. */
float ctc_lse2(const float a, const float b) {
  const float hi = fmax(a, b), lo = fmin(a, b);
  if (hi == -INFINITY) return -INFINITY;
  return hi + log1p(exp(lo - hi));
}

/* log(exp(a) + exp(b) + exp(c)): the largest term is exp(0) = 1, so two exponentials suffice. */
float ctc_lse3(const float a, const float b, const float c) {
  const float hi = fmax(a, b), lo = fmin(a, b);
  const bool c_top = c >= hi;
  const float m = c_top ? c : hi, o1 = c_top ? hi : lo, o2 = c_top ? lo : c;
  if (m == -INFINITY) return -INFINITY;
  return m + log1p(exp(o1 - m) + exp(o2 - m));
}

/* Tree reductions over the CLS_WG_1D partial values the work-items left in local memory (a barrier
 * must separate their writes from the call): afterwards p[0] holds the result, for every work-item.
 * Called by every work-item of the group. */
void ctc_reduce_max(__local float *p, const int lid) {
  for (int stride = CLS_WG_1D / 2; stride > 0; stride >>= 1) {
    if (lid < stride) p[lid] = fmax(p[lid], p[lid + stride]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* Sums over a and b, the largest over m, in one pass. */
void ctc_reduce_sum2_max(__local float *a, __local float *b, __local float *m, const int lid) {
  for (int stride = CLS_WG_1D / 2; stride > 0; stride >>= 1) {
    if (lid < stride) {
      a[lid] += a[lid + stride];
      b[lid] += b[lid + stride];
      m[lid] = fmax(m[lid], m[lid + stride]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* One utterance (work-group b). red: 6*CLS_WG_1D floats of partials, flag: 2 ints, both local.
 * lf/li (local) or gf/gi (global): this utterance's tables. Status: 0 usable, 1 impossible alignment
 * (loss +inf, gradient 0), 2 invalid lengths or label values (loss NaN, gradient 0). */
void ctc_loss_body(const int time, const int batch, const int C, const int max_label,
                   __global const float *logits, __global const int *labels, __global const int *label_lengths,
                   __global const int *input_lengths, __global float *loss, __global float *grad,
                   const int want_grad, const float scale, const int accumulate, __local float *lf,
                   __local int *li, __global float *gf, __global int *gi, const int in_local,
                   __local float *red, __local int *flag) {
  const int lid = (int)get_local_id(0);
  const int b = (int)get_group_id(0);
  const int blank = C - 1;
  const int smax = 2 * max_label + 1;
  const int rows = want_grad ? time : 2;
  const int beta0 = rows * smax, lse0 = beta0 + 2 * smax;
  const int lab0 = 0, next0 = max_label, first0 = 2 * max_label;
  /* Partials of the reductions; a row's maximum stays in [0] of its buffer until the next row's. */
  __local float *red_alpha = red;                /* [2][WG] row maxima of alpha (rows alternate) */
  __local float *red_beta = red + 2 * CLS_WG_1D; /* [2][WG] row maxima of beta */
  __local float *red_gmax = red + 4 * CLS_WG_1D; /* [WG] maxima of alpha+beta of a frame */
  __local float *red_sum = red + 5 * CLS_WG_1D;  /* [WG] sums of exp(alpha+beta-max) over every state */
  __local float *red_blank = red_alpha;          /* [WG] the same over blank states (after the forward) */

  const int len = input_lengths[b];
  const int L = label_lengths[b];
  int status = (len < 0 || len > time || L < 0 || L > max_label) ? 2 : 0;
  const int Lc = status ? 0 : L, lenc = status ? 0 : len;

  /* Labels into the table, class lists emptied, each frame's log-sum-exp. */
  if (lid == 0) flag[0] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = lid; j < Lc; j += CLS_WG_1D) {
    const int v = labels[b * max_label + j];
    if (v < 0 || v >= blank) flag[0] = 1;
    STI(lab0 + j, v);
  }
  for (int k = lid; k < C; k += CLS_WG_1D) STI(first0 + k, -1);
  for (int t = lid; t < lenc; t += CLS_WG_1D) {
    __global const float *x = logits + ((size_t)t * batch + b) * C;
    float m = -INFINITY, s = 0.0f;
    for (int k = 0; k < C; k++) m = fmax(m, x[k]);
    for (int k = 0; k < C; k++) s += exp(x[k] - m);
    STF(lse0 + t, m + log(s));
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);

  /* One work-item: the frames the labels need (one each, plus a blank between repeated labels),
   * and the per-class position lists. */
  if (lid == 0) {
    int st = status;
    if (st == 0 && flag[0]) st = 2;
    if (st == 0) {
      int need = Lc;
      for (int j = Lc - 1; j >= 0; j--) {
        const int k = LDI(lab0 + j);
        if (j > 0 && LDI(lab0 + j - 1) == k) need++;
        STI(next0 + j, LDI(first0 + k));
        STI(first0 + k, j);
      }
      if (len < need) st = 1;
    }
    flag[1] = st;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  status = flag[1];

  /* Padded frames (and every frame of an unusable utterance) get a zero gradient. */
  if (want_grad && !accumulate) {
    const int from = status ? 0 : len;
    const int n = (time - from) * C;
    for (int i = lid; i < n; i += CLS_WG_1D) {
      const int t = from + i / C, k = i % C;
      grad[((size_t)t * batch + b) * C + k] = 0.0f;
    }
  }
  if (status) {
    if (lid == 0) loss[b] = status == 1 ? INFINITY : NAN;
    return;
  }
  if (len == 0) { /* an empty label over no frames: probability 1 */
    if (lid == 0) loss[b] = 0.0f;
    return;
  }

  const int S = 2 * L + 1;

  /* Forward: alpha_t(s) = lp_t(l'_s) + lse(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) when
   * l'_s is a label different from l'_{s-2}). Row t is stored minus the offsets c_0..c_{t-1}, each
   * c_u the maximum of row u as stored; every work-item sums the offsets in the same order. */
  float csum = 0.0f, ccomp = 0.0f;
  for (int t = 0; t < len; t++) {
    float c = 0.0f;
    if (t > 0) {
      c = red_alpha[((t - 1) & 1) * CLS_WG_1D];
      if (c == -INFINITY) c = 0.0f;
      const float y = c - ccomp, sum = csum + y;
      ccomp = (sum - csum) - y;
      csum = sum;
    }
    const int row = (want_grad ? t : (t & 1)) * S, prev = (want_grad ? t - 1 : ((t - 1) & 1)) * S;
    const float lse_t = LDF(lse0 + t);
    __global const float *x = logits + ((size_t)t * batch + b) * C;
    float m = -INFINITY;
    for (int s = lid; s < S; s += CLS_WG_1D) {
      const int k = (s & 1) ? LDI(lab0 + (s >> 1)) : blank;
      float v;
      if (t == 0) {
        v = s < 2 ? 0.0f : -INFINITY;
      } else {
        const float a0 = LDF(prev + s) - c;
        const float a1 = s >= 1 ? LDF(prev + s - 1) - c : -INFINITY;
        const bool skip = (s & 1) && s >= 3 && k != LDI(lab0 + (s >> 1) - 1);
        const float a2 = skip ? LDF(prev + s - 2) - c : -INFINITY;
        v = ctc_lse3(a0, a1, a2);
      }
      v += x[k] - lse_t;
      STF(row + s, v);
      m = fmax(m, v);
    }
    red_alpha[(t & 1) * CLS_WG_1D + lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    ctc_reduce_max(red_alpha + (t & 1) * CLS_WG_1D, lid);
  }
  const int last = (want_grad ? len - 1 : ((len - 1) & 1)) * S;
  const float tail = ctc_lse2(LDF(last + S - 1), S > 1 ? LDF(last + S - 2) : -INFINITY);
  const float logp = csum + (tail - ccomp);
  if (!(logp > -INFINITY)) { /* no path survived (cannot happen with finite logits) */
    if (want_grad && !accumulate)
      for (int i = lid; i < len * C; i += CLS_WG_1D)
        grad[((size_t)(i / C) * batch + b) * C + i % C] = 0.0f;
    if (lid == 0) loss[b] = INFINITY;
    return;
  }
  if (lid == 0) loss[b] = -logp;
  if (!want_grad) return;

  /* Backward: beta_t(s) = log P(frames t+1.. | state s at t), kept relative like alpha; at each frame
   * gamma(s) = alpha_t(s) + beta_t(s), Z = lse_s gamma(s), and the gradient is
   * scale*(softmax - sum over the states of class k of exp(gamma(s) - Z)). */
  {
    const int row = ((len - 1) & 1) * smax;
    float m = -INFINITY;
    for (int s = lid; s < S; s += CLS_WG_1D) {
      const float v = s >= S - 2 ? 0.0f : -INFINITY;
      STF(beta0 + row + s, v);
      m = fmax(m, v);
    }
    red_beta[((len - 1) & 1) * CLS_WG_1D + lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    ctc_reduce_max(red_beta + ((len - 1) & 1) * CLS_WG_1D, lid);
  }
  for (int t = len - 1; t >= 0; t--) {
    float d = red_beta[(t & 1) * CLS_WG_1D];
    if (d == -INFINITY) d = 0.0f;
    const int arow = t * S, brow = beta0 + (t & 1) * smax, bprev = beta0 + ((t - 1) & 1) * smax;
    float gm = -INFINITY;
    for (int s = lid; s < S; s += CLS_WG_1D) gm = fmax(gm, LDF(arow + s) + LDF(brow + s));
    red_gmax[lid] = gm;
    /* global too: the rows of beta this step writes (bprev) the last step read (brow, at any s) */
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    ctc_reduce_max(red_gmax, lid);

    float M = red_gmax[0];
    if (M == -INFINITY) M = 0.0f;
    const float lse_t = LDF(lse0 + t);
    __global const float *x = logits + ((size_t)t * batch + b) * C;
    float sum_all = 0.0f, sum_blank = 0.0f, bm = -INFINITY;
    for (int s = lid; s < S; s += CLS_WG_1D) {
      const float bt = LDF(brow + s);
      const float e = exp(LDF(arow + s) + bt - M);
      sum_all += e;
      if (!(s & 1)) sum_blank += e;
      if (t > 0) {
        const int k = (s & 1) ? LDI(lab0 + (s >> 1)) : blank;
        const float b0 = bt - d + (x[k] - lse_t);
        float b1 = -INFINITY, b2 = -INFINITY;
        if (s + 1 < S) {
          const int k1 = (s & 1) ? blank : LDI(lab0 + (s >> 1));
          b1 = LDF(brow + s + 1) - d + (x[k1] - lse_t);
        }
        if ((s & 1) && s + 2 < S) { /* from label s over a blank into label s+2: only when they differ */
          const int k2 = LDI(lab0 + ((s + 2) >> 1));
          if (k2 != k) b2 = LDF(brow + s + 2) - d + (x[k2] - lse_t);
        }
        const float v = ctc_lse3(b0, b1, b2);
        STF(bprev + s, v);
        bm = fmax(bm, v);
      }
    }
    red_sum[lid] = sum_all;
    red_blank[lid] = sum_blank;
    red_beta[((t - 1) & 1) * CLS_WG_1D + lid] = bm;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    ctc_reduce_sum2_max(red_sum, red_blank, red_beta + ((t - 1) & 1) * CLS_WG_1D, lid);

    const float total = red_sum[0];
    const float Z = M + log(total);
    const float blank_occ = red_blank[0] / total;
    for (int k = lid; k < C; k += CLS_WG_1D) {
      float occ = 0.0f;
      if (k == blank) {
        occ = blank_occ;
      } else {
        for (int j = LDI(first0 + k); j >= 0; j = LDI(next0 + j))
          occ += exp(LDF(arow + 2 * j + 1) + LDF(brow + 2 * j + 1) - Z);
      }
      const float g = scale * (exp(x[k] - lse_t) - occ);
      __global float *out = grad + ((size_t)t * batch + b) * C + k;
      *out = accumulate ? *out + g : g;
    }
  }
}

/* logits [time*batch, C] time-major (row t*batch + b), labels [batch, max_label] padded,
 * label_lengths [batch], input_lengths [batch], loss [batch], grad [time*batch, C] (not touched when
 * want_grad is 0); each view starts at its element offset. One work-group per utterance. */
#define CTC_LOSS_ARGS                                                                                          \
  const int time, const int batch, const int num_classes, const int max_label, __global const float *logits,   \
      const int logits_off, __global const int *labels, const int labels_off, __global const int *label_lengths, \
      const int label_lengths_off, __global const int *input_lengths, const int input_lengths_off,              \
      __global float *loss, const int loss_off, __global float *grad, const int grad_off, const int want_grad,   \
      const float scale, const int accumulate
#define CTC_LOSS_PASS                                                                                           \
  time, batch, num_classes, max_label, logits + logits_off, labels + labels_off,                               \
      label_lengths + label_lengths_off, input_lengths + input_lengths_off, loss + loss_off, grad + grad_off,  \
      want_grad, scale, accumulate

/* Tables in local memory: `table` holds words_per_utterance words (set by the host). */
__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1)))
void ctc_loss_grad_local(CTC_LOSS_ARGS, __local float *table, const int table_floats) {
  __local float red[6 * CLS_WG_1D];
  __local int flag[2];
  ctc_loss_body(CTC_LOSS_PASS, table, (__local int *)(table + table_floats), (__global float *)0,
                (__global int *)0, 1, red, flag);
}

/* Tables in a global workspace: utterance b's at work + work_off + b*stride. */
__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1)))
void ctc_loss_grad_global(CTC_LOSS_ARGS, __global float *work, const int work_off, const int stride,
                          const int table_floats) {
  __local float red[6 * CLS_WG_1D];
  __local int flag[2];
  __global float *mine = work + work_off + (size_t)get_group_id(0) * stride;
  ctc_loss_body(CTC_LOSS_PASS, (__local float *)0, (__local int *)0, mine, (__global int *)(mine + table_floats), 0,
                red, flag);
}

/* ---- one work-item per utterance (CPU devices) ----
 * The same recurrences, for devices where a work-group barrier costs a loop over the work-items (CPU
 * OpenCL): one work-item walks its utterance's frames and works on 8 states at a time in float8, so
 * that exp/log run as vector code and no barrier is needed. Tables in a global workspace (utterance
 * b's at work + work_off + b*stride), words from its start, with R = round_up(S, 8) + 8 for the
 * utterance's S = 2L + 1 and Rmax the same for max_label (engine/ops/ctc.c: item_words):
 *   alpha [rows][Rmax]  rows = time with the gradient, else 2 (a ring); state s at 2 + s
 *   beta  [2][Rmax]     a ring of beta_t(s) + log p_t(l'_s), state s at 2 + s
 *   gam   [Rmax]        alpha + beta of one frame, then its exponentials
 *   prob  [time][C]     softmax of each frame (only with the gradient)
 *   lse   [time]        log-sum-exp of each frame's logits
 *   occ   [C]           occupancy of each class in one frame
 *   pen   [Rmax + 8]    0 where state s (at 2 + s) may be entered from s - 2, else -inf
 *   ext   [Rmax] (int)  the class of state s, blank past S
 * Row entries before state 0 and from state S on hold -inf, so s - 2 .. s + 9 load without tests. */

/* ctc_lse3 over 8 lanes. log(1 + x) instead of log1p(x): x lies in [0, 2], where both are within an
 * ulp of 1 (absolutely), and PoCL's vector log is 2/3 of its log1p. Differences below -87 are clamped,
 * so that exp stays a normal number (it is lost in 1 + x either way). */
float8 ctc_lse3_v(const float8 a, const float8 b, const float8 c) {
  const float8 hi = fmax(a, b), lo = fmin(a, b);
  const int8 c_top = isgreaterequal(c, hi);
  const float8 m = select(hi, c, c_top), o1 = select(lo, hi, c_top), o2 = select(c, lo, c_top);
  const float8 floor_ = (float8)(-87.0f);
  const float8 r = m + log(1.0f + (exp(fmax(o1 - m, floor_)) + exp(fmax(o2 - m, floor_))));
  return select(r, (float8)(-INFINITY), isequal(m, (float8)(-INFINITY)));
}

float ctc_hmax8(const float8 v) {
  const float4 a = fmax(v.lo, v.hi);
  const float2 c = fmax(a.lo, a.hi);
  return fmax(c.x, c.y);
}

float ctc_hsum8(const float8 v) {
  const float4 a = v.lo + v.hi;
  const float2 c = a.lo + a.hi;
  return c.x + c.y;
}

/* Log-sum-exp of one frame's C logits; writes the softmax to p when p is not NULL. */
float ctc_frame_lse(__global const float *x, const int C, __global float *p) {
  float m = -INFINITY, s = 0.0f;
  if (C < 8) {
    for (int k = 0; k < C; k++) m = fmax(m, x[k]);
    for (int k = 0; k < C; k++) s += exp(x[k] - m);
    if (p)
      for (int k = 0; k < C; k++) p[k] = exp(x[k] - m) / s;
    return m + log(s);
  }
  /* Chunks of 8; the last one ends at C and overlaps the one before (its repeated lanes are left
     out of the sum and written twice with the same value). */
  const int full = C & ~7;
  float8 vm = (float8)(-INFINITY);
  for (int k = 0; k < full; k += 8) vm = fmax(vm, vload8(0, x + k));
  if (full < C) vm = fmax(vm, vload8(0, x + C - 8));
  m = ctc_hmax8(vm);
  float8 vs = (float8)(0.0f);
  for (int k = 0; k < full; k += 8) vs += exp(vload8(0, x + k) - m);
  const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
  if (full < C) vs += select(exp(vload8(0, x + C - 8) - m), (float8)(0.0f), (int8)(C - 8) + lane < (int8)(full));
  s = ctc_hsum8(vs);
  if (p) {
    for (int k = 0; k < full; k += 8) vstore8(exp(vload8(0, x + k) - m) / s, 0, p + k);
    if (full < C) vstore8(exp(vload8(0, x + C - 8) - m) / s, 0, p + C - 8);
  }
  return m + log(s);
}

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void ctc_loss_grad_item(CTC_LOSS_ARGS, __global float *work, const int work_off, const int stride) {
  const int b = (int)get_global_id(0);
  const int C = num_classes, blank = C - 1;
  logits += logits_off;
  labels += labels_off + (size_t)b * max_label;
  grad += grad_off;
  const int len = input_lengths[input_lengths_off + b];
  const int L = label_lengths[label_lengths_off + b];
  int status = (len < 0 || len > time || L < 0 || L > max_label) ? 2 : 0;
  int need = 0;
  for (int j = 0; status == 0 && j < L; j++) {
    const int v = labels[j];
    if (v < 0 || v >= blank) status = 2;
    need += 1 + (j > 0 && labels[j - 1] == v);
  }
  if (status == 0 && len < need) status = 1;

  /* Padded frames (and every frame of an unusable utterance) get a zero gradient. */
  if (want_grad && !accumulate)
    for (int t = status ? 0 : len; t < time; t++) {
      __global float *g = grad + ((size_t)t * batch + b) * C;
      for (int k = 0; k < C; k++) g[k] = 0.0f;
    }
  if (status) {
    loss[loss_off + b] = status == 1 ? INFINITY : NAN;
    return;
  }
  if (len == 0) { /* an empty label over no frames: probability 1 */
    loss[loss_off + b] = 0.0f;
    return;
  }

  const int S = 2 * L + 1, R = ((S + 7) & ~7) + 8;
  const int Rmax = ((2 * max_label + 1 + 7) & ~7) + 8;
  const int rows = want_grad ? time : 2;
  __global float *alpha = work + work_off + (size_t)b * stride;
  __global float *beta = alpha + (size_t)rows * Rmax;
  __global float *gam = beta + 2 * Rmax;
  __global float *prob = gam + Rmax;
  __global float *lse = prob + (want_grad ? (size_t)time * C : 0);
  __global float *occ = lse + time;
  __global float *pen = occ + C;
  __global int *ext = (__global int *)(pen + Rmax + 8);

  for (int s = 0; s < R; s++) ext[s] = (s < S && (s & 1)) ? labels[s >> 1] : blank;
  for (int i = 0; i < R + 8; i++) {
    const int s = i - 2;
    pen[i] = (s >= 3 && s < S && (s & 1) && labels[s >> 1] != labels[(s >> 1) - 1]) ? 0.0f : -INFINITY;
  }
  for (int t = 0; t < len; t++)
    lse[t] = ctc_frame_lse(logits + ((size_t)t * batch + b) * C, C, want_grad ? prob + (size_t)t * C : 0);

  const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
  const float8 ninf = (float8)(-INFINITY);

  /* Forward, row t relative to the offsets c_0..c_{t-1} (each the maximum of the row before). */
  float csum = 0.0f, ccomp = 0.0f, c = 0.0f;
  for (int t = 0; t < len; t++) {
    __global float *row = alpha + (size_t)(want_grad ? t : (t & 1)) * Rmax;
    __global const float *prev = t == 0 ? row : alpha + (size_t)(want_grad ? t - 1 : ((t - 1) & 1)) * Rmax;
    __global const float *x = logits + ((size_t)t * batch + b) * C;
    const float lse_t = lse[t];
    row[0] = row[1] = -INFINITY;
    for (int i = S + 2; i < R; i++) row[i] = -INFINITY;
    float8 vm = ninf;
    for (int s0 = 0; s0 < S; s0 += 8) {
      const int8 k = vload8(0, ext + s0);
      const float8 em = (float8)(x[k.s0], x[k.s1], x[k.s2], x[k.s3], x[k.s4], x[k.s5], x[k.s6], x[k.s7]) - lse_t;
      const int8 sv = (int8)(s0) + lane;
      float8 v;
      if (t == 0) {
        v = select(ninf, (float8)(0.0f), sv < (int8)(2));
      } else {
        const float8 a0 = vload8(0, prev + 2 + s0), a1 = vload8(0, prev + 1 + s0);
        const float8 a2 = vload8(0, prev + s0) + vload8(0, pen + 2 + s0);
        v = ctc_lse3_v(a0, a1, a2) - c;
      }
      v = select(v + em, ninf, sv >= (int8)(S));
      vstore8(v, 0, row + 2 + s0);
      vm = fmax(vm, v);
    }
    c = ctc_hmax8(vm);
    if (c == -INFINITY) c = 0.0f;
    if (t + 1 < len) {
      const float y = c - ccomp, sum = csum + y;
      ccomp = (sum - csum) - y;
      csum = sum;
    }
  }
  __global const float *last = alpha + (size_t)(want_grad ? len - 1 : ((len - 1) & 1)) * Rmax + 2;
  const float logp = csum + (ctc_lse2(last[S - 1], S > 1 ? last[S - 2] : -INFINITY) - ccomp);
  if (!(logp > -INFINITY)) { /* no path survived (cannot happen with finite logits) */
    if (want_grad && !accumulate)
      for (int t = 0; t < len; t++)
        for (int k = 0; k < C; k++) grad[((size_t)t * batch + b) * C + k] = 0.0f;
    loss[loss_off + b] = INFINITY;
    return;
  }
  loss[loss_off + b] = -logp;
  if (!want_grad) return;

  /* Backward: beta_t(s) = lse(B_{t+1}(s), B_{t+1}(s+1), B_{t+1}(s+2) where allowed) - d, with
   * B_{t+1} = beta_{t+1} + log p_{t+1}(l'_s) as stored and d its maximum; gamma = alpha + beta. */
  for (int i = 0; i < 2; i++) {
    __global float *r = beta + i * Rmax;
    r[0] = r[1] = -INFINITY;
    for (int j = S + 2; j < R; j++) r[j] = -INFINITY;
  }
  for (int k = 0; k < C; k++) occ[k] = 0.0f;
  float d = 0.0f;
  for (int t = len - 1; t >= 0; t--) {
    __global const float *arow = alpha + (size_t)t * Rmax + 2;
    __global const float *x = logits + ((size_t)t * batch + b) * C;
    const float lse_t = lse[t];
    __global const float *bnext = beta + (size_t)((t + 1) & 1) * Rmax + 2;
    __global float *bout = beta + (size_t)(t & 1) * Rmax + 2;
    float8 gm = ninf, bm = ninf;
    for (int s0 = 0; s0 < S; s0 += 8) {
      const int8 sv = (int8)(s0) + lane;
      float8 bt;
      if (t == len - 1) {
        bt = select(ninf, (float8)(0.0f), sv >= (int8)(S - 2));
      } else {
        const float8 b0 = vload8(0, bnext + s0), b1 = vload8(0, bnext + s0 + 1);
        const float8 b2 = vload8(0, bnext + s0 + 2) + vload8(0, pen + 4 + s0);
        bt = ctc_lse3_v(b0, b1, b2) - d;
      }
      bt = select(bt, ninf, sv >= (int8)(S));
      const float8 g = vload8(0, arow + s0) + bt;
      vstore8(g, 0, gam + s0);
      gm = fmax(gm, g);
      const int8 k = vload8(0, ext + s0);
      const float8 em = (float8)(x[k.s0], x[k.s1], x[k.s2], x[k.s3], x[k.s4], x[k.s5], x[k.s6], x[k.s7]) - lse_t;
      const float8 bh = bt + em;
      vstore8(bh, 0, bout + s0);
      bm = fmax(bm, bh);
    }
    d = ctc_hmax8(bm);
    if (d == -INFINITY) d = 0.0f;
    float M = ctc_hmax8(gm);
    if (M == -INFINITY) M = 0.0f;
    /* exp(gamma - M): summed over every state and over the blank states (even lanes) as vectors; the
       label states' added into their classes one by one. */
    float8 vs = (float8)(0.0f), vb = (float8)(0.0f);
    for (int s0 = 0; s0 < S; s0 += 8) {
      const float8 e = exp(vload8(0, gam + s0) - M);
      vstore8(e, 0, gam + s0);
      vs += e;
      vb += select(e, (float8)(0.0f), (lane & (int8)(1)) != (int8)(0));
    }
    const float total = ctc_hsum8(vs);
    occ[blank] = ctc_hsum8(vb);
    for (int s = 1; s < S; s += 2) occ[ext[s]] += gam[s];
    __global const float *p = prob + (size_t)t * C;
    __global float *out = grad + ((size_t)t * batch + b) * C;
    for (int k = 0; k < C; k++) {
      const float g = scale * (p[k] - occ[k] / total);
      occ[k] = 0.0f;
      out[k] = accumulate ? out[k] + g : g;
    }
  }
}

/* Greedy (best path) decoding of utterance b = group: the argmax class of each frame t < len (the
 * first on ties), repeats merged, blanks dropped; out_labels [batch][time] padded with -1,
 * out_lengths [batch]. An input length outside [0, time] is clamped. */
__kernel __attribute__((reqd_work_group_size(CLS_WG_1D, 1, 1)))
void ctc_greedy_decode(const int time, const int batch, const int num_classes, __global const float *logits,
                       const int logits_off, __global const int *input_lengths, const int input_lengths_off,
                       __global int *out_labels, const int out_labels_off, __global int *out_lengths,
                       const int out_lengths_off) {
  const int lid = (int)get_local_id(0);
  const int b = (int)get_group_id(0);
  const int len = clamp(input_lengths[input_lengths_off + b], 0, time);
  __global int *out = out_labels + out_labels_off + (size_t)b * time;
  for (int t = lid; t < len; t += CLS_WG_1D) {
    __global const float *x = logits + logits_off + ((size_t)t * batch + b) * num_classes;
    int best = 0;
    float top = x[0];
    for (int k = 1; k < num_classes; k++)
      if (x[k] > top) {
        top = x[k];
        best = k;
      }
    out[t] = best;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) {
    int n = 0, prev = -1;
    for (int t = 0; t < len; t++) {
      const int k = out[t];
      if (k != num_classes - 1 && k != prev) out[n++] = k;
      prev = k;
    }
    out_lengths[out_lengths_off + b] = n;
    for (int t = n; t < time; t++) out[t] = -1;
  }
}
