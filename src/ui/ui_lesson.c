/* The open lesson and its file: loading and tracing it, and following the file while it is
 * shown, so an author who saves sees the new numbers at once and a broken save never costs the
 * view (the last good version stays, with the first diagnostic in the status line). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lesson_edit.h"
#include "text.h"
#include "ui_lesson.h"
#include "ui_progress.h"

/* "path:line:col: error: message (hint: …)": the first error whole (a warning before it is not
 * why the lesson failed), as --check's first line writes it with its hint after it, escaped for
 * the screen (which wraps it). */
static void first_diagnostic(const lesson_diagnostics *d, const char *path, char *error,
                             size_t size)
{
    char raw[2048];
    int first = 0;
    while (first + 1 < d->count && d->items[first].severity != LESSON_SEVERITY_ERROR) first++;
    if (d->count == 0) {
        snprintf(raw, sizeof raw, "%s: error: cannot be read", path);
    } else {
        const lesson_diagnostic *item = &d->items[first];
        lesson_diagnostic_headline(d, item, raw, sizeof raw);
        size_t used = strlen(raw);
        if (item->hint) snprintf(raw + used, sizeof raw - used, " (hint: %s)", item->hint);
    }
    text_escape(raw, error, size);
}

/* The check's warnings and notes into o->notices, each "warning: " and its paragraph
 * (lesson_diagnostic_paragraph) on a line; nothing when there are none or memory ran out. */
static void keep_notices(ui_opened *o, const lesson_diagnostics *d)
{
    size_t size = 1;
    for (int i = 0; i < d->count; i++)
        size += 6 * (strlen(d->items[i].message) + (d->items[i].hint ? strlen(d->items[i].hint)
                                                                      : 0) + 64);
    if (d->count == 0 || !(o->notices = malloc(size))) return;
    o->notices[0] = '\0';   /* memory may run out before the first is written */
    size_t used = 0;
    for (int i = 0; i < d->count; i++) {
        bool warning = d->items[i].severity == LESSON_SEVERITY_WARNING;
        o->warnings += warning;
        o->notes += !warning;
        size_t length = strlen(d->items[i].message) + (d->items[i].hint ? strlen(d->items[i].hint)
                                                                         : 0) + 64;
        char *raw = malloc(length);
        if (!raw) break;
        lesson_diagnostic_paragraph(d, &d->items[i], raw, length);
        used += (size_t)snprintf(o->notices + used, size - used, "%s%s: ", used ? "\n" : "",
                                 warning ? "warning" : "note");
        used += (size_t)text_escape(raw, o->notices + used, size - used);
        free(raw);
    }
}

exit_status ui_lesson_open(const char *path, const char *text, size_t text_size,
                           const trace_options *compute, const lesson_options *load,
                           ui_opened **out, bool report, char *error, size_t size)
{
    ui_opened *o = calloc(1, sizeof *o);
    if (!o) { snprintf(error, size, "out of memory"); return EXIT_STATUS_SOFTWARE; }
    if (compute) o->compute = *compute;
    if (load) o->load = *load;
    /* the key of the lesson's saved progress: the text that is loaded (an unreadable file
     * fails below, in lesson_load) */
    if (text) o->hash = ui_progress_hash(text, text_size);
    else ui_progress_hash_file(path, &o->hash);
    lesson_diagnostics d = {0};
    lesson_status status = text ? lesson_load_buffer_with(path, text, text_size, &o->load,
                                                          &o->l, &d)
                                : lesson_load_with(path, &o->load, &o->l, &d);
    if (status != LESSON_OK) {
        if (report) lesson_diagnostics_print(&d, stderr);
        first_diagnostic(&d, path, error, size);
        lesson_diagnostics_free(&d);
        free(o);
        return status == LESSON_UNREADABLE ? EXIT_STATUS_NO_INPUT
             : status == LESSON_NO_MEMORY ? EXIT_STATUS_SOFTWARE : EXIT_STATUS_DATA;
    }
    /* --set's numbers, before computing and again at each reload (lesson_edit.h) */
    char why[1024];
    if (lesson_edits_apply(&o->l, o->load.edits, o->load.n_edits, why, sizeof why)
        != LESSON_EDIT_OK) {
        char raw[1200];
        snprintf(raw, sizeof raw, "--set: %s", why);
        text_escape(raw, error, size);
        if (report) fprintf(stderr, "attnstep: %s\n", error);
        lesson_free(&o->l);
        free(o);
        return EXIT_STATUS_USAGE;
    }
    trace_failure f;
    trace_status ts = trace_compute(&o->l.input, &o->compute, &o->t, &f);
    if (ts != TRACE_OK) {
        char raw[512];
        snprintf(raw, sizeof raw, "%s: error: %s", path, trace_status_message(ts));
        text_escape(raw, error, size);
        if (report) fprintf(stderr, "%s\n", error);
        lesson_free(&o->l);
        free(o);
        return ts == TRACE_ERROR_NO_MEMORY ? EXIT_STATUS_SOFTWARE : EXIT_STATUS_DATA;
    }
    /* answers, claims and live numbers against the numbers, with the warnings and notes, as
     * --check does (lesson.h) */
    bool checked = lesson_check(&o->l, &o->t, true, &d) == LESSON_OK;
    /* an edited lesson may make its own claims false: shown, not refused (the point of what
     * if?); the file as written must hold them */
    checked |= o->load.n_edits > 0;
    if (!checked) {
        if (report) lesson_diagnostics_print(&d, stderr);
        first_diagnostic(&d, path, error, size);
    } else {
        keep_notices(o, &d);
    }
    lesson_diagnostics_free(&d);
    if (!checked) {
        ui_lesson_close(o);
        return EXIT_STATUS_DATA;
    }
    if (o->l.n_data_files > 0
        && (o->data_seen = calloc((size_t)o->l.n_data_files, sizeof *o->data_seen)) != NULL)
        for (int i = 0; i < o->l.n_data_files; i++)
            o->data_seen[i] = ui_file_stamp_of(o->l.data_files[i]);
    *out = o;
    return EXIT_STATUS_OK;
}

void ui_lesson_close(ui_opened *o)
{
    if (!o) return;
    trace_free(&o->t);
    lesson_free(&o->l);
    free(o->data_seen);
    free(o->notices);
    free(o);
}

ui_file_stamp ui_file_stamp_of(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return (ui_file_stamp){.present = false};
    return (ui_file_stamp){.present = true, .dev = sb.st_dev, .ino = sb.st_ino,
                           .size = sb.st_size, .mtime_sec = sb.st_mtim.tv_sec,
                           .mtime_nsec = sb.st_mtim.tv_nsec};
}

bool ui_file_stamp_equal(const ui_file_stamp *a, const ui_file_stamp *b)
{
    if (a->present != b->present) return false;
    return !a->present || (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
                           a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec);
}

/* The whole of a (small) regular file, or NULL with *why saying why not. */
static char *read_all(const char *path, size_t *size, const char **why)
{
    FILE *f = lesson_open_regular(path, why);
    if (!f) return NULL;
    size_t capacity = LESSON_MAX_FILE_BYTES + 1;
    char *data = malloc(capacity);
    *size = data ? fread(data, 1, capacity, f) : 0;
    if (!data || ferror(f)) { free(data); data = NULL; *why = "cannot be read"; }
    fclose(f);
    return data;
}

/* Reads from (a key script's stand-in text) or the lesson's own file into a new ui_opened. */
static exit_status reopen(const char *path, const char *from, const ui_opened *was,
                          ui_opened **out, char *error, size_t size)
{
    const trace_options *compute = &was->compute;
    const lesson_options *load = &was->load;
    if (!from) return ui_lesson_open(path, NULL, 0, compute, load, out, false, error, size);
    size_t n = 0;
    const char *why = NULL;
    char *text = read_all(from, &n, &why);
    if (!text) {   /* as the lesson's file would be: gone */
        char raw[512];
        snprintf(raw, sizeof raw, "%s: error: cannot be read: %s", path, why);
        text_escape(raw, error, size);
        return EXIT_STATUS_NO_INPUT;
    }
    exit_status status = ui_lesson_open(path, text, n, compute, load, out, false, error, size);
    free(text);
    return status;
}

/* Whether any data file of o changed since last looked at; records what it saw, so a data
 * file whose reload fails is not reloaded again on every tick (as *seen for the lesson). */
static bool data_files_changed(ui_opened *o)
{
    bool changed = false;
    for (int i = 0; o->data_seen && i < o->l.n_data_files; i++) {
        ui_file_stamp now = ui_file_stamp_of(o->l.data_files[i]);
        changed |= !ui_file_stamp_equal(&now, &o->data_seen[i]);
        o->data_seen[i] = now;
    }
    return changed;
}

bool ui_lesson_follow(ui_opened **o, ui_view *v, ui_file_stamp *seen, const char *from)
{
    const char *path = (*o)->l.path;
    ui_file_stamp now = ui_file_stamp_of(path);
    bool data_changed = data_files_changed(*o);
    if (!from && ui_file_stamp_equal(&now, seen) && !data_changed) return false;
    *seen = now;
    v->message[0] = '\0';   /* a stale "reloaded" must not stand beside this reload's error */
    ui_opened *fresh = NULL;
    char error[sizeof v->reload_error];
    if (!from && !now.present) {
        char raw[512];
        const char *slash = strrchr(path, '/');
        snprintf(raw, sizeof raw, "%s: error: the file is gone; showing the last version",
                 slash ? slash + 1 : path);
        text_escape(raw, v->reload_error, sizeof v->reload_error);
        v->message[0] = '\0';   /* never "reloaded" beside an error */
        return true;
    }
    if (reopen(path, from, *o, &fresh, error, sizeof error) != EXIT_STATUS_OK) {
        /* the status line is short: the file's name is enough, the author knows its folder */
        const char *slash = strrchr(path, '/');
        size_t dir = slash ? (size_t)(slash + 1 - path) : 0;
        snprintf(v->reload_error, sizeof v->reload_error, "%s",
                 strncmp(error, path, dir) == 0 ? error + dir : error);
        v->message[0] = '\0';
        return true;
    }
    if (!ui_view_rebuild(v, &fresh->t, &fresh->l)) {
        ui_lesson_close(fresh);
        snprintf(v->reload_error, sizeof v->reload_error, "out of memory while reloading");
        v->message[0] = '\0';
        return true;
    }
    /* progress goes on under the new text's key; the answers came across with the view */
    fresh->state_dir = (*o)->state_dir;
    fresh->done = (*o)->done;
    snprintf(fresh->progress_note, sizeof fresh->progress_note, "%s", (*o)->progress_note);
    ui_lesson_close(*o);   /* the view now points into fresh only */
    *o = fresh;
    /* a save that changes nothing visible is still seen to have been read */
    const char *slash = strrchr(fresh->l.path, '/');
    char raw[300];
    snprintf(raw, sizeof raw, "reloaded %.250s", slash ? slash + 1 : fresh->l.path);
    text_escape(raw, v->message, sizeof v->message);
    return true;
}
