/* libFuzzer target: any text as a lesson's claim (`expect:`) and as narration with live numbers
 * ("{weights[a,b]:3}"), over a causal lesson whose tokens carry controls. Checks what a reader of
 * the claim language relies on: the length claim_render asks for is the length it writes, every
 * placeholder found lies inside the text, and whatever would be printed (the claim's detail, its
 * error, the rendered text) passes the no-raw-control property once escaped. Run with `make fuzz`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "claim.h"
#include "fuzz_escape.h"
#include "lesson.h"
#include "trace.h"

/* Controls, bidi, a comma, a bracket, braces and a digit among the tokens (the language's own
 * syntax), a causal mask (−∞ among the numbers) and two heads ("@2"). */
static const char lesson_text[] =
    "title: claims\n"
    "tokens: [\"\\e[31ma\", \"b\\u009bc\", \"\\u202Ed\", \"e,f\", \"g]h\", \"{x}\", \"0\", cat]\n"
    "d_model: 4\nheads: 2\nmask: causal\n"
    "embeddings: {random: normal, seed: 3}\n";

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_claim: %s\n", what);
    abort();
}

/* 1. a claim: parsed, then evaluated; its error or its detail is printed by --check */
static void check_claim(const trace *t, const char *text, int head)
{
    claim c;
    char message[CLAIM_MESSAGE_MAX];
    if (!claim_parse(t, text, head, &c, message, sizeof message)) {
        fuzz_check_escaped(message, false);
        return;
    }
    message[0] = '\0';
    claim_holds(t, &c, message, sizeof message);
    fuzz_check_escaped(message, false);
}

/* 2. narration: rendered twice (measured, then written) and compared with what was asked */
static void check_render(const trace *t, const char *text, int head)
{
    claim_text_error error;
    int wanted = claim_render(t, text, head, NULL, 0, &error);
    if (wanted < 0) {
        fuzz_check_escaped(error.message, false);
        if (error.offset > strlen(text) || text[error.offset] != '{')
            fail("a render error points at no '{'");
        return;
    }
    char *out = malloc((size_t)wanted + 1);
    if (!out)
        return;
    if (claim_render(t, text, head, out, (size_t)wanted + 1, &error) != wanted
        || strlen(out) != (size_t)wanted)
        fail("claim_render wrote another length than it asked for");
    fuzz_check_escaped(out, true);
    free(out);
}

/* 3. every placeholder claim_placeholder_find reports lies inside the text, in order */
static void check_placeholders(const trace *t, const char *text, int head)
{
    size_t length = strlen(text), from = 0, open, size;
    while (claim_placeholder_find(text, from, &open, &size)) {
        if (open < from || size == 0 || open + size > length || text[open] != '{')
            fail("a placeholder lies outside the text");
        from = open + size;
    }
    trace_cell cell = {0};
    cell.stage = STAGE_WEIGHTS;
    cell.head = head < 1 ? 1 : head;
    (void)claim_text_names(t, text, head, &cell, (text[0] & 1) != 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const trace *t = fuzz_trace_once("claims.yaml", lesson_text);
    if (size < 1)
        return 0;
    /* the first byte picks the head (0 to 3: one past the lesson's two, and 0); the rest is the
       text as YAML hands it over: up to its first NUL */
    int head = data[0] % 4;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    check_claim(t, text, head);
    check_render(t, text, head);
    check_placeholders(t, text, head);
    free(text);
    return 0;
}
