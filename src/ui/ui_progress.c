/* Progress kept between runs: one text file per lesson, named by the hash of the lesson's text,
 * written atomically (temporary file, fsync, rename) and read back strictly (a file that does
 * not read as a whole is ignored, never half-applied). The format, one fact a line:
 *   attnstep progress 1 / hash HEX / lesson PATH / steps N / step K / done 0|1 / score R A /
 *   answer K choice I / answer K number X / skipped K / end                                   */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lesson.h"
#include "ui_progress.h"

#define FORMAT_LINE "attnstep progress 1"
#define SUFFIX ".progress"
#define MAX_PROGRESS_BYTES ((size_t)1 << 20)   /* far above any lesson's answers */

bool ui_progress_dir(const char *xdg_state_home, const char *home, char *dir, size_t size)
{
    int n = -1;
    if (xdg_state_home && xdg_state_home[0] == '/')
        n = snprintf(dir, size, "%s/attnstep", xdg_state_home);
    else if (home && home[0] == '/')
        n = snprintf(dir, size, "%s/.local/state/attnstep", home);
    if (n < 0 || (size_t)n >= size) {
        if (size) dir[0] = '\0';
        return false;
    }
    return true;
}

/* FNV-1a, 64 bits: small, no table, and enough to tell two versions of one lesson apart. */
static unsigned long long fnv_add(unsigned long long h, const char *data, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        h ^= (unsigned char)data[i];
        h *= 1099511628211ULL;
    }
    return h;
}

#define FNV_OFFSET 14695981039346656037ULL

unsigned long long ui_progress_hash(const char *data, size_t size)
{
    return fnv_add(FNV_OFFSET, data, size);
}

/* A file larger than a lesson may be is refused before any of it is read: an 8 GB sparse
 * file, hashed whole, took 31 s to be refused by the load that follows. */
bool ui_progress_hash_file(const char *path, unsigned long long *hash)
{
    const char *why;
    FILE *f = lesson_open_regular(path, &why);  /* a FIFO in a lesson folder must not hang */
    if (!f) return false;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || (unsigned long long)sb.st_size > LESSON_MAX_FILE_BYTES) {
        fclose(f);
        return false;
    }
    char buffer[8192];
    unsigned long long h = FNV_OFFSET;
    size_t left = LESSON_MAX_FILE_BYTES + 1;   /* and a file growing meanwhile is cut short */
    for (size_t n; left > 0 && (n = fread(buffer, 1, left < sizeof buffer ? left : sizeof buffer, f)) > 0;) {
        h = fnv_add(h, buffer, n);
        left -= n;
    }
    bool ok = !ferror(f) && left > 0;
    fclose(f);
    if (ok) *hash = h;
    return ok;
}

void ui_progress_path(const char *dir, unsigned long long hash, char *path, size_t size)
{
    snprintf(path, size, "%s/%016llx" SUFFIX, dir, hash);
}

/* mkdir -p with mode 0700 (the XDG rule for the state folder). */
static bool make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return false;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char was = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) return false;
        if (was == '\0') break;
        *p = was;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0) return false;
    if (!S_ISDIR(sb.st_mode)) { errno = ENOTDIR; return false; }
    return true;
}

static bool write_all(int fd, const char *text, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, text, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { if (w == 0) errno = ENOSPC; return false; }
        text += w;
        n -= (size_t)w;
    }
    return true;
}

static bool fail(const char *what, const char *path, char *error, size_t size)
{
    snprintf(error, size, "%s %s: %s", what, path, strerror(errno));
    return false;
}

/* Whether name is a temporary of a save, "<name>.progress.XXXXXX" (mkstemp's six characters). */
static bool is_temporary(const char *name)
{
    const char *suffix = strstr(name, SUFFIX ".");
    return suffix && name[0] != '.' && strlen(suffix + sizeof SUFFIX) == 6;
}

/* Removes the temporaries that saves killed between the write and the rename left in dir. A
 * save takes milliseconds, so a temporary last written over a minute ago belongs to no live
 * save; a younger one may be another attnstep's save in progress, and is left alone. Failures
 * are ignored: the sweep only tidies, and the next save tries again. */
static void sweep_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_temporary(e->d_name)) continue;
        char path[PATH_MAX + 300];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > UI_PROGRESS_TEMP_AGE)
            unlink(path);
    }
    closedir(d);
}

bool ui_progress_write_file(const char *dir, const char *name, const char *text,
                            void (*before_rename)(void), char *error, size_t size)
{
    char final[PATH_MAX], temp[PATH_MAX + 16];
    snprintf(final, sizeof final, "%s/%s", dir, name);
    snprintf(temp, sizeof temp, "%s.XXXXXX", final);
    if (!make_dirs(dir)) return fail("cannot make", dir, error, size);
    sweep_temporaries(dir);
    int fd = mkstemp(temp);
    if (fd < 0) return fail("cannot write in", dir, error, size);
    bool ok = write_all(fd, text, strlen(text)) && fsync(fd) == 0;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    if (!ok) {
        unlink(temp);   /* a full disk leaves no half-written temporary behind */
        errno = saved ? saved : errno;
        return fail("cannot write", final, error, size);
    }
    if (before_rename) before_rename();
    if (rename(temp, final) != 0) {
        saved = errno;
        unlink(temp);
        errno = saved;
        return fail("cannot rename into", final, error, size);
    }
    /* the rename itself reaches the disk with the folder's entry */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) { fsync(dfd); close(dfd); }
    return true;
}

/* ---- the file's text ---- */

/* Appends to text as snprintf would, counting in *used what the whole needs. */
static void add(char *text, size_t size, int *used, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    size_t at = (size_t)*used < size ? (size_t)*used : size;
    int n = vsnprintf(size > at ? text + at : NULL, size > at ? size - at : 0, format, args);
    va_end(args);
    *used += n > 0 ? n : 0;
}

int ui_progress_format(const ui_view *v, bool done, const char *lesson_path, char *text,
                       size_t size)
{
    int used = 0, right, asked, questions;
    ui_view_score(v, &right, &asked, &questions);
    add(text, size, &used, FORMAT_LINE "\n");
    if (lesson_path && !strchr(lesson_path, '\n')) add(text, size, &used, "lesson %s\n", lesson_path);
    add(text, size, &used, "steps %d\nstep %d\ndone %d\nscore %d %d\n", v->walk.count, v->step,
        done, right, asked);
    for (int k = 0; k < v->walk.count; k++) {
        const ui_step_state *m = &v->state[k];
        if (m->question == UI_Q_REVEALED) add(text, size, &used, "skipped %d\n", k);
        if (m->question != UI_Q_ANSWERED) continue;
        if (ui_view_item(v, k)->n_choices > 0)
            add(text, size, &used, "answer %d choice %d\n", k, m->given_choice);
        else
            add(text, size, &used, "answer %d number %.17g\n", k, m->given_number);
    }
    add(text, size, &used, "end\n");
    return used;
}

/* ---- reading it back ---- */

typedef struct {
    int step, kind;              /* kind: 'c' choice, 'n' number, 's' skipped */
    int choice;
    double number;
} saved_answer;

typedef struct {
    ui_progress_summary s;
    char lesson[PATH_MAX];
    saved_answer *answers;
    int count;
} record;

/* One line into r; false when it is not a line of the format. */
static bool parse_line(char *line, record *r)
{
    char *end;
    saved_answer a = {0};
    int done;
    if (strncmp(line, "lesson ", 7) == 0) {
        snprintf(r->lesson, sizeof r->lesson, "%s", line + 7);
        return true;
    }
    if (sscanf(line, "steps %d", &r->s.steps) == 1) return r->s.steps > 0;
    if (sscanf(line, "step %d", &r->s.step) == 1) return r->s.step >= 0;
    if (sscanf(line, "done %d", &done) == 1) { r->s.done = done != 0; return done == 0 || done == 1; }
    if (sscanf(line, "score %d %d", &r->s.right, &r->s.asked) == 2)
        return r->s.right >= 0 && r->s.asked >= r->s.right;
    if (sscanf(line, "skipped %d", &a.step) == 1) a.kind = 's';
    else if (sscanf(line, "answer %d choice %d", &a.step, &a.choice) == 2) a.kind = 'c';
    else if (strncmp(line, "answer ", 7) == 0 && (a.step = (int)strtol(line + 7, &end, 10)) >= 0 &&
             strncmp(end, " number ", 8) == 0) {
        a.number = strtod(end + 8, &end);
        if (*end != '\0' || !isfinite(a.number)) return false;
        a.kind = 'n';
    } else {
        return false;
    }
    saved_answer *grown = realloc(r->answers, (size_t)(r->count + 1) * sizeof *grown);
    if (!grown) return false;
    r->answers = grown;
    r->answers[r->count++] = a;
    return a.step >= 0;
}

/* The whole text of a progress file, checked line by line: its first line, then facts, then
 * "end" as its last line (a file cut short by anything has none). */
static bool parse(char *text, record *r)
{
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    if (!line || strcmp(line, FORMAT_LINE) != 0) return false;
    bool ended = false;
    r->s.steps = -1;
    while ((line = strtok_r(NULL, "\n", &save))) {
        if (ended || (strcmp(line, "end") != 0 && !parse_line(line, r))) return false;
        ended = strcmp(line, "end") == 0;
    }
    return ended && r->s.steps > 0 && r->s.step < r->s.steps;
}

static ui_progress_status read_record(const char *path, record *r)
{
    *r = (record){0};
    const char *why;
    errno = 0;
    FILE *f = lesson_open_regular(path, &why);
    if (!f) return errno == ENOENT || errno == ENOTDIR ? UI_PROGRESS_NONE : UI_PROGRESS_CORRUPT;
    char *text = malloc(MAX_PROGRESS_BYTES + 1);
    size_t n = text ? fread(text, 1, MAX_PROGRESS_BYTES + 1, f) : 0;
    bool whole = text && !ferror(f) && n <= MAX_PROGRESS_BYTES && !memchr(text, '\0', n);
    fclose(f);
    if (whole) text[n] = '\0';
    bool ok = whole && parse(text, r);
    free(text);
    if (!ok) { free(r->answers); *r = (record){0}; }
    return ok ? UI_PROGRESS_FOUND : UI_PROGRESS_CORRUPT;
}

ui_progress_status ui_progress_read_summary(const char *dir, const char *lesson_path,
                                            ui_progress_summary *s)
{
    unsigned long long hash;
    char path[PATH_MAX + 32];
    if (!dir || !ui_progress_hash_file(lesson_path, &hash)) return UI_PROGRESS_NONE;
    ui_progress_path(dir, hash, path, sizeof path);
    record r;
    ui_progress_status status = read_record(path, &r);
    *s = r.s;
    free(r.answers);
    return status;
}

ui_progress_mark ui_progress_describe(const char *dir, const char *lesson_path, char *text,
                                      size_t size)
{
    ui_progress_summary s;
    ui_progress_status status = ui_progress_read_summary(dir, lesson_path, &s);
    int used = 0;
    text[0] = '\0';
    if (status == UI_PROGRESS_CORRUPT) add(text, size, &used, "saved progress unreadable");
    if (status != UI_PROGRESS_FOUND) return UI_PROGRESS_UNTOUCHED;
    if (s.done) add(text, size, &used, "done");
    else add(text, size, &used, "step %d of %d", s.step + 1, s.steps);
    if (s.asked > 0) add(text, size, &used, ", %d/%d right", s.right, s.asked);
    return s.done ? UI_PROGRESS_DONE : UI_PROGRESS_PARTIAL;
}

/* ---- a lesson's progress ---- */

/* Puts one saved answer into v when the step still asks that kind of question. */
static void restore_answer(ui_view *v, const saved_answer *a)
{
    if (a->step >= v->walk.count || v->state[a->step].question == UI_Q_NONE) return;
    ui_step_state *m = &v->state[a->step];
    int choices = ui_view_item(v, a->step)->n_choices;
    if (a->kind == 's') {
        m->question = UI_Q_REVEALED;
    } else if (a->kind == 'c' && a->choice >= 0 && a->choice < choices) {
        *m = (ui_step_state){UI_Q_ANSWERED, a->choice, 0};
    } else if (a->kind == 'n' && choices == 0) {
        *m = (ui_step_state){UI_Q_ANSWERED, -1, a->number};
    }
}

static void set_note(ui_opened *o, const char *reason)
{
    snprintf(o->progress_note, sizeof o->progress_note, "progress is not being saved: %.200s",
             reason);
}

void ui_progress_open(ui_opened *o, ui_view *v, bool restore_step)
{
    if (!o->state_dir) {
        set_note(o, "neither XDG_STATE_HOME nor HOME names a folder");
        snprintf(v->message, sizeof v->message, "%.190s", o->progress_note);
        return;
    }
    if (!make_dirs(o->state_dir) || access(o->state_dir, W_OK) != 0) {
        char reason[PATH_MAX + 64];
        snprintf(reason, sizeof reason, "%s: %s", o->state_dir, strerror(errno));
        set_note(o, reason);
    }
    if (o->progress_note[0]) snprintf(v->message, sizeof v->message, "%.190s", o->progress_note);
    char path[PATH_MAX + 32];
    ui_progress_path(o->state_dir, o->hash, path, sizeof path);
    record r;
    ui_progress_status status = read_record(path, &r);
    if (status == UI_PROGRESS_CORRUPT) {
        snprintf(v->message, sizeof v->message, "saved progress unreadable; starting afresh");
    } else if (status == UI_PROGRESS_FOUND && r.s.steps != v->walk.count) {
        snprintf(v->message, sizeof v->message, "saved progress does not fit; starting afresh");
    } else if (status == UI_PROGRESS_FOUND) {
        o->done = r.s.done;
        for (int i = 0; i < r.count; i++) restore_answer(v, &r.answers[i]);
        if (restore_step) ui_view_goto(v, r.s.step);
    }
    free(r.answers);
}

void ui_progress_save(ui_opened *o, const ui_view *v)
{
    if (!o->state_dir) return;
    o->done = o->done || (!v->off_script && v->step == v->walk.count - 1);
    char real[PATH_MAX], name[32], error[sizeof o->progress_note];
    if (!realpath(o->l.path, real)) snprintf(real, sizeof real, "%s", o->l.path);
    int n = ui_progress_format(v, o->done, real, NULL, 0);
    char *text = malloc((size_t)n + 1);
    if (!text) { set_note(o, "out of memory"); return; }
    ui_progress_format(v, o->done, real, text, (size_t)n + 1);
    snprintf(name, sizeof name, "%016llx" SUFFIX, o->hash);
    if (ui_progress_write_file(o->state_dir, name, text, NULL, error, sizeof error))
        o->progress_note[0] = '\0';
    else
        set_note(o, error);
    free(text);
}

/* ---- --reset ---- */

/* Whether a file of the state folder belongs to the lesson: named by its present hash (or a
 * temporary left by a killed save of it), or recording the same path. */
static bool belongs(const char *dir, const char *name, const char *hex, const char *real)
{
    if (hex[0] && strncmp(name, hex, strlen(hex)) == 0) return true;
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    record r;
    bool same = read_record(path, &r) == UI_PROGRESS_FOUND && strcmp(r.lesson, real) == 0;
    free(r.answers);
    return same;
}

int ui_progress_reset(const char *dir, const char *lesson_path, char *error, size_t size)
{
    char real[PATH_MAX] = "", hex[24] = "";
    unsigned long long hash;
    if (lesson_path && !realpath(lesson_path, real))
        snprintf(real, sizeof real, "%s", lesson_path);
    if (lesson_path && ui_progress_hash_file(lesson_path, &hash))
        snprintf(hex, sizeof hex, "%016llx", hash);
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return 0;   /* nothing was ever saved */
        snprintf(error, size, "cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strstr(e->d_name, SUFFIX) || e->d_name[0] == '.') continue;
        if (lesson_path && !belongs(dir, e->d_name, hex, real)) continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0) {
            snprintf(error, size, "cannot remove %s: %s", path, strerror(errno));
            closedir(d);
            return -1;
        }
        removed += strstr(e->d_name, SUFFIX "." ) == NULL;   /* temporaries are not counted */
    }
    closedir(d);
    return removed;
}
