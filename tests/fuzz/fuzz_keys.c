/* libFuzzer target: any bytes as a key script (ui_script_load, through a file as --keys reads
 * it) and as one line (ui_script_parse_line): the messages the program would print pass the
 * no-raw-control property once escaped, and the file names of a script that loads pass it as
 * they are (the loader refuses controls). Run with `make fuzz`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_escape.h"
#include "ui_keys.h"

static char script_path[64];

/* One file per process, rewritten for each input. */
static bool write_script(const uint8_t *data, size_t size)
{
    if (!script_path[0])
        snprintf(script_path, sizeof script_path, "/tmp/attnstep-fuzz-keys-%ld", (long)getpid());
    FILE *f = fopen(script_path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char error[512] = "";
    if (write_script(data, size)) {
        ui_script script;
        exit_status status = ui_script_load(script_path, &script, error, sizeof error);
        if (status == EXIT_STATUS_OK) {
            for (int i = 0; i < script.count; i++) {
                ui_event ev = ui_script_event(&script, i);
                if (ev.kind == UI_EV_RELOAD)   /* the loader let only text through */
                    fuzz_check_clean(ev.file, "\t");
            }
            ui_script_free(&script);
        } else {
            fuzz_check_escaped(error, false);
        }
    }
    char *line = malloc(size + 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    ui_event ev;
    if (ui_script_parse_line(line, &ev, error, sizeof error) < 0)
        fuzz_check_escaped(error, false);
    free(line);
    return 0;
}
