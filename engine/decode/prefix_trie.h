/* The beam search's prefix trie (decode.c): nodes (parent, label) with each prefix's probabilities,
 * found through an open-addressing hash table from (parent, label) to node, and freed once they
 * can no longer be reached from the beam. The functions are prefix_trie.c's; the two the inner loop
 * calls are inline here. */
#ifndef CLS_DECODE_PREFIX_TRIE_H
#define CLS_DECODE_PREFIX_TRIE_H

#include <stdint.h>

#include "clspeech/base.h"

typedef struct node {
  int32_t parent;      /* -1 for the root (the empty prefix) */
  int32_t label;       /* -1 for the root */
  int32_t depth;       /* prefix length */
  int32_t n_children;  /* nodes whose parent this is */
  int32_t frame;       /* frame of the best entry into this label */
  int32_t alive;       /* in the beam (ds_ctcdecoder's exists_) */
  double entry_lp;     /* log P(label) at that frame */
  double b_prev, nb_prev, b_cur, nb_cur; /* log P(alignments ending in blank / non-blank), last frame and this one */
  double score;        /* log(exp(b_prev) + exp(nb_prev)) */
} node;

typedef struct trie {
  node *nodes;
  int32_t n_nodes, cap_nodes;
  int32_t *free_list;  /* freed node indices (capacity cap_nodes) */
  int32_t n_free;
  int32_t *table;      /* hash slots: node index or -1 */
  uint32_t table_mask; /* capacity - 1, a power of two */
  int32_t table_used;
} trie;

static inline uint32_t slot_of(int32_t parent, int32_t label, uint32_t mask) {
  uint64_t h = ((uint64_t)(uint32_t)parent << 32) ^ (uint32_t)label;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return (uint32_t)h & mask;
}

static inline int32_t table_find(const trie *tr, int32_t parent, int32_t label) {
  for (uint32_t i = slot_of(parent, label, tr->table_mask);; i = (i + 1) & tr->table_mask) {
    int32_t v = tr->table[i];
    if (v < 0) return -1;
    if (tr->nodes[v].parent == parent && tr->nodes[v].label == label) return v;
  }
}

/* Puts node `index` into the table / takes it out (backward shifting: no tombstones). */
void table_put(trie *tr, int32_t index);
void table_remove(trie *tr, int32_t index);

/* A new node (parent, label), entered at `frame` with log-probability entry_lp; not yet alive. The
 * table and the node arrays grow as needed (tr->cap_nodes tells the caller how far). */
cls_status node_new(trie *tr, int32_t parent, int32_t label, int32_t frame, double entry_lp, int32_t *out);

/* Takes a node out of the beam; frees it, and then its ancestors, while they are out of the beam and
 * have no children left (the root stays). */
void node_drop(trie *tr, int32_t index);

#endif
