/* job.c — one rank's share of a hir-run job, as a row of phases over one job record
 * (job_internal.h): load and verify the program (load.c), choose the backends, refuse what
 * cannot run here and make the interpreter (setup.c), make the inputs (inputs.c), run it
 * --iters times or as a benchmark (run.c), fetch, agree on and save the outputs (outputs.c),
 * compare them with a reference run (compare.c); job_end releases what the phases made. */
#include <stdio.h>
#include <string.h>

#include "runner/boot/boot.h"
#include "runner/job/job_internal.h"

void hir_run_options_init(hir_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->num_streams = HIR_INTERP_DEFAULT_STREAMS;
    o->timeout = 300;
    o->inputs = HIR_INPUTS_GENERATED;
    o->data = HIR_DATA_RANDOM;
    o->iters = 1;
    o->check_vectors = 2;
    o->progress_after = 2.0;
    o->out = stdout;
}

/* ---------------------------------------------------------------- the job */

/* Release in order: the interpreter first (it ends communication still in flight on the input
 * buffers), then inputs, then, when every rank got here the same way, peer memory (CUDA IPC),
 * then the backends. A failure past the device choice gets the rank prefix. */
static hir_run_status job_end(job *j, hir_run_status st, hir_diag *e)
{
    hir_bench_result_free(&j->bres);
    job_watch_stop(j->it, &j->wd);
    job_outputs_free(&j->out);
    hir_interp_destroy(j->it);
    if (j->be)
        job_inputs_free(&j->in, j->be);
    if (j->it && (st == HIR_RUN_OK || st == HIR_RUN_CHECK_FAILED) &&
        j->be->ops->release_peers(j->be, e))
        st = HIR_RUN_FAILED;
    if (j->cpu && j->cpu != j->be)
        j->cpu->ops->destroy(j->cpu);
    if (j->be)
        j->be->ops->destroy(j->be);
    for (hir_diag_entry *x = e->first; x && j->located && st == HIR_RUN_FAILED; x = x->next)
        if (!x->printed && x->sev == HIR_ERROR && !x->origin && strncmp(x->msg, "rank ", 5))
            hir_diag_set_origin(x, "rank %d", j->rank);
    if (j->located && st == HIR_RUN_FAILED && e->fallback[0] &&
        strncmp(e->fallback, "rank ", 5)) {     /* an error kept without memory */
        char m[sizeof e->fallback];     /* "rank N: " and the message, cut to fit */
        int k = snprintf(m, sizeof m, "rank %d: ", j->rank);
        snprintf(m + k, sizeof m - k, "%.*s", (int)(sizeof m - 1 - k), e->fallback);
        memcpy(e->fallback, m, sizeof m);
    }
    job_verbose_finish(&j->vlog, st, j->boot, e->out);
    /* printed before the programs go (the entries point into their sources): a failure by
     * every rank that has one, a refusal by rank 0 alone (every rank reached it) */
    if (st == HIR_RUN_FAILED || (st == HIR_RUN_REFUSED && j->rank == 0)) {
        if (j->o->out)
            fflush(j->o->out);           /* the report first, as when the tool printed it */
        hir_diag_flush(e);
    }
    else
        hir_diag_discard(e);
    job_loaded_free(&j->main);
    job_loaded_free(&j->ref);
    return st;
}

hir_run_status hir_run_job(const hir_run_options *o, hir_boot *boot, hir_diag *e)
{
    double t[HIR_RUN_PHASES + 1];   /* t[p]: when phase p began; t[PHASES]: the end */
    t[0] = job_now_s();
    job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    j.boot = boot;
    j.rank = hir_boot_rank(boot);
    j.size = hir_boot_size(boot);
    hir_run_status st;
    if ((st = job_load(&j, e)) || (st = job_backends(&j, e)) || (st = job_refusals(&j, e)) ||
        (st = job_interp(&j, e)))
        return job_end(&j, st, e);
    j.vi = (vary){.it = j.it, .be = j.be, .in = &j.in, .p = j.main.p};
    t[HIR_RUN_PHASE_INPUTS] = job_now_s();
    if (job_make_inputs(j.it, j.main.p, j.be, o, j.main.p, j.rank, &j.in, e))
        return job_end(&j, HIR_RUN_FAILED, e);
    t[HIR_RUN_PHASE_RUNS] = job_now_s();
    if (job_run(&j, e))
        return job_end(&j, HIR_RUN_FAILED, e);
    t[HIR_RUN_PHASE_OUTPUTS] = job_now_s();
    /* From here on a rank that has finished waits for the others at the job's own exchanges
     * (gathering outputs, the check). A peer may still be inside a statement whose wait has the
     * same --timeout: wait longer than it, so that the peer reports the statement that stuck
     * (and ends the job) before this rank gives up on a mere exchange. */
    hir_boot_set_timeout(boot, 2 * hir_boot_timeout(boot) + 1);
    if ((st = job_outputs(&j, e)))
        return job_end(&j, st, e);
    t[HIR_RUN_PHASE_CHECK] = job_now_s();
    st = job_compare(&j, e);
    t[HIR_RUN_PHASES] = job_now_s();
    st = job_bench_json(&j, st, e);
    if (st == HIR_RUN_OK && o->report) {
        *o->report = (hir_run_report){.backend = j.dev->name, .is_host = j.is_cpu,
                                      .outputs = j.out.n, .checked = o->check ? j.out.n : 0};
        for (int p = 0; p < HIR_RUN_PHASES; p++)
            o->report->phase_s[p] = t[p + 1] - t[p];
    }
    return job_end(&j, st, e);
}
