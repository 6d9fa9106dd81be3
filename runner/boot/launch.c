/* launch.c — the local launcher behind `hir-run -np N` (boot.h): re-executes hir-run under
 * the system's mpirun or mpiexec. */
#define _XOPEN_SOURCE 700   /* nftw */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/boot/boot.h"
#include "support/diag.h"

/* ---------------------------------------------------------------- local launcher */

/* Why ranks are spawned this way: every MPI implementation ships a launcher that already
 * knows how to start processes, wire up PMI/PMIx, bind them and propagate signals and exit
 * codes. Re-executing ourselves under it gives `hir-run -np 4 prog.hir` the exact environment
 * of `mpirun -np 4 hir-run prog.hir`, with no home-made transport or process manager to get
 * wrong; the marker variable stops the children from launching again. */

int hir_launch_is_child(void)
{
    static const char *const vars[] = {HIR_LAUNCH_MARKER, "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
                                       "PMI_SIZE", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

static int find_on_path(const char *name, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        struct stat st;
        if (len > 0 && (size_t)snprintf(out, cap, "%.*s/%s", (int)len, path, name) < cap &&
            stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        path += len + (colon != NULL);
    }
    return -1;
}

/* 1 for Open MPI, 0 for anything else (MPICH/Hydra, Intel MPI), from `<launcher> --version`. */
static int launcher_is_openmpi(const char *launcher)
{
    int fd[2];
    if (pipe(fd))
        return 0;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return 0;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        execl(launcher, launcher, "--version", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[4096];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof buf - 1 && (k = read(fd[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)k;
    buf[n] = 0;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    return strstr(buf, "Open MPI") || strstr(buf, "OpenRTE") || strstr(buf, "Open RTE");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* Open MPI 4 makes its session directory <base>/ompi.<host>.<uid> with a check-then-mkdir that
 * two mpiruns starting at once can race ("mkdir ... File exists", orte_init fails), and removes
 * it when the last job leaves. Unless the user chose the base (OMPI_MCA_orte_tmpdir_base), each
 * hir-run -np gives its mpirun a base of its own under TMPDIR, removed when mpirun has ended.
 * "" when none was made (the default base is used). */
static void private_session_base(char *dir, size_t n)
{
    dir[0] = 0;
    if (getenv("OMPI_MCA_orte_tmpdir_base"))
        return;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if ((size_t)snprintf(dir, n, "%s/hir-ompi.XXXXXX", tmp) >= n || !mkdtemp(dir))
        dir[0] = 0;
}

int hir_launch_local(int np, int argc, char **argv, int *exit_code, hir_diag *e)
{
    *exit_code = 0;
    if (np <= 1 || hir_launch_is_child())
        return 1;
    char launcher[PATH_MAX];
    if (find_on_path("mpirun", launcher, sizeof launcher) &&
        find_on_path("mpiexec", launcher, sizeof launcher))
        return hir_fail(e, "-np %d: neither mpirun nor mpiexec is on PATH", np);
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0)
        self[len] = 0;
    else
        snprintf(self, sizeof self, "%s", argv[0]);
    int ompi = launcher_is_openmpi(launcher);
    char session[PATH_MAX] = "";

    char **args = calloc((size_t)argc + 11, sizeof *args);
    if (!args)
        return hir_fail(e, "hir_launch_local: out of memory");
    char npbuf[16];
    snprintf(npbuf, sizeof npbuf, "%d", np);
    int k = 0;
    args[k++] = launcher;
    if (ompi) {
        /* more ranks than cores is the normal case for a functional check on a workstation */
        args[k++] = "--oversubscribe";
        /* hir-run reports its own failures, rank by rank, before it exits 1 or aborts: Open
         * MPI's banners after them ("Primary job terminated normally, but 1 process returned a
         * non-zero exit code", "MPI_ABORT was invoked ...") only repeat that. The tool says
         * what --quiet hides when a rank ends without a report (another exit status, a signal). */
        args[k++] = "--quiet";
        if (geteuid() == 0)
            args[k++] = "--allow-run-as-root";
        private_session_base(session, sizeof session);
        if (session[0]) {
            args[k++] = "--mca";
            args[k++] = "orte_tmpdir_base";
            args[k++] = session;
        }
    }
    args[k++] = "-np";
    args[k++] = npbuf;
    args[k++] = self;
    bool operands = false;      /* past "--": every word is the program's, kept as it is */
    for (int i = 1; i < argc; i++) {
        if (operands || (operands = !strcmp(argv[i], "--"))) {
            args[k++] = argv[i];
            continue;
        }
        if (!strcmp(argv[i], "-np") || !strcmp(argv[i], "--np")) {
            i++;          /* and its value */
            continue;
        }
        if (!strncmp(argv[i], "-np=", 4) || !strncmp(argv[i], "--np=", 5))
            continue;
        args[k++] = argv[i];
    }
    args[k] = NULL;

    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        free(args);
        if (session[0])
            nftw(session, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        return hir_fail(e, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        /* mpirun ends with us, however we end (even SIGKILL): it gets SIGTERM and takes its
         * ranks down; the ranks also watch their own parent (the boot sentinel) */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
            _exit(127);
        setenv(HIR_LAUNCH_MARKER, "1", 1);
        /* the ranks' stderr reaches the terminal through mpirun, not as a terminal of their
         * own: tell them (hir-run --progress=auto) */
        if (isatty(2))
            setenv(HIR_LAUNCH_TTY, "1", 1);
        else
            unsetenv(HIR_LAUNCH_TTY);
        execv(launcher, args);
        char msg[4096 + 256];   /* launcher is a path of up to PATH_MAX */
        snprintf(msg, sizeof msg, "execv %s: %s", launcher, strerror(errno));
        hir_diag_write_fatal("hir", NULL, msg);
        _exit(127);
    }
    free(args);
    int st = 0, wrc;
    while ((wrc = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (session[0])
        nftw(session, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (wrc < 0)
        return hir_fail(e, "waitpid: %s", strerror(errno));
    if (WIFEXITED(st))
        *exit_code = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        *exit_code = 128 + WTERMSIG(st);
    else
        *exit_code = 1;
    return 0;
}
