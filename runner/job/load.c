/* load.c — the first phase of a job: read the program (and the --check reference), agree on
 * its text across ranks, take the program out of a log, parse and verify it, and check its
 * meshes and node tests against the world (agree.c). Every rank reaches the same outcome. */
#include <stdlib.h>
#include <string.h>

#include "parser/parser.h"
#include "runner/boot/boot.h"
#include "runner/job/job_internal.h"

void job_loaded_free(loaded *l)
{
    hir_program_free(l->p);
    if (l->in.text)
        hir_source_fini(&l->src);
    hir_log_fini(&l->log);
    hir_input_fini(&l->in);
    memset(l, 0, sizeof *l);
}

/* Read, compare across ranks, parse, verify and check the meshes. Uniform outcomes only. */
static hir_run_status load_program(const char *path, const char *role, int container,
                                   hir_boot *boot, const hir_run_options *o,
                                   loaded *l, hir_diag *e)
{
    int rank = hir_boot_rank(boot), size = hir_boot_size(boot);
    char msg[512];
    memset(l, 0, sizeof *l);
    uint64_t hash = 0;
    if (size > 1 && !strcmp(path, "-"))   /* only one rank has it: the same refusal on all */
        return job_refuse(e, rank, "the %s is read from standard input ('-'), which only one "
                          "of the ranks has: give it as a file%s", role, "");
    int rd = hir_input_read(&l->in, path, 0, msg, sizeof msg);
    if (!rd)
        hash = hir_check_text_hash(l->in.text, l->in.len);
    else
        hash = 0x4e4f46494c45ULL ^ (uint64_t)rank;   /* unreadable: differs from everyone */
    char what[300];
    snprintf(what, sizeof what, "%s %s", role, path);
    hir_diag he;
    hir_diag_init(&he, NULL);
    int differ = hir_check_same_program(boot, hash, what, &he);
    if (differ && !rd)
        hir_fail(e, "rank %d: %s", rank, hir_diag_last_error(&he));
    hir_diag_fini(&he);
    if (differ) {
        if (rd)
            return job_refuse(e, rank, "%s%s", msg, "");
        return HIR_RUN_REFUSED;
    }
    if (rd)
        return job_refuse(e, rank, "%s%s", msg, "");
    hir_run_status st;
    /* a log: the one program in it, or the --container'th */
    if (hir_log_find(l->in.text, l->in.len, false, &l->log))
        return job_refuse(e, rank, "out of memory (while reading %s)%s", path, "");
    int n = l->log.n;
    if (container > n || (!container && n > 1)) {
        if (!container)
            snprintf(msg, sizeof msg, "%.300s holds %d %%HostIrContainer programs: choose one with "
                     "--container=N", path, n);
        else if (n)
            snprintf(msg, sizeof msg, "--container=%d, but %.300s holds %d %%HostIrContainer "
                     "program%s", container, path, n, n == 1 ? "" : "s");
        else
            snprintf(msg, sizeof msg, "--container=%d, but %.300s holds no %%HostIrContainer "
                     "program", container, path);
        return job_refuse(e, rank, "%s%s", msg, "");
    }
    if (n)
        hir_log_source(&l->log, container ? container - 1 : 0, path, l->in.text, l->in.len, &l->src);
    else
        hir_source_init(&l->src, path, l->in.text, l->in.len);
    /* parse and verify diagnostics: rank 0 prints them where the job's diag prints (its
     * stream or sink), unprefixed, as hir-opt does */
    hir_diag d;
    hir_diag_init(&d, rank == 0 ? e->out : NULL);
    if (rank == 0 && e->sink)
        hir_diag_set_sink(&d, e->sink, e->sink_ctx);
    d.color = o->color;
    int bad = hir_parse(&l->src, &d, &l->p);
    const char *doing = "parsing";
    if (!bad) {
        /* --bind takes effect before verification: a bound symbolic extent is defined */
        const char *bound[64];
        int nb = 0;
        for (int i = 0; i < o->nbinds && nb < 64; i++)
            bound[nb++] = o->binds[i].name;
        hir_verify_opts vo = {true, bound, nb};
        bad = hir_program_verify(l->p, &vo, &d);
        doing = "verifying";
    }
    hir_diag_flush(&d);
    int nerr = d.errors;
    hir_diag_fini(&d);
    if (bad == HIR_ENOMEM)
        return job_refuse(e, rank, "out of memory (while %s %s)", doing, path);
    if (bad || nerr) {
        snprintf(msg, sizeof msg, "%d error(s)", nerr);
        return job_refuse(e, rank, "%s is not a runnable program (%s)", path, msg);
    }
    hir_diag_init(&he, NULL);
    st = HIR_RUN_OK;
    if (hir_check_meshes(l->p, size, &he))
        st = job_refuse(e, rank, "%s: %s", path, hir_diag_last_error(&he));
    else if (hir_check_node_assignment(l->p, boot, &he)) {   /* located at the node test */
        if (he.last) {
            hir_diag_set_origin(he.last, "rank %d", rank);
            hir_diag_move(e, &he);
        } else {                                    /* not kept (no memory): its text */
            hir_fail(e, "rank %d: %s", rank, hir_diag_last_error(&he));
        }
        st = HIR_RUN_REFUSED;
    }
    hir_diag_fini(&he);
    return st;
}

/* Load and verify: the program (and the --check reference), each read, verified and agreed
 * on across ranks by load_program. */
hir_run_status job_load(job *j, hir_diag *e)
{
    const hir_run_options *o = j->o;
    hir_run_status st = load_program(o->program, "program", o->container, j->boot, o,
                                     &j->main, e);
    if (!st && o->check && o->check_ref)
        st = load_program(o->check_ref, "reference", 0, j->boot, o, &j->ref, e);
    return st;
}
