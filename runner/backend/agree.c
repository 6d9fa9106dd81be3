/* agree.c — a collective's signature, its comparison across the team, and the cache of
 * signatures already agreed (agree.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/backend/agree.h"
#include "support/support.h"

static const char *const sig_field[HIR_SIG_N] = {"the kind", "the team", "root", "elements",
                                                  "dtype", NULL};
_Static_assert(HIR_SIG_WHERE == HIR_SIG_N - 1, "the place comes last");

/* The buffer whose element count every member has in common: the input where members each
 * give one part, else the output. */
static const hir_view *coll_unit(const hir_collective *c)
{
    int is_root = c->my_index == c->root_index;
    switch (c->kind) {
    case HIR_COMM_ALLGATHER: case HIR_COMM_GATHER: case HIR_COMM_REDUCE:
    case HIR_COMM_ALLTOALL:
        return c->input;
    case HIR_COMM_BROADCAST: return c->output ? c->output : c->input;
    case HIR_COMM_SENDRECV: return is_root ? c->input : c->output;
    default: return c->output;
    }
}

void hir_coll_signature(const hir_collective *c, int64_t sig[HIR_SIG_N])
{
    const hir_view *u = coll_unit(c);
    sig[HIR_SIG_KIND] = c->kind;
    sig[HIR_SIG_TEAM] = (int64_t)hir_fnv1a(c->team, sizeof *c->team * (size_t)c->team_size,
                                           HIR_FNV1A_INIT);
    sig[HIR_SIG_ROOT] = hir_comm_type_has_root(c->kind) && c->root_index >= 0 &&
                                c->root_index < c->team_size
                            ? c->team[c->root_index] : -1;
    sig[HIR_SIG_COUNT] = u ? hir_view_numel(u) : -1;
    sig[HIR_SIG_DTYPE] = u ? (int64_t)u->dtype : -1;
    sig[HIR_SIG_WHERE] = c->where;
}

static void sig_text(char *b, size_t n, int field, int64_t v)
{
    if (field == HIR_SIG_KIND)
        snprintf(b, n, "%s", v >= 0 && v < HIR_COMM_COUNT ? hir_comm_type_name((hir_comm_type)v)
                                                          : "?");
    else if (field == HIR_SIG_DTYPE)
        snprintf(b, n, "dtype %s", v >= 0 && v < HIR_DT_COUNT ? hir_dtype_name((hir_dtype)v)
                                                              : "(none)");
    else if (field == HIR_SIG_TEAM)
        snprintf(b, n, "team hash %016llx", (unsigned long long)v);
    else if (field == HIR_SIG_COUNT)
        snprintf(b, n, "%lld elements", (long long)v);
    else
        snprintf(b, n, "root %lld", (long long)v);
}

int hir_coll_sig_compare(const hir_collective *c, const int64_t *all, hir_diag *e)
{
    for (int j = 1; j < c->team_size; j++)
        for (int f = 0; f < HIR_SIG_WHERE; f++) {
            int64_t a = all[f], b = all[j * HIR_SIG_N + f];
            if (a == b)
                continue;
            char ta[80], tb[80];
            sig_text(ta, sizeof ta, f, a);
            sig_text(tb, sizeof tb, f, b);
            return hir_fail(e, "the team disagrees on %s: rank %d says %s, rank %d says %s "
                               "(every member must evaluate it the same)", sig_field[f],
                               c->team[0], ta, c->team[j], tb);
        }
    return 0;
}

int hir_p2p_header_compare(int sender, int receiver, int64_t send_dtype, int64_t send_count,
                           int64_t recv_dtype, int64_t recv_count, int peer, hir_diag *e)
{
    if (send_dtype == recv_dtype && send_count == recv_count)
        return 0;
    int sok = send_dtype >= 0 && send_dtype < HIR_DT_COUNT;
    int rok = recv_dtype >= 0 && recv_dtype < HIR_DT_COUNT;
    int64_t ssz = sok ? (int64_t)hir_dtype_size((hir_dtype)send_dtype) : 0;
    int64_t rsz = rok ? (int64_t)hir_dtype_size((hir_dtype)recv_dtype) : 0;
    return hir_fail_peer(e, peer, "P2P from rank %d to rank %d: rank %d sends %lld elements of "
                         "%s (%lld bytes), rank %d receives into %lld elements of %s (%lld "
                         "bytes); a send and its receive must have the same size and dtype",
                         sender, receiver, sender, (long long)send_count,
                         sok ? hir_dtype_name((hir_dtype)send_dtype) : "?",
                         (long long)(send_count * ssz), receiver, (long long)recv_count,
                         rok ? hir_dtype_name((hir_dtype)recv_dtype) : "?",
                         (long long)(recv_count * rsz));
}

int hir_coll_sig_same_place(const hir_collective *c, const int64_t *all)
{
    for (int j = 1; j < c->team_size; j++)
        if (all[j * HIR_SIG_N + HIR_SIG_WHERE] != all[HIR_SIG_WHERE])
            return 0;
    return 1;
}

typedef struct hir_sig_entry {
    uintptr_t stmt;
    int64_t sig[HIR_SIG_N];
} hir_sig_entry;

static hir_sig_entry *sig_find(const hir_sig_cache *k, uintptr_t stmt)
{
    for (int i = 0; i < k->n; i++)
        if (k->v[i].stmt == stmt)
            return &k->v[i];
    return NULL;
}

int hir_sig_cache_hit(const hir_sig_cache *k, uintptr_t stmt, const int64_t sig[HIR_SIG_N])
{
    const hir_sig_entry *x = sig_find(k, stmt);
    return x && !memcmp(x->sig, sig, sizeof x->sig);
}

int hir_sig_cache_put(hir_sig_cache *k, uintptr_t stmt, const int64_t sig[HIR_SIG_N])
{
    hir_sig_entry *x = sig_find(k, stmt);
    if (!x) {
        if (k->n == k->cap) {
            int cap = k->cap ? 2 * k->cap : 16;
            hir_sig_entry *v = realloc(k->v, sizeof *v * (size_t)cap);
            if (!v)
                return -1;
            k->v = v;
            k->cap = cap;
        }
        x = &k->v[k->n++];
        x->stmt = stmt;
    }
    memcpy(x->sig, sig, sizeof x->sig);
    return 0;
}

void hir_sig_cache_free(hir_sig_cache *k)
{
    free(k->v);
    memset(k, 0, sizeof *k);
}
