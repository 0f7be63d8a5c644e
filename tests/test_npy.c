/* Data files and numpy's draws: .npy headers of each version, dtype, byte order and memory order;
 * CSV with and without a header; every refusal of a bad file or path says why; the generator's
 * first numbers are numpy's (the full comparison against numpy itself is tests/check_numpy.sh). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "support.h"
#include "lesson.h"
#include "lesson_file.h"
#include "numpy_random.h"

/* ---- helpers ---- */

/* A .npy file in memory: version major (1, 2 or 3), the header dict, then data (bytes). */
static size_t make_npy(unsigned char *out, int major, const char *dict, const void *data,
                       size_t bytes) {
    size_t prefix = major == 1 ? 10 : 12, length = strlen(dict) + 1;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++) out[8 + i] = (unsigned char)(length >> (8 * i));
    memcpy(out + prefix, dict, length - 1);
    out[prefix + length - 1] = '\n';
    memcpy(out + prefix + length, data, bytes);
    return prefix + length + bytes;
}

static lesson_file_status parse(const char *format, const void *data, size_t size,
                                lesson_file_matrix *m, char *error) {
    return lesson_file_parse(format, data, size, m, error, 256);
}

static lesson_file_status parse_text(const char *text, lesson_file_matrix *m, char *error) {
    return parse("csv", text, strlen(text), m, error);
}

/* Parses a .npy that must be refused, and checks the reason. */
static void expect_npy_error(int major, const char *dict, const void *data, size_t bytes,
                             const char *reason) {
    unsigned char file[512];
    size_t size = make_npy(file, major, dict, data, bytes);
    lesson_file_matrix m;
    char error[256];
    assert_int_equal(parse("npy", file, size, &m, error), LESSON_FILE_INVALID);
    assert_null(m.values);
    assert_string_equal(error, reason);
}

static void expect_csv_error(const char *text, const char *reason) {
    lesson_file_matrix m;
    char error[256];
    assert_int_equal(parse_text(text, &m, error), LESSON_FILE_INVALID);
    assert_null(m.values);
    assert_string_equal(error, reason);
}

/* ---- .npy ---- */

static void test_npy_little_endian_doubles_in_c_order(void **state) {
    (void)state;
    const double data[] = { 1.5, -2.0, 0.25, 3.0, 4.0, 1e-300 };
    unsigned char file[512];
    size_t size = make_npy(file, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                           data, sizeof data);
    lesson_file_matrix m;
    char error[256];
    assert_int_equal(parse("npy", file, size, &m, error), LESSON_FILE_OK);
    assert_int_equal(m.ndim, 2);
    assert_int_equal(m.rows, 2);
    assert_int_equal(m.cols, 3);
    support_assert_close("values", data, m.values, 6, 0.0);
    char shape[32];
    lesson_file_shape(&m, shape, sizeof shape);
    assert_string_equal(shape, "(2, 3)");
    free(m.values);
}

static void test_npy_big_endian_ints_in_fortran_order(void **state) {
    (void)state;
    /* The column-major bytes of [[1, -2, 3], [4, 5, -6]] as big-endian int32. */
    const unsigned char data[] = { 0, 0, 0, 1, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 5,
                                   0, 0, 0, 3, 0xff, 0xff, 0xff, 0xfa };
    unsigned char file[512];
    size_t size = make_npy(file, 2, "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3)}",
                           data, sizeof data);
    lesson_file_matrix m;
    char error[256];
    assert_int_equal(parse("npy", file, size, &m, error), LESSON_FILE_OK);
    const double expected[] = { 1, -2, 3, 4, 5, -6 };
    support_assert_close("values", expected, m.values, 6, 0.0);
    free(m.values);
}

static void test_npy_floats_int64_and_one_dimension(void **state) {
    (void)state;
    const float narrow[] = { 0.1f, -3.5f };
    unsigned char file[512];
    size_t size = make_npy(file, 3, "{\"descr\": \"<f4\", \"fortran_order\": False, "
                           "\"shape\": (2,)}", narrow, sizeof narrow);
    lesson_file_matrix m;
    char error[256], shape[32];
    assert_int_equal(parse("npy", file, size, &m, error), LESSON_FILE_OK);
    assert_int_equal(m.ndim, 1);
    assert_int_equal(m.rows, 1);
    assert_int_equal(m.cols, 2);
    lesson_file_shape(&m, shape, sizeof shape);
    assert_string_equal(shape, "(2,)");
    const double widened[] = { (double)0.1f, -3.5 };
    support_assert_close("f4 values", widened, m.values, 2, 0.0);
    free(m.values);
    const long long wide[] = { -7, 1LL << 40 };
    size = make_npy(file, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }",
                    wide, sizeof wide);
    assert_int_equal(parse("npy", file, size, &m, error), LESSON_FILE_OK);
    const double expected[] = { -7.0, 1099511627776.0 };
    support_assert_close("i8 values", expected, m.values, 2, 0.0);
    free(m.values);
}

static void test_npy_refusals_say_why(void **state) {
    (void)state;
    const double two[] = { 1.0, 2.0 }, with_nan[] = { 1.0, NAN };
    const char *f8 = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
    expect_npy_error(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", two,
                     sizeof two, "dtype '<c16' is not supported; use <f8, >f8, <f4, >f4, <i8, "
                     ">i8, <i4 or >i4");
    /* the file's dtype text is escaped: it reaches stderr in every mode (issue 26) */
    expect_npy_error(1, "{'descr': '\x1b]0;x\x07', 'fortran_order': False, 'shape': (1,), }",
                     two, sizeof two, "dtype '\\x1b]0;x\\x07' is not supported; use <f8, >f8, "
                     "<f4, >f4, <i8, >i8, <i4 or >i4");
    expect_npy_error(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 2), }", two,
                     sizeof two, "has 3 dimensions (shape (1, 1, 2)); a lesson takes 1-D or 2-D "
                     "arrays");
    expect_npy_error(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", two,
                     sizeof(double), "holds a single number (shape ()), not a matrix; a lesson "
                     "takes 1-D or 2-D arrays");
    expect_npy_error(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 2), }", two, 0,
                     "holds no values");
    expect_npy_error(1, f8, two, sizeof(double), "the data has 8 bytes; shape (n,) of <f8 needs 16");
    expect_npy_error(1, f8, with_nan, sizeof with_nan, "the value at row 1, column 2 is nan; a "
                     "lesson takes finite numbers only");
    expect_npy_error(1, "{'descr': '<f8', 'shape': (2,), }", two, sizeof two,
                     "the .npy header cannot be read (it must be a dict of descr, fortran_order "
                     "and shape)");
    expect_npy_error(4, f8, two, sizeof two, ".npy format version 4.0 is not supported (1.0, "
                     "2.0 and 3.0 are)");
    lesson_file_matrix m;
    char error[256];
    assert_int_equal(parse("npy", "PK\3\4zipfile", 11, &m, error), LESSON_FILE_INVALID);
    assert_string_equal(error, "not a .npy file (it does not start with \\x93NUMPY)");
}

/* ---- .csv ---- */

static void test_csv_with_header_crlf_quotes_and_bom(void **state) {
    (void)state;
    lesson_file_matrix m;
    char error[256];
    assert_int_equal(parse_text("\xef\xbb\xbf" "x,\"y, z\"\r\n1.5, -2\r\n\"3e-1\",4\r\n", &m,
                                error), LESSON_FILE_OK);
    assert_int_equal(m.rows, 2);
    assert_int_equal(m.cols, 2);
    const double expected[] = { 1.5, -2.0, 0.3, 4.0 };
    support_assert_close("values", expected, m.values, 4, 0.0);
    assert_string_equal(m.header, "x,\"y, z\"");   /* the guess the loader notes */
    free(m.values);
    assert_int_equal(parse_text("0.5,1\n2,3", &m, error), LESSON_FILE_OK);
    assert_int_equal(m.rows, 2);
    assert_string_equal(m.header, "");   /* no header, nothing to note */
    free(m.values);
    char long_header[200];   /* a long header is cut before a character, with … after it */
    snprintf(long_header, sizeof long_header, "%s\xc3\xa9%s,b\n1,2\n",
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
             "bbbbbbbbbbbbbbbbbbbb");
    assert_int_equal(parse_text(long_header, &m, error), LESSON_FILE_OK);
    assert_int_equal(strlen(m.header), 91 + 3);
    assert_string_equal(m.header + 91, "\xe2\x80\xa6");
    free(m.values);
    /* a spreadsheet's BOM before a file without a header: the BOM must not stick to the first
     * number (a header would hide it, its text being no number anyway) */
    assert_int_equal(parse_text("\xef\xbb\xbf" "1,2\n3,4\n", &m, error), LESSON_FILE_OK);
    assert_int_equal(m.rows, 2);
    assert_true(m.values[0] == 1.0);
    free(m.values);
}

static void test_csv_refusals_say_why(void **state) {
    (void)state;
    expect_csv_error("1,2\n3\n", "line 2 has 1 fields; line 1 has 2");
    expect_csv_error("a,b\n1,2\n3,x\n", "line 3, field 2: 'x' is not a number");
    expect_csv_error("a,b\nc,d\n1,2\n", "line 2, field 1: 'c' is not a number");
    expect_csv_error("1,2\n\n3,4\n", "line 2 is empty; every row must hold numbers");
    /* a header then a ragged row names the row before by its line (once stored as -1) */
    expect_csv_error("a,b\n1,2,3\n", "line 2 has 3 fields; line 1 has 2");
    /* a first row with a mistyped number is a row, not a header taken silently */
    expect_csv_error("1,O.5\n0,1\n", "line 1, field 2: 'O.5' is not a number");
    /* fields separated by ';' (a spreadsheet's decimal-comma setting), with or without a header */
    expect_csv_error("0,5;1,5\n1;0\n", "line 1 separates its fields with ';'; a CSV file "
                     "separates them with ',' (and writes decimals with a point)");
    expect_csv_error("x;y\n1;0\n", "line 1 separates its fields with ';'; a CSV file "
                     "separates them with ',' (and writes decimals with a point)");
    expect_csv_error("a,b\n", "holds no rows of numbers");
    expect_csv_error("1,2\n3,nan\n", "line 2, field 2: 'nan' is not a finite number");
    expect_csv_error("1,\"2\n", "line 1, field 2: a field too long for a number, or a quote never "
                     "closed");
}

/* ---- paths ---- */

static void test_paths_out_of_the_folder_are_refused(void **state) {
    (void)state;
    lesson_file_matrix m;
    char error[256];
    assert_int_equal(lesson_file_read("lessons/x.yaml", "/etc/x.csv", false, &m, NULL, error, 256),
                     LESSON_FILE_REFUSED);
    assert_string_equal(error, "an absolute path is refused: a lesson reads files from its own "
                        "folder");
    assert_int_equal(lesson_file_read("lessons/x.yaml", "a/../../x.npy", false, &m, NULL, error,
                                      256),
                     LESSON_FILE_REFUSED);
    assert_string_equal(error, "'..' leaves the lesson's folder, which is refused");
    /* Climbing back in is fine; the file then merely does not exist. */
    assert_int_equal(lesson_file_read("lessons/x.yaml", "a/../none.npy", false, &m, NULL, error,
                                      256),
                     LESSON_FILE_UNREADABLE);
    assert_string_equal(error, "cannot read: No such file or directory");
    assert_int_equal(lesson_file_read("lessons/x.yaml", "x.txt", false, &m, NULL, error, 256),
                     LESSON_FILE_INVALID);
    assert_string_equal(error, "a data file must end in .npy or .csv");
    /* A folder is not a regular file, whatever its name. */
    char folder[] = "/tmp/attnstep-npy-XXXXXX", inner[64], lesson_path[64];
    assert_non_null(mkdtemp(folder));
    snprintf(inner, sizeof inner, "%s/d.csv", folder);
    snprintf(lesson_path, sizeof lesson_path, "%s/l.yaml", folder);
    assert_int_equal(mkdir(inner, 0700), 0);
    assert_int_equal(lesson_file_read(lesson_path, "d.csv", false, &m, NULL, error, 256),
                     LESSON_FILE_UNREADABLE);
    assert_string_equal(error, "cannot read: it is a directory, not a regular file");
    rmdir(inner);
    /* A good file: its numbers, and the path opened, for a view that follows it. */
    char good[64], *opened = NULL;
    snprintf(good, sizeof good, "%s/g.csv", folder);
    FILE *file = fopen(good, "w");
    assert_non_null(file);
    fputs("1,2\n", file);
    fclose(file);
    assert_int_equal(lesson_file_read(lesson_path, "./g.csv", false, &m, &opened, error, 256),
                     LESSON_FILE_OK);
    snprintf(good, sizeof good, "%s/./g.csv", folder);
    assert_string_equal(opened, good);
    assert_int_equal(m.cols, 2);
    free(m.values);
    free(opened);
    snprintf(good, sizeof good, "%s/g.csv", folder);
    unlink(good);
    rmdir(folder);
}

/* ---- through the loader ---- */

static void write_file(const char *folder, const char *name, const char *text) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fputs(text, file);
    fclose(file);
}

/* A lesson whose embeddings and W_Q come from files: the numbers, the files it lists for a view
 * to follow, and --allow-paths (lesson_options.allow_paths) for a path outside its folder. */
static void test_lesson_loads_files_and_lists_them(void **state) {
    (void)state;
    char folder[] = "/tmp/attnstep-lesson-XXXXXX", lesson_path[64], csv[64], text[512];
    assert_non_null(mkdtemp(folder));
    snprintf(lesson_path, sizeof lesson_path, "%s/l.yaml", folder);
    snprintf(csv, sizeof csv, "%s/w.csv", folder);
    write_file(folder, "e.csv", "x,y\n1,2\n3,4\n");
    write_file(folder, "w.csv", "0,1\n1,0\n");
    write_file(folder, "l.yaml", "title: t\ntokens: [a, b]\nembeddings: {file: e.csv}\n"
                                 "W_Q: {file: w.csv}\n");
    lesson l;
    lesson_diagnostics d;
    assert_int_equal(lesson_load(lesson_path, &l, &d), LESSON_OK);
    assert_int_equal(d.count, 0);
    /* e.csv's header is a guess, noted in the lesson and never a failure */
    assert_non_null(l.notes);
    assert_int_equal(l.notes->count, 1);
    assert_int_equal(l.notes->items[0].severity, LESSON_SEVERITY_NOTE);
    assert_int_equal(l.notes->items[0].line, 3);
    assert_string_equal(l.notes->items[0].message, "embeddings 'e.csv': line 1 (x,y) is read as "
                        "a header, not as a row of numbers, because every field in it is text");
    const double embeddings[] = { 1, 2, 3, 4 }, w_q[] = { 0, 1, 1, 0 };
    assert_int_equal(l.input.d_model, 2);
    support_assert_close("embeddings", embeddings, l.input.embeddings, 4, 0.0);
    support_assert_close("W_Q", w_q, l.input.W_Q, 4, 0.0);
    assert_int_equal(l.n_data_files, 2);
    assert_string_equal(l.data_files[1], csv);
    lesson_free(&l);
    snprintf(text, sizeof text, "title: t\ntokens: [a, b]\nembeddings: {file: e.csv}\n"
             "W_Q: {file: %s}\n", csv);   /* absolute: refused unless allowed */
    write_file(folder, "l.yaml", text);
    assert_int_equal(lesson_load(lesson_path, &l, &d), LESSON_INVALID);
    assert_int_equal(d.count, 1);   /* the error alone: a note is said only when nothing fails */
    assert_int_equal(d.items[0].severity, LESSON_SEVERITY_ERROR);
    lesson_diagnostics_free(&d);
    lesson_options allowed = { .allow_paths = true };
    assert_int_equal(lesson_load_with(lesson_path, &allowed, &l, &d), LESSON_OK);
    support_assert_close("W_Q by absolute path", w_q, l.input.W_Q, 4, 0.0);
    lesson_free(&l);
    const char *names[] = { "e.csv", "w.csv", "l.yaml" };
    for (int i = 0; i < 3; i++) {
        snprintf(text, sizeof text, "%s/%s", folder, names[i]);
        unlink(text);
    }
    rmdir(folder);
}

/* ---- numpy's generator ---- */

static void test_numpy_generator_matches_numpy(void **state) {
    (void)state;
    numpy_random_state s;
    numpy_random_seed(&s, 5489);   /* MT19937's reference seed: its first outputs are published */
    assert_int_equal(numpy_random_next32(&s), 3499211612u);
    assert_int_equal(numpy_random_next32(&s), 581869302u);
    numpy_random_seed(&s, 42);     /* np.random.seed(42); np.random.random_sample() */
    assert_true(numpy_random_uniform(&s) == 0.3745401188473625);
    numpy_random_seed(&s, 42);     /* np.random.seed(42); np.random.randn(3) */
    double drawn[3];
    numpy_random_fill(&s, 1.0, drawn, 3);
    const double randn42[] = { 0.4967141530112327, -0.13826430117118466, 0.6476885381006925 };
    support_assert_close("seed 42", randn42, drawn, 3, 0.0);
    assert_true(s.has_cached);     /* the second of the last pair waits for the next draw */
    numpy_random_seed(&s, 0);      /* seeding again forgets it, as numpy does */
    assert_false(s.has_cached);
    numpy_random_fill(&s, 2.0, drawn, 2);
    const double twice[] = { 2 * 1.764052345967664, 2 * 0.4001572083672233 };
    support_assert_close("seed 0, scale 2", twice, drawn, 2, 0.0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_little_endian_doubles_in_c_order),
        cmocka_unit_test(test_npy_big_endian_ints_in_fortran_order),
        cmocka_unit_test(test_npy_floats_int64_and_one_dimension),
        cmocka_unit_test(test_npy_refusals_say_why),
        cmocka_unit_test(test_csv_with_header_crlf_quotes_and_bom),
        cmocka_unit_test(test_csv_refusals_say_why),
        cmocka_unit_test(test_paths_out_of_the_folder_are_refused),
        cmocka_unit_test(test_lesson_loads_files_and_lists_them),
        cmocka_unit_test(test_numpy_generator_matches_numpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
