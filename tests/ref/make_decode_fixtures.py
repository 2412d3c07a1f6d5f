#!/usr/bin/env python3
"""Reference fixtures for the host-side CTC decoders (engine/decode.c): TensorFlow's
tf.nn.ctc_greedy_decoder and tf.nn.ctc_beam_search_decoder on small time-major batches, blank = the
last class. Written as safetensors:
    logits      [T, B, C] f32 (time-major: the layout the host reads back from a device)
    lengths     [B] i32            frames of each utterance
    greedy      [B, T] i32         TF's greedy labels, padded with -1;  greedy_len [B] i32
    beam_paths  [B, K, T] i32      TF's K best beams, padded with -1;   beam_len [B, K] i32
    beam_logp   [B, K] f32         their log-probabilities (natural log)
    wide_paths, wide_len, wide_logp   the same at WIDE (8) times the beam width
(decode_greedy_ties has no beam tensors.) Metadata: beam_width, wide_beam_width, top_paths.

    pip install tensorflow-cpu && cd tests/ref && python3 make_decode_fixtures.py

Which TF flags give standard CTC decoding (checked by probe() below, every run):
  * tf.nn.ctc_greedy_decoder(merge_repeated=True) (the default) is standard best-path decoding: the
    argmax of each frame (the lowest index on ties), repeats merged, then blanks dropped; "a - a" -> "a a".
  * TF's beam search (CTCBeamSearchDecoder) is a CTC prefix beam search that keeps, for each prefix,
    the probabilities of ending in blank and in non-blank, and applies log-softmax to its input itself.
    Its merge_repeated flag (tf.compat.v1, default True) does not change the search: it only collapses
    equal adjacent labels of each *returned* path, so "a - a" is reported as "a" (with the probability
    of "a a", and possibly twice in the top list). merge_repeated=False is standard CTC prefix
    search, and tf.nn.ctc_beam_search_decoder (TF2) always passes merge_repeated=False.
  * TF prunes differently from DeepSpeech's ds_ctcdecoder: it only expands a beam whose probability
    could enter the current top list, and bounds that list as it grows it; DeepSpeech expands every
    beam and keeps the best beam_width afterwards. On the same input both find the same best prefix
    unless the beam is too narrow, so every utterance here is chosen to be insensitive to the beam: TF
    gives the same top path at WIDE (8) times the beam width, where its best beam leads the second by
    at least MARGIN (0.1) nats (logits peaked around a random alignment, as a trained model's are).
    Utterances that fail this are redrawn.
  * A beam's log-probability sums only the alignments whose prefixes stayed in the beam: a lower bound
    of the exact log-probability (the negative CTC loss of that label sequence) that depends on how
    the search prunes. Here, at these widths, both TF's and the engine's are 0.001-0.8 nats below the
    exact value and differ from each other by up to ~0.03 nats (up to float32 rounding, ~2e-5, where
    both keep the same prefixes); the test states that tolerance. The wide results are stored too.
"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
from fixture_io import save  # noqa: E402

MARGIN = 0.1
TOP_PATHS = 4
WIDE = 8


def tf_greedy(logits, lengths):
    T, B, C = logits.shape
    (dec,), _ = tf.nn.ctc_greedy_decoder(tf.constant(logits), tf.constant(lengths, tf.int32), merge_repeated=True)
    out = np.full((B, T), -1, np.int32)
    n = np.zeros(B, np.int32)
    idx, vals = dec.indices.numpy(), dec.values.numpy()
    for (b, j), v in zip(idx, vals):
        out[b, j] = v
        n[b] = max(n[b], j + 1)
    return out, n


def tf_beam(logits, lengths, beam_width, top_paths):
    T, B, C = logits.shape
    decs, logp = tf.nn.ctc_beam_search_decoder(tf.constant(logits), tf.constant(lengths, tf.int32),
                                               beam_width=beam_width, top_paths=top_paths)
    paths = np.full((B, top_paths, T), -1, np.int32)
    plen = np.zeros((B, top_paths), np.int32)
    for k, dec in enumerate(decs):
        for (b, j), v in zip(dec.indices.numpy(), dec.values.numpy()):
            paths[b, k, j] = v
            plen[b, k] = max(plen[b, k], j + 1)
    return paths, plen, logp.numpy().astype(np.float32)


def peaked_logits(rng, T, C, peak, noise):
    """Logits [T, C] peaked around a random alignment: blank half of the time, else a repeat of the
    previous class or a new label."""
    x = rng.standard_normal((T, C)) * noise
    prev = C - 1
    for t in range(T):
        u = rng.random()
        k = C - 1 if u < 0.45 else (prev if u < 0.6 else int(rng.integers(0, C - 1)))
        x[t, k] += peak * rng.uniform(0.8, 1.2)
        prev = k
    return x


def stable(x, n, beam_width):
    """Whether TF's best beam for x[:n] is unambiguous and the same at beam_width and WIDE x beam_width."""
    one = x[:n, None, :].astype(np.float32)
    p1, l1, _ = tf_beam(one, np.array([n]), beam_width, 2)
    pw, lw, sw = tf_beam(one, np.array([n]), beam_width * WIDE, 2)
    same = l1[0, 0] == lw[0, 0] and np.array_equal(p1[0, 0], pw[0, 0])
    return same and sw[0, 0] - sw[0, 1] >= MARGIN


def beam_case(name, seed, T, C, lengths, beam_width, peak, noise):
    rng = np.random.default_rng(seed)
    B = len(lengths)
    x = np.zeros((T, B, C), np.float32)
    redrawn = 0
    for b, n in enumerate(lengths):
        while True:
            u = peaked_logits(rng, T, C, peak, noise).astype(np.float32)
            if stable(u, n, beam_width):
                break
            redrawn += 1
        x[:, b, :] = u
    lengths = np.array(lengths, np.int32)
    greedy, greedy_len = tf_greedy(x, lengths)
    paths, plen, logp = tf_beam(x, lengths, beam_width, TOP_PATHS)
    wpaths, wplen, wlogp = tf_beam(x, lengths, beam_width * WIDE, TOP_PATHS)
    save(f"decode_{name}.safetensors",
         {"logits": x, "lengths": lengths, "greedy": greedy, "greedy_len": greedy_len, "beam_paths": paths,
          "beam_len": plen, "beam_logp": logp, "wide_paths": wpaths, "wide_len": wplen, "wide_logp": wlogp},
         {"generator": "tests/ref/make_decode_fixtures.py", "tensorflow": tf.__version__, "beam_width": beam_width,
          "wide_beam_width": beam_width * WIDE, "top_paths": TOP_PATHS,
          "note": f"T={T} C={C} B={B} beam {beam_width}, {redrawn} utterances redrawn"})


def greedy_ties_case():
    """Logits drawn from {0, 1, 2}: frequent exact ties, where TF takes the lowest index."""
    rng = np.random.default_rng(40)
    T, B, C = 50, 4, 6
    x = rng.integers(0, 3, (T, B, C)).astype(np.float32)
    lengths = np.array([50, 37, 1, 0], np.int32)
    greedy, greedy_len = tf_greedy(x, lengths)
    save("decode_greedy_ties.safetensors",
         {"logits": x, "lengths": lengths, "greedy": greedy, "greedy_len": greedy_len},
         {"generator": "tests/ref/make_decode_fixtures.py", "tensorflow": tf.__version__,
          "note": "integer logits with ties; lengths 50, 37, 1, 0"})


def probe():
    """The flag semantics the docstring states, on a case whose best path is 'a - a'."""
    lp = np.log(np.array([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]], np.float32))[:, None, :]
    seq = np.array([3], np.int32)
    (d,), _ = tf.compat.v1.nn.ctc_beam_search_decoder(lp, seq, beam_width=10, top_paths=1, merge_repeated=True)
    assert d.values.numpy().tolist() == [0], "v1 merge_repeated=True should report 'a a' as 'a'"
    (d,), p = tf.compat.v1.nn.ctc_beam_search_decoder(lp, seq, beam_width=10, top_paths=1, merge_repeated=False)
    assert d.values.numpy().tolist() == [0, 0] and abs(p.numpy()[0, 0] - np.log(0.512)) < 1e-5
    (d,), p = tf.nn.ctc_beam_search_decoder(lp, seq, beam_width=10, top_paths=1)
    assert d.values.numpy().tolist() == [0, 0], "tf.nn.ctc_beam_search_decoder is standard CTC"
    (d,), _ = tf.nn.ctc_greedy_decoder(lp, seq)
    assert d.values.numpy().tolist() == [0, 0], "greedy merges repeats before dropping blanks"
    print("TF flag semantics as documented")


if __name__ == "__main__":
    probe()
    beam_case("small", 11, 30, 5, [30, 24, 17], 16, 4.0, 1.0)
    beam_case("mid", 12, 60, 12, [60, 45], 32, 5.0, 1.0)
    beam_case("ds", 13, 100, 29, [100, 80, 57], 64, 7.0, 1.0)
    beam_case("soft", 14, 40, 8, [40, 33], 32, 3.0, 1.0)
    greedy_ties_case()
