/* libyaml's syntax errors said in an author's terms: the mistakes authors make most (a ': '
 * inside unquoted text, a missing space after ':', an unclosed quote or bracket, a wrong indent)
 * get a plain sentence, a hint, and the place of the mistake rather than where libyaml stopped. */
#ifndef ATTNSTEP_LESSON_SYNTAX_H
#define ATTNSTEP_LESSON_SYNTAX_H

#include <stddef.h>
#include <yaml.h>
#include "lesson.h"

/* Reports the error parser stopped at, parsing data (size bytes, NUL-terminated at data[size]). */
void lesson_syntax_report(const yaml_parser_t *parser, const char *data, size_t size,
                          lesson_diagnostics *diagnostics);

#endif
