/* Matrices from .npy and .csv files beside a lesson: the path checks, a non-blocking open of
 * regular files only, numpy's header (a Python dict literal) and RFC 4180 records of numbers. */
#define _XOPEN_SOURCE 700   /* realpath */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lesson_file.h"
#include "lesson.h"
#include "lesson_text.h"
#include "text.h"

/* Writes why into error (error_size bytes); FAIL also gives status, to return. */
#define SAY(...) ((void)snprintf(error, error_size, __VA_ARGS__))
#define FAIL(status, ...) (SAY(__VA_ARGS__), (status))

/* ---- where the file is ---- */

/* Whether a relative name climbs above its starting folder with `..` at some point. */
static bool climbs_out(const char *name) {
    int depth = 0;
    for (const char *p = name; *p;) {
        size_t length = strcspn(p, "/");
        if (length == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0) return true;
        } else if (length > 0 && !(length == 1 && p[0] == '.')) {
            depth++;
        }
        p += length;
        while (*p == '/') p++;
    }
    return false;
}

/* The folder of lesson_path ("." when it has none), in a new string. */
static char *folder_of(const char *lesson_path) {
    const char *slash = strrchr(lesson_path, '/');
    if (!slash) return strdup(".");
    size_t length = slash == lesson_path ? 1 : (size_t)(slash - lesson_path);
    char *folder = malloc(length + 1);
    if (folder) {
        memcpy(folder, lesson_path, length);
        folder[length] = '\0';
    }
    return folder;
}

/* ---- opening a file beneath the lesson's folder ----
 * A check of the path followed by an open would leave a gap in which a symbolic link could be
 * swapped in. So the file is opened by walking its name one component at a time from a
 * descriptor of the lesson's folder, each with openat and O_NOFOLLOW: the kernel never follows
 * a link. A link met on the way is read (readlinkat) and its target walked in its place by the
 * same rules: relative, or absolute into the folder. A `..` may go back up only to the
 * folder, whatever links led where. Whatever a link is changed to while this runs, the file
 * opened is beneath the folder. */

enum { BENEATH_MAX_DEPTH = 64, BENEATH_MAX_LINKS = 40 };

typedef enum { BENEATH_OK, BENEATH_OUT, BENEATH_ERROR } beneath_status;

/* The directories entered: fd[0] is the lesson's folder, fd[depth] the current one. */
typedef struct {
    const char *folder;
    int fd[BENEATH_MAX_DEPTH + 1];
    int depth;
    int links;        /* links followed so far */
    int error;        /* errno of a BENEATH_ERROR */
} beneath;

static void beneath_close(beneath *b) {
    while (b->depth >= 0) close(b->fd[b->depth--]);
}

/* The part of an absolute link target inside the folder ("" for the folder itself), or NULL
 * when it points elsewhere. */
static const char *inside_folder(const char *folder, const char *target) {
    char *real = realpath(folder, NULL);
    const char *rest = NULL;
    if (real) {
        size_t length = strcmp(real, "/") == 0 ? 0 : strlen(real);
        if (strncmp(target, real, length) == 0 && (target[length] == '/' || !target[length]))
            rest = target + length;
    }
    free(real);
    return rest;
}

/* The name to walk instead of a link at `component` whose remainder is `after`: its target,
 * then the remainder. NULL with b->error (or *out set) when it cannot be read or leads out. */
static char *follow_link(beneath *b, const char *component, const char *after, bool *out) {
    char target[PATH_MAX];
    ssize_t length = readlinkat(b->fd[b->depth], component, target, sizeof target - 1);
    if (length < 0 || ++b->links > BENEATH_MAX_LINKS) {
        b->error = length < 0 ? errno : ELOOP;
        return NULL;
    }
    target[length] = '\0';
    const char *start = target;
    if (target[0] == '/') {   /* absolute: only into the folder, walked from its top */
        if (!(start = inside_folder(b->folder, target))) {
            *out = true;
            return NULL;
        }
        while (b->depth > 0) close(b->fd[b->depth--]);
    }
    size_t size = strlen(start) + strlen(after) + 2;
    char *name = malloc(size);
    if (!name) b->error = ENOMEM;
    else snprintf(name, size, "%s/%s", start, after);
    return name;
}

/* One step of the walk: the component of *name up to its next '/', which becomes the next
 * directory, or (when it is the last) the descriptor returned; *name moves past it. */
static beneath_status beneath_step(beneath *b, char **name, int *file) {
    char *at = *name;
    while (*at == '/') at++;
    size_t length = strcspn(at, "/");
    char *after = at + length;
    while (*after == '/') after++;
    bool last = *after == '\0';
    char saved = at[length];
    at[length] = '\0';
    beneath_status status = BENEATH_OK;
    if (length == 0 || (length == 1 && at[0] == '.')) {
        if (last) {   /* the name ends at a folder */
            b->error = EISDIR;
            status = BENEATH_ERROR;
        }
    } else if (length == 2 && at[0] == '.' && at[1] == '.') {
        if (b->depth == 0) status = BENEATH_OUT;
        else close(b->fd[b->depth--]);
        if (status == BENEATH_OK && last) {
            b->error = EISDIR;
            status = BENEATH_ERROR;
        }
    } else {
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
        int fd = openat(b->fd[b->depth], at, flags);
        b->error = fd < 0 ? errno : ENAMETOOLONG;
        struct stat st;
        if (fd >= 0 && last) {
            *file = fd;
        } else if (fd >= 0 && b->depth < BENEATH_MAX_DEPTH) {
            b->fd[++b->depth] = fd;
        } else if (fd >= 0) {   /* deeper than any lesson's folder needs */
            close(fd);
            status = BENEATH_ERROR;
        } else if (fstatat(b->fd[b->depth], at, &st, AT_SYMLINK_NOFOLLOW) != 0
                   || !S_ISLNK(st.st_mode)) {
            status = BENEATH_ERROR;
        } else {   /* O_NOFOLLOW met a link: walk its target instead */
            bool out = false;
            char *instead = follow_link(b, at, after, &out);
            if (!instead) return out ? BENEATH_OUT : BENEATH_ERROR;
            free(*name);
            *name = instead;
            return BENEATH_OK;
        }
    }
    at[length] = saved;
    memmove(*name, after, strlen(after) + 1);
    return status;
}

/* Opens name (relative) beneath folder for reading, without blocking: the descriptor, or -1
 * with *out set when the name or a link on its way leads out of the folder, or with *error
 * set to an errno. */
static int open_beneath(const char *folder, const char *name, bool *out, int *error) {
    beneath b = { .folder = folder, .depth = 0 };
    *out = false;
    b.fd[0] = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *rest = strdup(name);
    if (b.fd[0] < 0 || !rest) {
        *error = b.fd[0] < 0 ? errno : ENOMEM;
        if (b.fd[0] >= 0) close(b.fd[0]);
        free(rest);
        return -1;
    }
    int file = -1;
    beneath_status status = BENEATH_OK;
    while (status == BENEATH_OK && file < 0)
        status = beneath_step(&b, &rest, &file);
    beneath_close(&b);
    free(rest);
    *out = status == BENEATH_OUT;
    *error = b.error;
    return file;
}

/* Reads the whole of a regular file of at most LESSON_FILE_MAX_BYTES, opened as f (NULL: not
 * opened, why says why); NULL with error set. Closes f. */
static unsigned char *read_regular(FILE *f, const char *why, size_t *size, char *error,
                                   size_t error_size) {
    if (!f) {
        SAY("cannot read: %s", why);
        return NULL;
    }
    struct stat st;
    unsigned char *data = NULL;
    if (fstat(fileno(f), &st) != 0) {
        SAY("cannot read: %s", strerror(errno));
    } else if ((uintmax_t)st.st_size > LESSON_FILE_MAX_BYTES) {
        SAY("the file has %jd bytes; the limit for a data file is 256 MiB",
             (intmax_t)st.st_size);
    } else if ((data = malloc((size_t)st.st_size + 1)) == NULL) {
        SAY("not enough memory to read it");
    } else {
        size_t want = (size_t)st.st_size, got = fread(data, 1, want, f);
        if (got < want) {
            SAY("cannot read: %s", ferror(f) ? strerror(errno) : "the file shrank while read");
            free(data);
            data = NULL;
        }
        *size = got;
    }
    fclose(f);
    return data;
}

static const char *extension(const char *name) {
    const char *dot = strrchr(name, '.'), *slash = strrchr(name, '/');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

/* Opens the data file: by its path with --allow-paths, else beneath the lesson's folder. NULL
 * with *why set, and *refused when the file lies outside the folder. */
static FILE *open_data_file(const char *folder, const char *name, const char *path,
                            bool allow_paths, bool *refused, const char **why) {
    *refused = false;
    if (allow_paths) return lesson_open_regular(path, why);
    int error = 0, fd = open_beneath(folder, name, refused, &error);
    if (fd < 0) {
        *why = *refused ? NULL : strerror(error);
        return NULL;
    }
    return lesson_fdopen_regular(fd, why);   /* the same checks as every untrusted file */
}

lesson_file_status lesson_file_read(const char *lesson_path, const char *name, bool allow_paths,
                                    lesson_file_matrix *out, char **opened, char *error,
                                    size_t error_size) {
    *out = (lesson_file_matrix){ 0 };
    const char *format = extension(name);
    if (strcmp(format, "npy") != 0 && strcmp(format, "csv") != 0)
        return FAIL(LESSON_FILE_INVALID, "a data file must end in .npy or .csv");
    bool absolute = name[0] == '/';
    if (!allow_paths && (absolute || climbs_out(name)))
        return FAIL(LESSON_FILE_REFUSED, "%s", absolute
                    ? "an absolute path is refused: a lesson reads files from its own folder"
                    : "'..' leaves the lesson's folder, which is refused");
    char *folder = folder_of(lesson_path);
    size_t length = (folder ? strlen(folder) : 0) + strlen(name) + 2;
    char *path = folder ? malloc(length) : NULL;
    if (!path) {
        free(folder);
        return FAIL(LESSON_FILE_UNREADABLE, "not enough memory to read it");
    }
    if (absolute) snprintf(path, length, "%s", name);
    else snprintf(path, length, "%s/%s", folder, name);
    lesson_file_status status = LESSON_FILE_UNREADABLE;
    size_t size = 0;
    unsigned char *data = NULL;
    bool refused;
    const char *why = NULL;
    FILE *f = open_data_file(folder, name, path, allow_paths, &refused, &why);
    if (refused)
        status = FAIL(LESSON_FILE_REFUSED, "a symbolic link leads out of the lesson's folder, "
                      "which is refused");
    else if ((data = read_regular(f, why, &size, error, error_size)) != NULL)
        status = lesson_file_parse(format, data, size, out, error, error_size);
    free(data);
    if (status == LESSON_FILE_OK && opened) *opened = path;
    else free(path);
    free(folder);
    return status;
}

void lesson_file_shape(const lesson_file_matrix *m, char *out, size_t size) {
    if (m->ndim == 1) snprintf(out, size, "(%d,)", m->cols);
    else snprintf(out, size, "(%d, %d)", m->rows, m->cols);
}

/* ---- .npy ---- */

typedef struct {
    const char *p;
} cursor;

static void skip_space(cursor *c) {
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') c->p++;
}

static bool take(cursor *c, char ch) {
    skip_space(c);
    if (*c->p != ch) return false;
    c->p++;
    return true;
}

static bool take_word(cursor *c, const char *word) {
    skip_space(c);
    size_t length = strlen(word);
    if (strncmp(c->p, word, length) != 0) return false;
    c->p += length;
    return true;
}

/* A Python string literal in ' or " without escapes, into out (size bytes). */
static bool take_string(cursor *c, char *out, size_t size) {
    skip_space(c);
    char quote = *c->p;
    if (quote != '\'' && quote != '"') return false;
    const char *end = strchr(c->p + 1, quote);
    if (!end || (size_t)(end - c->p - 1) >= size || memchr(c->p + 1, '\\', (size_t)(end - c->p - 1)))
        return false;
    memcpy(out, c->p + 1, (size_t)(end - c->p - 1));
    out[end - c->p - 1] = '\0';
    c->p = end + 1;
    return true;
}

/* A tuple of whole numbers, "()", "(4,)" or "(3, 4)", of at most 3 dimensions (a third is
 * read only to be refused with its shape). */
static bool take_shape(cursor *c, long *dims, int *ndim) {
    if (!take(c, '(')) return false;
    *ndim = 0;
    while (!take(c, ')')) {
        skip_space(c);
        if (*ndim == 3 || *c->p < '0' || *c->p > '9') return false;
        long value = 0;
        while (*c->p >= '0' && *c->p <= '9') {
            if (value > 1000000000L) return false;
            value = value * 10 + (*c->p++ - '0');
        }
        dims[(*ndim)++] = value;
        if (!take(c, ',')) {
            if (!take(c, ')')) return false;
            break;
        }
    }
    return true;
}

typedef struct {
    char descr[16];
    bool fortran;
    long dims[3];
    int ndim;
} npy_header;

/* Parses numpy's header dict: exactly the keys descr, fortran_order and shape, once each. */
static bool parse_header(const char *text, npy_header *h) {
    cursor c = { text };
    bool seen[3] = { false, false, false };
    if (!take(&c, '{')) return false;
    while (!take(&c, '}')) {
        char key[32];
        int which = -1;
        if (!take_string(&c, key, sizeof key) || !take(&c, ':')) return false;
        if (strcmp(key, "descr") == 0 && take_string(&c, h->descr, sizeof h->descr)) which = 0;
        else if (strcmp(key, "fortran_order") == 0 && take_word(&c, "True")) which = 1, h->fortran = true;
        else if (strcmp(key, "fortran_order") == 0 && take_word(&c, "False")) which = 1, h->fortran = false;
        else if (strcmp(key, "shape") == 0 && take_shape(&c, h->dims, &h->ndim)) which = 2;
        if (which < 0 || seen[which]) return false;
        seen[which] = true;
        if (!take(&c, ',')) {
            if (!take(&c, '}')) return false;
            break;
        }
    }
    skip_space(&c);
    return *c.p == '\0' && seen[0] && seen[1] && seen[2];
}

typedef struct {
    char kind;        /* 'f' or 'i' */
    size_t bytes;     /* 4 or 8 */
    bool big;         /* big-endian */
} npy_type;

static bool parse_descr(const char *descr, npy_type *type) {
    if (strlen(descr) != 3 || (descr[0] != '<' && descr[0] != '>')
        || (descr[1] != 'f' && descr[1] != 'i') || (descr[2] != '4' && descr[2] != '8'))
        return false;
    *type = (npy_type){ descr[1], (size_t)(descr[2] - '0'), descr[0] == '>' };
    return true;
}

/* One value of the given type from its bytes. */
static double decode(const unsigned char *at, npy_type type) {
    uint64_t bits = 0;
    for (size_t i = 0; i < type.bytes; i++) {
        size_t from = type.big ? i : type.bytes - 1 - i;
        bits = bits << 8 | at[from];
    }
    if (type.kind == 'i') {
        if (type.bytes == 4) return (double)(int32_t)(uint32_t)bits;
        return (double)(int64_t)bits;
    }
    if (type.bytes == 4) {
        uint32_t narrow = (uint32_t)bits;
        float f;
        memcpy(&f, &narrow, sizeof f);
        return (double)f;
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* The shape of a matrix from the header's dims, refusing what a lesson cannot use. */
static lesson_file_status shape_of(const npy_header *h, lesson_file_matrix *out, char *error,
                                   size_t error_size) {
    if (h->ndim == 0) return FAIL(LESSON_FILE_INVALID, "holds a single number (shape ()), not a "
                                  "matrix; a lesson takes 1-D or 2-D arrays");
    if (h->ndim == 3) return FAIL(LESSON_FILE_INVALID, "has 3 dimensions (shape (%ld, %ld, %ld)); "
                                  "a lesson takes 1-D or 2-D arrays",
                                  h->dims[0], h->dims[1], h->dims[2]);
    long rows = h->ndim == 2 ? h->dims[0] : 1, cols = h->dims[h->ndim - 1];
    if (rows == 0 || cols == 0) return FAIL(LESSON_FILE_INVALID, "holds no values");
    if ((unsigned long)rows > LESSON_FILE_MAX_VALUES / (unsigned long)cols)
        return FAIL(LESSON_FILE_INVALID, "holds %ld × %ld values; the limit is %zu", rows, cols,
                    (size_t)LESSON_FILE_MAX_VALUES);
    out->ndim = h->ndim;
    out->rows = (int)rows;
    out->cols = (int)cols;
    return LESSON_FILE_OK;
}

/* Places each value of the file's data, in its order (C or Fortran), at row-major storage. */
static lesson_file_status read_values(const unsigned char *data, npy_type type, bool fortran,
                                      lesson_file_matrix *out, char *error, size_t error_size) {
    size_t count = (size_t)out->rows * (size_t)out->cols;
    out->values = malloc(count * sizeof *out->values);
    if (!out->values) return FAIL(LESSON_FILE_INVALID, "not enough memory to read it");
    for (size_t k = 0; k < count; k++) {
        size_t rows = (size_t)out->rows, cols = (size_t)out->cols;
        size_t row = fortran ? k % rows : k / cols, col = fortran ? k / rows : k % cols;
        double x = decode(data + k * type.bytes, type);
        if (!isfinite(x)) {
            free(out->values);
            out->values = NULL;
            return FAIL(LESSON_FILE_INVALID, "the value at row %zu, column %zu is %s; a lesson "
                        "takes finite numbers only", row + 1, col + 1, isnan(x) ? "nan" : "inf");
        }
        out->values[row * cols + col] = x;
    }
    return LESSON_FILE_OK;
}

static lesson_file_status parse_npy(const unsigned char *data, size_t size,
                                    lesson_file_matrix *out, char *error, size_t error_size) {
    if (size < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
        return FAIL(LESSON_FILE_INVALID, "not a .npy file (it does not start with \\x93NUMPY)");
    int major = data[6], minor = data[7];
    if (major < 1 || major > 3 || minor != 0)
        return FAIL(LESSON_FILE_INVALID, ".npy format version %d.%d is not supported (1.0, 2.0 "
                    "and 3.0 are)", major, minor);
    size_t start = major == 1 ? 10 : 12, length = 0;
    if (size < start) return FAIL(LESSON_FILE_INVALID, "the .npy header is cut short");
    for (size_t i = start; i-- > 8;) length = length << 8 | data[i];
    if (length > size - start || length > 65536)
        return FAIL(LESSON_FILE_INVALID, "the .npy header is cut short");
    char *text = malloc(length + 1);
    if (!text) return FAIL(LESSON_FILE_INVALID, "not enough memory to read it");
    memcpy(text, data + start, length);
    text[length] = '\0';
    npy_header h = { .ndim = -1 };
    bool parsed = strlen(text) == length && parse_header(text, &h);
    free(text);
    if (!parsed) return FAIL(LESSON_FILE_INVALID, "the .npy header cannot be read (it must be "
                             "a dict of descr, fortran_order and shape)");
    npy_type type;
    char descr[sizeof h.descr * 6];   /* the file's text, for a message: escaped (\x1b) */
    text_escape(h.descr, descr, sizeof descr);
    if (!parse_descr(h.descr, &type))
        return FAIL(LESSON_FILE_INVALID, "dtype '%s' is not supported; use <f8, >f8, <f4, >f4, "
                    "<i8, >i8, <i4 or >i4", descr);
    lesson_file_status status = shape_of(&h, out, error, error_size);
    if (status != LESSON_FILE_OK) return status;
    size_t want = (size_t)out->rows * (size_t)out->cols * type.bytes, have = size - start - length;
    if (have != want)
        return FAIL(LESSON_FILE_INVALID, "the data has %zu bytes; shape %s of %s needs %zu",
                    have, out->ndim == 1 ? "(n,)" : "(rows, cols)", descr, want);
    return read_values(data + start + length, type, h.fortran && out->ndim == 2, out, error,
                       error_size);
}

/* ---- .csv ---- */

#define FIELD_MAX 128

typedef struct {
    const char *p, *end;
    int line;             /* of the record being read, from 1 */
} csv_reader;

/* Reads one field into out (FIELD_MAX bytes, spaces around it trimmed), quoted or not. Returns
 * false when it is too long or a quote is not closed. */
static bool csv_field(csv_reader *r, char *out) {
    size_t n = 0;
    bool quoted = r->p < r->end && *r->p == '"';
    if (quoted) r->p++;
    while (r->p < r->end) {
        char ch = *r->p;
        if (quoted && ch == '"') {
            if (r->p + 1 < r->end && r->p[1] == '"') r->p++;
            else { r->p++; quoted = false; continue; }
        } else if (!quoted && (ch == ',' || ch == '\n' || ch == '\r')) {
            break;
        } else if (ch == '\n') {
            r->line++;
        }
        if (n + 1 >= FIELD_MAX) return false;
        out[n++] = ch;
        r->p++;
    }
    out[n] = '\0';
    if (quoted) return false;
    size_t first = strspn(out, " \t");
    while (n > first && (out[n - 1] == ' ' || out[n - 1] == '\t')) out[--n] = '\0';
    memmove(out, out + first, n - first + 1);
    return true;
}

typedef struct {
    double *values;
    size_t count, capacity;
} number_list;

static bool push(number_list *list, double x) {
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 64;
        double *grown = realloc(list->values, capacity * sizeof *grown);
        if (!grown) return false;
        list->values = grown;
        list->capacity = capacity;
    }
    list->values[list->count++] = x;
    return true;
}

/* Reads one record. Returns its field count, or -1 with error set; *numbers tells whether every
 * field was a number (the values are pushed only then, or when must_be_numbers). */
static int csv_record(csv_reader *r, number_list *list, bool must_be_numbers, bool *numbers,
                      char *error, size_t error_size) {
    char field[FIELD_MAX], shown[LESSON_ESCAPED_MAX];
    int fields = 0, line = r->line;   /* where the record starts, for messages */
    size_t mark = list->count;
    *numbers = true;
    for (;;) {
        if (!csv_field(r, field))
            return FAIL(-1, "line %d, field %d: a field too long for a number, or a quote "
                        "never closed", line, fields + 1);
        fields++;
        double x = 0.0;
        lesson_number_status status = lesson_parse_number(field, &x);
        if (status != LESSON_NUMBER_OK) {
            if (must_be_numbers)
                return FAIL(-1, "line %d, field %d: '%s' is not %s", line, fields,
                            lesson_escape(field, strlen(field), shown),
                            status == LESSON_NUMBER_SYNTAX ? "a number"
                            : status == LESSON_NUMBER_TINY ? "a number a double holds (it rounds "
                                                             "to zero)"
                            : "a finite number");
            *numbers = false;
        } else if (*numbers && !push(list, x)) {
            return FAIL(-1, "not enough memory to read it");
        }
        if (list->count > LESSON_FILE_MAX_VALUES)
            return FAIL(-1, "holds more than %zu values", (size_t)LESSON_FILE_MAX_VALUES);
        if (r->p >= r->end || *r->p != ',') break;
        r->p++;
    }
    if (!*numbers) list->count = mark;
    if (r->p < r->end && *r->p == '\r') r->p++;
    if (r->p < r->end && *r->p == '\n') r->p++;
    return fields;
}

/* A first line whose fields are separated by ';' (a spreadsheet set for decimal commas): the
 * message that says so, rather than "'0;1' is not a number". */
static bool semicolon_separated(const csv_reader *r) {
    const char *end = memchr(r->p, '\n', (size_t)(r->end - r->p));
    size_t length = end ? (size_t)(end - r->p) : (size_t)(r->end - r->p);
    return memchr(r->p, ';', length) != NULL;
}

/* Whether the record at r (not consumed) has a field that is a number: then it is a row with a
 * mistake in it, not a header. */
static bool record_has_number(csv_reader r) {
    char field[FIELD_MAX];
    double x = 0.0;
    for (;;) {
        if (!csv_field(&r, field)) return false;
        if (lesson_parse_number(field, &x) == LESSON_NUMBER_OK) return true;
        if (r.p >= r.end || *r.p != ',') return false;
        r.p++;
    }
}

/* The line at p (up to end) into out, for the note of a header: cut before a character that
 * does not fit, with "…" after it. */
static void copy_line(const char *p, const char *end, char *out, size_t size) {
    static const char cut[] = "\xe2\x80\xa6";
    size_t length = 0;
    while (p + length < end && p[length] != '\n' && p[length] != '\r') length++;
    bool cutting = length >= size;
    if (cutting) {
        length = size - sizeof cut;
        while (length > 0 && ((unsigned char)p[length] & 0xc0) == 0x80) length--;
    }
    snprintf(out, size, "%.*s%s", (int)length, p, cutting ? cut : "");
}

static lesson_file_status parse_csv(const unsigned char *data, size_t size,
                                    lesson_file_matrix *out, char *error, size_t error_size) {
    csv_reader r = { (const char *)data, (const char *)data + size, 1 };
    if (size >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) r.p += 3;  /* a spreadsheet's BOM */
    if (memchr(data, '\0', size)) return FAIL(LESSON_FILE_INVALID, "a NUL byte: not a CSV file");
    number_list list = { 0 };
    /* The first record may be a header (every field text); one with a number in it is a row. */
    int width = -1, rows = 0, width_line = 0;
    bool first = true, header_allowed = !record_has_number(r);
    char header[sizeof out->header] = "";   /* all text: read as the header, and noted */
    if (header_allowed) copy_line(r.p, r.end, header, sizeof header);
    while (r.p < r.end) {
        if (*r.p == '\n' || *r.p == '\r') {
            free(list.values);
            return FAIL(LESSON_FILE_INVALID, "line %d is empty; every row must hold numbers",
                        r.line);
        }
        if (first && semicolon_separated(&r)) {
            return FAIL(LESSON_FILE_INVALID, "line 1 separates its fields with ';'; a CSV "
                        "file separates them with ',' (and writes decimals with a point)");
        }
        bool numbers = true;
        int fields = csv_record(&r, &list, !(first && header_allowed), &numbers, error,
                                error_size);
        if (fields < 0) {
            free(list.values);
            return LESSON_FILE_INVALID;
        }
        if (width >= 0 && fields != width) {
            free(list.values);
            return FAIL(LESSON_FILE_INVALID, "line %d has %d fields; line %d has %d", r.line,
                        fields, width_line, width);
        }
        width = fields;
        width_line = r.line;
        rows += numbers;   /* the header row is no row of numbers */
        first = false;
        r.line++;
    }
    if (rows == 0) {
        free(list.values);
        return FAIL(LESSON_FILE_INVALID, "holds no rows of numbers");
    }
    *out = (lesson_file_matrix){ .ndim = 2, .rows = rows, .cols = width, .values = list.values };
    memcpy(out->header, header, sizeof header);
    return LESSON_FILE_OK;
}

lesson_file_status lesson_file_parse(const char *format, const unsigned char *data, size_t size,
                                     lesson_file_matrix *out, char *error, size_t error_size) {
    *out = (lesson_file_matrix){ 0 };
    assert(strcmp(format, "npy") == 0 || strcmp(format, "csv") == 0);
    return strcmp(format, "npy") == 0 ? parse_npy(data, size, out, error, error_size)
                                      : parse_csv(data, size, out, error, error_size);
}
