/* --record FILE (ui_record.h): refused when it is an input or not a regular file; written
 * beside FILE under a temporary name and renamed at the end. */
#include "ui_record.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "text.h"

/* Says that FILE cannot be written, and why. */
static void say_failed(const char *path, const char *why)
{
    fputs("attnstep: --record ", stderr);
    text_write_escaped(stderr, path, false);
    fprintf(stderr, ": cannot write the recording: %s\n", why);
}

/* What a file that is not regular is: a FIFO would block the open, a device is no file. */
static const char *not_regular(mode_t mode)
{
    if (S_ISDIR(mode)) return "it is a directory, not a regular file";
    if (S_ISFIFO(mode)) return "it is a FIFO, not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device, not a regular file";
    if (S_ISSOCK(mode)) return "it is a socket, not a regular file";
    return "it is not a regular file";
}

exit_status ui_record_check(const ui_record *r, const ui_record_input *input)
{
    struct stat sb;
    if (!r->exists || !input->path || stat(input->path, &sb) != 0) return EXIT_STATUS_OK;
    if (sb.st_dev != r->dev || sb.st_ino != r->ino) return EXIT_STATUS_OK;
    fputs("attnstep: --record ", stderr);
    text_write_escaped(stderr, r->path, false);
    fprintf(stderr, ": it is %s of this run, which the recording would replace: "
            "choose another file\n", input->what);
    return EXIT_STATUS_USAGE;
}

/* FILE's folder and name, for a temporary name beside it: "DIR/.NAME.XXXXXX". */
static char *temporary_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    size_t size = strlen(path) + sizeof ".." + sizeof "XXXXXX";
    char *name = malloc(size);
    if (name) snprintf(name, size, "%.*s.%s.XXXXXX", (int)dir, path, path + dir);
    return name;
}

/* The temporary file, with the mode fopen's "w" would have given FILE. */
static FILE *open_temporary(ui_record *r, int *error)
{
    if (!(r->temporary = temporary_name(r->path))) { *error = ENOMEM; return NULL; }
    int fd = mkstemp(r->temporary);
    if (fd < 0) { *error = errno; free(r->temporary); r->temporary = NULL; return NULL; }
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        *error = errno;
        close(fd);
        unlink(r->temporary);
        free(r->temporary);
        r->temporary = NULL;
    }
    return f;
}

exit_status ui_record_open(ui_record *r, const char *path, const ui_record_input *inputs,
                           int count)
{
    *r = (ui_record){.path = path};
    struct stat sb;
    if (stat(path, &sb) == 0) {   /* followed: a link to a FIFO is refused as the FIFO */
        if (!S_ISREG(sb.st_mode)) { say_failed(path, not_regular(sb.st_mode)); return EXIT_STATUS_IO; }
        r->exists = true;
        r->dev = sb.st_dev;
        r->ino = sb.st_ino;
    }
    for (int i = 0; i < count; i++) {
        exit_status status = ui_record_check(r, &inputs[i]);
        if (status != EXIT_STATUS_OK) return status;
    }
    int error = 0;
    if (!(r->f = open_temporary(r, &error))) { say_failed(path, strerror(error)); return EXIT_STATUS_IO; }
    fputs("# attnstep --record: a key script with the time between keys; play it with\n"
          "# attnstep --replay FILE LESSON (space pauses, + and - change the speed)\n", r->f);
    return EXIT_STATUS_OK;
}

bool ui_record_close(ui_record *r, bool keep)
{
    if (!r->f) return true;
    bool failed = ferror(r->f) != 0;
    int error = failed ? EIO : 0;
    if (fclose(r->f) != 0 && !failed) { failed = true; error = errno; }
    r->f = NULL;
    if (keep && !failed && rename(r->temporary, r->path) != 0) { failed = true; error = errno; }
    if (!keep || failed) unlink(r->temporary);
    if (keep && failed) say_failed(r->path, strerror(error));
    free(r->temporary);
    r->temporary = NULL;
    return !(keep && failed);
}
