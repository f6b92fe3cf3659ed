/* out_file.c: the one way ulysim and ulyharness write an output file (see
 * out_file.h for what each kind of thing at the path gets). Replacing by
 * rename is what keeps a dead run from leaving half a file under the final
 * name, but renaming over a device node or a FIFO would turn it into a
 * regular file, and over a symbolic link would cut the link: those are
 * written through instead. */
#define _XOPEN_SOURCE 700
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { K_NEW, K_REGULAR, K_IN_PLACE };

/* ---------------------------------------------------- the run's inputs */

/* The files this process has read, by device and inode (the same file
 * whatever name or link reached it), with the name it was read by, for the
 * message. Bounded: a fuzzer reading a fresh file per input must not grow
 * it without end. */
enum { INPUTS_MAX = 4096 };
typedef struct input_file {
    dev_t dev;
    ino_t ino;
    char *path;
} input_file;
static input_file *inputs;
static int n_inputs, cap_inputs;

void out_file_input_note(const char *path, const struct stat *st)
{
    struct stat own;
    if (!st) {
        if (!path || stat(path, &own) != 0) return;
        st = &own;
    }
    if (!S_ISREG(st->st_mode)) return;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino) return;
    if (n_inputs == cap_inputs) {
        if (cap_inputs >= INPUTS_MAX) return;
        const int cap = cap_inputs ? 2 * cap_inputs : 16;
        input_file *grown = realloc(inputs, (size_t)cap * sizeof *grown);
        if (!grown) return;
        inputs = grown;
        cap_inputs = cap;
    }
    char *copy_of = strdup(path ? path : "");
    if (!copy_of) return;
    inputs[n_inputs++] = (input_file){st->st_dev, st->st_ino, copy_of};
}

/* The name an input was read by, when st is one; NULL otherwise. */
static const char *input_named(const struct stat *st)
{
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino) return inputs[i].path;
    return NULL;
}

/* The reason into why (when given); returns rc. */
static int fail(char *why, size_t n, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why && n) vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return rc;
}

static int copy(char *dst, size_t n, const char *src)
{
    const size_t len = strlen(src);
    if (len >= n) return 1;
    memcpy(dst, src, len + 1);
    return 0;
}

/* The directory part of path into dir ("." when there is none). */
static int dir_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return copy(dir, n, ".");
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    if (len >= n) return 1;
    memcpy(dir, path, len);
    dir[len] = 0;
    return 0;
}

/* Follows a chain of symbolic links by hand, so that a dangling one gives
 * the path it names (realpath needs the target to exist). */
static int links_follow(const char *path, char *out, size_t n)
{
    char cur[4096], link[4096], dir[4096];
    if (copy(cur, sizeof cur, path)) return ENAMETOOLONG;
    for (int hop = 0; hop < 40; hop++) {
        struct stat ls;
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode)) return copy(out, n, cur) ? ENAMETOOLONG : 0;
        const ssize_t k = readlink(cur, link, sizeof link - 1);
        if (k < 0) return errno;
        link[k] = 0;
        if (link[0] == '/') {
            memcpy(cur, link, (size_t)k + 1);
            continue;
        }
        if (dir_of(cur, dir, sizeof dir)) return ENAMETOOLONG;
        const int w = snprintf(cur, sizeof cur, "%s/%s", dir, link);
        if (w < 0 || (size_t)w >= sizeof cur) return ENAMETOOLONG;
    }
    return ELOOP;
}

/* What is at path and where the bytes go (target); *mode_out: the
 * permission bits of a regular file there. 0, or 2 with the reason. */
static int classify(const char *path, int how, char *target, size_t tn, int *kind, mode_t *mode_out, char *why,
                    size_t n)
{
    static const char valid[] = "valid: a new or regular file in a writable directory";
    static const char valid_other[] = "valid: a path that is none of the run's inputs";
    if (!path || !path[0]) return fail(why, n, 2, "an empty output path (%s)", valid);
    struct stat st;
    *mode_out = 0;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return fail(why, n, 2, "%s: is a directory (%s)", path, valid);
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            if (how == OUT_FILE_BY_NAME)
                return fail(why, n, 2, "%s: is a %s, which this output cannot be written into (%s)", path,
                            S_ISFIFO(st.st_mode) ? "FIFO" : "character device", valid);
            *kind = K_IN_PLACE;
            return copy(target, tn, path) ? fail(why, n, 2, "%s: path too long", path) : 0;
        }
        if (!S_ISREG(st.st_mode))
            return fail(why, n, 2, "%s: is a %s; refused, writing into it would destroy its data (%s)", path,
                        S_ISBLK(st.st_mode) ? "block device" : "socket or other special file", valid);
        const char *in = input_named(&st);
        if (in && !strcmp(in, path))
            return fail(why, n, 2, "%s: is an input of this run; writing it would destroy that input (%s)", path,
                        valid_other);
        if (in)
            return fail(why, n, 2, "%s: is the same file as the input %s; writing it would destroy that input (%s)",
                        path, in, valid_other);
        *kind = K_REGULAR;
        *mode_out = st.st_mode & 07777;
        char real[PATH_MAX];
        if (!realpath(path, real) || copy(target, tn, real)) return fail(why, n, 2, "%s: path too long", path);
    } else if (errno == ENOENT) {
        const int e = links_follow(path, target, tn);
        if (e) return fail(why, n, 2, "%s: %s (%s)", path, strerror(e), valid);
        *kind = K_NEW;
    } else {
        return fail(why, n, 2, "%s: %s (%s)", path, strerror(errno), valid);
    }
    /* the temporary and the rename need the target's directory writable */
    char dir[4096];
    if (dir_of(target, dir, sizeof dir)) return fail(why, n, 2, "%s: path too long", path);
    if (stat(dir, &st) != 0) return fail(why, n, 2, "%s: directory %s: %s (%s)", path, dir, strerror(errno), valid);
    if (!S_ISDIR(st.st_mode)) return fail(why, n, 2, "%s: %s is not a directory (%s)", path, dir, valid);
    if (access(dir, W_OK | X_OK) != 0)
        return fail(why, n, 2, "%s: directory %s is not writable: %s (%s)", path, dir, strerror(errno), valid);
    return 0;
}

int out_file_check(const char *path, int how, char *why, size_t why_len)
{
    char target[4096];
    int kind = 0;
    mode_t mode = 0;
    return classify(path, how, target, sizeof target, &kind, &mode, why, why_len);
}

/* ------------------------------------------ temporaries the handler removes */

enum { REG_SLOTS = 8 };
static char reg_path[REG_SLOTS][4160];
static volatile sig_atomic_t reg_used[REG_SLOTS];
static const char *volatile sig_prog = "ulysim";

static int reg_add(const char *tmp)
{
    for (int i = 0; i < REG_SLOTS; i++)
        if (!reg_used[i]) {
            copy(reg_path[i], sizeof reg_path[i], tmp);
            reg_used[i] = 1;
            return i;
        }
    return -1; /* removed on failure by the writer, only not on a signal */
}

static void reg_drop(int slot)
{
    if (slot >= 0 && slot < REG_SLOTS) reg_used[slot] = 0;
}

void out_file_temporaries_remove(void)
{
    for (int i = 0; i < REG_SLOTS; i++)
        if (reg_used[i]) unlink(reg_path[i]);
}

static void put(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    while (n) {
        const ssize_t k = write(STDERR_FILENO, s, n);
        if (k <= 0) return;
        s += k;
        n -= (size_t)k;
    }
}

/* async-signal-safe: write, unlink and _exit only */
static void on_signal(int sig)
{
    put(sig_prog);
    put(sig == SIGINT ? ": interrupted by SIGINT" : sig == SIGHUP ? ": interrupted by SIGHUP" : ": interrupted by SIGTERM");
    int any = 0;
    for (int i = 0; i < REG_SLOTS; i++)
        if (reg_used[i]) {
            unlink(reg_path[i]);
            put(any ? ", " : "; removed the unfinished ");
            put(reg_path[i]);
            any = 1;
        }
    put("\n");
    _exit(1);
}

int out_file_signals_install(const char *prog)
{
    sig_prog = prog;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    /* SIGHUP too: a closed terminal or ssh session ends the run as ^C does */
    return sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0 ||
           sigaction(SIGHUP, &sa, NULL) != 0;
}

/* ------------------------------------------------------------ the writer */

/* A new file beside target, created exclusively (never through a link
 * someone left there) with the permissions a new file gets: TARGET.tmp.PID,
 * or, when that name is longer than the file system allows (a legal name
 * near the limit), .ulysim.tmp.PID in the same directory. Returns its
 * descriptor, or -1 (the system refused: status 1) or -2 (a bad path:
 * status 2) with the reason in why. */
static int temp_create(out_file *f, mode_t mode, char *why, size_t n)
{
    char dir[4096];
    if (dir_of(f->target, dir, sizeof dir)) return -fail(why, n, 2, "%s: path too long", f->path);
    for (int shortname = 0; shortname < 2; shortname++)
        for (int i = 0; i < 100; i++) {
            const char *base = shortname ? dir : f->target;
            const char *sep = shortname ? "/.ulysim" : "";
            const int w = i ? snprintf(f->tmp, sizeof f->tmp, "%s%s.tmp.%ld.%d", base, sep, (long)getpid(), i)
                            : snprintf(f->tmp, sizeof f->tmp, "%s%s.tmp.%ld", base, sep, (long)getpid());
            if (w < 0 || (size_t)w >= sizeof f->tmp) return -fail(why, n, 2, "%s: path too long", f->path);
            const int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd < 0 && errno == EEXIST) continue;
            if (fd < 0 && errno == ENAMETOOLONG && !shortname) break;
            if (fd < 0) {
                const int e = errno;
                f->tmp[0] = 0;
                return -fail(why, n, 1, "cannot write %s: %s", f->path, strerror(e));
            }
            if (mode && fchmod(fd, mode) != 0) { /* keeps the new file's mode */ }
            f->slot = reg_add(f->tmp);
            return fd;
        }
    f->tmp[0] = 0;
    return -fail(why, n, 1, "cannot write %s: no free temporary name beside it", f->path);
}

int out_file_open(out_file *f, const char *path, int how, char *why, size_t why_len)
{
    memset(f, 0, sizeof *f);
    f->slot = -1;
    int kind = 0;
    mode_t mode = 0;
    int rc = classify(path, how, f->target, sizeof f->target, &kind, &mode, why, why_len);
    if (rc) return rc;
    copy(f->path, sizeof f->path, path);
    int fd;
    if (kind == K_IN_PLACE) {
        /* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
         * waiting forever; the descriptor blocks again for the writes */
        fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENXIO)
            return fail(why, why_len, 2, "%s: a FIFO with no reader (valid: start its reader first)", path);
        if (fd < 0) return fail(why, why_len, 1, "cannot write %s: %s", path, strerror(errno));
        const int fl = fcntl(fd, F_GETFL);
        if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    } else {
        fd = temp_create(f, kind == K_REGULAR ? mode : 0, why, why_len);
        if (fd < 0) return -fd; /* never a descriptor: not standard output by mistake */
        if (how == OUT_FILE_BY_NAME) {
            close(fd);
            return 0;
        }
    }
    f->fp = fdopen(fd, "w");
    if (!f->fp) {
        const int e = errno;
        close(fd);
        out_file_discard(f);
        return fail(why, why_len, 1, "cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

void out_file_discard(out_file *f)
{
    if (f->fp) fclose(f->fp);
    f->fp = NULL;
    if (f->tmp[0]) unlink(f->tmp);
    f->tmp[0] = 0;
    reg_drop(f->slot);
    f->slot = -1;
}

/* Flushes and closes the stream; a temporary reaches the disk. 0 or errno. */
static int stream_close(out_file *f)
{
    int err = 0;
    if (f->fp) {
        if (fflush(f->fp) != 0 || ferror(f->fp)) err = errno ? errno : EIO;
        /* a temporary reaches the disk before it is renamed over the old file */
        if (!err && f->tmp[0] && fsync(fileno(f->fp)) != 0) err = errno;
        if (fclose(f->fp) != 0 && !err) err = errno;
        f->fp = NULL;
    }
    return err;
}

int out_file_finish(out_file *f, char *why, size_t why_len)
{
    const int err = stream_close(f);
    if (err) {
        out_file_discard(f);
        return fail(why, why_len, 1, "cannot write %s: %s", f->path, strerror(err));
    }
    return 0;
}

/* The rename itself reaches the disk: its directory synced, so that a power
 * loss after the run said it wrote FILE cannot lose FILE. A file system
 * that cannot sync a directory (EINVAL, EROFS) has nothing to do. */
static int dir_sync(const char *final)
{
    char dir[4096];
    if (dir_of(final, dir, sizeof dir)) return 0;
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0;
    const int rc = fsync(fd) != 0 && errno != EINVAL && errno != EROFS ? errno : 0;
    close(fd);
    return rc;
}

int out_file_commit(out_file *f, const char *suffix, char *why, size_t why_len)
{
    int err = stream_close(f);
    if (!err && f->tmp[0]) {
        char final[4200];
        const int w = snprintf(final, sizeof final, "%s%s", f->target, suffix ? suffix : "");
        if (w < 0 || (size_t)w >= sizeof final) err = ENAMETOOLONG;
        else if (rename(f->tmp, final) != 0) err = errno;
        else {
            f->tmp[0] = 0;
            err = dir_sync(final);
        }
    }
    if (err) {
        out_file_discard(f);
        return fail(why, why_len, 1, "cannot write %s: %s", f->path, strerror(err));
    }
    reg_drop(f->slot);
    f->slot = -1;
    return 0;
}

int out_file_write_text(const char *path, const char *text, char *why, size_t why_len)
{
    out_file f;
    const int rc = out_file_open(&f, path, OUT_FILE_STREAM, why, why_len);
    if (rc) return rc;
    fputs(text, f.fp);
    fputc('\n', f.fp);
    return out_file_commit(&f, "", why, why_len);
}
