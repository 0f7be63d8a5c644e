/* Where a data file ({file: NAME}) may be read from: opened beneath the lesson's folder, one
 * component at a time, so a symbolic link inside the folder that points out is refused and one
 * that stays inside is followed, whatever form it takes (relative, absolute, through `..`, a
 * chain of links). --allow-paths (allow_paths) reads any path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "support.h"
#include "lesson_file.h"

typedef struct {
    char root[64];      /* a scratch folder: lesson/ inside it, outside/ beside that */
    char lesson[128];   /* root/lesson/l.yaml (never read: only its folder matters) */
} scratch;

static void path_in(const scratch *s, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", s->root, name);
}

static void write_csv(const scratch *s, const char *name, const char *text)
{
    char path[256];
    path_in(s, name, path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void link_at(const scratch *s, const char *target, const char *name)
{
    char path[256];
    path_in(s, name, path, sizeof path);
    assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
    scratch *s = calloc(1, sizeof *s);
    snprintf(s->root, sizeof s->root, "/tmp/attnstep-paths-XXXXXX");
    if (!s || !mkdtemp(s->root)) return -1;
    char path[256];
    const char *folders[] = { "lesson", "lesson/sub", "lesson/sub/deeper", "outside" };
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        path_in(s, folders[i], path, sizeof path);
        if (mkdir(path, 0700) != 0) return -1;
    }
    snprintf(s->lesson, sizeof s->lesson, "%s/lesson/l.yaml", s->root);
    write_csv(s, "lesson/in.csv", "1,2\n");
    write_csv(s, "lesson/sub/deeper/deep.csv", "3,4\n");
    write_csv(s, "outside/secret.csv", "5,6\n");
    char absolute[256];
    path_in(s, "lesson/in.csv", absolute, sizeof absolute);
    link_at(s, absolute, "lesson/absolute_in.csv");            /* absolute, inside: followed */
    link_at(s, "in.csv", "lesson/relative_in.csv");            /* relative, inside: followed */
    link_at(s, "../in.csv", "lesson/sub/up_in.csv");           /* up, still inside */
    link_at(s, "relative_in.csv", "lesson/chain.csv");         /* a link to a link */
    link_at(s, "sub/deeper", "lesson/deeper_dir");             /* a folder by a link */
    link_at(s, "../outside/secret.csv", "lesson/out.csv");     /* relative, leads out */
    link_at(s, "../../outside", "lesson/sub/out_dir");         /* a folder outside */
    path_in(s, "outside/secret.csv", absolute, sizeof absolute);
    link_at(s, absolute, "lesson/absolute_out.csv");           /* absolute, leads out */
    link_at(s, "loop.csv", "lesson/loop.csv");                 /* a link to itself */
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    scratch *s = *state;
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", s->root);
    int status = system(command);
    free(s);
    return status == 0 ? 0 : -1;
}

/* Reads name for the lesson; returns the status, with the first value in *first when read. */
static lesson_file_status read_name(const scratch *s, const char *name, bool allow,
                                    double *first, char *error, size_t size)
{
    lesson_file_matrix m;
    lesson_file_status status = lesson_file_read(s->lesson, name, allow, &m, NULL, error, size);
    if (status == LESSON_FILE_OK) {
        *first = m.values[0];
        free(m.values);
    }
    return status;
}

static void assert_reads(const scratch *s, const char *name, double expected)
{
    char error[256] = "";
    double first = 0;
    if (read_name(s, name, false, &first, error, sizeof error) != LESSON_FILE_OK) {
        fprintf(stderr, "%s: %s\n", name, error);
        fail();
    }
    assert_true(first == expected);
}

static void assert_refused(const scratch *s, const char *name, const char *words)
{
    char error[256] = "";
    double first = 0;
    lesson_file_status status = read_name(s, name, false, &first, error, sizeof error);
    if (status == LESSON_FILE_OK || !strstr(error, words)) {
        fprintf(stderr, "%s: status %d, '%s'; expected '%s'\n", name, (int)status, error, words);
        fail();
    }
}

static void test_links_inside_are_followed(void **state)
{
    const scratch *s = *state;
    assert_reads(s, "in.csv", 1);
    assert_reads(s, "./sub/../in.csv", 1);
    assert_reads(s, "sub/deeper/deep.csv", 3);
    assert_reads(s, "relative_in.csv", 1);
    assert_reads(s, "absolute_in.csv", 1);
    assert_reads(s, "sub/up_in.csv", 1);
    assert_reads(s, "chain.csv", 1);
    assert_reads(s, "deeper_dir/deep.csv", 3);
    assert_reads(s, "deeper_dir/../deeper/deep.csv", 3);   /* .. of the folder the link named */
}

static void test_links_out_are_refused(void **state)
{
    const scratch *s = *state;
    const char *out = "a symbolic link leads out of the lesson's folder";
    assert_refused(s, "out.csv", out);
    assert_refused(s, "absolute_out.csv", out);
    assert_refused(s, "sub/out_dir/secret.csv", out);
    assert_refused(s, "../outside/secret.csv", "'..' leaves the lesson's folder");
    assert_refused(s, "loop.csv", "cannot read");
    assert_refused(s, "missing.csv", "cannot read: No such file or directory");
    assert_refused(s, "sub/missing/x.csv", "cannot read: No such file or directory");
    assert_refused(s, "in.csv/x.csv", "cannot read: Not a directory");
}

/* --allow-paths reads through any link, and absolute paths. */
static void test_allow_paths_reads_anywhere(void **state)
{
    const scratch *s = *state;
    char error[256], path[256];
    double first = 0;
    assert_int_equal(read_name(s, "out.csv", true, &first, error, sizeof error), LESSON_FILE_OK);
    assert_true(first == 5);
    path_in(s, "outside/secret.csv", path, sizeof path);
    assert_int_equal(read_name(s, path, true, &first, error, sizeof error), LESSON_FILE_OK);
    assert_true(first == 5);
}

/* The link is replaced between two reads: each read is judged by what the link is then. */
static void test_a_swapped_link_is_judged_when_opened(void **state)
{
    const scratch *s = *state;
    char path[256];
    path_in(s, "lesson/swapped.csv", path, sizeof path);
    assert_int_equal(symlink("in.csv", path), 0);
    assert_reads(s, "swapped.csv", 1);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink("../outside/secret.csv", path), 0);
    assert_refused(s, "swapped.csv", "a symbolic link leads out of the lesson's folder");
    assert_int_equal(unlink(path), 0);
}

/* A link swapped back and forth between a file inside and one outside, by another process, as
 * fast as it can, while the file is read over and over: a check of the path followed by an
 * open would now and then read the file outside; opening beneath the folder never does. */
static void test_a_link_swapped_while_read_never_leads_out(void **state)
{
    const scratch *s = *state;
    char path[256], in[256], out[256];
    path_in(s, "lesson/race.csv", path, sizeof path);
    path_in(s, "lesson/race_in", in, sizeof in);
    path_in(s, "lesson/race_out", out, sizeof out);
    assert_int_equal(symlink("in.csv", path), 0);
    pid_t swapper = fork();
    assert_true(swapper >= 0);
    if (swapper == 0) {   /* replaces the link atomically (rename), inside and outside in turn */
        for (unsigned long i = 0;; i++) {
            const char *tmp = i % 2 ? in : out;
            if (symlink(i % 2 ? "in.csv" : "../outside/secret.csv", tmp) != 0
                || rename(tmp, path) != 0)
                _exit(1);
        }
    }
    int read_inside = 0, refused = 0, read_outside = 0;
    /* 3000 reads, and more until both kinds were seen (a busy machine may run the swapper
     * late), up to a bound that fails the assertion below if it never ran */
    for (int i = 0; i < 3000 || (!(read_inside && refused) && i < 1000000); i++) {
        char error[256];
        double first = 0;
        if (read_name(s, "race.csv", false, &first, error, sizeof error) == LESSON_FILE_OK) {
            read_inside += first == 1;
            read_outside += first == 5;
        } else {
            refused += strstr(error, "leads out") != NULL;
        }
    }
    kill(swapper, SIGKILL);
    waitpid(swapper, NULL, 0);
    unlink(path);
    unlink(in);
    unlink(out);
    fprintf(stderr, "race: %d read inside, %d refused, %d read outside\n", read_inside,
            refused, read_outside);
    assert_int_equal(read_outside, 0);
    assert_true(read_inside > 0 && refused > 0);   /* the swaps did happen while it read */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_links_inside_are_followed),
        cmocka_unit_test(test_links_out_are_refused),
        cmocka_unit_test(test_allow_paths_reads_anywhere),
        cmocka_unit_test(test_a_swapped_link_is_judged_when_opened),
        cmocka_unit_test(test_a_link_swapped_while_read_never_leads_out),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
