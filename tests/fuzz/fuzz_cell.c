/* libFuzzer target: any text as the cell of --explain and --at (trace_cell_parse) over a
 * lesson whose tokens carry controls, then the explanation of a cell it finds; whatever the
 * program would print (the parser's error or the explanation) must pass the no-raw-control
 * property once escaped. Run with `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_escape.h"
#include "lesson.h"
#include "trace.h"

/* Tokens with ESC, CSI, C1, bidi, a comma and a bracket: the spec's own syntax and the escapes. */
static const char lesson_text[] =
    "title: cells\n"
    "tokens: [\"\\e[31ma\", \"b\\u009bc\", \"\\u202Ed\", \"e,f\", \"g]h\", \"0\", cat]\n"
    "source: [\"\\e]0;x\\a\", sat, \"1\"]\n"
    "d_model: 4\nheads: 2\n"
    "embeddings: {random: normal, seed: 1}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const trace *t = fuzz_trace_once("cells.yaml", lesson_text);
    if (size < 1)
        return 0;
    /* the first byte picks the head (0 to 3: one past the lesson's two, and 0), the rest is
       the spec, as the command line would hand it over: up to its first NUL */
    int head = data[0] % 4;
    char *spec = malloc(size);
    if (!spec)
        return 0;
    memcpy(spec, data + 1, size - 1);
    spec[size - 1] = '\0';
    trace_cell cell;
    char error[512];
    if (trace_cell_parse(t, spec, head, &cell, error, sizeof error)) {
        int length = trace_cell_explain(t, &cell, data[0] % 18, NULL, 0);
        char *text = malloc((size_t)length + 1);
        if (text) {
            trace_cell_explain(t, &cell, data[0] % 18, text, (size_t)length + 1);
            fuzz_check_escaped(text, true);
            free(text);
        }
    } else {
        fuzz_check_escaped(error, false);
    }
    fuzz_check_escaped(spec, false);  /* main and the UI echo the spec itself */
    free(spec);
    return 0;
}
