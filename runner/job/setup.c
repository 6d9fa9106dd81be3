/* setup.c — the phases between loading and the inputs: the device's backend and the
 * reference's (the registry), the options a run needs (kernels, --verbose), the refusals before
 * anything runs (NCCL without NCCL, CUDA-IPC exchanges ordered for the other protocol), and the
 * interpreter with the guard's hooks and the resource limits checked. */
#include <stdlib.h>
#include <string.h>

#include "runner/boot/boot.h"
#include "runner/job/job_internal.h"

/* Visitor: stops at the first Communication or P2PCommunication with backend=NCCL. */
static bool find_nccl(hir_stmt *s, int depth, void *ctx)
{
    if ((s->op != HIR_OP_COMMUNICATION && s->op != HIR_OP_P2P) || s->u.comm->backend != HIR_BK_NCCL)
        return true;
    *(hir_stmt **)ctx = s;
    return false;
}

/* Collectives of overlapping teams that wait for each other in a cycle (team_order.c) are
 * refused on every rank alike before the backend is made: nothing has touched a device yet,
 * and the program, not the machine, is at fault, so this comes before "no device here". A
 * backend without HIR_OFFER_ANY_TEAM_ORDER runs a rank's collectives one after another, so
 * for it a cyclic order of posts is already a cycle; on the others only the Waits are. */
static hir_run_status team_order(const job *j, const hir_backend_entry *dev, hir_diag *e)
{
    if (j->size < 2)
        return HIR_RUN_OK;
    hir_diag d;
    hir_diag_init(&d, NULL);
    int rc = hir_check_team_order(j->main.p, j->o, j->size, dev->title,
                                  !(dev->offers & HIR_OFFER_ANY_TEAM_ORDER), &d);
    hir_run_status st = rc > 0 ? HIR_RUN_REFUSED : rc < 0 ? HIR_RUN_FAILED : HIR_RUN_OK;
    if (rc && d.last) {
        hir_diag_set_origin(d.first, "rank %d", j->rank);
        hir_diag_move(e, &d);
    } else if (rc) {                                /* not kept (no memory): its text */
        hir_fail(e, "rank %d: %s", j->rank, hir_diag_last_error(&d));
    }
    hir_diag_fini(&d);
    return st;
}

/* The backend named by --device (or the registry's default), refused unless this build has it
 * and it can run here, and (team_order) unless it can run the program's order of
 * collectives. */
static hir_run_status choose_device(const job *j, const hir_backend_entry **dev, hir_diag *e)
{
    char why[160];
    const hir_run_options *o = j->o;
    int rank = j->rank;
    hir_run_status st;
    *dev = o->device ? hir_registry_find(o->device) : hir_registry_default();
    if (!*dev)
        return job_refuse(e, rank, "--device=%s: expected %s", o->device,
                          hir_registry_names(why, sizeof why));
    if ((st = team_order(j, *dev, e)))
        return st;
    if (!hir_registry_available(*dev, why, sizeof why))
        return job_refuse(e, rank, "--device=%s: %s", (*dev)->name, why);
    return HIR_RUN_OK;
}

/* The statement hooks of the guard room: the watchdog (when there is one) hears of every
 * statement, then HIR_FAULT=rank:line:kind may fire (fault.c). */

static int guard_hooks(hir_interp *it, hir_watchdog *wd, hir_diag *e)
{
    if (wd && hir_interp_add_hook(it, &(hir_interp_hook){.before = hir_watchdog_before,
                                                         .ctx = wd}, e))
        return -1;
    return hir_interp_add_hook(it, &(hir_interp_hook){.before = hir_fault_before_stmt}, e);
}

/* The watchdog stops (and leaves the interpreter's hooks) before work that may take long
 * legitimately, and at the end. */
void job_watch_stop(hir_interp *it, hir_watchdog **wd)
{
    if (it && *wd)
        hir_interp_remove_hook(it, &(hir_interp_hook){.before = hir_watchdog_before, .ctx = *wd});
    hir_watchdog_stop(*wd);
    *wd = NULL;
}

static int load_kernels(const hir_run_options *o, hir_backend *be, hir_diag *e)
{
    for (int i = 0; i < o->nkernels; i++) {
        const char *spec = o->kernels[i], *eq = strchr(spec, '=');
        if (!eq || eq == spec)
            return hir_fail(e, "--kernel %s: expected GROUP=FILE", spec);
        if (!be->ops->kernels) {
            const hir_backend_entry *k = hir_registry_offering(HIR_OFFER_KERNELS);
            if (k && hir_registry_built(k))
                return hir_fail(e, "--kernel needs --device=%s", k->name);
            return hir_fail(e, "--kernel needs the %s backend, which this build lacks",
                                 k ? k->title : "a kernel-running");
        }
        if (be->ops->kernels->load(be, atoi(spec), eq + 1, e))
            return -1;
    }
    return 0;
}

int hir_gemm_tune_check(const char *v, hir_diag *e)
{
    if (!v || !strcmp(v, "off") || !strcmp(v, "on") || strchr(v, '/') || strchr(v, '.'))
        return 0;
    return hir_fail(e, "--gemm-tune is off, on or a cache file (a path with a '/' or a "
                            "'.', e.g. ./%s): '%s'", *v ? v : "gemm-tune.txt", v), -1;
}

/* --gemm-tune=FILE: rank 0 warns about the lines of the file that were ignored (a warning in
 * the job's diag, printed at once). */
static void gemm_tune_warn(job *j, hir_diag *e)
{
    hir_device_info d;
    const char *t = j->o->gemm_tune;
    if (j->rank || !t || !strcmp(t, "off") || !strcmp(t, "on") || !j->be->ops->profile ||
        j->be->ops->profile->device_info(j->be, &d, NULL) || !d.gemm_tune_ignored)
        return;
    hir_diag_emit(e, HIR_WARNING, (hir_loc){0}, "--gemm-tune: %d malformed line%s of %s ignored "
                  "(the first: %s)", d.gemm_tune_ignored, d.gemm_tune_ignored == 1 ? "" : "s", t,
                  d.gemm_tune_note);
    hir_diag_flush(e);
}

/* --bench or --verbose on a GPU that several ranks of this node share (each takes GPU
 * local rank mod the GPUs it sees, as the CUDA backend does): rank 0 notes, once, that
 * without MPS they are time-sliced (shared_gpu.c). --quiet leaves it out. */
static void shared_gpu_note(job *j, hir_diag *e)
{
    const hir_run_options *o = j->o;
    if (j->rank || j->is_cpu || o->quiet || !(o->bench || o->verbose))
        return;
    int ngpu = hir_registry_device_count(j->dev), local = hir_boot_local_size(j->boot);
    int per = ngpu > 0 ? (local + ngpu - 1) / ngpu : 0;
    char note[600];
    if (hir_shared_gpu_note(per, per > 1 && hir_mps_detect(), note, sizeof note)) {
        hir_diag_emit(e, HIR_NOTE, (hir_loc){0}, "%s", note);
        hir_diag_flush(e);
    }
}

/* The backends: the device's, and the reference's own when --check needs one that defers the
 * GEMMs the randomized check covers; then what a run needs from the options. */
hir_run_status job_backends(job *j, hir_diag *e)
{
    const hir_run_options *o = j->o;
    hir_run_status st = choose_device(j, &j->dev, e);
    if (st)
        return st;
    j->located = 1;
    hir_backend_config bc = {.boot = j->boot, .rank = j->rank, .size = j->size,
                             .device = hir_boot_local_rank(j->boot),
                             .timeout = o->timeout,
                             .p2p_protocol = o->p2p_protocol,
                             .p2p_host_staged = o->p2p_host_staged,
                             .gemm_tune = o->gemm_tune,
                             .comm_priority = o->comm_priority,
                             .ipc_copy_overlap = o->ipc_copy_overlap};
    j->refb = hir_registry_reference();
    j->is_cpu = j->dev == j->refb;
    if (hir_registry_create(j->dev, &bc, &j->be, e))
        return HIR_RUN_FAILED;
    gemm_tune_warn(j, e);
    shared_gpu_note(j, e);
    hir_backend_config rc_cfg = bc;
    rc_cfg.defer_gemm_flops = o->check_mode == HIR_CHECK_FULL ? 0
                              : o->check_mode == HIR_CHECK_RANDOMIZED ? 1 : 1073741824.0;
    if (o->check && (!j->is_cpu || rc_cfg.defer_gemm_flops > 0) &&
        hir_registry_create(j->refb, &rc_cfg, &j->cpu, e))
        return HIR_RUN_FAILED;
    if (!j->cpu)
        j->cpu = j->be;
    if (o->vary_inputs && (o->inputs != HIR_INPUTS_GENERATED || o->data != HIR_DATA_RANDOM))
        return job_refuse(e, j->rank, "--vary-inputs needs generated random inputs "
                          "(--inputs=random)%s%s", "", "");
    if (load_kernels(o, j->be, e))
        return HIR_RUN_FAILED;
    j->cfg.rank = j->rank;
    j->cfg.size = j->size;
    j->cfg.num_streams = o->num_streams;
    j->cfg.binds = o->binds;
    j->cfg.nbinds = o->nbinds;
    j->cfg.terms = o->terms;
    j->cfg.no_resolve = o->no_resolve;
    j->cfg.max_loop_work = o->max_loop_work;
    if (o->verbose) {
        j->vlog.f = j->size > 1 ? open_memstream(&j->vlog.buf, &j->vlog.len) : NULL;
        j->cfg.trace = j->vlog.f ? j->vlog.f : e->out;  /* one rank: straight to the diag's stream */
    }
    return HIR_RUN_OK;
}

/* Refusals before anything runs: NCCL transports on a backend without NCCL, and on a device
 * (which has no timeout of its own) CUDA-IPC exchanges ordered for the other protocol. */
hir_run_status job_refusals(job *j, hir_diag *e)
{
    const hir_run_options *o = j->o;
    hir_stmt *nccl = NULL;
    if (!(j->be->ops->caps & HIR_CAP_NCCL) &&
        !hir_block_walk(&j->main.p->body, 0, find_nccl, &nccl)) {
        char where[300];
        snprintf(where, sizeof where, "%s", o->program);
        if (nccl->loc.src) {
            int line, col;
            hir_source_linecol((hir_source *)nccl->loc.src, nccl->loc.begin, &line, &col);
            snprintf(where, sizeof where, "%s:%d:%d", nccl->loc.src->name, line, col);
        }
        char msg[800];
        snprintf(msg, sizeof msg, "%s: %s with backend=NCCL, but this build's %s backend has "
                 "no NCCL (configure with -DHIR_ENABLE_NCCL=ON and NCCL_HOME=DIR); only CUDA-IPC "
                 "transfers run on the GPU: lower the program with --backend=cuda or run it with "
                 "--device=%s", where, hir_ops[nccl->op].keyword, j->dev->title, j->refb->name);
        return job_refuse(e, j->rank, "%s%s", msg, "");
    }
    if (!j->is_cpu) {
        int fatal = 0;
        hir_check_p2p_order(j->main.p, o->p2p_protocol, j->rank == 0 ? e : NULL, &fatal);
        if (j->rank == 0)
            hir_diag_flush(e);               /* printed now, before the refusal it may cause */
        if (fatal)
            return job_refuse(e, j->rank, "%s: its CUDA-IPC exchanges are ordered for the other "
                              "P2P protocol%s", o->program, "");
    }
    return HIR_RUN_OK;
}

/* The interpreter, watched on a device, with the guard's hooks; extents from .npy shapes
 * bound, then the resource limits checked on every rank together. */
hir_run_status job_interp(job *j, hir_diag *e)
{
    /* On the GPU a blocked CUDA call has no timeout of its own: watch the run (watchdog.c) */
    if (!j->is_cpu)
        j->wd = hir_watchdog_start(j->o->timeout + 30, j->rank);
    if (hir_interp_create(j->main.p, j->be, &j->cfg, &j->it, e))
        return HIR_RUN_REFUSED;
    if (guard_hooks(j->it, j->wd, e))
        return HIR_RUN_FAILED;
    if (j->o->inputs == HIR_INPUTS_DIR &&
        job_bind_dir_extents(j->it, j->main.p, j->o, j->main.p, j->rank, e))
        return HIR_RUN_FAILED;
    int agree = job_agree_extents(j, e);
    if (agree)
        return agree > 0 ? HIR_RUN_REFUSED : HIR_RUN_FAILED;
    int limits = hir_limits_check(j->it, j->main.p, j->be, j->boot, e);
    return limits > 0 ? HIR_RUN_REFUSED : limits < 0 ? HIR_RUN_FAILED : HIR_RUN_OK;
}
