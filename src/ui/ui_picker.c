/* The lesson picker, a screen (ui_screen.h) shown when no lesson is given: finds lesson files,
 * reads their titles and about text with the lesson loader (lesson_load_summary: checked, no
 * matrix built), lists them in the teaching order their folder states, and opens the one
 * chosen as a lesson screen over itself.
 *
 * The order: a folder of lessons may hold a plain text file named ORDER, one lesson file name
 * a line, in the order a class should take them. "#" starts a comment (to the end of the
 * line); blank lines and surrounding blanks are ignored; a name with no such lesson in the
 * folder is ignored. The folder's lessons that ORDER does not name follow, alphabetically;
 * without ORDER every lesson is listed alphabetically. Folders are listed one after another. */
#include "ui_curses.h"
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ui_progress.h"
#include "ui_screen.h"
#include "ui_util.h"

typedef struct {
    char *path, *title, *about;
    char *error;                 /* the first diagnostic when the lesson does not load */
    char progress[96];           /* the student's progress in it (ui_progress_describe) */
    ui_progress_mark mark;       /* how far: untouched, partial or done */
    bool progress_read;          /* progress is up to date (read again after a lesson closes) */
} lesson_entry;

#define MAX_SHOWN 64

typedef struct {
    ui_screen base;
    lesson_entry *items;
    int count, selected, top;
    int shown, shown_y[MAX_SHOWN + 1];  /* as drawn: lessons top.. top+shown-1 start at rows
                                           shown_y[0..], shown_y[shown] is where they end */
    char searched[512];          /* the folders looked in, for the "none found" message */
    trace_options compute;       /* how the lessons opened from here are computed */
    lesson_options load;         /* and how they are loaded (--allow-paths) */
    char message[512];           /* status line: why a lesson did not open */
    char *beside;                /* picking a lesson to compare with this one, or NULL */
    const char *state_dir;       /* where progress is kept, or NULL */
    bool confirm_reset;          /* R was pressed: y resets the selected lesson's progress */
} picker_screen;

static picker_screen *picker_of(ui_screen *s)
{
    return (picker_screen *)s;
}

#ifndef ATTNSTEP_LESSON_DIR
#define ATTNSTEP_LESSON_DIR "/usr/local/share/attnstep/lessons"
#endif

static char *copy(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

static bool is_lesson_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && ((n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
                              (n > 4 && strcmp(name + n - 4, ".yml") == 0));
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The name an ORDER line gives, trimmed, with its comment left out ("" for none). */
static char *order_name(char *line)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    while (*line == ' ' || *line == '\t') line++;
    size_t n = strlen(line);
    while (n > 0 && strchr(" \t\r\n", line[n - 1])) line[--n] = '\0';
    return line;
}

/* Puts names (n, sorted) in dir's teaching order: those its ORDER file names first, as it
 * lists them, then the rest as they were. */
static void apply_order(const char *dir, char **names, size_t n)
{
    char path[PATH_MAX], line[PATH_MAX];
    snprintf(path, sizeof path, "%s/ORDER", dir);
    const char *why;
    FILE *f = lesson_open_regular(path, &why);   /* a FIFO named ORDER must not hang the picker */
    if (!f) return;
    size_t placed = 0;
    while (placed < n && fgets(line, sizeof line, f)) {
        const char *name = order_name(line);
        for (size_t i = placed; *name && i < n; i++)
            if (strcmp(names[i], name) == 0) {   /* moved up to the next place, others kept */
                char *found = names[i];
                memmove(names + placed + 1, names + placed, (i - placed) * sizeof *names);
                names[placed++] = found;
                break;
            }
    }
    fclose(f);
}

/* Reads one lesson's title and about line, checked as in full but without building its
 * matrices (a folder of large lessons lists at once); a lesson that does not load is listed
 * with why. */
static bool add_entry(picker_screen *p, const char *path)
{
    lesson_entry *grown = realloc(p->items, (size_t)(p->count + 1) * sizeof *grown);
    if (!grown) return false;
    p->items = grown;
    lesson_entry *e = &p->items[p->count++];
    *e = (lesson_entry){.path = copy(path)};
    lesson_summary summary;
    lesson_diagnostics d = {0};
    if (lesson_load_summary(path, &p->load, &summary, &d) == LESSON_OK) {
        e->title = summary.title;   /* taken, with the about and its live numbers (lesson.h) */
        e->about = summary.about;
    } else {
        char message[1024] = "cannot be read";   /* the whole first problem, with its hint */
        if (d.count > 0) lesson_diagnostic_paragraph(&d, &d.items[0], message, sizeof message);
        e->error = copy(message);
        lesson_diagnostics_free(&d);
    }
    return true;
}

static bool scan_dir(picker_screen *p, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return true;
    char **names = NULL;
    size_t n = 0;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (!is_lesson_name(e->d_name)) continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        ok = grown != NULL;
        if (ok) { names = grown; names[n] = copy(e->d_name); ok = names[n++] != NULL; }
    }
    closedir(d);
    if (n > 0) qsort(names, n, sizeof *names, by_name);
    if (ok) apply_order(dir, names, n);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (ok) ok = add_entry(p, path);
        free(names[i]);
    }
    free(names);
    return ok;
}

/* Appends dir to the list of folders searched, skipping one already seen under another name
 * (the installed folder may be ./lessons itself). */
static bool seen_before(picker_screen *p, const char *dir, char seen[][PATH_MAX], int *n_seen)
{
    char real[PATH_MAX];
    if (!realpath(dir, real)) snprintf(real, sizeof real, "%s", dir);
    for (int i = 0; i < *n_seen; i++)
        if (strcmp(seen[i], real) == 0) return true;
    if (*n_seen < 16) snprintf(seen[(*n_seen)++], PATH_MAX, "%s", real);
    size_t used = strlen(p->searched);
    snprintf(p->searched + used, sizeof p->searched - used, "%s%s", used ? ", " : "", dir);
    return false;
}

static bool scan(picker_screen *p, const char *folders)
{
    static char seen[16][PATH_MAX];
    int n_seen = 0;
    char dirs[4096];
    if (folders && *folders) snprintf(dirs, sizeof dirs, "%s", folders);
    else snprintf(dirs, sizeof dirs, "%s:lessons", ATTNSTEP_LESSON_DIR);
    bool ok = true;
    for (char *save = NULL, *dir = strtok_r(dirs, ":", &save); ok && dir;
         dir = strtok_r(NULL, ":", &save))
        if (!seen_before(p, dir, seen, &n_seen)) ok = scan_dir(p, dir);
    return ok;
}

static void close_screen(ui_screen *s)
{
    picker_screen *p = picker_of(s);
    for (int i = 0; i < p->count; i++) {
        free(p->items[i].path);
        free(p->items[i].title);
        free(p->items[i].about);
        free(p->items[i].error);
    }
    free(p->items);
    free(p->beside);
    free(p);
}

#define FIRST_ENTRY_ROW 2

/* The lesson drawn at screen row y, or -1. */
static int hit(const picker_screen *p, int y)
{
    for (int k = 0; k < p->shown; k++)
        if (y >= p->shown_y[k] && y < p->shown_y[k + 1]) return p->top + k;
    return -1;
}

/* The lesson's title, or its file's name when it has none. */
static const char *entry_name(const lesson_entry *e)
{
    const char *slash = strrchr(e->path, '/');
    return e->title ? e->title : slash ? slash + 1 : e->path;
}

/* The text under a lesson's title: its about in full, or why it does not load. */
static void entry_text(const lesson_entry *e, char *text, size_t size)
{
    if (e->error) snprintf(text, size, "does not load: %s", e->error);
    else snprintf(text, size, "%s", e->about ? e->about : "");
}

/* Rows a lesson takes: its title, its text wrapped, and a blank row between lessons. */
static int entry_height(const lesson_entry *e, const ui_style *st)
{
    char text[4096];
    entry_text(e, text, sizeof text);
    return 1 + (text[0] ? ui_lines_needed(text, COLS - 5, st) : 0) + 1;
}

/* The student's progress in a lesson, at the right end of its title row: a glyph that reads
 * without colour (✓ done, ◐ started, ○ not started; + ~ - in ASCII), then the words, in green,
 * yellow or dim. Returns the columns it takes there (0 when progress is not kept, or the
 * screen is too narrow for it). */
static int draw_progress(const picker_screen *p, int i, int y, const ui_style *st)
{
    static const char *const glyphs[2][3] = {{"-", "~", "+"},
                                             {"\xe2\x97\x8b", "\xe2\x97\x90", "\xe2\x9c\x93"}};
    static const int pairs[3] = {0, UI_PAIR_ACCENT, UI_PAIR_DONE};
    lesson_entry *e = &p->items[i];
    if (!p->state_dir || e->error) return 0;   /* a lesson that does not load has none */
    if (!e->progress_read) {   /* hashing the lesson file: once, not on every key */
        e->mark = ui_progress_describe(p->state_dir, e->path, e->progress, sizeof e->progress);
        e->progress_read = true;
    }
    char text[sizeof e->progress + 16];
    snprintf(text, sizeof text, " %s %s ", glyphs[st->utf8][e->mark],
             e->progress[0] ? e->progress : "not started");
    int w = ui_width(text, st);
    if (w + 20 > COLS) return 0;
    unsigned attr = e->mark == UI_PROGRESS_UNTOUCHED ? A_DIM : A_BOLD;
    ui_put(y, COLS - 1 - w, w, text, st, i == p->selected ? attr | A_REVERSE : attr,
           st->colors ? pairs[e->mark] : 0);
    return w;
}

/* Each lesson: its title, then its about wrapped in full (or why it does not load), cut at
 * the bottom row given. Returns the row after it. */
static int draw_entry(const picker_screen *p, int i, int y, int bottom, const ui_style *st)
{
    const lesson_entry *e = &p->items[i];
    bool selected = i == p->selected;
    char text[4096];
    snprintf(text, sizeof text, "%s %s", selected ? (st->utf8 ? "\xe2\x96\xb8" : ">") : " ",
             entry_name(e));
    int room = COLS - 2 - draw_progress(p, i, y, st);
    char cut[sizeof text];   /* a title that meets the progress ends with "…" */
    ui_cut_text(text, room, st, cut, sizeof cut);
    ui_put(y, 1, room, cut, st, selected ? A_BOLD | A_REVERSE : A_BOLD, 0);
    entry_text(e, text, sizeof text);
    int lines = text[0] ? ui_lines_needed(text, COLS - 5, st) : 0;
    if (lines > bottom - y - 1) lines = bottom - y - 1;
    if (lines > 0) ui_put_wrapped(y + 1, 4, COLS - 5, lines, text, st, A_DIM);
    return y + 1 + lines + 1;
}

/* Scrolls so the selected lesson is drawn whole (or from its top, when taller than the room). */
static void scroll_to_selected(picker_screen *p, int room, const ui_style *st)
{
    if (p->selected < p->top) p->top = p->selected;
    for (;;) {
        int used = 0;
        for (int i = p->top; i <= p->selected; i++) used += entry_height(&p->items[i], st);
        if (used - 1 <= room || p->top == p->selected) return;
        p->top++;
    }
}

static void draw(ui_screen *s, const ui_style *st)
{
    picker_screen *p = picker_of(s);
    char text[1024];
    erase();
    snprintf(text, sizeof text, " attnstep \xc2\xb7 choose a lesson");
    ui_field(0, 0, COLS, "", st, A_REVERSE, 0, UI_LEFT);
    ui_put(0, 0, COLS, text, st, A_REVERSE | A_BOLD, 0);
    if (p->count == 0) {
        snprintf(text, sizeof text, "No lessons found in %s. Set ATTNSTEP_LESSONS to a folder of "
                 "lesson files, or give one: attnstep LESSON.yaml", p->searched);
        ui_put(2, 1, COLS - 2, text, st, A_NORMAL, 0);
    }
    int bottom = LINES - 3;   /* less the status line and the key bar, and a blank row */
    scroll_to_selected(p, bottom - FIRST_ENTRY_ROW, st);
    p->shown = 0;
    for (int i = p->top, y = FIRST_ENTRY_ROW; i < p->count && y < bottom && p->shown < MAX_SHOWN; i++) {
        p->shown_y[p->shown++] = y;
        y = draw_entry(p, i, y, bottom, st);
        p->shown_y[p->shown] = y > bottom ? bottom : y;
    }
    const char *status = p->message[0] ? p->message : p->count ? p->items[p->selected].path : "";
    ui_put(LINES - 2, 1, COLS - 2, status, st, p->message[0] ? A_BOLD : A_DIM, 0);
    ui_draw_bar(UI_IN_PICKER, st);
}

/* The status line while picking a lesson to compare with another. */
static void beside_hint(picker_screen *p)
{
    snprintf(p->message, sizeof p->message, "Enter: show the selected lesson side by side with %s",
             p->beside);
}

/* Replaces the picker with the comparison of its lesson and the one selected. */
static ui_outcome open_beside(picker_screen *p)
{
    exit_status status;
    char error[sizeof p->message];
    ui_screen *screen = ui_compare_screen_open(p->beside, p->items[p->selected].path, &p->compute,
                                               &p->load, -1, false, &status, error, sizeof error);
    if (!screen) snprintf(p->message, sizeof p->message, "%s", error);
    return (ui_outcome){screen ? 1 : 0, screen};
}

/* Opens the selected lesson over the picker; when it does not open (a check its summary does
 * not run: a false claim), the whole first error goes under its title, wrapped as a lesson that
 * does not load says why, and the status line points there. */
static ui_outcome open_selected(picker_screen *p)
{
    ui_opened *o = NULL;
    char error[2048];
    if (p->count == 0) return UI_STAY;
    if (p->beside) return open_beside(p);
    lesson_entry *e = &p->items[p->selected];
    if (ui_lesson_open(e->path, NULL, 0, &p->compute, &p->load, &o, false, error, sizeof error)
        != EXIT_STATUS_OK) {
        if (!e->error) e->error = copy(error);   /* else its summary's paragraph says it */
        snprintf(p->message, sizeof p->message, "%s", e->error ? "it does not open: why is "
                 "under its title" : error);
        return UI_STAY;
    }
    ui_screen *screen = ui_lesson_screen_new(o);
    if (!screen) {
        snprintf(p->message, sizeof p->message, "out of memory");
        return UI_STAY;
    }
    o->state_dir = p->state_dir;   /* the lesson goes on where the student stopped */
    ui_progress_open(o, ui_lesson_screen_view(screen), true);
    p->items[p->selected].progress_read = false;   /* read again once the lesson closes */
    return (ui_outcome){0, screen};
}

/* R asks first; y then forgets the selected lesson's saved progress (as --reset LESSON does),
 * and any other key keeps it. */
static void ask_reset(picker_screen *p)
{
    if (!p->state_dir || p->count == 0) {
        snprintf(p->message, sizeof p->message, "no progress is kept here, so none to reset");
        return;
    }
    p->confirm_reset = true;
    snprintf(p->message, sizeof p->message, "reset the progress of \"%.300s\"? y resets it, "
             "any other key keeps it", entry_name(&p->items[p->selected]));
}

static void answer_reset(picker_screen *p, int k)
{
    lesson_entry *e = &p->items[p->selected];
    char error[256];
    p->confirm_reset = false;
    if (k != 'y' && k != 'Y') {
        snprintf(p->message, sizeof p->message, "progress kept");
        return;
    }
    int removed = ui_progress_reset(p->state_dir, e->path, error, sizeof error);
    if (removed < 0) snprintf(p->message, sizeof p->message, "%s", error);
    else snprintf(p->message, sizeof p->message, "progress of \"%.300s\" reset", entry_name(e));
    e->progress_read = false;
}

static ui_outcome key(ui_screen *s, int k, const ui_style *st)
{
    (void)st;
    picker_screen *p = picker_of(s);
    int arg = 0;
    if (p->confirm_reset) {
        answer_reset(p, k);
        return UI_STAY;
    }
    ui_action action = ui_key_action(k, UI_IN_PICKER, &arg);
    if (action == UI_ACT_OPEN) return open_selected(p);
    p->message[0] = '\0';
    if (p->beside) beside_hint(p);
    switch (action) {
    case UI_ACT_RESET: ask_reset(p); break;
    case UI_ACT_QUIT: return (ui_outcome){1, NULL};
    case UI_ACT_HELP: {
        ui_screen *help = ui_help_screen_new();
        if (!help) snprintf(p->message, sizeof p->message, "out of memory");
        return (ui_outcome){0, help};
    }
    case UI_ACT_MOVE:
        if (arg % 4 == UI_DIR_UP && p->selected > 0) p->selected--;
        if (arg % 4 == UI_DIR_DOWN && p->selected + 1 < p->count) p->selected++;
        break;
    default: break;
    }
    return UI_STAY;
}

/* A click selects a lesson; a second click opens it. */
static ui_outcome click(ui_screen *s, int x, int y)
{
    (void)x;
    picker_screen *p = picker_of(s);
    int i = hit(p, y);
    if (p->confirm_reset) {   /* a click answers no: y must not reset another lesson */
        answer_reset(p, 0);
        return UI_STAY;
    }
    if (i >= 0 && i == p->selected) return open_selected(p);
    if (i >= 0) p->selected = i;
    return UI_STAY;
}

static unsigned context(const ui_screen *s)
{
    (void)s;
    return UI_IN_PICKER;
}

/* Keys in the picker are not timed (ATTNSTEP_KEY_TIMES times keys in a lesson). */
static const ui_screen_ops picker_ops = {
    .overlay = false, .draw = draw, .key = key, .click = click, .context = context,
    .close = close_screen,
};

ui_screen *ui_picker_screen_new(const char *folders, const trace_options *compute,
                                const lesson_options *load, const char *state_dir)
{
    picker_screen *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->base.ops = &picker_ops;
    p->state_dir = state_dir;
    if (compute) p->compute = *compute;
    if (load) p->load = *load;
    if (!scan(p, folders)) {
        close_screen(&p->base);
        return NULL;
    }
    return &p->base;
}

ui_screen *ui_picker_screen_beside(const char *path, const trace_options *compute,
                                   const lesson_options *load, const char *state_dir)
{
    const char *slash = strrchr(path, '/');
    char folder[PATH_MAX];
    snprintf(folder, sizeof folder, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    ui_screen *screen = ui_picker_screen_new(slash == path ? "/" : folder, compute, load,
                                             state_dir);
    picker_screen *p = screen ? picker_of(screen) : NULL;
    if (p && !(p->beside = copy(path))) {
        close_screen(screen);
        return NULL;
    }
    if (p) beside_hint(p);
    return screen;
}
