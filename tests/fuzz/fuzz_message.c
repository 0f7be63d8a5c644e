/* libFuzzer target: any bytes as one classroom message (net_message_parse). A message it takes
 * is written again, and that text parses to the same message and writes to the same text (the
 * writer and the parser agree); a name it takes holds no control character, so it is safe to
 * show even before escaping; every refusal has its sentence. Run with `make fuzz`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_escape.h"
#include "net_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    net_message m;
    net_error error = net_message_parse((const char *)data, size, &m);
    if (error != NET_OK) {
        if (!net_error_message(error)[0]) abort();
        return 0;
    }
    char text[NET_MESSAGE_MAX + 1], again[NET_MESSAGE_MAX + 1];
    size_t n = net_message_write(&m, text, sizeof text);
    if (n == 0 || n > NET_MESSAGE_MAX) abort();   /* what was read can be written */
    net_message back;
    if (net_message_parse(text, n, &back) != NET_OK) abort();
    if (net_message_write(&back, again, sizeof again) != n || memcmp(text, again, n) != 0) abort();
    if (m.type == NET_JOIN) fuzz_check_clean(m.name, "");
    return 0;
}
