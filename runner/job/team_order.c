/* team_order.c — collectives of overlapping teams posted in a cyclic order (issue 31), found
 * before a backend that cannot run them is made (job.h hir_check_team_order).
 *
 * Every rank holds the same program, so each rank can tell what every rank will post: the
 * program is walked once per rank of the job, with `rank`, numberOfStreams, the --bind values
 * and the loop indices known, taking the branch of each IF and every trip of each FOR, and
 * every Communication of a team of two or more that the rank is in is listed in its order.
 * The k-th collective of team T on one member meets the k-th of T on every other member: that
 * pair (T, k) is a node, and each rank's order adds an edge from each of its collectives to
 * its next one. A backend that runs a rank's collectives one after another, each until its
 * whole team has joined, completes them exactly when these edges have no cycle. Every rank
 * computes the same graph, so every rank refuses the same program, before any device work.
 *
 * Where the walk cannot know what a rank posts (a condition or a loop bound that depends on
 * something only the run knows, a walk past HIR_TEAM_ORDER_STEPS statements) nothing is
 * refused: such a run is left to the backend's own checks and the watchdog. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/job/job_internal.h"

#define HIR_TEAM_ORDER_STEPS ((int64_t)1 << 22)   /* statements walked, all ranks together */

typedef struct post {            /* one collective as one rank posts it, or a Wait for one */
    const hir_stmt *s;
    int team;                    /* index into the distinct teams; -1: a Wait */
    int64_t of;                  /* a Wait: the post it waits for (index into v) */
    int64_t node;                /* (team, k), or a Wait's own: filled after the walk */
} post;

typedef struct bound {           /* a scalar the walk binds: a loop index or a ScalarDef */
    const hir_scalar *s;
    int64_t v;
    int known;                   /* 0: a ScalarDef whose value the walk cannot tell */
} bound;

typedef struct tw {
    const hir_program *p;
    const hir_run_options *o;
    int size, rank;
    int64_t steps;
    int unknown;                 /* 1: what some rank posts cannot be told */
    int oom;
    bound *b;
    int nb, capb;
    const hir_comm **teams;      /* distinct teams, by their first Communication */
    int nteams, capteams;
    post *v;                     /* every rank's posts, rank after rank */
    int64_t n, cap;
    int64_t *start;              /* size + 1 offsets into v */
    int chain;                   /* 1: a post waits for the one before it (the backend runs
                                  * them one after another); 0: posts never wait, a Wait does */
} tw;

static int lookup(void *ctx, const hir_scalar *s, int64_t *out)
{
    tw *w = ctx;
    for (int i = w->nb - 1; i >= 0; i--)
        if (w->b[i].s == s)
            return w->b[i].known ? (*out = w->b[i].v, 0) : -1;
    if (!s->name)
        return -1;
    if (s->kind == HIR_SC_NAMED && !strcmp(s->name, "rank"))
        return *out = w->rank, 0;
    if (s->kind == HIR_SC_NAMED && !strcmp(s->name, "numberOfStreams"))
        return *out = w->o->num_streams, 0;
    char nm[96];
    if (s->kind == HIR_SC_SYMBOL)
        snprintf(nm, sizeof nm, "%s%" PRId64, s->name, s->number);
    else
        snprintf(nm, sizeof nm, "%s", s->name);
    for (int i = 0; i < w->o->nbinds; i++)
        if (!strcmp(w->o->binds[i].name, nm))
            return *out = w->o->binds[i].value, 0;
    return -1;
}

static int eval(tw *w, const hir_scalar *s, int64_t *v)
{
    hir_scalar_env env = {lookup, w};
    if (!s || hir_scalar_eval(s, &env, v, NULL, 0))
        return w->unknown = 1, -1;
    return 0;
}

static int grow(void **v, int64_t *cap, int64_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    int64_t c = *cap ? 2 * *cap : 64;
    void *x = realloc(*v, (size_t)c * sz);
    if (!x)
        return -1;
    *v = x;
    *cap = c;
    return 0;
}

static int bind(tw *w, const hir_scalar *s, int64_t v, int known)
{
    int64_t cap = w->capb;
    if (grow((void **)&w->b, &cap, w->nb, sizeof *w->b))
        return w->oom = 1, -1;
    w->capb = (int)cap;
    w->b[w->nb++] = (bound){s, v, known};
    return 0;
}

/* 1 when the block (or a block inside it) holds a Communication: only those need walking */
static bool no_comm(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    (void)ctx;
    return s->op != HIR_OP_COMMUNICATION;
}

static int has_comm(const hir_stmt *s)
{
    hir_stmt *x = (hir_stmt *)s;
    return !hir_block_walk(&x->body, 0, no_comm, NULL) ||
           !hir_block_walk(&x->else_body, 0, no_comm, NULL);
}

static int team_of(tw *w, const hir_comm *c)
{
    for (int i = 0; i < w->nteams; i++)
        if (w->teams[i]->nteam == c->nteam &&
            !memcmp(w->teams[i]->team, c->team, sizeof *c->team * (size_t)c->nteam))
            return i;
    int64_t cap = w->capteams;
    if (grow((void **)&w->teams, &cap, w->nteams, sizeof *w->teams))
        return w->oom = 1, -1;
    w->capteams = (int)cap;
    w->teams[w->nteams] = c;
    return w->nteams++;
}

static void post_comm(tw *w, const hir_stmt *s)
{
    const hir_comm *c = s->u.comm;
    int member = 0;
    if (c->team_truncated || c->nteam < 2)
        return;
    for (int i = 0; i < c->nteam; i++) {
        if (c->team[i] < 0 || c->team[i] >= w->size)
            return;                              /* the statement refuses it at run time */
        member |= c->team[i] == w->rank;
    }
    int t = member ? team_of(w, c) : -1;
    if (t < 0 || grow((void **)&w->v, &w->cap, w->n, sizeof *w->v)) {
        w->oom |= member;
        return;
    }
    w->v[w->n++] = (post){s, t, -1, -1};
}

/* A Wait for a collective this rank posted (its latest post of that number not yet waited
 * for) holds the rank's later posts until that collective is complete. Waits for anything
 * else add nothing: fewer edges can only miss a cycle, never make one up. */
static void post_wait(tw *w, const hir_stmt *s)
{
    int64_t i = w->n;
    if (w->chain)
        return;
    while (--i >= w->start[w->rank])
        if (w->v[i].team >= 0 && w->v[i].s->u.comm->number == s->u.wait.number)
            break;
    for (int64_t j = i + 1; i >= w->start[w->rank] && j < w->n; j++)
        if (w->v[j].team < 0 && w->v[j].of == i)
            return;                              /* waited for already */
    if (i < w->start[w->rank] || grow((void **)&w->v, &w->cap, w->n, sizeof *w->v)) {
        w->oom |= i >= w->start[w->rank];
        return;
    }
    w->v[w->n++] = (post){s, -1, i, -1};
}

static void walk_block(tw *w, const hir_block *b);

static void walk_loop(tw *w, const hir_stmt *s, const hir_scalar *idx, int64_t a, int64_t z)
{
    int nb = w->nb;
    if (bind(w, idx, a, 1))
        return;
    for (int64_t i = a; i < z && !w->unknown && !w->oom; i++) {
        w->nb = nb + 1;                          /* the body's ScalarDefs made afresh */
        w->b[nb].v = i;
        walk_block(w, &s->body);
    }
    w->nb = nb;
}

static void walk_stmt(tw *w, const hir_stmt *s)
{
    int64_t a = 0, z = 0;
    if (++w->steps > HIR_TEAM_ORDER_STEPS) {
        w->unknown = 1;
        return;
    }
    if (s->op == HIR_OP_COMMUNICATION) {
        post_comm(w, s);
    } else if (s->op == HIR_OP_WAIT) {
        post_wait(w, s);
    } else if (s->op == HIR_OP_SCALAR_DEF && !s->u.sdef.out->def) {
        /* bound when it can be told; otherwise known as unknown, so that only a use of it
         * stops the walk */
        hir_scalar tmp = {.head.kind = HIR_VAL_SCALAR, .kind = HIR_SC_ANON,
                          .dtype = s->u.sdef.out->dtype, .def = s->u.sdef.def};
        hir_scalar_env env = {lookup, w};
        int known = !hir_scalar_eval(&tmp, &env, &a, NULL, 0);
        bind(w, s->u.sdef.out, a, known);
    } else if (!has_comm(s)) {
        return;
    } else if (s->op == HIR_OP_IF) {
        if (!eval(w, s->u.cond.pred, &a))
            walk_block(w, a ? &s->body : &s->else_body);
    } else if (s->op == HIR_OP_HOST_FOR) {
        if (!eval(w, s->u.hfor.start, &a) && !eval(w, s->u.hfor.stop, &z))
            walk_loop(w, s, s->u.hfor.index, a, z);
    } else if (s->op == HIR_OP_FOR) {
        const hir_iterdomain *id = s->u.kfor.id;
        const hir_scalar *x = hir_id_expanded(id) ? hir_id_expanded(id) : id->extent;
        if (!eval(w, x, &z) && (!hir_id_start(id) || !eval(w, hir_id_start(id), &a)) &&
            (!hir_id_stop(id) || !eval(w, hir_id_stop(id), &z)))
            walk_loop(w, s, s->u.kfor.index, a, z);
    } else {
        w->unknown = 1;                          /* a region this walk does not model */
    }
}

static void walk_block(tw *w, const hir_block *b)
{
    for (int i = 0; i < hir_block_size(b) && !w->unknown && !w->oom; i++)
        walk_stmt(w, hir_block_at(b, i));
}

/* ---------------------------------------------------------------- the graph */

/* Rank r cannot post b (node to) before a (node from) is complete: it posts a just before b
 * (chain), or waits for a (to: the Wait's node), or posts b after a Wait (from: its node); a
 * and b are NULL at a Wait's node. */
typedef struct edge {
    int64_t from, to;
    int r;
    const hir_stmt *a, *b;
} edge;

/* (team, k) of every post: k counts the team's earlier posts on the same rank */
static int64_t number_nodes(tw *w)
{
    int64_t *base = calloc((size_t)w->nteams + 1, sizeof *base);
    int64_t *k = calloc((size_t)w->nteams, sizeof *k);
    int64_t nodes = -1;
    if (base && k) {
        for (int r = 0; r < w->size; r++) {
            memset(k, 0, sizeof *k * (size_t)w->nteams);
            for (int64_t i = w->start[r]; i < w->start[r + 1]; i++)
                if (w->v[i].team >= 0 && ++k[w->v[i].team] > base[w->v[i].team + 1])
                    base[w->v[i].team + 1] = k[w->v[i].team];
        }
        for (int t = 0; t < w->nteams; t++)
            base[t + 1] += base[t];
        nodes = base[w->nteams];
        for (int r = 0; r < w->size; r++) {
            memset(k, 0, sizeof *k * (size_t)w->nteams);
            for (int64_t i = w->start[r]; i < w->start[r + 1]; i++)
                w->v[i].node = w->v[i].team < 0 ? nodes++
                                                : base[w->v[i].team] + k[w->v[i].team]++;
        }
    }
    free(base);
    free(k);
    return nodes;
}

/* Kahn's order over the edges: indeg[v] is left above 0 exactly for the nodes on or after a
 * cycle. 0: every node ordered, 1: some left, -1: out of memory. */
static int kahn(const edge *ed, int64_t ne, int64_t nodes, int64_t *indeg)
{
    int64_t *queue = malloc(sizeof(int64_t) * (size_t)nodes);
    int64_t *first = calloc((size_t)nodes + 1, sizeof(int64_t));
    int64_t *cur = calloc((size_t)nodes, sizeof(int64_t));
    int64_t *out = malloc(sizeof(int64_t) * (size_t)(ne ? ne : 1));
    int64_t qh = 0, qt = 0;
    int rc = -1;
    if (queue && first && cur && out) {
        for (int64_t i = 0; i < ne; i++)
            indeg[ed[i].to]++, first[ed[i].from + 1]++;
        for (int64_t v = 0; v < nodes; v++)
            first[v + 1] += first[v];
        for (int64_t i = 0; i < ne; i++)
            out[first[ed[i].from] + cur[ed[i].from]++] = i;
        for (int64_t v = 0; v < nodes; v++)
            if (!indeg[v])
                queue[qt++] = v;
        while (qh < qt)
            for (int64_t v = queue[qh++], j = first[v]; j < first[v + 1]; j++)
                if (!--indeg[ed[out[j]].to])
                    queue[qt++] = ed[out[j]].to;
        rc = qt < nodes;
    }
    free(queue);
    free(first);
    free(cur);
    free(out);
    return rc;
}

/* A cycle among the nodes Kahn left: each has an edge into it from another one left, so
 * following those back from any of them meets a node twice; the edges from there round to it
 * again are the cycle, put in cyc in posting order (at most maxc; *nc of them). -1: out of
 * memory, 0: no cycle, 1: one found. */
static int find_cycle(const edge *ed, int64_t ne, int64_t nodes, const edge **cyc, int *nc,
                      int maxc)
{
    int64_t *indeg = calloc((size_t)nodes, sizeof *indeg);
    const edge **into = calloc((size_t)nodes, sizeof *into);
    char *seen = calloc((size_t)nodes, 1);
    int rc = indeg && into && seen ? kahn(ed, ne, nodes, indeg) : -1;
    *nc = 0;
    if (rc == 1) {
        int64_t v = -1;
        for (int64_t i = 0; i < ne; i++)
            if (indeg[ed[i].from] && indeg[ed[i].to] && !into[ed[i].to])
                into[ed[i].to] = &ed[i];
        for (int64_t x = 0; x < nodes && v < 0; x++)
            if (indeg[x])
                v = x;
        while (!seen[v]) {
            seen[v] = 1;
            v = into[v]->from;
        }
        int64_t u = v;
        do {
            if (*nc < maxc)
                cyc[(*nc)++] = into[u];
            u = into[u]->from;
        } while (u != v);
        for (int i = 0; i < *nc / 2; i++) {
            const edge *t = cyc[i];
            cyc[i] = cyc[*nc - 1 - i];
            cyc[*nc - 1 - i] = t;
        }
    }
    free(indeg);
    free(into);
    free(seen);
    return rc;
}

/* ---------------------------------------------------------------- the check */

static void team_text(const hir_comm *c, char *b, size_t n)
{
    size_t k = (size_t)snprintf(b, n, "(");
    for (int i = 0; i < c->nteam && i < 8 && k < n; i++)
        k += (size_t)snprintf(b + k, n - k, "%s%" PRId64, i ? " " : "", c->team[i]);
    if (k < n)
        snprintf(b + k, n - k, "%s)", c->nteam > 8 ? " ..." : "");
}

static void stmt_text(const hir_stmt *s, char *b, size_t n)
{
    char t[96];
    team_text(s->u.comm, t, sizeof t);
    snprintf(b, n, "Communication %" PRId64 " (%s, team %s)", s->u.comm->number,
             hir_comm_type_name(s->u.comm->type), t);
}

/* One step of the cycle: rank r cannot post b before a is complete (waited: it waits for a) */
typedef struct step {
    int r, waited;
    const hir_stmt *a, *b;
} step;

/* The cycle's edges as steps from one collective to the next (the edges through a Wait's node
 * merged), from an edge that leaves a collective; at most max of them, their count returned. */
static int steps_of(const edge *const *cyc, int nc, step *st, int max)
{
    int at = 0, n = 0, waited = 0;
    const hir_stmt *a = NULL;
    while (at < nc && !cyc[at]->a)
        at++;
    for (int i = 0; i < nc && at < nc; i++) {
        const edge *x = cyc[(at + i) % nc];
        a = x->a ? x->a : a;
        waited |= !x->b || !x->a;
        if (!x->b)
            continue;
        if (n < max)
            st[n] = (step){x->r, waited, a, x->b};
        n++;
        waited = 0;
    }
    return n;
}

/* One error at the first collective of the cycle, naming each rank's step of it, and a note
 * at each other collective the cycle goes through. */
static void report(const edge *const *cyc, int nc, const char *title, int chain, hir_diag *e)
{
    char msg[2048], a[160], b[160];
    step st[6];
    size_t k = 0;
    int n = steps_of(cyc, nc, st, 6), shown = n < 6 ? n : 6;
    for (int i = 0; i < shown && k < sizeof msg; i++) {
        stmt_text(st[i].a, a, sizeof a);
        stmt_text(st[i].b, b, sizeof b);
        k += (size_t)snprintf(msg + k, sizeof msg - k, "%srank %d %s %s before%s %s",
                              i ? "; " : "", st[i].r, st[i].waited ? "waits for" : "posts", a,
                              st[i].waited ? " it posts" : "", b);
    }
    if (n > shown && k < sizeof msg)
        snprintf(msg + k, sizeof msg - k, "; and %d steps more", n - shown);
    stmt_text(st[0].a, a, sizeof a);
    hir_diag_entry *x;
    if (chain)
        x = hir_diag_emit(
            e, HIR_ERROR, st[0].a->loc,
            "%s: collectives of overlapping teams are posted in a cyclic order, which the %s "
            "backend cannot run: %s. Each waits for a member still inside its own earlier "
            "collective, since the %s backend runs a rank's collectives one after another in "
            "the order they are posted, each until its whole team has joined; post them in one "
            "order on every rank, or run with --device=cpu", a, title, msg, title);
    else
        x = hir_diag_emit(
            e, HIR_ERROR, st[0].a->loc,
            "%s: collectives of overlapping teams wait for each other in a cycle: %s. No rank "
            "gets past its Wait, since each collective completes only when its whole team has "
            "posted it; post every collective of the cycle before waiting for any of them, or "
            "post them in one order on every rank", a, msg);
    for (int i = 1; i < shown; i++) {
        stmt_text(st[i].a, a, sizeof a);
        stmt_text(st[i].b, b, sizeof b);
        hir_diag_note(e, x, st[i].a->loc, "%s: rank %d %s it before%s %s", a, st[i].r,
                      st[i].waited ? "waits for" : "posts", st[i].waited ? " it posts" : "", b);
    }
}

static int64_t rank_edges(const tw *w, int r, edge *ed, int64_t ne)
{
    const post *prev = NULL;
    int64_t held = -1;                           /* the rank's latest Wait */
    for (int64_t i = w->start[r]; i < w->start[r + 1]; i++) {
        const post *x = &w->v[i];
        if (x->team >= 0) {
            if (w->chain && prev)
                ed[ne++] = (edge){prev->node, x->node, r, prev->s, x->s};
            if (held >= 0)
                ed[ne++] = (edge){held, x->node, r, NULL, x->s};
            prev = x;
            continue;
        }
        ed[ne++] = (edge){w->v[x->of].node, x->node, r, w->v[x->of].s, NULL};
        if (held >= 0)
            ed[ne++] = (edge){held, x->node, r, NULL, NULL};
        held = x->node;
    }
    return ne;
}

static int graph_check(tw *w, const char *title, hir_diag *e)
{
    int64_t nodes = number_nodes(w), ne = 0;
    edge *ed = malloc(sizeof *ed * (size_t)(2 * w->n + 1));
    const edge **cyc = malloc(sizeof *cyc * (size_t)(nodes > 0 ? nodes : 1));
    int nc = 0, rc = -1;
    if (nodes >= 0 && ed && cyc) {
        for (int r = 0; r < w->size; r++)
            ne = rank_edges(w, r, ed, ne);
        rc = find_cycle(ed, ne, nodes, cyc, &nc, (int)(nodes < 1 << 30 ? nodes : 1 << 30));
        if (rc == 1)
            report(cyc, nc, title, w->chain, e);
    }
    if (rc < 0)
        hir_fail(e, "out of host memory (while checking the order of the collectives)");
    free(ed);
    free(cyc);
    return rc;
}

int hir_check_team_order(const hir_program *p, const hir_run_options *o, int size,
                         const char *title, int chain, hir_diag *e)
{
    tw w = {.p = p, .o = o, .size = size, .chain = chain};
    int rc = 0;
    w.start = calloc((size_t)size + 1, sizeof *w.start);
    if (!w.start)
        w.oom = 1;
    for (int r = 0; r < size && !w.unknown && !w.oom; r++) {
        w.rank = r;
        w.nb = 0;
        w.start[r] = w.n;
        walk_block(&w, &p->body);
        w.start[r + 1] = w.n;
    }
    if (w.oom)
        rc = hir_fail(e, "out of host memory (while checking the order of the collectives)");
    else if (!w.unknown && w.nteams > 0)
        rc = graph_check(&w, title, e);
    free(w.b);
    free(w.teams);
    free(w.v);
    free(w.start);
    return rc;
}
