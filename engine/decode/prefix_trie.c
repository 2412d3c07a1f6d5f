/* The prefix trie's table and node management (prefix_trie.h): inserting and removing (parent, label)
 * entries of the hash table, growing it, making nodes and freeing the ones the beam left. */
#include "decode/prefix_trie.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void table_put(trie *tr, int32_t index) {
  uint32_t i = slot_of(tr->nodes[index].parent, tr->nodes[index].label, tr->table_mask);
  while (tr->table[i] >= 0) i = (i + 1) & tr->table_mask;
  tr->table[i] = index;
  tr->table_used++;
}

/* Removes a node from the table by backward shifting (linear probing keeps no tombstones). */
void table_remove(trie *tr, int32_t index) {
  uint32_t mask = tr->table_mask;
  uint32_t i = slot_of(tr->nodes[index].parent, tr->nodes[index].label, mask);
  while (tr->table[i] != index) i = (i + 1) & mask;
  uint32_t hole = i;
  for (uint32_t j = (hole + 1) & mask; tr->table[j] >= 0; j = (j + 1) & mask) {
    const node *n = &tr->nodes[tr->table[j]];
    uint32_t home = slot_of(n->parent, n->label, mask);
    /* The entry at j may move into the hole unless its home lies cyclically in (hole, j]. */
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      tr->table[hole] = tr->table[j];
      hole = j;
    }
  }
  tr->table[hole] = -1;
  tr->table_used--;
}

static cls_status table_grow(trie *tr) {
  uint32_t cap = (tr->table_mask + 1) * 2;
  int32_t *t = malloc((size_t)cap * sizeof *t);
  if (!t) return CLS_ERR_OUT_OF_MEMORY;
  int32_t *old = tr->table;
  uint32_t old_cap = tr->table_mask + 1;
  tr->table = t;
  tr->table_mask = cap - 1;
  tr->table_used = 0;
  memset(t, 0xff, (size_t)cap * sizeof *t);
  for (uint32_t i = 0; i < old_cap; i++)
    if (old[i] >= 0) table_put(tr, old[i]);
  free(old);
  return CLS_OK;
}

/* A new node (parent, label), entered at `frame` with log-probability entry_lp; not yet alive. */
cls_status node_new(trie *tr, int32_t parent, int32_t label, int32_t frame, double entry_lp, int32_t *out) {
  if ((uint64_t)(tr->table_used + 1) * 2 > (uint64_t)tr->table_mask + 1) {
    cls_status st = table_grow(tr);
    if (st != CLS_OK) return st;
  }
  int32_t index;
  if (tr->n_free > 0) {
    index = tr->free_list[--tr->n_free];
  } else {
    if (tr->n_nodes == tr->cap_nodes) {
      if (tr->cap_nodes > INT32_MAX / 2) return CLS_ERR_OUT_OF_MEMORY;
      int32_t cap = tr->cap_nodes * 2;
      node *nodes = realloc(tr->nodes, (size_t)cap * sizeof *nodes);
      if (!nodes) return CLS_ERR_OUT_OF_MEMORY;
      tr->nodes = nodes;
      int32_t *fl = realloc(tr->free_list, (size_t)cap * sizeof *fl);
      if (!fl) return CLS_ERR_OUT_OF_MEMORY;
      tr->free_list = fl;
      tr->cap_nodes = cap;
    }
    index = tr->n_nodes++;
  }
  node *n = &tr->nodes[index];
  n->parent = parent;
  n->label = label;
  n->depth = parent >= 0 ? tr->nodes[parent].depth + 1 : 0;
  n->n_children = 0;
  n->frame = frame;
  n->alive = 0;
  n->entry_lp = entry_lp;
  n->b_prev = n->nb_prev = n->b_cur = n->nb_cur = n->score = -INFINITY;
  if (parent >= 0) {
    tr->nodes[parent].n_children++;
    table_put(tr, index);
  }
  *out = index;
  return CLS_OK;
}

/* Takes a node out of the beam; frees it, and then its ancestors, while they are out of the beam and
 * have no children left (the root stays). */
void node_drop(trie *tr, int32_t index) {
  tr->nodes[index].alive = 0;
  while (index > 0 && !tr->nodes[index].alive && tr->nodes[index].n_children == 0) {
    int32_t parent = tr->nodes[index].parent;
    table_remove(tr, index);
    tr->nodes[index].parent = -2;
    tr->free_list[tr->n_free++] = index;
    tr->nodes[parent].n_children--;
    index = parent;
  }
}
