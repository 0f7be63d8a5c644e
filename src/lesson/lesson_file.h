/* Matrices from data files beside a lesson: `{file: NAME.npy}` (numpy's format, versions 1.0 to
 * 3.0) or `{file: NAME.csv}` (RFC 4180 numbers, an optional header row), with the checks that
 * keep a downloaded lesson from reading files it should not. */
#ifndef ATTNSTEP_LESSON_FILE_H
#define ATTNSTEP_LESSON_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* The largest data file read (checked with fstat before reading): a 4096 × 4096 matrix of
 * doubles with room for its header, or as CSV text. */
#define LESSON_FILE_MAX_BYTES ((size_t)256 << 20)
/* The most values one file may hold: enough for embeddings of every token and source token. */
#define LESSON_FILE_MAX_VALUES ((size_t)2 * 4096 * 4096)

typedef struct {
    int ndim;          /* 1 or 2, as the file states it (a CSV file is always 2) */
    int rows, cols;    /* a 1-D file of n values is one row of n */
    double *values;    /* rows × cols, row-major, each finite */
    char header[96];   /* a CSV file's first line when, every field text, it was read as a
                          header (cut at a character, "…" after; raw: escape it), else "" */
} lesson_file_matrix;

typedef enum {
    LESSON_FILE_OK,
    LESSON_FILE_REFUSED,    /* the path leaves the lesson's folder (or is absolute) */
    LESSON_FILE_UNREADABLE, /* cannot be opened or read, not a regular file, or too large */
    LESSON_FILE_INVALID     /* not a matrix of a supported kind */
} lesson_file_status;

/* Reads the matrix in the file `name`, a path relative to the folder of lesson_path, choosing
 * the format from its extension (.npy or .csv). Without allow_paths, an absolute name, a `..`
 * that climbs out of the folder, or a symbolic link that leads out of it is refused. The file
 * is opened without blocking and must be a regular file of at most LESSON_FILE_MAX_BYTES.
 * On LESSON_FILE_OK fills out (free out->values) and, when opened is not NULL, sets *opened to
 * the path it opened (free it), for a view that follows the file; otherwise writes why into
 * error (size bytes, a sentence without the file's name, which the caller adds). */
lesson_file_status lesson_file_read(const char *lesson_path, const char *name, bool allow_paths,
                                    lesson_file_matrix *out, char **opened, char *error,
                                    size_t size);

/* The same from the bytes of a file already in memory (data, size bytes); format is "npy" or
 * "csv". For tests and the fuzzer. */
lesson_file_status lesson_file_parse(const char *format, const unsigned char *data, size_t size,
                                     lesson_file_matrix *out, char *error, size_t error_size);

/* Writes a shape as numpy prints it, "(3, 4)" or "(4,)", into out (size bytes). */
void lesson_file_shape(const lesson_file_matrix *m, char *out, size_t size);

#endif
