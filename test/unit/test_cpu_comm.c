/* test_cpu_comm.c — multi-rank test of the CPU backend's MPI communication and of the
 * bootstrap: every collective against values computed locally, sub-teams, P2P rings with
 * and without coalescing, timeouts that name the missing peer instead of hanging, and each
 * collective kind's and Dispatch's refusals of bad operands.
 * Run as `mpiexec -np 4 test_cpu_comm` (any size >= 1 works; the singleton skips peers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "runner/boot/boot.h"
#include "runner/cpu/cpu.h"
#include "runner/backend/convert.h"

static int checks, failures, me_rank;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        checks++;                                                                          \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", me_rank, __FILE__,       \
                    __LINE__, #cond);                                                      \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)
#define OK(call) CHECK((call) == 0, "%s", hir_diag_last_error(&e))

static hir_backend *be;
static hir_diag e = {0};
static int R, N;   /* world rank and size */

static hir_view vec(void *data, hir_dtype dt, int64_t n)
{
    hir_view v;
    hir_view_init(&v, data, dt, 1, &n);
    return v;
}

static int run(hir_collective *c)
{
    hir_work *w = NULL;
    if (be->ops->collective(be, be->ops->stream_main(be), c, &w, &e))
        return -1;
    return be->ops->wait(be, be->ops->stream_main(be), w, &e);
}

/* team = world ranks in reverse order, so team index != world rank */
static int team[64];
static int idx_of(int r) { return N - 1 - r; }

static void test_allgather(void)
{
    float in[6], out[64 * 6];
    for (int i = 0; i < 6; i++)
        in[i] = (float)(R * 100 + i);
    hir_view vi = vec(in, HIR_DT_FLOAT, 6), vo;
    /* output as [N*2, 3] */
    int64_t shp[2] = {2 * N, 3};
    hir_view_init(&vo, out, HIR_DT_FLOAT, 2, shp);
    hir_collective c = {HIR_COMM_ALLGATHER, HIR_BK_NCCL, team, N, idx_of(R), -1,
                        HIR_RED_SUM, &vi, &vo, 1, 0};
    OK(run(&c));
    for (int j = 0; j < N; j++)
        for (int i = 0; i < 6; i++)
            CHECK(out[j * 6 + i] == team[j] * 100 + i, "allgather [%d,%d] = %g", j, i,
                  out[j * 6 + i]);
    /* a non-contiguous output (every other element of a larger buffer) is unpacked */
    float big[64 * 12];
    memset(big, 0, sizeof big);
    hir_view vs = vec(big, HIR_DT_FLOAT, 6 * N);
    vs.stride[0] = 2;
    c.output = &vs;
    OK(run(&c));
    CHECK(big[2 * 7] == team[1 % N] * 100 + (7 % 6) || N == 1, "strided allgather %g", big[14]);
    CHECK(big[1] == 0, "strided allgather wrote a gap");
}

static void test_reduce_scatter_allreduce(void)
{
    int n = 4;
    float in[64 * 4], out[4];
    for (int i = 0; i < N * n; i++)
        in[i] = (float)(R + i);
    hir_view vi = vec(in, HIR_DT_FLOAT, N * n), vo = vec(out, HIR_DT_FLOAT, n);
    hir_collective c = {HIR_COMM_REDUCESCATTER, HIR_BK_NCCL, team, N, idx_of(R), -1,
                        HIR_RED_SUM, &vi, &vo, 2, 0};
    OK(run(&c));
    int sum_r = N * (N - 1) / 2;
    for (int i = 0; i < n; i++)
        CHECK(out[i] == sum_r + N * (idx_of(R) * n + i), "reducescatter [%d] = %g", i, out[i]);

    /* bf16 allreduce travels as f32: 1/3 summed N times rounds once */
    uint16_t bin[5], bout[5];
    for (int i = 0; i < 5; i++)
        bin[i] = hir_f32_to_bf16(i == 0 ? 1.0f / 3 : (float)(R + i));
    hir_view vbi = vec(bin, HIR_DT_BFLOAT, 5), vbo = vec(bout, HIR_DT_BFLOAT, 5);
    hir_collective a = {HIR_COMM_ALLREDUCE, HIR_BK_NCCL, team, N, idx_of(R), -1,
                        HIR_RED_SUM, &vbi, &vbo, 3, 0};
    OK(run(&a));
    CHECK(bout[0] == hir_f64_to_bf16(N * (double)hir_bf16_to_f32(bin[0])), "bf16 allreduce %g",
          hir_bf16_to_f32(bout[0]));
    for (int i = 1; i < 5; i++)
        CHECK(hir_bf16_to_f32(bout[i]) == sum_r + N * i, "bf16 allreduce [%d] = %g", i,
              hir_bf16_to_f32(bout[i]));
    /* max propagates a NaN from one rank; fmax ignores it */
    float x[2] = {(float)R, R == N - 1 ? NAN : (float)R}, y[2];
    hir_view vx = vec(x, HIR_DT_FLOAT, 2), vy = vec(y, HIR_DT_FLOAT, 2);
    a.input = &vx;
    a.output = &vy;
    a.op = HIR_RED_MAX;
    OK(run(&a));
    CHECK(y[0] == N - 1 && isnan(y[1]), "max %g %g", y[0], y[1]);
    a.op = HIR_RED_FMAX;
    OK(run(&a));
    CHECK(y[1] == (N > 1 ? N - 2 : y[1]) || N == 1, "fmax %g", y[1]);
    /* int64 product */
    int64_t p = R + 1, q;
    hir_view vp = vec(&p, HIR_DT_INT64, 1), vq = vec(&q, HIR_DT_INT64, 1);
    a.input = &vp;
    a.output = &vq;
    a.op = HIR_RED_PROD;
    OK(run(&a));
    int64_t fact = 1;
    for (int i = 1; i <= N; i++)
        fact *= i;
    CHECK(q == fact, "prod %lld", (long long)q);
}

static void test_rooted(void)
{
    int root = 1 % N;   /* team index */
    float in[3], out[64 * 3];
    /* Broadcast */
    for (int i = 0; i < 3; i++) {
        in[i] = (float)(R * 10 + i);
        out[i] = -1;
    }
    hir_view vi = vec(in, HIR_DT_FLOAT, 3), vo = vec(out, HIR_DT_FLOAT, 3);
    hir_collective c = {HIR_COMM_BROADCAST, HIR_BK_NCCL, team, N, idx_of(R), root,
                        HIR_RED_SUM, &vi, &vo, 4, 0};
    OK(run(&c));
    for (int i = 0; i < 3; i++)
        CHECK(out[i] == team[root] * 10 + i, "broadcast [%d] = %g", i, out[i]);
    /* Gather to root index 2 */
    int groot = 2 % N;
    hir_view vg = vec(out, HIR_DT_FLOAT, 3 * N);
    hir_collective g = {HIR_COMM_GATHER, HIR_BK_NCCL, team, N, idx_of(R), groot,
                        HIR_RED_SUM, &vi, idx_of(R) == groot ? &vg : NULL, 5, 0};
    OK(run(&g));
    if (idx_of(R) == groot)
        for (int j = 0; j < N; j++)
            CHECK(out[j * 3 + 2] == team[j] * 10 + 2, "gather [%d] = %g", j, out[j * 3 + 2]);
    /* Scatter from root index 0 */
    float src[64 * 3], got[3];
    for (int i = 0; i < 3 * N; i++)
        src[i] = (float)(1000 + i);
    hir_view vsrc = vec(src, HIR_DT_FLOAT, 3 * N), vgot = vec(got, HIR_DT_FLOAT, 3);
    hir_collective s = {HIR_COMM_SCATTER, HIR_BK_NCCL, team, N, idx_of(R), 0,
                        HIR_RED_SUM, idx_of(R) == 0 ? &vsrc : NULL, &vgot, 6, 0};
    OK(run(&s));
    CHECK(got[1] == 1000 + idx_of(R) * 3 + 1, "scatter %g", got[1]);
    /* Reduce (sum) to root index N-1, bf16 */
    uint16_t b = hir_f32_to_bf16((float)(R + 1)), bo = 0;
    hir_view vb = vec(&b, HIR_DT_BFLOAT, 1), vbo = vec(&bo, HIR_DT_BFLOAT, 1);
    hir_collective r = {HIR_COMM_REDUCE, HIR_BK_NCCL, team, N, idx_of(R), N - 1,
                        HIR_RED_SUM, &vb, idx_of(R) == N - 1 ? &vbo : NULL, 7, 0};
    OK(run(&r));
    if (idx_of(R) == N - 1)
        CHECK(hir_bf16_to_f32(bo) == N * (N + 1) / 2, "reduce %g", hir_bf16_to_f32(bo));
}

static void test_subteam_and_sendrecv(void)
{
    if (N < 4)
        return;
    /* only ranks 0 and 2 take part; 1 and 3 skip (and never create the communicator) */
    int sub[2] = {2, 0};
    if (R == 0 || R == 2) {
        double v = R + 0.5, o;
        hir_view vv = vec(&v, HIR_DT_DOUBLE, 1), vo = vec(&o, HIR_DT_DOUBLE, 1);
        hir_collective c = {HIR_COMM_ALLREDUCE, HIR_BK_NCCL, sub, 2, R == 2 ? 0 : 1, -1,
                            HIR_RED_SUM, &vv, &vo, 8, 0};
        OK(run(&c));
        CHECK(o == 3.0, "subteam allreduce %g", o);
    }
    /* SendRecv 1 -> 3 (root index 0 is the sender) */
    int pair[2] = {1, 3};
    if (R == 1 || R == 3) {
        int32_t d[4] = {R, R, R, R}, o[4] = {0};
        hir_view vd = vec(d, HIR_DT_INT32, 4), vo = vec(o, HIR_DT_INT32, 4);
        hir_collective c = {HIR_COMM_SENDRECV, HIR_BK_NCCL, pair, 2, R == 1 ? 0 : 1, 0,
                            HIR_RED_SUM, R == 1 ? &vd : NULL, R == 3 ? &vo : NULL, 9, 0};
        OK(run(&c));
        if (R == 3)
            CHECK(o[3] == 1, "sendrecv got %d", o[3]);
    }
}

static void test_p2p(void)
{
    int next = (R + 1) % N, prev = (R + N - 1) % N;
    float s[8], r[8];
    for (int i = 0; i < 8; i++) {
        s[i] = (float)(R * 8 + i);
        r[i] = -1;
    }
    hir_view vs = vec(s, HIR_DT_FLOAT, 8), vr = vec(r, HIR_DT_FLOAT, 8);
    /* ring without a group: send, recv, then wait both (posting never blocks) */
    hir_p2p ps = {1, next, HIR_BK_CUDA, vs, 10}, pr = {0, prev, HIR_BK_CUDA, vr, 11};
    hir_p2p list[2] = {ps, pr};
    if (N > 1) {
        OK(be->ops->share_handles(be, list, 2, &e));
        hir_work *w1, *w2;
        OK(be->ops->p2p_post(be, NULL, &ps, &w1, &e));
        OK(be->ops->p2p_post(be, NULL, &pr, &w2, &e));
        OK(be->ops->wait(be, NULL, w2, &e));
        OK(be->ops->wait(be, NULL, w1, &e));
        CHECK(r[5] == prev * 8 + 5, "ring recv %g", r[5]);
    } else {
        CHECK(be->ops->share_handles(be, list, 2, &e) == -1 &&
                  strstr(hir_diag_last_error(&e), "send to self not supported"), "%s", hir_diag_last_error(&e));
    }
    /* coalesced: send to next and prev, receive from both, into strided / bf16 buffers */
    uint16_t bs[4], br1[8], br2[4];
    for (int i = 0; i < 4; i++)
        bs[i] = hir_f32_to_bf16((float)(R + i));
    memset(br1, 0, sizeof br1);
    hir_view vbs = vec(bs, HIR_DT_BFLOAT, 4), vb1 = vec(br1, HIR_DT_BFLOAT, 4),
             vb2 = vec(br2, HIR_DT_BFLOAT, 4);
    vb1.stride[0] = 2;
    hir_p2p g[4] = {{1, next, HIR_BK_NCCL, vbs, 12}, {1, prev, HIR_BK_NCCL, vbs, 13},
                    {0, prev, HIR_BK_NCCL, vb1, 14}, {0, next, HIR_BK_NCCL, vb2, 15}};
    hir_work *w = NULL, *none = (hir_work *)1;
    OK(be->ops->group_begin(be, &e));
    for (int i = 0; i < 4; i++) {
        OK(be->ops->p2p_post(be, NULL, &g[i], &none, &e));
        CHECK(none == NULL, "posted in a group but got a work");
    }
    OK(be->ops->group_end(be, NULL, &w, &e));
    OK(be->ops->wait(be, NULL, w, &e));
    /* prev sent to its next (= me) first, and its send to its prev goes to me only if N == 2 */
    CHECK(hir_bf16_to_f32(br1[2 * 3]) == prev + 3, "group recv from prev %g",
          hir_bf16_to_f32(br1[6]));
    CHECK(br1[1] == 0, "strided recv wrote a gap");
    if (N != 2)
        CHECK(hir_bf16_to_f32(br2[1]) == next + 1, "group recv from next %g",
              hir_bf16_to_f32(br2[1]));
}

/* AllToAll over the reversed team: part j of member i's input lands in part i of member j's
 * output (team positions, not world ranks) */
static void test_alltoall(void)
{
    float in[64 * 2], out[64 * 2];
    int me = idx_of(R);
    for (int j = 0; j < N; j++)
        for (int k = 0; k < 2; k++)
            in[j * 2 + k] = (float)(me * 1000 + j * 10 + k);
    hir_view vi = vec(in, HIR_DT_FLOAT, 2 * N), vo = vec(out, HIR_DT_FLOAT, 2 * N);
    hir_collective c = {HIR_COMM_ALLTOALL, HIR_BK_NCCL, team, N, me, -1, HIR_RED_SUM, &vi, &vo, 7, 0};
    OK(run(&c));
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 2; k++)
            CHECK(out[i * 2 + k] == (float)(i * 1000 + me * 10 + k), "out[%d] = %g", i * 2 + k,
                  out[i * 2 + k]);
    /* parts of unequal size are refused */
    hir_view odd = vec(in, HIR_DT_FLOAT, 2 * N + 1), oddo = vec(out, HIR_DT_FLOAT, 2 * N + 1);
    hir_collective bad = c;
    bad.input = &odd;
    bad.output = &oddo;
    if (N > 1)
        CHECK(run(&bad) != 0 && strstr(hir_diag_last_error(&e), "divisible"), "odd AllToAll: %s", hir_diag_last_error(&e));
}

/* MoE Dispatch then Combine: rank r holds T = 3 + r tokens; token t of rank r goes to expert
 * (r + 2t) % E, E = 2N; received tokens come by sender rank, each sender's sorted by expert */
static void test_moe(void)
{
    int64_t T = 3 + R, H = 2, E = 2 * N;
    float x[64][2];
    int64_t idx[64];
    float w[64];
    for (int64_t t = 0; t < T; t++) {
        x[t][0] = (float)(R * 100 + t);
        x[t][1] = (float)-(R * 100 + t);
        idx[t] = (R + 2 * t) % E;
        w[t] = (float)t / 8;
    }
    hir_moe_dispatch d;
    memset(&d, 0, sizeof d);
    int64_t xs[2] = {T, H}, cs[2] = {T, 1};
    hir_view_init(&d.x, x, HIR_DT_FLOAT, 2, xs);
    hir_view_init(&d.topk_idx, idx, HIR_DT_INT64, 2, cs);
    hir_view_init(&d.topk_weights, w, HIR_DT_FLOAT, 2, cs);
    d.num_experts = E;
    hir_moe_routed r;
    OK(be->ops->model->moe_dispatch(be, be->ops->stream_main(be), &d, &r, &e));
    /* what rank R must receive, computed here */
    int64_t R_want = 0;
    for (int s = 0; s < N; s++) {
        for (int64_t ex = 0; ex < E; ex++)
            for (int64_t t = 0; t < 3 + s; t++)
                if ((s + 2 * t) % E == ex && ex / 2 == R) {
                    CHECK(R_want < r.x.shape[0], "fewer tokens than expected");
                    if (R_want >= r.x.shape[0])
                        continue;
                    const float *got = (const float *)r.x.data + R_want * H;
                    CHECK(got[0] == (float)(s * 100 + t) && got[1] == -(float)(s * 100 + t),
                          "token %lld: %g %g", (long long)R_want, got[0], got[1]);
                    CHECK(((int64_t *)r.src_idx.data)[R_want] == t, "src_idx");
                    CHECK(((int64_t *)r.topk_idx.data)[R_want] == ex, "topk_idx");
                    CHECK(((float *)r.topk_weights.data)[R_want] == (float)t / 8, "weights");
                    R_want++;
                }
    }
    CHECK(r.x.shape[0] == R_want, "received %lld tokens, expected %lld",
          (long long)r.x.shape[0], (long long)R_want);
    float back[64][2];
    memset(back, 0, sizeof back);
    hir_moe_combine c;
    memset(&c, 0, sizeof c);
    c.x = r.x;
    c.src_idx = r.src_idx;
    c.send_counts = r.send_counts;
    c.recv_counts = r.recv_counts;
    hir_view_init(&c.out, back, HIR_DT_FLOAT, 2, xs);
    OK(be->ops->model->moe_combine(be, be->ops->stream_main(be), &c, &e));
    CHECK(!memcmp(back, x, sizeof(float) * (size_t)(T * H)), "Combine did not return the tokens");
    hir_view *vs[6] = {&r.x, &r.topk_idx, &r.topk_weights, &r.src_idx, &r.send_counts,
                       &r.recv_counts};
    for (int i = 0; i < 6; i++)
        be->ops->free(be, vs[i]->data);
    /* an expert id out of range is refused on the rank that holds it */
    idx[0] = E;
    CHECK(be->ops->model->moe_dispatch(be, be->ops->stream_main(be), &d, &r, &e) != 0 &&
          strstr(hir_diag_last_error(&e), "not an expert id"), "bad expert id: %s", hir_diag_last_error(&e));
}

/* A collective refused where it is posted (nothing reaches MPI): the message holds `want`. */
static void refused(hir_collective *c, const char *want, int line)
{
    hir_work *w = NULL;
    int rc = be->ops->collective(be, be->ops->stream_main(be), c, &w, &e);
    CHECK(rc != 0 && strstr(hir_diag_last_error(&e), want), "line %d: %s (expected '%s')", line,
          rc ? hir_diag_last_error(&e) : "accepted", want);
    if (!rc)
        be->ops->wait(be, be->ops->stream_main(be), w, &e);
}
#define REFUSED(c, want) refused((c), (want), __LINE__)

/* The checks every collective kind shares, on the ranks' own (nothing is exchanged). */
static void test_collective_checks(void)
{
    float a[4] = {1, 2, 3, 4}, b[4];
    uint8_t f8[4] = {0};
    int me = idx_of(R);
    hir_view v4 = vec(a, HIR_DT_FLOAT, 4), o4 = vec(b, HIR_DT_FLOAT, 4), o3 = vec(b, HIR_DT_FLOAT, 3);
    hir_view v8 = vec(f8, HIR_DT_E4M3, 4);
    hir_collective c = {HIR_COMM_BROADCAST, HIR_BK_NCCL, team, N, me, N, HIR_RED_SUM, &v4, &o4,
                        30, 0};
    REFUSED(&c, "Broadcast: root index");
    c.root_index = 0;
    c.my_index = N;
    REFUSED(&c, "Broadcast: this rank's team index");
    c.my_index = me;
    c.input = c.output = NULL;
    REFUSED(&c, "Broadcast: neither input nor output given");
    c.input = c.output = &v8;
    REFUSED(&c, "Broadcast: dtype __e4m3 cannot be communicated");
    c.kind = HIR_COMM_ALLREDUCE;
    c.input = &v4;
    c.output = &o4;
    c.op = (hir_reduce_op)99;
    REFUSED(&c, "Allreduce: reduction op 99 unknown");
    /* a team of one copies (counts must agree) or, with one buffer, does nothing */
    int solo[1] = {R};
    hir_collective one = {HIR_COMM_ALLREDUCE, HIR_BK_NCCL, solo, 1, 0, -1, HIR_RED_SUM, &v4, &o3,
                          31, 0};
    REFUSED(&one, "team of one with 4 input and 3 output elements");
    one.output = NULL;
    OK(run(&one));
    CHECK(a[3] == 4, "a team of one with only an input changed it");
    /* a backend without the bootstrap runs teams of one only */
    hir_backend_config cfg = be->cfg;
    cfg.boot = NULL;
    hir_backend *alone;
    OK(hir_backend_cpu_create(&cfg, &alone, &e));
    int two[2] = {0, 1};
    hir_collective pair = {HIR_COMM_ALLREDUCE, HIR_BK_NCCL, two, 2, 0, -1, HIR_RED_SUM, &v4,
                           &o4, 32, 0};
    hir_work *w = NULL;
    CHECK(alone->ops->collective(alone, NULL, &pair, &w, &e) != 0 &&
              strstr(hir_diag_last_error(&e), "Allreduce: a team of 2 needs the MPI bootstrap"), "%s", hir_diag_last_error(&e));
    alone->ops->destroy(alone);
}

/* Each kind's own checks over the whole (reversed) team, whose communicator the tests above
 * made: every member is refused before anything is posted, so none waits for another. A
 * "huge" view of 2^31 elements (never touched) exceeds one MPI message. */
static void test_collective_refusals(void)
{
    if (N < 2)
        return;
    float a[4] = {1, 2, 3, 4}, b[64 * 4];
    int me = idx_of(R), root = me == 0;
    int64_t big = (int64_t)1 << 31;
    hir_view v4 = vec(a, HIR_DT_FLOAT, 4), o4 = vec(b, HIR_DT_FLOAT, 4), o3 = vec(b, HIR_DT_FLOAT, 3);
    hir_view on = vec(b, HIR_DT_FLOAT, 4 * N), huge = vec(b, HIR_DT_FLOAT, big);
    hir_view hugen = vec(b, HIR_DT_FLOAT, big * N);
    hir_collective c = {HIR_COMM_ALLGATHER, HIR_BK_NCCL, team, N, me, -1, HIR_RED_SUM, NULL, &on,
                        33, 0};
    REFUSED(&c, "Allgather: missing input");
    c.input = &v4;
    c.output = &o3;
    REFUSED(&c, "Allgather: output has 3 elements, expected");
    c.input = &huge;
    c.output = &hugen;
    REFUSED(&c, "Allgather: 2147483648 elements exceed one MPI message");

    c.kind = HIR_COMM_REDUCESCATTER;
    c.input = &v4;
    c.output = NULL;
    REFUSED(&c, "ReduceScatter: missing output");
    c.input = &o3;
    c.output = &v4;
    REFUSED(&c, "ReduceScatter: input has 3 elements, expected");
    c.input = &hugen;
    c.output = &huge;
    REFUSED(&c, "exceed one MPI message");

    c.kind = HIR_COMM_ALLREDUCE;
    c.input = NULL;
    c.output = &o4;
    REFUSED(&c, "Allreduce: missing input");
    c.input = &o3;
    c.output = &v4;
    REFUSED(&c, "Allreduce: input has 3 elements, output 4");
    c.input = c.output = &huge;
    REFUSED(&c, "Allreduce: 2147483648 elements exceed one MPI message");

    c.kind = HIR_COMM_BROADCAST;
    c.root_index = 0;
    c.input = root ? NULL : &v4;
    c.output = root ? &o4 : NULL;
    REFUSED(&c, root ? "Broadcast: missing input on the root" : "Broadcast: missing output");
    c.input = c.output = &huge;
    REFUSED(&c, "Broadcast: 2147483648 elements exceed one MPI message");

    c.kind = HIR_COMM_GATHER;
    c.input = NULL;
    c.output = &on;
    REFUSED(&c, "Gather: missing input");
    c.input = root ? &v4 : NULL;
    c.output = root ? NULL : &on;
    REFUSED(&c, root ? "Gather: missing output on the root" : "Gather: missing input");
    c.input = root ? &v4 : &huge;
    c.output = root ? &o3 : NULL;
    REFUSED(&c, root ? "Gather: root output has 3 elements, expected" : "exceed one MPI message");

    c.kind = HIR_COMM_SCATTER;
    c.input = &on;
    c.output = NULL;
    REFUSED(&c, "Scatter: missing output");
    c.input = NULL;
    c.output = root ? &v4 : &huge;
    REFUSED(&c, root ? "Scatter: missing input on the root" : "exceed one MPI message");
    c.input = &o3;
    c.output = root ? &v4 : NULL;
    REFUSED(&c, root ? "Scatter: root input has 3 elements, expected" : "Scatter: missing output");

    c.kind = HIR_COMM_REDUCE;
    c.input = NULL;
    c.output = &o4;
    REFUSED(&c, "Reduce: missing input");
    c.input = root ? &v4 : &huge;
    c.output = NULL;
    REFUSED(&c, root ? "Reduce: missing output on the root" : "exceed one MPI message");
    c.input = root ? &v4 : NULL;
    c.output = root ? &o3 : &o4;
    REFUSED(&c, root ? "Reduce: root output has 3 elements, input 4" : "Reduce: missing input");

    c.kind = HIR_COMM_ALLTOALL;
    c.input = NULL;
    c.output = &on;
    REFUSED(&c, "AllToAll: missing input");
    c.input = c.output = &hugen;
    REFUSED(&c, "exceed one MPI message");

    c.kind = HIR_COMM_COUNT;
    c.input = &v4;
    c.output = &o4;
    REFUSED(&c, "collective kind 9 unknown");
    if (N > 2) {
        c.kind = HIR_COMM_SENDRECV;
        c.root_index = 0;
        REFUSED(&c, "SendRecv: team of");
    }
}

/* SendRecv's own refusals on the pair {1, 3} (its communicator made by the subteam test), and
 * a Reduce whose root reduces in place (input and output one buffer). */
static void test_sendrecv_refusals_reduce_in_place(void)
{
    int64_t big = (int64_t)1 << 31;
    float b[4];
    hir_view huge = vec(b, HIR_DT_FLOAT, big);
    int pair[2] = {1, 3};
    if (N >= 4 && (R == 1 || R == 3)) {
        hir_collective c = {HIR_COMM_SENDRECV, HIR_BK_NCCL, pair, 2, R == 1 ? 0 : 1, 0,
                            HIR_RED_SUM, NULL, NULL, 34, 0};
        hir_view v = vec(b, HIR_DT_FLOAT, 4);
        c.output = R == 1 ? &v : NULL;
        c.input = R == 3 ? &v : NULL;
        REFUSED(&c, R == 1 ? "SendRecv: missing input on the sender"
                           : "SendRecv: missing output on the receiver");
        c.input = c.output = &huge;
        REFUSED(&c, "SendRecv: 2147483648 elements exceed one MPI message");
    }
    double x[3];
    for (int i = 0; i < 3; i++)
        x[i] = R + i * 0.5;
    hir_view vx = vec(x, HIR_DT_DOUBLE, 3);
    int root = 1 % N;
    hir_collective r = {HIR_COMM_REDUCE, HIR_BK_NCCL, team, N, idx_of(R), root, HIR_RED_SUM,
                        &vx, idx_of(R) == root ? &vx : NULL, 35, 0};
    OK(run(&r));
    if (idx_of(R) == root)
        for (int i = 0; i < 3; i++)
            CHECK(x[i] == N * (N - 1) / 2.0 + N * i * 0.5, "in-place reduce [%d] = %g", i, x[i]);
}

/* Dispatch's refusals, each on every rank before the token counts are exchanged. */
static void test_moe_refusals(void)
{
    float x[4][2] = {{0}};
    int64_t idx[4] = {0, 1, 0, 1};
    float w[4] = {0};
    int64_t xs[2] = {4, 2}, cs[2] = {4, 1}, bad[2] = {3, 1}, wide[2] = {4, (int64_t)1 << 62};
    hir_moe_dispatch d;
    memset(&d, 0, sizeof d);
    hir_view_init(&d.x, x, HIR_DT_FLOAT, 1, xs);
    hir_view_init(&d.topk_idx, idx, HIR_DT_INT64, 2, cs);
    hir_view_init(&d.topk_weights, w, HIR_DT_FLOAT, 2, cs);
    d.num_experts = 2 * N;
    hir_moe_routed r;
    hir_stream *s = be->ops->stream_main(be);
#define MOE_REFUSED(want)                                                                  \
    CHECK(be->ops->model->moe_dispatch(be, s, &d, &r, &e) != 0 && strstr(hir_diag_last_error(&e), want),    \
          "%s (expected '%s')", hir_diag_last_error(&e), want)
    MOE_REFUSED("in must be [T, H], it has 1 axes");
    hir_view_init(&d.x, x, HIR_DT_FLOAT, 2, xs);
    hir_view_init(&d.topk_weights, w, HIR_DT_FLOAT, 2, bad);
    MOE_REFUSED("topk_weights must be [4, 1] (one value per token: top-1 routing)");
    hir_view_init(&d.topk_weights, w, HIR_DT_FLOAT, 2, cs);
    hir_view_init(&d.topk_idx, idx, HIR_DT_DOUBLE, 2, cs);
    MOE_REFUSED("topk_idx is double, expert ids must be integers");
    hir_view_init(&d.topk_idx, idx, HIR_DT_INT64, 2, cs);
    d.num_experts = 2 * N + 1;
    if (N > 1)
        MOE_REFUSED("is not a positive multiple of the job's");
    d.num_experts = 0;
    MOE_REFUSED("num_experts=0 is not a positive multiple of the job's");
    d.num_experts = 2 * N;
    hir_view_init(&d.x, x, HIR_DT_E2M1, 2, xs);
    MOE_REFUSED("dtype __e2m1 cannot be routed");
    /* a row of 2^62 floats (the strides set by hand: hir_view_init's would overflow) */
    d.x.shape[0] = wide[0];
    d.x.shape[1] = wide[1];
    d.x.stride[0] = d.x.stride[1] = 1;
    d.x.dtype = HIR_DT_FLOAT;
    MOE_REFUSED("a token row does not fit in memory");
#undef MOE_REFUSED
}

static void test_boot(hir_boot *b)
{
    OK(hir_boot_barrier(b, &e));
    CHECK(hir_boot_node_id(b, 0) == hir_boot_node_id(b, R), "one node expected");
    CHECK(hir_boot_local_size(b) == N && hir_boot_local_rank(b) == R, "local rank");
    char id[32] = {0};
    if (R == team[0])
        snprintf(id, sizeof id, "unique-id-from-%d", R);
    OK(hir_boot_team_bcast(b, team, N, 0, id, sizeof id, &e));
    char want[32];
    snprintf(want, sizeof want, "unique-id-from-%d", team[0]);
    CHECK(!strcmp(id, want), "bcast got '%s'", id);
    if (N > 1) {
        int peer = R ^ 1;
        if (peer < N) {
            long mine = 1000 + R, theirs = 0;
            OK(hir_boot_exchange(b, peer, 5, &mine, &theirs, sizeof mine, &e));
            CHECK(theirs == 1000 + peer, "exchange got %ld", theirs);
        }
    }
}

/* Node indices from MPI_COMM_TYPE_SHARED (every rank of this test shares one node), and the
 * rule of simulated nodes: n divides the ranks, blocks of consecutive ranks. Run last: the
 * simulation stays in effect (the CPU backend ignores nodes). */
static void test_nodes(hir_boot *b)
{
    CHECK(hir_boot_node_count(b) == 1 && !hir_boot_nodes_simulated(b), "one real node");
    for (int r = 0; r < N; r++)
        CHECK(hir_boot_node(b, r) == 0 && hir_boot_node_id(b, r) == 0, "rank %d on node 0", r);
    CHECK(hir_boot_node(b, N) == -1 && hir_boot_node(b, -1) == -1, "rank outside the world");
    CHECK(hir_boot_node_local_rank(b) == R && hir_boot_node_local_size(b) == N, "node rank");
    CHECK(hir_boot_simulate_nodes(b, 0, &e) < 0 && strstr(hir_diag_last_error(&e), "needs 1 to"), "n=0: %s", hir_diag_last_error(&e));
    CHECK(hir_boot_simulate_nodes(b, N + 1, &e) < 0 && strstr(hir_diag_last_error(&e), "needs 1 to"),
          "n=N+1: %s", hir_diag_last_error(&e));
    if (N == 4) {
        CHECK(hir_boot_simulate_nodes(b, 3, &e) < 0 && strstr(hir_diag_last_error(&e), "(4 % 3 = 1)"),
              "n=3: %s", hir_diag_last_error(&e));
        CHECK(hir_boot_node_count(b) == 1, "a refused simulation changed nothing");
        OK(hir_boot_simulate_nodes(b, 2, &e));
        CHECK(hir_boot_node_count(b) == 2 && hir_boot_nodes_simulated(b), "two nodes");
        for (int r = 0; r < N; r++)
            CHECK(hir_boot_node(b, r) == r / 2, "rank %d on node %d", r, hir_boot_node(b, r));
        CHECK(hir_boot_node_local_rank(b) == R % 2 && hir_boot_node_local_size(b) == 2,
              "simulated local rank %d of %d", hir_boot_node_local_rank(b),
              hir_boot_node_local_size(b));
        /* the real position, which picks the GPU, is unchanged */
        CHECK(hir_boot_local_rank(b) == R && hir_boot_local_size(b) == N, "real local rank");
        CHECK(hir_boot_node_id(b, 3) == 0, "the real node of rank 3");
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_timeouts(hir_boot *b)
{
    /* rank 0 waits for a message rank 1 never sends */
    hir_backend_config cfg = be->cfg;
    cfg.timeout = 1.0;
    hir_backend *quick;
    OK(hir_backend_cpu_create(&cfg, &quick, &e));
    if (R == 0 && N > 1) {
        float r[2];
        hir_p2p p = {0, 1, HIR_BK_NCCL, vec(r, HIR_DT_FLOAT, 2), 20};
        hir_work *w;
        OK(quick->ops->p2p_post(quick, NULL, &p, &w, &e));
        double t0 = now();
        int rc = quick->ops->wait(quick, NULL, w, &e);
        double dt = now() - t0;
        CHECK(rc == -1, "wait on a silent peer succeeded");
        CHECK(strstr(hir_diag_last_error(&e), "P2P recv from rank 1") && strstr(hir_diag_last_error(&e), "peer rank 1"), "%s", hir_diag_last_error(&e));
        CHECK((e.last ? e.last->peer : -1) == 1, "(e.last ? e.last->peer : -1) = %d", (e.last ? e.last->peer : -1));
        CHECK(dt < 2.5, "timeout took %.2f s", dt);
    }
    /* the bootstrap's exchange names its peer too */
    if (R == 0 && N > 2) {
        hir_boot_set_timeout(b, 0.5);
        int x = 0, y;
        CHECK(hir_boot_exchange(b, 2, 77, &x, &y, sizeof x, &e) == -1, "exchange succeeded");
        CHECK(strstr(hir_diag_last_error(&e), "rank 2") != NULL, "%s", hir_diag_last_error(&e));
        hir_boot_set_timeout(b, 10);
    }
    /* a collective with a member that does not come: team {0, 1} but 1 stays away */
    if (N > 1 && R == 0) {
        int t[2] = {0, 1};
        float v = 1, o;
        hir_view vv = vec(&v, HIR_DT_FLOAT, 1), vo = vec(&o, HIR_DT_FLOAT, 1);
        hir_collective c = {HIR_COMM_ALLREDUCE, HIR_BK_NCCL, t, 2, 0, -1, HIR_RED_SUM,
                            &vv, &vo, 21, 0};
        hir_work *w;
        CHECK(quick->ops->collective(quick, NULL, &c, &w, &e) == -1, "collective without peer");
        CHECK(strstr(hir_diag_last_error(&e), "creating team communicator") && strstr(hir_diag_last_error(&e), "peer rank 1"), "%s",
              hir_diag_last_error(&e));
    }
    OK(hir_boot_barrier(b, &e));
    /* quick's world communicator is freed collectively only after everyone is done */
    quick->ops->destroy(quick);
}

int main(int argc, char **argv)
{
    hir_boot *b;
    if (hir_boot_init(&argc, &argv, 20, &b, &e)) {
        fprintf(stderr, "boot: %s\n", hir_diag_last_error(&e));
        return 1;
    }
    R = me_rank = hir_boot_rank(b);
    N = hir_boot_size(b);
    for (int i = 0; i < N; i++)
        team[i] = N - 1 - i;
    hir_backend_config cfg = {.boot = b, .rank = R, .size = N, .timeout = 10,
                              .p2p_protocol = HIR_P2P_GET};
    if (hir_backend_cpu_create(&cfg, &be, &e)) {
        fprintf(stderr, "rank %d: backend: %s\n", R, hir_diag_last_error(&e));
        hir_boot_abort(b, 1);
    }
    test_boot(b);
    test_allgather();
    test_reduce_scatter_allreduce();
    test_rooted();
    test_subteam_and_sendrecv();
    test_p2p();
    test_alltoall();
    test_collective_checks();
    test_collective_refusals();
    test_sendrecv_refusals_reduce_in_place();
    if (N <= 16)
        test_moe();
    test_moe_refusals();
    test_timeouts(b);
    test_nodes(b);
    be->ops->destroy(be);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (R == 0)
        printf("test_cpu_comm: %d ranks, %d checks on rank 0, %d failures in total\n", N, checks,
               total);
    hir_boot_fini(b);
    return total ? 1 : 0;
}
