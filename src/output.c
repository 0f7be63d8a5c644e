/* The walk shared by every text output: begin, one call per step of the trace, end. */
#include <stdlib.h>
#include "output.h"
#include "text.h"

int output_write(const output_format *format, const lesson *l, const trace *t, int precision,
                 FILE *stream)
{
    output o = { l, t, precision, stream, 0 };
    format->begin(&o);
    for (int count = trace_step_count(t); o.step < count; o.step++) {
        stage_id stage;
        int head;
        trace_step_at(t, o.step, &stage, &head);
        format->step(&o, stage, head);
    }
    format->end(&o);
    return fflush(stream) != 0 || ferror(stream) ? -1 : 0;
}

void output_text(output *o, const char *utf8)
{
    char small[256];
    int length = text_escape(utf8, small, sizeof small);
    if ((size_t)length < sizeof small) {
        fputs(small, o->stream);
        return;
    }
    char *large = malloc((size_t)length + 1);
    if (!large)
        return;
    text_escape(utf8, large, (size_t)length + 1);
    fputs(large, o->stream);
    free(large);
}
