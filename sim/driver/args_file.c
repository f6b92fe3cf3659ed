/* args_file.c: `--args-file FILE`, a Megatron-LM launch script read for the
 * arguments of its launch command, through the part of the shell such
 * scripts use, without running anything:
 *   - comments (#), line continuations (backslash-newline), '...' and "..."
 *     quoting, backslash escapes;
 *   - assignments NAME=WORD, NAME+=WORD, arrays NAME=( WORDS ) and
 *     NAME+=( WORDS ) over several lines, `export` of them;
 *   - expansions $NAME, ${NAME}, ${NAME:-WORD} / ${NAME-WORD}, ${NAME[@]},
 *     ${NAME[*]}, "${NAME[@]}" (one word per element), word splitting of
 *     unquoted expansions on blanks; positional parameters ($1, ${2:-x})
 *     are unset, the environment is not read;
 *   - the launch command: the one command with a word ending in .py (the
 *     words before it, torchrun, python -m ..., srun ..., are the launcher
 *     and skipped), its arguments ending at a pipe, redirection, ';', '&&'
 *     or '||';
 *   - any other simple command (mkdir, echo, cd, `set -e`) is skipped.
 * Refused by name, as they would change what the arguments are: control
 * flow (if, for, while, until, case, functions, { }, [[ ]]), source / . /
 * eval / read / declare / local / unset / shift / let, `set --`, here
 * documents, and a second launch command. What cannot be known without
 * running the script ($(...), $((...)), `...`, a variable it never sets)
 * stays as written: harmless in an ignored argument, and refused by the
 * value check of one that is priced ("--num-layers '$NL': not a positive
 * integer"). */
#include "args_megatron.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "text_file.h"

#define SH_VARS 512

typedef struct sh_list {
    char **v;
    int n, cap;
} sh_list;

typedef struct sh_var {
    char *name;
    sh_list val; /* a scalar is one element */
} sh_var;

/* one raw token of a command: a word (its source text, quotes and all) or
 * an operator; an array assignment's words carry array = 1 */
typedef struct sh_tok {
    const char *s;
    size_t len;
    int op;    /* 1: ; & | < > && || and the like */
    int array; /* 1: inside NAME=( ... ) */
    int line;
} sh_tok;

typedef struct sh {
    const char *path, *text;
    size_t len, pos;
    int line;
    sh_var vars[SH_VARS];
    int n_vars;
    sh_tok *toks;
    int n_toks, cap_toks;
    sh_list launch;
    int launch_line;
    char *why;
    size_t why_len;
} sh;

static int list_push(sh_list *l, const char *s, size_t n)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    char *c = malloc(n + 1);
    if (!c) return -1;
    memcpy(c, s, n);
    c[n] = 0;
    l->v[l->n++] = c;
    return 0;
}

static void list_free(sh_list *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int fail(sh *x, int line, const char *fmt, const char *word, size_t wlen)
{
    char w[64];
    snprintf(w, sizeof w, "%.*s", (int)(wlen < 40 ? wlen : 40), word ? word : "");
    char msg[256];
    snprintf(msg, sizeof msg, fmt, w);
    return text_fail_at(x->why, x->why_len, x->path, line, "%s", msg);
}

/* ------------------------------------------------------------------ lexing */

static int is_name_char(int c) { return isalnum(c) || c == '_'; }

/* Past a balanced (...) or {...} that starts at p (at the opening
 * character), quotes inside honoured: the index after it, or 0. */
static size_t skip_balanced(const char *t, size_t len, size_t p, char open, char close)
{
    int depth = 0;
    for (size_t i = p; i < len; i++) {
        const char c = t[i];
        if (c == '\\') i++;
        else if (c == '\'') {
            while (++i < len && t[i] != '\'') {}
        } else if (c == '"') {
            while (++i < len && t[i] != '"')
                if (t[i] == '\\') i++;
        } else if (c == open) depth++;
        else if (c == close && --depth == 0) return i + 1;
    }
    return 0;
}

static int push_tok(sh *x, const char *s, size_t len, int op, int array)
{
    if (x->n_toks == x->cap_toks) {
        int cap = x->cap_toks ? 2 * x->cap_toks : 64;
        sh_tok *t = realloc(x->toks, (size_t)cap * sizeof *t);
        if (!t) return -1;
        x->toks = t;
        x->cap_toks = cap;
    }
    x->toks[x->n_toks++] = (sh_tok){s, len, op, array, x->line};
    return 0;
}

/* One word from x->pos: its end, or 0 after the message (an unterminated
 * quote or expansion). */
static size_t word_end(sh *x)
{
    const char *t = x->text;
    size_t i = x->pos;
    while (i < x->len) {
        const char c = t[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || strchr(";&|<>()", c)) {
            /* NAME=( opens an array: the '(' is the caller's */
            break;
        }
        size_t j = i + 1;
        if (c == '\\') j = i + 2;
        else if (c == '\'') {
            const char *q = memchr(t + i + 1, '\'', x->len - i - 1);
            if (!q) return fail(x, x->line, "unterminated '...' quote", NULL, 0), 0;
            j = (size_t)(q - t) + 1;
        } else if (c == '"' || c == '`') {
            for (j = i + 1; j < x->len && t[j] != c; j++)
                if (t[j] == '\\') j++;
            if (j >= x->len) return fail(x, x->line, c == '"' ? "unterminated \"...\" quote" : "unterminated `...`", NULL, 0), 0;
            j++;
        } else if (c == '$' && i + 1 < x->len && (t[i + 1] == '(' || t[i + 1] == '{')) {
            j = skip_balanced(t, x->len, i + 1, t[i + 1], t[i + 1] == '(' ? ')' : '}');
            if (!j) return fail(x, x->line, "unterminated $( or ${", NULL, 0), 0;
        }
        for (size_t k = i; k < j && k < x->len; k++) x->line += t[k] == '\n';
        i = j;
    }
    return i > x->len ? x->len : i;
}

/* The raw tokens of one command, up to an unquoted newline (not inside an
 * array's parentheses), into x->toks. 1 when a command was read, 0 at the
 * end of the text, -1 after a message. */
static int lex_command(sh *x)
{
    const char *t = x->text;
    int array = 0;
    x->n_toks = 0;
    while (x->pos < x->len) {
        const char c = t[x->pos];
        if (c == '\\' && x->pos + 1 < x->len && t[x->pos + 1] == '\n') { /* continuation */
            x->pos += 2;
            x->line++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            x->pos++;
            continue;
        }
        if (c == '#') { /* a comment: at a word's start only */
            while (x->pos < x->len && t[x->pos] != '\n') x->pos++;
            continue;
        }
        if (c == '\n') {
            x->pos++;
            x->line++;
            if (array) continue;
            if (x->n_toks) return 1;
            continue;
        }
        if (c == ')' && array) {
            array = 0;
            x->pos++;
            continue;
        }
        if (c == '(' && x->n_toks && !x->toks[x->n_toks - 1].op && x->toks[x->n_toks - 1].len &&
            x->toks[x->n_toks - 1].s[x->toks[x->n_toks - 1].len - 1] == '=' &&
            x->toks[x->n_toks - 1].s + x->toks[x->n_toks - 1].len == t + x->pos) {
            array = 1; /* NAME=( */
            x->pos++;
            continue;
        }
        if (strchr(";&|<>()", c)) {
            size_t n = 1;
            if (x->pos + 1 < x->len && strchr("&|<>", t[x->pos + 1])) n = 2;
            if (c == '<' && n == 2 && t[x->pos + 1] == '<')
                return fail(x, x->line, "a here document (<<) is not read", NULL, 0), -1;
            if (push_tok(x, t + x->pos, n, 1, 0)) return fail(x, x->line, "out of memory", NULL, 0), -1;
            x->pos += n;
            continue;
        }
        const size_t start = x->pos;
        const size_t end = word_end(x);
        if (!end) return -1;
        x->pos = end;
        /* a file descriptor before a redirection (2>&1) is part of it */
        int fd = end < x->len && (t[end] == '>' || t[end] == '<');
        for (size_t k = start; fd && k < end; k++) fd = isdigit((unsigned char)t[k]);
        if (push_tok(x, t + start, end - start, fd, array)) return fail(x, x->line, "out of memory", NULL, 0), -1;
    }
    if (array) return fail(x, x->line, "unterminated array ( ... )", NULL, 0), -1;
    return x->n_toks ? 1 : 0;
}

/* -------------------------------------------------------------- expansion */

static sh_var *var_find(sh *x, const char *name, size_t n)
{
    for (int i = 0; i < x->n_vars; i++)
        if (strlen(x->vars[i].name) == n && !memcmp(x->vars[i].name, name, n)) return &x->vars[i];
    return NULL;
}

/* The fields a word expands to, built as it is read: cur is the field being
 * built; has: it exists even if empty (quotes were seen). */
typedef struct fields {
    sh_list *out;
    char cur[4096];
    size_t len;
    int has;
    int nosplit; /* an assignment's value: expansions are not split */
} fields;

static void f_add(fields *f, const char *s, size_t n)
{
    if (f->len + n >= sizeof f->cur) n = sizeof f->cur - 1 - f->len;
    memcpy(f->cur + f->len, s, n);
    f->len += n;
    f->has = 1;
}

static int f_end(fields *f)
{
    if (f->has && list_push(f->out, f->cur, f->len)) return -1;
    f->len = 0;
    f->has = 0;
    return 0;
}

/* A value added unquoted: split on blanks, the first piece joining the
 * field being built, the last starting the next. */
static int f_add_split(fields *f, const char *v)
{
    if (f->nosplit) {
        f_add(f, v, strlen(v));
        return 0;
    }
    const char *p = v;
    int first = 1;
    while (*p) {
        const size_t blanks = strspn(p, " \t\n");
        if (blanks && (f->has || !first) && f_end(f)) return -1;
        p += blanks;
        const size_t n = strcspn(p, " \t\n");
        if (n) f_add(f, p, n);
        p += n;
        first = 0;
    }
    return 0;
}

static int expand_into(sh *x, const char *s, size_t len, int quoted, fields *f);

/* A parameter expansion at s[0] == '$': how many bytes it takes; its value
 * into f (quoted: no splitting). What cannot be known stays as written. */
static size_t expand_param(sh *x, const char *s, size_t len, int quoted, fields *f)
{
    if (len < 2) {
        f_add(f, s, len);
        return len;
    }
    const char *name = s + 1, *word = NULL;
    size_t nlen = 0, used = 0, wlen = 0;
    int all = 0, dash = 0, colon = 0;
    if (s[1] == '{') {
        const size_t e = skip_balanced(s, len, 1, '{', '}');
        used = e ? e : len;
        name = s + 2;
        while (name + nlen < s + used - 1 && is_name_char((unsigned char)name[nlen])) nlen++;
        const char *rest = name + nlen, *close = s + used - 1;
        if (rest + 3 <= close && (!strncmp(rest, "[@]", 3) || !strncmp(rest, "[*]", 3))) {
            all = 1;
            rest += 3;
        }
        if (rest < close && (*rest == '-' || (*rest == ':' && rest + 1 < close && rest[1] == '-'))) {
            dash = 1;
            colon = *rest == ':';
            word = rest + (colon ? 2 : 1);
            wlen = (size_t)(close - word);
            rest = close;
        }
        if (rest != close || !nlen) nlen = 0; /* ${#A}, ${A/x/y}, ...: unknown */
    } else if (s[1] == '(') {
        const size_t e = skip_balanced(s, len, 1, '(', ')');
        used = e ? e : len;
    } else {
        while (1 + nlen < len && is_name_char((unsigned char)name[nlen]) && !(nlen == 1 && isdigit((unsigned char)name[0])))
            nlen++;
        used = 1 + nlen;
        if (!nlen) used = strchr("@*#?$!-", s[1]) ? 2 : 1; /* $@, $#, $$, a lone $ */
    }
    const int positional = nlen && isdigit((unsigned char)name[0]);
    sh_var *v = nlen && !positional ? var_find(x, name, nlen) : NULL;
    /* ${NAME-WORD}: WORD when NAME is unset; ${NAME:-WORD} also when empty */
    if (nlen && dash && (!v || (colon && (!v->val.n || (v->val.n == 1 && !v->val.v[0][0]))))) {
        expand_into(x, word, wlen, quoted, f);
        return used;
    }
    if (!v) {
        f_add(f, s, used); /* unknown: as written */
        return used;
    }
    const int n = all ? v->val.n : (v->val.n ? 1 : 0);
    for (int k = 0; k < n; k++) {
        if (k && quoted && f_end(f)) return used; /* "${A[@]}": a field per element */
        if (k && !quoted) f_add_split(f, " ");
        if (quoted) f_add(f, v->val.v[k], strlen(v->val.v[k]));
        else f_add_split(f, v->val.v[k]);
    }
    if (quoted && !n && !all) f->has = 1;
    return used;
}

/* The text s[0..len) expanded into fields; quoted: inside "...". */
static int expand_into(sh *x, const char *s, size_t len, int quoted, fields *f)
{
    for (size_t i = 0; i < len;) {
        const char c = s[i];
        if (c == '\'' && !quoted) {
            const char *q = memchr(s + i + 1, '\'', len - i - 1);
            const size_t e = q ? (size_t)(q - s) : len;
            f_add(f, s + i + 1, e - i - 1);
            i = e + 1;
        } else if (c == '"' && !quoted) {
            size_t e = i + 1;
            while (e < len && s[e] != '"') e += s[e] == '\\' ? 2 : 1;
            f->has = 1;
            expand_into(x, s + i + 1, (e < len ? e : len) - i - 1, 1, f);
            i = e + 1;
        } else if (c == '\\' && i + 1 < len) {
            const char d = s[i + 1];
            if (d == '\n') {
            } else if (!quoted || strchr("$`\"\\", d)) f_add(f, s + i + 1, 1);
            else f_add(f, s + i, 2);
            i += 2;
        } else if (c == '$') {
            i += expand_param(x, s + i, len - i, quoted, f);
        } else if (c == '`') {
            const char *q = memchr(s + i + 1, '`', len - i - 1);
            const size_t e = q ? (size_t)(q - s) + 1 : len;
            f_add(f, s + i, e - i);
            i = e;
        } else {
            f_add(f, s + i, 1);
            i++;
        }
    }
    return 0;
}

static int expand_word(sh *x, const sh_tok *t, sh_list *out)
{
    fields f = {.out = out};
    expand_into(x, t->s, t->len, 0, &f);
    return f_end(&f);
}

/* -------------------------------------------------------------- commands */

/* NAME= or NAME+= at the start of a token: the name's length, *append, or 0 */
static size_t assignment(const sh_tok *t, int *append)
{
    size_t n = 0;
    while (n < t->len && is_name_char((unsigned char)t->s[n])) n++;
    if (!n || isdigit((unsigned char)t->s[0])) return 0;
    *append = n + 1 < t->len && t->s[n] == '+' && t->s[n + 1] == '=';
    if (*append) return n;
    return n < t->len && t->s[n] == '=' ? n : 0;
}

/* The assignment at toks[*k] (its array's words after it): performed. */
static int assign(sh *x, int *k)
{
    const sh_tok *t = &x->toks[*k];
    int append = 0;
    const size_t n = assignment(t, &append);
    sh_var *v = var_find(x, t->s, n);
    if (!v) {
        if (x->n_vars == SH_VARS) return fail(x, t->line, "more than 512 variables", NULL, 0);
        v = &x->vars[x->n_vars++];
        v->name = malloc(n + 1);
        if (!v->name) return fail(x, t->line, "out of memory", NULL, 0);
        memcpy(v->name, t->s, n);
        v->name[n] = 0;
    }
    sh_list val = {0};
    const size_t skip = n + (append ? 2 : 1);
    const int is_array = *k + 1 < x->n_toks && x->toks[*k + 1].array;
    if (is_array || (skip == t->len && *k + 1 < x->n_toks && x->toks[*k + 1].array)) {
        while (*k + 1 < x->n_toks && x->toks[*k + 1].array) expand_word(x, &x->toks[++*k], &val);
    } else {
        fields f = {.out = &val, .nosplit = 1}; /* no splitting in an assignment */
        f.has = 1;                               /* NAME= is the empty string */
        expand_into(x, t->s + skip, t->len - skip, 0, &f);
        f_end(&f);
    }
    if (append && !is_array && v->val.n && val.n) { /* NAME+=WORD appends to the string */
        size_t a = strlen(v->val.v[0]), b = strlen(val.v[0]);
        char *c = realloc(v->val.v[0], a + b + 1);
        if (c) {
            memcpy(c + a, val.v[0], b + 1);
            v->val.v[0] = c;
        }
        list_free(&val);
        return 0;
    }
    if (!append) list_free(&v->val);
    for (int i = 0; i < val.n; i++) list_push(&v->val, val.v[i], strlen(val.v[i]));
    list_free(&val);
    return 0;
}

static int word_is(const sh_tok *t, const char *w) { return !t->op && strlen(w) == t->len && !memcmp(t->s, w, t->len); }

/* A command's first word that the reader refuses, or NULL. */
static const char *refused_word(const sh_tok *t)
{
    static const char *const control[] = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                                          "case", "esac", "select", "function", "{", "}", "[[", "((", "!"};
    static const char *const vars[] = {"source", ".", "eval", "read", "declare", "typeset", "local", "unset",
                                       "shift", "let", "mapfile", "readarray", "getopts", "alias"};
    for (size_t k = 0; k < sizeof control / sizeof control[0]; k++)
        if (word_is(t, control[k])) return "'%s': control flow is not read (valid: assignments, export, simple commands "
                                          "and one launch command; write the branch taken out)";
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
        if (word_is(t, vars[k])) return "'%s': not read, the variables it sets would be unknown (valid: plain "
                                       "assignments NAME=VALUE)";
    if (t->len > 2 && t->s[t->len - 1] == ')' && t->s[t->len - 2] == '(') return "'%s': a function is not read";
    return NULL;
}

/* One simple command (not an assignment alone): the launch command's
 * arguments kept, anything else skipped. */
static int command(sh *x, int first)
{
    const sh_tok *t0 = &x->toks[first];
    const char *msg = refused_word(t0);
    if (msg) return fail(x, t0->line, msg, t0->s, t0->len);
    if (word_is(t0, "export") || word_is(t0, "readonly")) {
        for (int k = first + 1; k < x->n_toks && !x->toks[k].op; k++) {
            int append = 0;
            if (assignment(&x->toks[k], &append) && assign(x, &k)) return 2;
        }
        return 0;
    }
    if (word_is(t0, "set")) { /* options (set -euo pipefail, set -x); set -- or set WORD sets $1, $2, ... */
        const sh_tok *w = first + 1 < x->n_toks ? &x->toks[first + 1] : NULL;
        if (w && !w->op && (word_is(w, "--") || word_is(w, "-") || (w->s[0] != '-' && w->s[0] != '+')))
            return fail(x, t0->line, "'set %s': not read (it sets $1, $2, ...; valid: set with options only)", w->s, w->len);
        return 0;
    }
    if (word_is(t0, "echo") || word_is(t0, "printf")) return 0;
    sh_list words = {0};
    int end = first;
    while (end < x->n_toks && !x->toks[end].op) expand_word(x, &x->toks[end++], &words);
    int py = -1;
    for (int k = 0; k < words.n && py < 0; k++) {
        const size_t l = strlen(words.v[k]);
        if (l > 3 && !strcmp(words.v[k] + l - 3, ".py") && !strpbrk(words.v[k], " \t")) py = k;
    }
    if (py >= 0) {
        if (x->launch_line) {
            list_free(&words);
            return text_fail_at(x->why, x->why_len, x->path, t0->line, "a second launch command (the first is on "
                                "line %d; valid: one command running a .py script)", x->launch_line);
        }
        x->launch_line = t0->line;
        for (int k = py + 1; k < words.n; k++) list_push(&x->launch, words.v[k], strlen(words.v[k]));
    }
    list_free(&words);
    return 0;
}

static int script_read(sh *x)
{
    int r;
    while ((r = lex_command(x)) == 1) {
        /* commands separated by ; && || on one line, each in turn */
        int k = 0;
        while (k < x->n_toks) {
            int end = k;
            while (end < x->n_toks && !(x->toks[end].op && (x->toks[end].s[0] == ';' || word_is(&x->toks[end], "&&") ||
                                                            word_is(&x->toks[end], "||"))))
                end++;
            /* leading assignments: the command's own when a command
             * follows (its environment, not the script's variables) */
            int c = k, append = 0;
            while (c < end && !x->toks[c].array && assignment(&x->toks[c], &append)) {
                c++;
                while (c < end && x->toks[c].array) c++;
            }
            if (c == end) {
                for (int a = k; a < end; a++)
                    if (!x->toks[a].array && assign(x, &a)) return 2;
            } else {
                const int saved = x->n_toks;
                x->n_toks = end;
                const int rc = x->toks[c].op ? 0 : command(x, c);
                x->n_toks = saved;
                if (rc) return rc;
            }
            k = end + 1;
        }
    }
    return r < 0 ? 2 : 0;
}

int sim_args_file_read(const char *path, int *argc_out, char ***argv_out, char *why, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    int rc = text_file_read(path, (size_t)1 << 22, "a launch script", &text, &len, why, n);
    if (rc) return rc == 1 ? SIM_EXIT_INTERNAL : SIM_EXIT_USAGE;
    sh *x = calloc(1, sizeof *x);
    if (!x) {
        free(text);
        return sim_fail(why, n, "out of memory");
    }
    *x = (sh){.path = path, .text = text, .len = len, .line = 1, .why = why, .why_len = n};
    rc = memchr(text, 0, len) ? text_fail_at(why, n, path, 0, "a NUL byte: not a shell script") : script_read(x);
    if (!rc && !x->launch_line)
        rc = text_fail_at(why, n, path, 0, "no launch command (valid: a script with one command running a .py "
                          "script, e.g. torchrun ... pretrain_gpt.py ARGS)");
    for (int i = 0; i < x->n_vars; i++) {
        free(x->vars[i].name);
        list_free(&x->vars[i].val);
    }
    free(x->toks);
    free(text);
    if (rc) {
        list_free(&x->launch);
        free(x);
        return SIM_EXIT_USAGE;
    }
    /* argv: a program name first, as the parser expects */
    char **argv = malloc((size_t)(x->launch.n + 2) * sizeof *argv);
    if (!argv) {
        list_free(&x->launch);
        free(x);
        return sim_fail(why, n, "out of memory");
    }
    /* argparse's nargs '+' of an argument ulysim reads as one value
     * (--hierarchical-context-parallel-sizes 4 2): its values joined by a
     * blank, as that value is written on ulysim's command line */
    int m = 1, values = 0;
    int many = 0; /* the last argument takes several values, and ulysim reads them as one */
    argv[0] = NULL;
    for (int i = 0; i < x->launch.n; i++) {
        char *w = x->launch.v[i];
        if (w[0] == '-' && w[1] == '-') {
            const sim_mlm_name *e = sim_mlm_find(w);
            many = e && (e->values == '+' || e->values == '*') && sim_args_takes_value(w);
            values = 0;
            argv[m++] = w;
            continue;
        }
        if (many && values++ > 0) {
            const size_t la = strlen(argv[m - 1]), lb = strlen(w);
            char *c = realloc(argv[m - 1], la + lb + 2);
            if (c) {
                c[la] = ' ';
                memcpy(c + la + 1, w, lb + 1);
                argv[m - 1] = c;
            }
            free(w);
            continue;
        }
        argv[m++] = w;
    }
    argv[m] = NULL;
    *argc_out = m;
    *argv_out = argv;
    free(x->launch.v);
    free(x);
    return 0;
}

void sim_args_file_free(int argc, char **argv)
{
    if (!argv) return;
    for (int i = 1; i < argc; i++) free(argv[i]);
    free(argv);
}
