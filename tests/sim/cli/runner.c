#define _POSIX_C_SOURCE 200809L
#include "runner.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

char *run_slurp(FILE *f, size_t *len)
{
    fflush(f);
    rewind(f);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); return NULL; }
            buf = nb;
        }
        size_t k = fread(buf + n, 1, 4096, f);
        n += k;
        if (k == 0) break;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

int run_cmd(char *const argv[], double timeout_s, run_out *o)
{
    memset(o, 0, sizeof *o);
    o->rc = -1;
    FILE *fo = tmpfile(), *fe = tmpfile();
    if (!fo || !fe) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(fileno(fo), 1);
        dup2(fileno(fe), 2);
        execv(argv[0], argv);
        _exit(127);
    }
    struct timespec ts = {0, 5 * 1000 * 1000};
    double waited = 0;
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0) return -1;
        if (waited > timeout_s) {
            o->timed_out = 1;
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        nanosleep(&ts, NULL);
        waited += 0.005;
    }
    if (WIFEXITED(status)) o->rc = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o->sig = WTERMSIG(status);
    o->out = run_slurp(fo, &o->out_len);
    o->err = run_slurp(fe, &o->err_len);
    fclose(fo);
    fclose(fe);
    if (!o->out || !o->err) return -1;
    return 0;
}

void run_free(run_out *o)
{
    free(o->out);
    free(o->err);
    o->out = o->err = NULL;
}
