/* A student's binary search tree, as a class would write it: six nodes, a
 * leaf delete, a delete that orphans a child, a string builder grown by
 * realloc, a recursive checksum with a buffer on the stack, one leak.  The
 * viewer's browser tests and the budget tests read its trace.
 *
 * Counted by hand (struct node is two pointers and an int: 24 bytes on
 * x86-64 and aarch64), in the order they happen:
 *   1  malloc(40) at line 91, the title, never freed: the 40-byte leak
 *   2  libc's stdout buffer at the first puts, never freed (4096 B when
 *      stdout is a pipe or a file, 1024 on a terminal)
 *   3-8  six nodes, malloc(24) at line 34, keys 50 30 70 20 40 60:
 *        heap peak after the sixth, 40 + 4096 + 144 = 4280 B
 *   free at line 53: the leaf 20; free at line 53: 70, which still
 *        points to 60, so 60 is orphaned (never freed: a direct leak)
 *   9  malloc(8) at line 99, the string builder
 *   10 realloc to 16 at line 64 ("in order:"), 11 realloc to 32
 *      (" 50"): each ends the previous buffer
 *   checksum(text, 1) recurses to level 6: 6 frames of checksum on the
 *        stack at once, each with char scratch[128], the deepest stack
 *   free at line 104: the builder; free at line 53: 30, 40, 50
 * Totals, as Valgrind counts: 11 allocations (10 of the program's own,
 * 240 B requested: 144 + 40 + 8 + 16 + 32), 8 frees (5 at line 53, 1 at
 * line 104, 2 inside the reallocs); live at exit: 3 blocks, the title
 * (40 B), node 60 (24 B) and the stdout buffer.
 * The tests check these line numbers: keep the lines where they are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *left, *right; int key; };
struct builder { char *text; size_t len, cap; };

static struct node *new_node(int key) {
  struct node *n = malloc(sizeof *n);
  n->left = n->right = NULL;
  n->key = key;
  return n;
}

static struct node *insert(struct node *root, int key) {
  if (root == NULL) return new_node(key);
  if (key < root->key) root->left = insert(root->left, key);
  else root->right = insert(root->right, key);
  return root;
}

static struct node **find(struct node **link, int key) {
  while (*link != NULL && (*link)->key != key) link = key < (*link)->key ? &(*link)->left : &(*link)->right;
  return link;
}

/* The bug under study: the node is unlinked and freed, its children are not relinked. */
static void delete_node(struct node **link) { struct node *gone = *link; *link = NULL; free(gone); }

static void free_tree(struct node *n) {
  if (n == NULL) return;
  free_tree(n->left);
  free_tree(n->right);
  delete_node(&n);
}

static void append(struct builder *b, const char *s) {
  size_t n = strlen(s);
  if (b->len + n + 1 > b->cap) { while (b->len + n + 1 > b->cap) b->cap *= 2; b->text = realloc(b->text, b->cap); }
  memcpy(b->text + b->len, s, n + 1);
  b->len += n;
}

static void in_order(const struct node *n, struct builder *b) {
  char num[16];
  if (n == NULL) return;
  in_order(n->left, b);
  snprintf(num, sizeof num, " %d", n->key);
  append(b, num);
  in_order(n->right, b);
}

static unsigned checksum(const char *text, int level) {
  char scratch[128];
  unsigned sum = 0;
  snprintf(scratch, sizeof scratch, "%d:%s", level, text);
  for (const char *p = scratch; *p != '\0'; p++) sum = sum * 31u + (unsigned char)*p;
  if (level < 6) sum ^= checksum(text, level + 1);
  return sum;
}

int main(void) {
  static const int keys[] = { 50, 30, 70, 20, 40, 60 };
  struct node *root = NULL;
  struct builder b;
  char *title = malloc(40);                                 /* the leak */
  snprintf(title, 40, "a tree of %d keys", 6);
  puts(title);
  for (int i = 0; i < 6; i++) root = insert(root, keys[i]);
  delete_node(find(&root, 20));                             /* a leaf */
  delete_node(find(&root, 70));                             /* orphans 60 */
  b.len = 0;
  b.cap = 8;
  b.text = malloc(b.cap);                                   /* the builder */
  b.text[0] = '\0';
  append(&b, "in order:");
  in_order(root, &b);
  printf("%s, checksum %u\n", b.text, checksum(b.text, 1));
  free(b.text);
  free_tree(root);
  return 0;
}
